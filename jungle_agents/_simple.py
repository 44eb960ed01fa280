"""The Random and Greedy agents (docs/agents.md)."""

from __future__ import annotations

import functools

import attrs
import numpy as np

from jungle_agents._pairs import pair_table
from jungle_core import Rules, State, legal_actions, transitions
from jungle_core.lowlevel import HIDDEN, NUM_CODES, tables

__all__ = ["GreedyAgent", "GreedyWeights", "RandomAgent", "greedy_heuristic"]


class RandomAgent:
    """Uniformly random among the legal actions.

    >>> from jungle_core import DARK, new_game, legal_actions
    >>> agent = RandomAgent()
    >>> agent.act(new_game(), np.random.default_rng(1)) in legal_actions(new_game())
    True
    """

    def __init__(self, rules: Rules | None = None) -> None:
        self.name = "random"

    def act(self, state: State, rng: np.random.Generator) -> int:
        """A uniformly drawn legal action."""
        actions = legal_actions(state)
        return actions[int(rng.integers(len(actions)))]


_GREEDY_PIECE_VALUES = {8: 80.0, 7: 70.0, 6: 60.0, 5: 50.0, 4: 40.0, 3: 30.0, 2: 20.0, 1: 30.0}


@attrs.frozen
class GreedyWeights:
    """The weights of the Greedy heuristic H (defaults as in docs/agents.md); the fields
    with a ``help`` are the ``greedy`` agent's spec parameters, in this order.

    >>> GreedyWeights().values[8], GreedyWeights().opp_material
    (80.0, 0.8)
    """

    values: dict[int, float] = attrs.field(factory=lambda: dict(_GREEDY_PIECE_VALUES), hash=False)
    """V of a revealed piece by rank."""
    opp_material: float = attrs.field(
        default=0.8, metadata={"help": "factor of the opponent's material in H"}
    )
    """Factor of the opponent's material (subtracted)."""
    position: float = attrs.field(
        default=1.5, metadata={"help": "factor of the position term of H"}
    )
    """Factor of the position term (advance + centre of self's revealed pieces)."""
    advance: float = 5.0
    """Per row advanced (player 0: ``row``; player 1: ``rows - 1 - row``)."""
    centre: float = 5.0
    """For a piece on one of the two central columns."""
    mobility: float = attrs.field(
        default=2.0, metadata={"help": "per legal action of H's mobility term"}
    )
    """Per legal action self would have in the state."""
    safety: float = attrs.field(default=10.0, metadata={"help": "factor of H's safety sum"})
    """Factor of the safety sum over adjacent (self p, opp q) pairs."""
    face_down: float = attrs.field(
        default=30.0, metadata={"help": "value of a face-down piece in H"}
    )
    """V of each face-down piece a player still has."""
    take: float = 15.0
    """Added to the safety sum when p can take q."""
    taken: float = 10.0
    """Subtracted from the safety sum when q can take p."""


def greedy_heuristic(state: State, player: int, weights: GreedyWeights | None = None) -> float:
    """Greedy's H: ``state`` scored for ``player`` (material, position, mobility, safety).

    "Can take" is the rule set's battle table; mobility counts the legal actions
    ``player`` would have if it were to move in ``state``.

    >>> from jungle_core import from_fen
    >>> s = from_fen("8/8/8/8/8/8/Ew6 1 0 1 - -")
    >>> # 80 - 0.8*40 + 1.5*(0 + 0) + 2*2 (a1-a2, a1xb1) + 10*15 (E can take w)
    >>> greedy_heuristic(s, 0)
    202.0
    """
    w = weights or GreedyWeights()
    return _Heuristic.of(state.rules, w).value(state, player)


class _Heuristic:
    @staticmethod
    @functools.cache
    def of(rules: Rules, weights: GreedyWeights) -> _Heuristic:
        """The heuristic of a rule set and weights, built once (cached)."""
        return _Heuristic(rules, weights)

    def __init__(self, rules: Rules, w: GreedyWeights) -> None:
        self.rules = rules
        self.w = w
        t = tables(rules)
        rows, cols = rules.rows, rules.cols
        self.forward = tuple(tuple(nb for d, nb in pairs if d in (1, 3)) for pairs in t.neighbours)
        centre = {cols // 2 - 1, cols // 2}
        self.place = tuple(
            tuple(
                w.position
                * (
                    w.advance * (sq // cols if player == 0 else rows - 1 - sq // cols)
                    + (w.centre if sq % cols in centre else 0.0)
                )
                for sq in range(rows * cols)
            )
            for player in (0, 1)
        )
        self.value_of = tuple(
            [0.0]
            + [w.values[((c - 1) & 7) + 1] for c in range(1, HIDDEN)]
            + [0.0] * (NUM_CODES - HIDDEN)
        )
        # safety[player][p * NUM_CODES + q] for adjacent codes, from player 0's and player 1's view
        self.safety = tuple(
            pair_table(rules, player, w.take, w.taken, w.safety) for player in (0, 1)
        )

    def value(self, state: State, player: int) -> float:
        w = self.w
        board = state.board
        mask = state.face_down_mask
        own_fd = (mask >> (8 * player) & 0xFF).bit_count()
        opp_fd = (mask >> (8 * (1 - player)) & 0xFF).bit_count()
        own = own_fd * w.face_down
        opp = opp_fd * w.face_down
        place = self.place[player]
        safety = self.safety[player]
        forward = self.forward
        value_of = self.value_of
        other = 0.0
        own_base = player * 8
        for sq, c in enumerate(board):
            if 0 < c < HIDDEN:
                if own_base < c <= own_base + 8:
                    own += value_of[c]
                    other += place[sq]
                else:
                    opp += value_of[c]
                row = c * NUM_CODES
                for nb in forward[sq]:
                    other += safety[row + board[nb]]
        if state.to_move != player:
            state = State(
                state.rules,
                board,
                player,
                mask,
                state.plies_since_removal,
                state.ply,
                state.history,
            )
        mobility = w.mobility * len(legal_actions(state))
        return own - w.opp_material * opp + other + mobility


class GreedyAgent:
    """One ply: the action whose resulting state scores best under H (:func:`greedy_heuristic`).

    An action with chance outcomes scores the probability-weighted mean of H over its
    outcomes (from :func:`jungle_core.transitions`); ties are broken with ``rng``. H is
    scored for the agent. On CLASSIC rules, where H's terms do not describe the game (no
    face-down pieces; dens decide), the agent scores the resulting states with the CLASSIC
    evaluation instead, a won game best.

    >>> from jungle_core import DARK, from_fen
    >>> s = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")
    >>> GreedyAgent(DARK).act(s, np.random.default_rng(0)) == 56 + 0 * 4 + 3   # a1xb1
    True
    """

    def __init__(self, rules: Rules, weights: GreedyWeights | None = None) -> None:
        self.name = "greedy"
        self.rules = rules
        self.weights = weights or GreedyWeights()
        self._classic = None
        if not rules.is_dark:
            from jungle_agents.minimax import ClassicEvaluator

            self._classic = (ClassicEvaluator(rules, 0), ClassicEvaluator(rules, 1))

    def action_values(self, state: State) -> dict[int, float]:
        """The score of every legal action (the expected H of its result).

        >>> from jungle_core import DARK, new_game
        >>> values = GreedyAgent(DARK).action_values(new_game())
        >>> len(values), round(values[51], 2)   # ?d7: among the best two
        (16, 109.0)
        """
        me = state.to_move
        out: dict[int, float] = {}
        if self._classic is not None:
            evaluator = self._classic[me]
            for action in legal_actions(state):
                ((_, child),) = transitions(state, action)
                out[action] = evaluator.evaluate_terminal_aware(child)
            return out
        h = _Heuristic.of(state.rules, self.weights)
        for action in legal_actions(state):
            total = 0.0
            for prob, child in transitions(state, action):
                total += prob * h.value(child, me)
            out[action] = total
        return out

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The best-scoring legal action; equal best scores are broken at random."""
        values = self.action_values(state)
        best = max(values.values())
        tied = [a for a, v in values.items() if v >= best - 1e-9]
        return tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]
