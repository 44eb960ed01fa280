"""What every part of the Minimax search shares: the searcher's settings, tables and
evaluation, and how it scores finished games.

:class:`Searcher` is built in layers, one job to a module, each a class that adds methods
over the attributes :class:`SearchBase` sets:

- :class:`SearchBase` (here): the player, rules and configuration, the evaluation (with
  the quiet-ply cost of ``contempt``), the scores of finished games, the game-end tests,
  and the transposition table and move ordering (:mod:`jungle_agents.minimax._ordering`);
- :class:`~jungle_agents.minimax._quiescence.CaptureSearch`: quiescence on captures;
- :class:`~jungle_agents.minimax._frontier.DarkFrontierSearch`: the DARK frontier scored
  incrementally;
- :class:`~jungle_agents.minimax._search.Searcher`: the node search (transposition table, Star1,
  the reply), iterative deepening and the root's tie-break.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

from jungle_agents.minimax._classic_eval import ClassicEvaluator, classic_outcome, stuck_outcome
from jungle_agents.minimax._config import WIN, SearchConfig
from jungle_agents.minimax._dark_eval import DarkEvaluator
from jungle_agents.minimax._ordering import MoveOrder, TranspositionTable
from jungle_core import Outcome, Rules, State, outcome
from jungle_core.lowlevel import HIDDEN, BattleResult, tables

__all__ = ["INF", "REMOVING", "Evaluate", "Evaluator", "SearchBase"]

INF = math.inf
REMOVING = (BattleResult.TAKE, BattleResult.BOTH)
"""The battle results that remove the defender (a capture, for quiescence and threats)."""

Evaluate = Callable[[State], float]


class Evaluator(Protocol):
    """What the searcher needs of an evaluation: a value for its player, and a bound on
    how much one ply can change it (for Star1)."""

    def evaluate(self, state: State) -> float:
        """The value of ``state`` for the evaluator's player."""
        ...

    def max_ply_change(self) -> float:
        """An upper bound on the change of the value in one ply."""
        ...


class SearchBase:
    """The state of one searcher for the player ``player`` (see :class:`Searcher`, which
    documents the arguments)."""

    def __init__(
        self,
        rules: Rules,
        player: int,
        config: SearchConfig | None = None,
        evaluator: Evaluator | None = None,
        *,
        incremental: bool = True,
    ) -> None:
        self.rules = rules
        self.player = player
        self.config = config or SearchConfig()
        if evaluator is None:
            if rules.is_dark:
                evaluator = DarkEvaluator(rules, player)
            else:
                evaluator = ClassicEvaluator(rules, player)
        self.evaluator: Evaluator = evaluator
        # the evaluator when it is the DARK one: its local changes score the children of
        # the board quiescence search without building states
        self._dark_evaluator: DarkEvaluator | None = (
            evaluator if isinstance(evaluator, DarkEvaluator) else None
        )
        # the same, when the DARK frontier scores its children incrementally too (None:
        # the frontier builds and evaluates every child)
        self._incremental_evaluator = self._dark_evaluator if incremental else None
        contempt = self.config.contempt
        self._draw = -contempt
        limit = rules.no_removal_limit if rules.is_dark else 0
        # the cost of one quiet ply: the share of the no-removal draw it brings closer
        self._quiet_cost = contempt / limit if limit and contempt else 0.0
        self._evaluate: Evaluate = evaluator.evaluate
        # an evaluator may offer ``prefetch(states)``: values for many states at once (a
        # network's batched forward pass), kept for its ``evaluate`` calls that follow;
        # the search hands it a frontier node's children before it scores them one by one
        self._prefetch: Callable[[Sequence[State]], None] | None = getattr(
            evaluator, "prefetch", None
        )
        if self._quiet_cost:
            self._evaluate = self._counting_quiet_plies(evaluator.evaluate)
        # CLASSIC without repetition bans: the evaluator's own move generator and game-end
        # test (equal to the core's, checked in the tests) instead of the core's
        self._fast_classic = (
            not rules.is_dark
            and rules.repetition == "none"
            and isinstance(evaluator, ClassicEvaluator)
        )
        self._game_over: Callable[[State], Outcome | None] = (
            _classic_game_over if self._fast_classic else outcome
        )
        self._evaluate_moves = (
            evaluator.evaluate_moves if isinstance(evaluator, ClassicEvaluator) else None
        )
        # the value of a position at the horizon (stand pat); CLASSIC's evaluator also
        # counts the mover's moves, and a mover without one has lost (or drawn)
        self._static_value: Evaluate = (
            self._classic_static_value if self._evaluate_moves is not None else self._evaluate
        )
        t = tables(rules)
        self._step = t.step
        self._neighbours_with_dirs = t.neighbours
        self._battle = t.battle
        self._num_squares = rules.num_squares
        self._rules_are_dark = rules.is_dark  # chance nodes, the DARK move and capture tables
        # a removal gives back at most the whole cost of the quiet plies before it
        self._max_change = evaluator.max_ply_change() + contempt
        self._tt = TranspositionTable()
        self._move_order = MoveOrder(rules)
        self.nodes = 0
        self._deadline = INF
        self._nodes_since_clock_check = 0
        # the search reads the clock (for the time budget) once per this many nodes: a
        # node of the hand evaluation costs microseconds, one of another (a network at
        # the frontier's children) up to milliseconds
        hand = isinstance(evaluator, DarkEvaluator | ClassicEvaluator)
        self._clock_check_nodes = 4096 if hand else 16
        # whether anyone with a face-down piece left may reveal it (see _no_end_within)
        self._reveal_any = rules.reveal == "any"
        self._reply = self.config.reply and rules.is_dark and not self.config.quiescence
        # player p's face-up codes are p * 8 + rank: base < code <= base + 8
        self._own_code_base = player * 8
        self._opp_code_base = (1 - player) * 8

    def _counting_quiet_plies(self, evaluate: Evaluate) -> Evaluate:
        """``evaluate`` less the cost of the plies since the last removal (``contempt``)."""
        cost = self._quiet_cost

        def evaluate_with_cost(state: State) -> float:
            return evaluate(state) - cost * state.plies_since_removal

        return evaluate_with_cost

    def _classic_static_value(self, state: State) -> float:
        """The CLASSIC evaluation, or the score of the finished game when the player to
        move has no legal move (the evaluator counts them anyway)."""
        assert self._evaluate_moves is not None
        value, moves = self._evaluate_moves(state)
        return value if moves else self._score(stuck_outcome(state), 0)

    def _terminal_value(self, state: State, depth: int) -> float | None:
        """The score of ``state`` if the game is over there (``depth`` plies left), else
        None."""
        result = self._game_over(state)
        if result is None:
            return None
        return self._score(result, depth)

    def _score(self, result: Outcome, depth: int) -> float:
        """A finished game's score for the player: ``+-(WIN + depth left)`` (a sooner win
        is worth more, a later loss costs less), ``-contempt`` for a draw."""
        if result.winner is None:
            return self._draw
        return WIN + depth if result.winner == self.player else -WIN - depth

    def _no_end_within(self, state: State, plies: int) -> bool:
        """True when no game can end within ``plies`` plies of ``state`` (DARK only)."""
        rules = self.rules
        if not self._rules_are_dark:
            return False
        if rules.no_removal_limit and state.plies_since_removal + plies >= rules.no_removal_limit:
            return False
        if rules.ply_limit and state.ply + plies >= rules.ply_limit:
            return False
        mask = state.face_down_mask
        if min(self._piece_counts(state.board, mask)) <= plies:
            return False
        # a legal reveal stays available while enough face-down pieces remain
        if self._reveal_any:
            return mask.bit_count() > plies
        return min((mask & 0xFF).bit_count(), (mask >> 8).bit_count()) > plies

    @staticmethod
    def _piece_counts(board: tuple[int, ...], mask: int) -> list[int]:
        """Each player's pieces, face up (on ``board``) and face down (in ``mask``)."""
        counts = [(mask & 0xFF).bit_count(), (mask >> 8).bit_count()]
        for c in board:
            if 0 < c < HIDDEN:
                counts[(c - 1) >> 3] += 1
        return counts


def _classic_game_over(state: State) -> Outcome | None:
    """:func:`jungle_core.outcome` on CLASSIC rules without repetition bans, except that a
    mover without a legal move is left to the node (its move generator finds out)."""
    return classic_outcome(state, check_moves=False)
