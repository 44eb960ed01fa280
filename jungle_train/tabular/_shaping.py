"""The Q-learners' reward (docs/training.md), and the training game both
Q-learners play against their opponent mix.

Rewards are scored for one player, "the agent". A **ply** (anyone's) from ``before`` to
``after`` earns the agent:

- ``-0.1`` when the agent made the ply (the step cost: one per agent decision);
- ``+10 * V'(taken)`` when an opponent's piece was removed;
- ``-8 * V'(lost)`` when one of the agent's pieces was removed (taken, or lost attacking
  a stronger piece);
- ``-0.5`` for a mutual removal of equal ranks, *instead of* the two terms above (a trade
  is neither a capture nor a loss);
- the shaping ``Δ(Opp) - Δ(Threat) = potential(after) - potential(before)``, where
  :func:`potential` sums, over the agent's revealed pieces ``i`` whose nearest revealed
  enemy is at Manhattan distance ``d``, ``Opp(i) = 3 / (1 + d)`` if ``i`` can take that
  enemy and ``-Threat(i) = -4 / (1 + d)`` if that enemy can take ``i``. When several
  enemies are nearest (a tie in ``d``), ``i`` counts the opportunity if it can take any of
  them and the threat if any of them can take it. "Can take" is the rule set's battle
  table (a strict capture; an equal-rank trade is neither);
- at the end of the game ``+100`` (agent wins), ``-100`` (loses), ``0`` (draw).

V' by rank: {1: 3.0, 2: 1.0, 3: 1.5, 4: 2.0, 5: 2.5, 6: 3.0, 7: 3.5, 8: 4.0}. Removals
are found by counting each side's pieces (face up on the board plus face down in the
state's set) before and after, so a reveal never counts as one.

**One learner step** is one decision of the agent: its own ply, then the opponent's reply
(in DARK turns alternate). Its reward is :func:`expected_ply_reward` of the agent's ply —
for an action that turns a piece face up, the expectation over its chance outcomes, which
is exact and removes the reveal's noise from the TD target without biasing it — plus
:func:`ply_reward` of the opponent's realised reply. :func:`expected_ply_reward` is also
what an unseen table entry starts at (:mod:`jungle_train.tabular.qlearn`).

The game driver (:class:`TrainingGame`, :func:`opponent_ply`) is shared by both learners:
each game draws its opponent from the mix (:func:`jungle_train.common._opponents.parse_mix`) and
the learner's side (0 or 1, even odds) from the run's generator.

>>> from jungle_core import from_fen
>>> s = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")      # E a1, w b1: E can take w at d = 1
>>> potential(s, 0), potential(s, 1)                # 3 / 2 for E; -4 / 2 for w
(1.5, -2.0)
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from jungle_agents import GreedyAgent, RandomAgent
from jungle_core import DARK, Rules, State, new_game, outcome, step, transitions
from jungle_core.lowlevel import NUM_CODES, BattleResult, tables

__all__ = [
    "CAPTURE",
    "DRAW",
    "LOSS",
    "LOST",
    "MUTUAL",
    "OPP_WEIGHT",
    "STEP_COST",
    "THREAT_WEIGHT",
    "VALUE",
    "WIN",
    "Policy",
    "TrainingGame",
    "best_action",
    "expected_ply_reward",
    "opponent_ply",
    "piece_counts",
    "ply_reward",
    "potential",
    "rng_from_state",
    "rng_state",
    "tactics",
    "terminal_reward",
]

VALUE = (0.0, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)
"""``VALUE[rank]``: the Q-learners' piece values V' (index 0 unused)."""
STEP_COST = -0.1
CAPTURE = 10.0
LOST = -8.0
MUTUAL = -0.5
WIN, LOSS, DRAW = 100.0, -100.0, 0.0
OPP_WEIGHT = 3.0
THREAT_WEIGHT = 4.0

Policy = Callable[[State, np.random.Generator], int]
"""A playing policy: ``policy(state, rng) -> legal action``."""


class _Geometry:
    """Per rule set: square coordinates and the strict "can take" relation of face-up codes."""

    def __init__(self, rules: Rules) -> None:
        t = tables(rules)
        self.rows, self.cols = rules.rows, rules.cols
        self.coords = tuple(divmod(sq, rules.cols) for sq in range(rules.rows * rules.cols))
        self.takes = tuple(t.battle[i] == BattleResult.TAKE for i in range(NUM_CODES * NUM_CODES))

    @staticmethod
    @functools.cache
    def of(rules: Rules) -> _Geometry:
        """The geometry of a rule set, built once (cached)."""
        return _Geometry(rules)


def _pieces(
    board: tuple[int, ...], coords: tuple[tuple[int, int], ...], player: int
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """``(code, row, col)`` of each side's face-up pieces: (the player's, the opponent's)."""
    own: list[tuple[int, int, int]] = []
    opp: list[tuple[int, int, int]] = []
    for sq, c in enumerate(board):
        if 0 < c < 17:
            r, k = coords[sq]
            (own if (c - 1) >> 3 == player else opp).append((c, r, k))
    return own, opp


def tactics(state: State, player: int) -> tuple[list[float], list[float], int]:
    """Per revealed piece of ``player``: ``(opportunities, threats, nearest distance)``.

    ``opportunities[i]`` is ``1 / (1 + d)`` when piece ``i`` can take one of its nearest
    revealed enemies (at distance ``d``), else 0; ``threats[i]`` likewise when one of them
    can take ``i``; the nearest distance is the smallest over all pairs (0 when one side
    has no revealed piece). :func:`potential` and the approximate learner's features are
    built from these.

    >>> from jungle_core import from_fen
    >>> tactics(from_fen("8/8/8/8/8/8/E1w5 0 0 0 - -"), 0)   # E a1, w c1: d = 2
    ([0.3333333333333333], [0.0], 2)
    """
    g = _Geometry.of(state.rules)
    own, opp = _pieces(state.board, g.coords, player)
    takes = g.takes
    opps: list[float] = []
    threats: list[float] = []
    nearest = 0
    for c, r, k in own:
        best = 1 << 30
        can = hit = False
        for e, er, ek in opp:
            d = abs(r - er) + abs(k - ek)
            if d < best:
                best, can, hit = d, takes[c * NUM_CODES + e], takes[e * NUM_CODES + c]
            elif d == best:
                can = can or takes[c * NUM_CODES + e]
                hit = hit or takes[e * NUM_CODES + c]
        if opp:
            opps.append(1.0 / (1 + best) if can else 0.0)
            threats.append(1.0 / (1 + best) if hit else 0.0)
            nearest = best if nearest == 0 else min(nearest, best)
        else:
            opps.append(0.0)
            threats.append(0.0)
    return opps, threats, nearest


def potential(state: State, player: int) -> float:
    """``Σ Opp(i) - Σ Threat(i)`` over ``player``'s revealed pieces (module docstring).

    >>> from jungle_core import from_fen
    >>> potential(from_fen("8/8/8/8/8/8/E1w5 0 0 0 - -"), 0)   # 3 / (1 + 2)
    1.0
    """
    opps, threats, _ = tactics(state, player)
    return OPP_WEIGHT * sum(opps) - THREAT_WEIGHT * sum(threats)


def piece_counts(state: State) -> tuple[int, ...]:
    """How many of each face-up code ``1..16`` each side still has, face up or face down
    (index ``owner * 8 + rank - 1``).

    >>> from jungle_core import new_game
    >>> piece_counts(new_game()) == (1,) * 16
    True
    """
    counts = [(state.face_down_mask >> i) & 1 for i in range(16)]
    for c in state.board:
        if 0 < c < 17:
            counts[c - 1] += 1
    return tuple(counts)


def terminal_reward(state: State, player: int) -> float | None:
    """``+100`` / ``-100`` / ``0`` for ``player`` when the game is over, else None.

    >>> from jungle_core import from_fen
    >>> terminal_reward(from_fen("8/8/8/8/8/8/E7 1 0 9 - -"), 0)
    100.0
    """
    result = outcome(state)
    if result is None:
        return None
    if result.winner is None:
        return DRAW
    return WIN if result.winner == player else LOSS


def ply_reward(before: State, after: State, player: int) -> float:
    """The reward ``player`` earns for the ply from ``before`` to ``after`` (module
    docstring), the end of the game included.

    >>> from jungle_core import from_fen, parse_action, transitions
    >>> s = from_fen("e7/8/8/8/8/8/Ew6 0 0 0 - -")       # E a1 takes w b1
    >>> ((_, t),) = transitions(s, parse_action(s, "a1xb1"))
    >>> # -0.1 + 10 * 2.0 + shaping (0 - 1.5): the Elephant's nearest enemy is now e a7
    >>> round(ply_reward(s, t, 0), 6)
    18.4
    """
    reward = STEP_COST if before.to_move == player else 0.0
    was, now = piece_counts(before), piece_counts(after)
    lost = taken = 0
    for i in range(16):
        if now[i] < was[i]:
            if i >> 3 == player:
                lost = (i & 7) + 1
            else:
                taken = (i & 7) + 1
    if lost and taken:
        reward += MUTUAL
    elif taken:
        reward += CAPTURE * VALUE[taken]
    elif lost:
        reward += LOST * VALUE[lost]
    reward += potential(after, player) - potential(before, player)
    end = terminal_reward(after, player)
    return reward + (end if end is not None else 0.0)


def expected_ply_reward(state: State, action: int, player: int | None = None) -> float:
    """The expectation of :func:`ply_reward` over the chance outcomes of ``action`` (its
    only outcome when it has none), for ``player`` (default: the player to move).

    >>> from jungle_core import new_game
    >>> round(expected_ply_reward(new_game(), 0), 9)   # a reveal at the start: the step cost
    -0.1
    """
    me = state.to_move if player is None else player
    return sum(p * ply_reward(state, child, me) for p, child in transitions(state, action))


def opponent_ply(
    state: State,
    kind: str,
    rng: np.random.Generator,
    agents: tuple[RandomAgent, GreedyAgent],
    frozen: Policy,
) -> State:
    """The opponent's ply in a training game: ``kind`` is ``"random"``, ``"greedy"`` or
    ``"self"`` (the learner's frozen copy, ``frozen``)."""
    if kind == "random":
        action = agents[0].act(state, rng)
    elif kind == "greedy":
        action = agents[1].act(state, rng)
    else:
        action = frozen(state, rng)
    return step(state, action, rng)


class TrainingGame:
    """A training game in progress: the state (the learner to move, or the game over),
    the learner's side and the opponent's kind. Plain values, so a run state can store it
    (:meth:`to_json` / :meth:`from_json`, the position as its position string).

    >>> import numpy as np
    >>> g = TrainingGame.start(np.random.default_rng(0), (1.0, 0.0, 0.0), lambda s, r: 0)
    >>> g.opponent, g.state.to_move == g.learner
    ('random', True)
    """

    def __init__(self, state: State, learner: int, opponent: str) -> None:
        self.state = state
        self.learner = learner
        self.opponent = opponent

    @classmethod
    def start(
        cls,
        rng: np.random.Generator,
        mix: tuple[float, float, float],
        frozen: Policy,
        rules: Rules = DARK,
    ) -> TrainingGame:
        """A new game: opponent drawn from ``mix``, the learner's side at even odds; when
        the learner moves second, the opponent's first ply is already played."""
        kinds = ("random", "greedy", "self")
        opponent = kinds[int(rng.choice(3, p=np.asarray(mix, dtype=np.float64)))]
        learner = int(rng.integers(2))
        seed = int(rng.integers(2**31)) if rules.setup == "scattered" else None
        state = new_game(rules, seed=seed)
        if learner == 1:
            state = opponent_ply(state, opponent, rng, _agents(rules), frozen)
        return cls(state, learner, opponent)

    def play(
        self, action: int, rng: np.random.Generator, frozen: Policy
    ) -> tuple[float, State, bool]:
        """The learner plays ``action``, then the opponent replies (unless the game is
        over). Returns the step's reward (module docstring), the new state and whether the
        game is over; the game's state advances."""
        before = self.state
        me = self.learner
        reward = expected_ply_reward(before, action, me)
        mid = step(before, action, rng)
        after = mid
        if outcome(mid) is None:
            after = opponent_ply(mid, self.opponent, rng, _agents(before.rules), frozen)
            reward += ply_reward(mid, after, me)
        self.state = after
        return reward, after, outcome(after) is not None


_AGENTS: dict[Rules, tuple[RandomAgent, GreedyAgent]] = {}


def _agents(rules: Rules) -> tuple[RandomAgent, GreedyAgent]:
    found = _AGENTS.get(rules)
    if found is None:
        found = _AGENTS[rules] = (RandomAgent(rules), GreedyAgent(rules))
    return found


def rng_state(rng: np.random.Generator) -> dict[str, object]:
    """The generator's state as JSON-able data (for a run checkpoint's header)."""
    return dict(rng.bit_generator.state)


def rng_from_state(data: dict[str, object]) -> np.random.Generator:
    """A ``PCG64`` generator restored from :func:`rng_state`'s data.

    >>> rng = np.random.default_rng(3); _ = rng.random()
    >>> copy = rng_from_state(rng_state(rng))
    >>> copy.random() == rng.random()
    True
    """
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = data
    return rng


def best_action(values: dict[int, float], rng: np.random.Generator, epsilon: float = 0.0) -> int:
    """ε-greedy over ``values`` (action -> Q, legal actions only): with probability
    ``epsilon`` a uniform action, else the best one, equal best values broken at random.

    >>> best_action({3: 1.0, 5: 2.0}, np.random.default_rng(0))
    5
    """
    actions = list(values)
    if epsilon > 0.0 and rng.random() < epsilon:
        return actions[int(rng.integers(len(actions)))]
    best = max(values.values())
    tied = [a for a in actions if values[a] >= best - 1e-9]
    return tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]
