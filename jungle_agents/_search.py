"""The Minimax agent: depth-limited expectiminimax with switchable enhancements.

Decision nodes maximise (the agent to move) or minimise (the opponent) the evaluation of
SPEC §7, always scored for the agent at the root. Every action that turns a piece face up
is a chance node whose value is the probability-weighted mean of its outcomes; depth
counts decisions (chance nodes take none). A finished game scores ``+-(win + depth left)``
(a sooner win is worth more) and 0 for a draw.

Enhancements, each a switch of :class:`SearchConfig`, all exact (with a fixed depth they
return the same root value as plain expectiminimax, which the tests check):

- ``alphabeta``: alpha-beta windows at decision nodes (fail-soft).
- ``ordering``: the transposition table's best action first, then captures by most
  valuable victim / least valuable attacker, then the history heuristic.
- ``tt``: a transposition table keyed on the state itself (reveal orders commute, so
  transpositions are everywhere). A stored value is reused only at the same remaining
  depth, so the result equals the plain search; stored best actions order every depth.
- ``star1``: Ballard's Star1 pruning at chance nodes, with bounds on the children's values
  (the evaluation can change by at most a known amount per ply, and when no game can end
  within the horizon the bounds are that close to the current evaluation).
- ``quiescence``: at depth 0, captures (moves onto opposing face-up pieces that remove
  one) are searched with stand-pat, at most ``qdepth`` plies.
- ``time``: iterative deepening from depth 1 up to ``depth`` under a time budget in
  seconds; the best action of the deepest completed iteration is played.

Two switches change what is scored, where SPEC §7 leaves the search open; both are on by
default, and ``contempt=0,reply=0`` is SPEC §7's scoring as written (the tests check
each against its own plain definition):

- ``contempt`` (100): a draw scores ``-contempt`` instead of 0, and on DARK every position
  carries the share of it that its run of quiet plies has used up,
  ``contempt * plies_since_removal / no_removal_limit``. SPEC §7's weights score the even
  start at -40 for both sides (a face-down piece of the opponent's costs twice what one's
  own is worth), so a draw at 0 looks like a gain to both; without contempt, games
  against Greedy stall into the 100-ply no-removal draw with most pieces still face down.
- ``reply`` (on): on DARK once every piece is face up, an opponent to move at the horizon
  with a piece under threat gets one more ply to answer. A search of odd depth ends on
  the agent's own move, so the evaluation's adjacency term counts a threat just made as
  if it were a capture, and depth 3 chased lone pieces around the board that depth 2
  (whose horizon ends on the opponent's move) hunted down.

At the root, actions whose values are within ``margin`` (2 points by default) of the best
are treated as equally good, and ``tiebreak`` picks one: by default the one that brings
the mover's pieces closest to enemy pieces they can remove (the evaluation has no term
that rewards walking toward a distant enemy, and without this won endgames and standoffs
drift into the 100-ply no-removal draw), then at random. ``margin=0,tiebreak=random``
chooses uniformly among exactly equal actions.

On DARK rules the frontier (depth 1, no quiescence) scores every child from the parent's
value with the local change of the evaluation instead of building the child
(:mod:`jungle_agents._dark_eval`); the tests check it against the full evaluation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import attrs
import numpy as np

from jungle_agents._classic_eval import (
    ClassicEvaluator,
    classic_captures,
    classic_moves,
    classic_ordered_moves,
    classic_outcome,
    classic_target,
    stuck_outcome,
)
from jungle_agents._dark_eval import DarkEvaluator, DarkWeights
from jungle_core import Outcome, Rules, State, legal_actions, outcome
from jungle_core._tables import BattleResult, tables
from jungle_core.lowlevel import apply as _apply
from jungle_core.lowlevel import chance_mask as _chance_mask
from jungle_core.lowlevel import mask_outcomes as _mask_outcomes

__all__ = ["Evaluator", "MinimaxAgent", "SearchConfig", "SearchInfo", "Searcher"]

WIN = 100_000.0
"""The value of a won game (plus the depth left, so that sooner wins score higher)."""
_INF = math.inf
_EXACT, _LOWER, _UPPER = 0, 1, 2
_TT_LIMIT = 3_000_000
_REMOVES = (BattleResult.TAKE, BattleResult.BOTH)
_TIE = 1e-6

MAX_DEPTH = 64
"""The deepest ``depth`` (and ``qdepth``) a search takes: the recursion stays far inside
Python's stack, and beyond it a search without ``time=`` would not end in any case."""
"""Root values closer than this are ties."""


class _Timeout(Exception):
    pass


@attrs.frozen
class SearchConfig:
    """How the Minimax agent searches (each enhancement switchable for ablations).

    >>> SearchConfig().depth, SearchConfig(depth=6, quiescence=True).quiescence
    (3, True)
    """

    depth: int = 3
    """Maximum depth in decisions (chance nodes take none); at least 1."""
    alphabeta: bool = True
    """Alpha-beta windows at decision nodes."""
    ordering: bool = True
    """Move ordering (TT move, captures MVV/LVA, history heuristic)."""
    tt: bool = True
    """Transposition table keyed on the state."""
    star1: bool = True
    """Star1 pruning at chance nodes (needs ``alphabeta``)."""
    quiescence: bool = False
    """Quiescence search on captures at depth 0."""
    qdepth: int = 6
    """Maximum plies of the quiescence search."""
    reply: bool = True
    """DARK, without quiescence, once no piece is face down: at the horizon, when the
    opponent is to move and one of its pieces stands next to one of the agent's that can
    remove it, the opponent gets one more ply to answer before the evaluation. Otherwise
    a search of odd depth, which ends on the agent's own move, counts a threat it has
    just made as if the opponent had to leave it standing (the adjacency term of SPEC
    §7), and in an endgame chases a piece that simply steps away. (While pieces are face
    down, the answer would multiply the chance nodes of the frontier, and the search's
    cost with it.) See the README for the measured effect."""
    time: float = 0.0
    """Time budget per decision in seconds; > 0 turns on iterative deepening."""
    margin: float = 2.0
    """Root actions within this much of the best value count as equally good, and
    ``tiebreak`` chooses among them (0: exact ties only). Two points are a fifth of one
    rank point and a tenth of the smallest adjacency term: differences that small come
    from averaging over chance outcomes, not from a real difference between the moves.
    Forced wins and losses always use exact ties."""
    contempt: float = 100.0
    """How much worse than an even position the agent holds a draw: a finished game
    drawn scores ``-contempt`` instead of 0. Where the rules draw after a run of plies
    without a removal (DARK's 100), every position also carries its share of that draw,
    ``contempt * plies_since_removal / no_removal_limit`` subtracted from its evaluation,
    so that the cost grows with each quiet ply up to the draw itself: the agent values a
    removal (a capture, a trade, and in the end a sacrifice) for the plies it gives back,
    instead of only noticing the draw when it falls inside the horizon. 0 is SPEC §7's
    literal scoring; see the README for the measured effect."""
    tiebreak: str = "approach"
    """Among equally valued root actions (values within ``1e-6``): ``"approach"`` plays
    one that brings the mover's pieces closest to enemy pieces they can remove (then at
    random), ``"random"`` any of them at random. The evaluation alone gives no reason to
    walk toward a distant enemy, so with ``"random"`` won endgames often drift into the
    no-removal draw; see the README for the measured difference."""

    def __attrs_post_init__(self) -> None:
        # one rule for every float: finite (nan compares false everywhere and inf overflows)
        for name in ("time", "margin", "contempt"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, not {getattr(self, name)}")
        if not 1 <= self.depth <= MAX_DEPTH:
            raise ValueError(f"depth must be 1..{MAX_DEPTH}, not {self.depth}")
        if not 0 <= self.qdepth <= MAX_DEPTH:
            raise ValueError(f"qdepth must be 0..{MAX_DEPTH}, not {self.qdepth}")
        if self.time < 0:
            raise ValueError(f"time must be >= 0 seconds, not {self.time}")
        if self.margin < 0:
            raise ValueError(f"margin must be >= 0, not {self.margin}")
        if not 0 <= self.contempt < WIN / 4:
            raise ValueError(f"contempt must be >= 0 and < {WIN / 4:g}, not {self.contempt}")
        if self.tiebreak not in ("random", "approach"):
            raise ValueError(f"tiebreak must be 'random' or 'approach', not {self.tiebreak!r}")


@attrs.frozen
class SearchInfo:
    """What one decision's search did.

    - ``action``: the chosen action; ``value``: its value for the agent (of the deepest
      completed iteration).
    - ``depth``: the deepest completed depth; ``nodes``: positions expanded or evaluated;
      ``seconds``: wall time.
    """

    action: int
    value: float
    depth: int
    nodes: int
    seconds: float


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


class Searcher:
    """One expectiminimax search for the player ``player`` (reusable across decisions).

    ``evaluator`` scores a state for ``player``: a :class:`DarkEvaluator` on DARK rules
    (the frontier then runs incrementally), or any object with ``evaluate(state)`` and
    ``max_ply_change()``. ``incremental=False`` turns the incremental DARK frontier off
    (every child is built and evaluated in full; for tests and benchmarks).

    >>> from jungle_core import DARK, from_fen
    >>> s = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")
    >>> search = Searcher(DARK, 0, SearchConfig(depth=1))
    >>> info = search.search(s)
    >>> info.action == 56 + 3, info.value == WIN + 0   # a1xb1 wins at once
    (True, True)
    """

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
        self._dark: DarkEvaluator | None = (
            evaluator if isinstance(evaluator, DarkEvaluator) and incremental else None
        )
        self._dark_eval: DarkEvaluator | None = (
            evaluator if isinstance(evaluator, DarkEvaluator) else None
        )
        contempt = self.config.contempt
        self._draw = -contempt
        limit = rules.no_removal_limit if rules.is_dark else 0
        # the cost of one quiet ply: the share of the no-removal draw it brings closer
        self._quiet_cost = contempt / limit if limit and contempt else 0.0
        self._evaluate: Evaluate = evaluator.evaluate
        if self._quiet_cost:
            self._evaluate = self._counting_quiet_plies(evaluator.evaluate)
        # CLASSIC without repetition bans: the evaluator's own move generator and game-end
        # test (equal to the core's, checked in the tests) instead of the core's
        self._fast_classic = (
            not rules.is_dark
            and rules.repetition == "none"
            and isinstance(evaluator, ClassicEvaluator)
        )
        self._evaluate_moves = (
            evaluator.evaluate_moves if isinstance(evaluator, ClassicEvaluator) else None
        )
        t = tables(rules)
        self._step = t.step
        self._nbr_dirs = t.neighbours
        self._battle = t.battle
        self._n = rules.num_squares
        self._dark_rules = rules.is_dark
        # a removal gives back at most the whole cost of the quiet plies before it
        self._max_change = evaluator.max_ply_change() + contempt
        self._tt: dict[State, tuple[int, float, int, int]] = {}
        self._history: dict[int, int] = {}
        self.nodes = 0
        self._deadline = _INF
        self._check = 0
        # terminal-free frontier: see _frontier_safe
        self._reveal_any = rules.reveal == "any"
        self._reply = self.config.reply and rules.is_dark and not self.config.quiescence
        self._me_lo = player * 8
        self._opp_lo = (1 - player) * 8

    # ----------------------------------------------------------------- public

    def search(
        self, state: State, rng: np.random.Generator | None = None, depth: int | None = None
    ) -> SearchInfo:
        """Search ``state`` (the searcher's player to move) and return the decision.

        ``rng`` breaks ties between equally good root actions (see
        :attr:`SearchConfig.tiebreak`); ``depth`` overrides the configured depth.

        >>> from jungle_core import DARK, new_game
        >>> info = Searcher(DARK, 0, SearchConfig(depth=2)).search(new_game())
        >>> info.depth, info.action < 16   # a reveal
        (2, True)
        """
        cfg = self.config
        max_depth = cfg.depth if depth is None else depth
        start = time.perf_counter()
        self.nodes = 0
        self._tt.clear()
        self._history.clear()
        actions = list(legal_actions(state))
        if not actions:
            raise ValueError("the player to move has no legal action")
        if rng is not None and len(actions) > 1:
            order = rng.permutation(len(actions))
            actions = [actions[int(i)] for i in order]
        if cfg.time > 0:
            self._deadline = start + cfg.time
            first = 1
        else:
            self._deadline = _INF
            first = max_depth
        best: tuple[int, float, int] | None = None
        for d in range(first, max_depth + 1):
            try:
                action, value, tied = self._root(state, actions, d)
            except _Timeout:
                break
            best = (self._break_tie(state, tied, rng), value, d)
            if abs(value) >= WIN:
                break  # a forced result: deeper iterations cannot change it
            # the best action first in the next iteration
            actions.remove(action)
            actions.insert(0, action)
        self._deadline = _INF
        if best is None:
            # not even depth 1 finished in time: the first (ordered) action
            best = (actions[0], math.nan, 0)
        return SearchInfo(best[0], best[1], best[2], self.nodes, time.perf_counter() - start)

    def value(self, state: State, depth: int) -> float:
        """The root value of ``state`` at ``depth`` for the searcher's player (any side to
        move), with the configured enhancements; no time limit.

        >>> from jungle_core import DARK, from_fen
        >>> s = from_fen("8/8/8/8/8/8/Ew6 1 0 1 - -")   # player 1 to move: w on b1
        >>> # w steps away, E follows it: 10 * (8 - 4) + 20 (E next to a w it can take)
        >>> literal = SearchConfig(contempt=0.0, reply=False)   # SPEC §7 as written
        >>> Searcher(DARK, 0, literal).value(s, 2)
        60.0
        >>> # the defaults: w answers the threat (reply) and steps away again, and the
        >>> # three quiet plies cost 3 * contempt / 100
        >>> Searcher(DARK, 0, SearchConfig()).value(s, 2)
        37.0
        """
        self.nodes = 0
        self._tt.clear()
        self._history.clear()
        self._deadline = _INF
        return self._value(state, depth, -_INF, _INF)

    # ------------------------------------------------------------------ nodes

    def _root(self, state: State, actions: list[int], depth: int) -> tuple[int, float, list[int]]:
        """The best action, its value, and every action whose value is within
        ``margin`` (at least ``_TIE``) of it. Alpha-beta searches each later action with
        alpha lowered by that much, so that the value of such an action comes back exact."""
        cfg = self.config
        ordered = self._order(state, actions, self._tt_move(state)) if cfg.ordering else actions
        slack = cfg.margin + _TIE
        alpha = -_INF
        best_action = ordered[0]
        near: list[tuple[float, int]] = []
        for action in ordered:
            v = self._action(state, action, depth, alpha - slack if cfg.alphabeta else -_INF, _INF)
            if v > alpha - slack:
                near.append((v, action))
            if v > alpha:
                alpha = v
                best_action = action
        self.nodes += 1
        if cfg.tt:
            self._tt_store(state, depth, alpha, _EXACT, best_action)
        if abs(alpha) >= WIN / 2:
            slack = _TIE  # a forced result: only exact ties (the sooner win, the later loss)
        tied = [a for v, a in near if v >= alpha - slack]
        return best_action, alpha, tied

    def _break_tie(self, state: State, tied: list[int], rng: np.random.Generator | None) -> int:
        """One of equally valued root actions: at random (``tiebreak="random"``), or first
        the ones that bring the mover's pieces closest to enemy pieces they can remove
        (``"approach"``), then at random."""
        if len(tied) > 1 and self.config.tiebreak == "approach":
            scored = [(self._approach(state, a), a) for a in tied]
            low = min(d for d, _ in scored)
            tied = [a for d, a in scored if d == low]
        if len(tied) == 1 or rng is None:
            return tied[0]
        return tied[int(rng.integers(len(tied)))]

    def _approach(self, state: State, action: int) -> int:
        """The sum over the mover's face-up pieces of the distance to the nearest enemy
        face-up piece it can remove, after a deterministic ``action`` (before, for one
        with chance)."""
        if not _mask_outcomes(_chance_mask(state, action)):
            board = _apply(state, action, -1).board
        else:
            board = state.board
        me = state.to_move
        cols = self.rules.cols
        battle = self._battle
        mine = [(sq, c) for sq, c in enumerate(board) if me * 8 < c <= me * 8 + 8]
        theirs = [(sq, c) for sq, c in enumerate(board) if 0 < c < 17 and (c - 1) >> 3 != me]
        total = 0
        for sq, c in mine:
            r, k = divmod(sq, cols)
            near = [
                abs(r - tsq // cols) + abs(k - tsq % cols)
                for tsq, q in theirs
                if battle[c * 20 + q] in _REMOVES
            ]
            if near:
                total += min(near)
        return total

    def _threatened(self, state: State) -> bool:
        """Whether a face-up piece of the opponent stands next to one of the agent's that
        can remove it (take it, or both be removed)."""
        board = state.board
        battle = self._battle
        me_lo = self._me_lo
        opp_lo = self._opp_lo
        for sq, c in enumerate(board):
            if me_lo < c <= me_lo + 8:
                row = c * 20
                for _, nb in self._nbr_dirs[sq]:
                    q = board[nb]
                    if opp_lo < q <= opp_lo + 8 and battle[row + q] in _REMOVES:
                        return True
        return False

    def _counting_quiet_plies(self, evaluate: Evaluate) -> Evaluate:
        cost = self._quiet_cost

        def evaluate_with_cost(state: State) -> float:
            return evaluate(state) - cost * state.plies_since_removal

        return evaluate_with_cost

    def _terminal_value(self, state: State, depth: int) -> float | None:
        result = classic_outcome(state, check_moves=False) if self._fast_classic else outcome(state)
        if result is None:
            return None
        return self._score(result, depth)

    def _score(self, result: Outcome, depth: int) -> float:
        if result.winner is None:
            return self._draw
        return WIN + depth if result.winner == self.player else -WIN - depth

    def _value(self, state: State, depth: int, alpha: float, beta: float) -> float:
        """The value of a decision node, fail-soft within (alpha, beta)."""
        self.nodes += 1
        self._check += 1
        if self._check >= 4096:
            self._check = 0
            if time.perf_counter() > self._deadline:
                raise _Timeout
        if self._fast_classic:
            return self._value_classic(state, depth, alpha, beta)
        result = outcome(state)
        if result is not None:
            return self._score(result, depth)
        if depth == 0:
            if self.config.quiescence:
                return self._quiesce(state, alpha, beta, self.config.qdepth)
            if (
                self._reply
                and not state.face_down_mask
                and state.to_move != self.player
                and self._threatened(state)
            ):
                # the opponent answers the threat: a depth-1 node of its own, whose
                # children (the agent to move) are evaluated as they stand
                return self._value(state, 1, alpha, beta)
            return self._evaluate(state)
        cfg = self.config
        tt_move = -1
        if cfg.tt:
            entry = self._tt.get(state)
            if entry is not None:
                e_depth, e_value, e_flag, tt_move = entry
                if e_depth == depth:
                    if e_flag == _EXACT:
                        return e_value
                    if e_flag == _LOWER:
                        if e_value >= beta:
                            return e_value
                        alpha = max(alpha, e_value)
                    else:
                        if e_value <= alpha:
                            return e_value
                        beta = min(beta, e_value)
        alpha0, beta0 = alpha, beta
        maximizing = state.to_move == self.player
        if (
            depth == 1
            and self._dark is not None
            # with the reply, a child may need its own answer: build the children
            and not (self._reply and maximizing and state.face_down_mask.bit_count() <= 1)
            and self._frontier_safe(state)
        ):
            if cfg.quiescence:
                best, best_action = self._frontier_quiesce(state, maximizing)
            else:
                best, best_action = self._frontier(state, maximizing)
            alpha0, beta0 = -_INF, _INF  # the frontier value is exact
        else:
            actions: Sequence[int] = legal_actions(state)
            if cfg.ordering:
                actions = self._order(state, actions, tt_move)
            ab = cfg.alphabeta
            best_action = actions[0]
            if maximizing:
                best = -_INF
                for action in actions:
                    v = self._action(state, action, depth, alpha, beta)
                    if v > best:
                        best = v
                        best_action = action
                        if ab and v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
            else:
                best = _INF
                for action in actions:
                    v = self._action(state, action, depth, alpha, beta)
                    if v < best:
                        best = v
                        best_action = action
                        if ab and v < beta:
                            beta = v
                            if alpha >= beta:
                                break
            if cfg.ordering and ab and alpha >= beta:
                self._history[best_action] = self._history.get(best_action, 0) + depth * depth
        if cfg.tt:
            if best <= alpha0:
                flag = _UPPER
            elif best >= beta0:
                flag = _LOWER
            else:
                flag = _EXACT
            self._tt_store(state, depth, best, flag, best_action)
        return best

    def _value_classic(self, state: State, depth: int, alpha: float, beta: float) -> float:
        """:meth:`_value` for CLASSIC rules with the evaluator's move generator."""
        result = classic_outcome(state, check_moves=False)
        if result is not None:
            return self._score(result, depth)
        cfg = self.config
        if depth == 0:
            if cfg.quiescence:
                return self._quiesce(state, alpha, beta, cfg.qdepth)
            assert self._evaluate_moves is not None
            value, moves = self._evaluate_moves(state)
            return value if moves else self._score(stuck_outcome(state), depth)
        tt_move = -1
        if cfg.tt:
            entry = self._tt.get(state)
            if entry is not None:
                e_depth, e_value, e_flag, tt_move = entry
                if e_depth == depth:
                    if e_flag == _EXACT:
                        return e_value
                    if e_flag == _LOWER:
                        if e_value >= beta:
                            return e_value
                        alpha = max(alpha, e_value)
                    else:
                        if e_value <= alpha:
                            return e_value
                        beta = min(beta, e_value)
        if cfg.ordering:
            actions = classic_ordered_moves(state, tt_move, self._history)
        else:
            actions = classic_moves(state)
        if not actions:
            return self._score(stuck_outcome(state), depth)
        alpha0, beta0 = alpha, beta
        ab = cfg.alphabeta
        best_action = actions[0]
        if state.to_move == self.player:
            best = -_INF
            for action in actions:
                v = self._value(_apply(state, action, -1), depth - 1, alpha, beta)
                if v > best:
                    best = v
                    best_action = action
                    if ab and v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
        else:
            best = _INF
            for action in actions:
                v = self._value(_apply(state, action, -1), depth - 1, alpha, beta)
                if v < best:
                    best = v
                    best_action = action
                    if ab and v < beta:
                        beta = v
                        if alpha >= beta:
                            break
        if cfg.ordering and ab and alpha >= beta:
            self._history[best_action] = self._history.get(best_action, 0) + depth * depth
        if cfg.tt:
            if best <= alpha0:
                flag = _UPPER
            elif best >= beta0:
                flag = _LOWER
            else:
                flag = _EXACT
            self._tt_store(state, depth, best, flag, best_action)
        return best

    def _action(self, state: State, action: int, depth: int, alpha: float, beta: float) -> float:
        """The value of ``action`` in ``state``: a chance node or one deterministic child."""
        outcomes = _mask_outcomes(_chance_mask(state, action))
        cfg = self.config
        if not cfg.alphabeta:
            alpha, beta = -_INF, _INF
        if not outcomes:
            return self._value(_apply(state, action, -1), depth - 1, alpha, beta)
        k = len(outcomes)
        p = 1.0 / k
        if not (cfg.star1 and cfg.alphabeta) or k == 1:
            total = 0.0
            for o in outcomes:
                total += self._value(_apply(state, action, o), depth - 1, -_INF, _INF)
            return total * p
        lo, hi = self._bounds(state, depth)
        if alpha <= lo and beta >= hi:
            # the window cannot cut: plain expectation, children with exact windows
            total = 0.0
            for o in outcomes:
                total += self._value(_apply(state, action, o), depth - 1, -_INF, _INF)
            return total * p
        total = 0.0  # sum of p * value of the children searched so far
        for i, o in enumerate(outcomes):
            rest = (k - i - 1) * p
            child_alpha = (alpha - total - rest * hi) / p
            child_beta = (beta - total - rest * lo) / p
            v = self._value(
                _apply(state, action, o),
                depth - 1,
                max(child_alpha, lo),
                min(child_beta, hi),
            )
            total += p * v
            if v <= child_alpha:
                return total + rest * hi
            if v >= child_beta:
                return total + rest * lo
        return total

    def _bounds(self, state: State, depth: int) -> tuple[float, float]:
        """Bounds on the values of the children of a chance node at ``state``, whose
        subtrees reach at most ``depth`` plies (plus quiescence) below ``state``."""
        horizon = depth + (self.config.qdepth if self.config.quiescence else int(self._reply))
        if self._no_end_within(state, horizon):
            base = self._evaluate(state)
            spread = horizon * self._max_change
            return base - spread, base + spread
        big = WIN + self.config.depth + 1
        return -big, big

    def _no_end_within(self, state: State, plies: int) -> bool:
        """True when no game can end within ``plies`` plies of ``state`` (DARK only)."""
        rules = self.rules
        if not self._dark_rules:
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

    # ---------------------------------------------------------- DARK frontier

    def _frontier_safe(self, state: State) -> bool:
        """True when no child of ``state`` can be a finished game (so the incremental
        frontier needs no outcome check)."""
        return self._no_end_within(state, 1)

    def _frontier(self, state: State, maximizing: bool) -> tuple[float, int]:
        """Depth-1 node on DARK: the best expected evaluation over the actions, each child
        scored from the parent's evaluation by the local change (no child is built)."""
        assert self._dark is not None
        base = self._evaluate(state)
        deltas = self._frontier_deltas(state)
        best_delta, best_action = max(deltas) if maximizing else min(deltas)
        return base + best_delta, best_action

    def _frontier_deltas(self, state: State) -> list[tuple[float, int]]:
        """``(expected change of the evaluation, action)`` for every legal action (the
        quiet-ply cost of ``contempt`` included: a child without a removal costs one more
        quiet ply, one with a removal gives back the plies so far)."""
        ev = self._dark
        assert ev is not None
        quiet = -self._quiet_cost
        reset = self._quiet_cost * state.plies_since_removal
        board = state.board
        me = state.to_move
        mask = state.face_down_mask
        n = self._n
        piece = ev.piece
        pair = ev.pair
        nbrs = ev.neighbours
        step = self._step
        battle = self._battle
        out: list[tuple[float, int]] = []
        iso = ev.isolated_reveal_delta
        pair_mean = ev.pair_mean
        fd_drop = ev.fd_drop
        count = 0
        for action in legal_actions(state):
            if action < n:
                sq = action
                c0 = board[sq]
                reveal_mask = mask if c0 == 17 else (mask & 0xFF if c0 == 18 else mask & 0xFF00)
                delta = iso(reveal_mask) + quiet
                for nb in nbrs[sq]:
                    q = board[nb]
                    if 0 < q < 17:
                        delta += pair_mean(reveal_mask, q)
                count += reveal_mask.bit_count()
            else:
                sq, dd = divmod(action - n, 4)
                t = step[sq * 4 + dd]
                p = board[sq]
                q = board[t]
                prow = p * 20
                # pairs of p on sq, other than with t
                p_old = 0.0
                for nb in nbrs[sq]:
                    if nb != t:
                        p_old += pair[prow + board[nb]]
                if q == 0:
                    p_new = 0.0
                    for nb in nbrs[t]:
                        if nb != sq:
                            p_new += pair[prow + board[nb]]
                    delta = p_new - p_old + quiet
                    count += 1
                elif q < 17:
                    result = battle[prow + q]
                    q_old = 0.0
                    qrow = q * 20
                    for nb in nbrs[t]:
                        if nb != sq:
                            q_old += pair[qrow + board[nb]]
                    pq = pair[prow + q]
                    if result == BattleResult.TAKE:
                        p_new = 0.0
                        for nb in nbrs[t]:
                            if nb != sq:
                                p_new += pair[prow + board[nb]]
                        delta = -piece[q] - q_old - pq - p_old + p_new
                    elif result == BattleResult.BOTH:
                        delta = -piece[p] - piece[q] - p_old - q_old - pq
                    else:  # LOSE
                        delta = -piece[p] - p_old - pq
                    delta += reset
                    count += 1
                else:
                    outs = _mask_outcomes(
                        mask if q == 17 else (mask & 0xFF if q == 18 else mask & 0xFF00)
                    )
                    # pairs at t with its neighbours other than sq, for any code c: lazily
                    t_nbrs = [board[nb] for nb in nbrs[t] if nb != sq and 0 < board[nb] < 17]
                    p_new = 0.0
                    for qq in t_nbrs:
                        p_new += pair[prow + qq]
                    total = 0.0
                    for o in outs:
                        c = o + 1
                        d = fd_drop[o]
                        result = BattleResult.FORBIDDEN if (c - 1) >> 3 == me else battle[prow + c]
                        if result == BattleResult.FORBIDDEN:
                            # c turns up on t, next to p
                            d += piece[c] + pair[prow + c] + quiet
                            crow = c * 20
                            for qq in t_nbrs:
                                d += pair[crow + qq]
                        elif result == BattleResult.TAKE:
                            d += p_new - p_old + reset
                        elif result == BattleResult.BOTH:
                            d += -piece[p] - p_old + reset
                        else:  # LOSE: p removed, c face up on t
                            d += -piece[p] - p_old + piece[c] + reset
                            crow = c * 20
                            for qq in t_nbrs:
                                d += pair[crow + qq]
                        total += d
                    delta = total / len(outs)
                    count += len(outs)
            out.append((delta, action))
        self.nodes += count
        return out

    def _frontier_quiesce(self, state: State, maximizing: bool) -> tuple[float, int]:
        """:meth:`_frontier` with quiescence. A child where the opponent has no capture is
        worth its evaluation (as the quiescence search returns); elsewhere the opponent
        may capture or stand pat, so the child's evaluation bounds its value (from above
        when the opponent minimises). Actions whose bound cannot beat the best exact value
        so far are skipped; the others are searched child by child, in order of bound."""
        ev = self._dark
        assert ev is not None
        board = state.board
        me = state.to_move
        mask = state.face_down_mask
        n = self._n
        nbrs = ev.neighbours
        step = self._step
        battle = self._battle
        qdepth = self.config.qdepth
        base = self._evaluate(state)
        quiet_plies = state.plies_since_removal
        opp_lo = (1 - me) * 8
        me_lo = me * 8
        # the opponent's captures in this state, as (from, to) squares
        caps: list[tuple[int, int]] = []
        for sq, c in enumerate(board):
            if opp_lo < c <= opp_lo + 8:
                for nb in nbrs[sq]:
                    q = board[nb]
                    if me_lo < q <= me_lo + 8 and battle[c * 20 + q] in _REMOVES:
                        caps.append((sq, nb))
        sign = 1.0 if maximizing else -1.0
        exact: list[tuple[float, int]] = []  # (sign * delta, action), exact
        bounded: list[tuple[float, int]] = []  # (sign * bound, action)
        # squares next to a face-up piece: a piece appearing there may be captured or
        # capture (a superset of what matters is fine: it only costs time)
        hot: set[int] = set()
        for sq, c in enumerate(board):
            if 0 < c < 17:
                hot.update(nbrs[sq])
        for delta, action in self._frontier_deltas(state):
            if action < n:
                maybe = bool(caps) or action in hot
            else:
                sq, d = divmod(action - n, 4)
                t = step[sq * 4 + d]
                maybe = (
                    board[t] >= 17
                    or any(f not in (sq, t) and g not in (sq, t) for f, g in caps)
                    or any(0 < board[nb] < 17 and nb != sq for nb in nbrs[t])
                )
            (bounded if maybe else exact).append((sign * delta, action))
        best, best_action = max(exact) if exact else (-_INF, -1)
        bounded.sort(reverse=True)
        for bound, action in bounded:
            if bound <= best:
                break
            outs = _mask_outcomes(_chance_mask(state, action)) or (-1,)
            k = len(outs)
            # the children's evaluations bound their values; replace them one by one
            total = bound * k
            for o in outs:
                changes, delta = ev.child_change(board, me, action, o)
                # a move onto an occupied square that changes two squares removes a piece
                if len(changes) == 2 and board[changes[1][0]]:
                    delta += self._quiet_cost * quiet_plies
                    child_quiet = 0
                else:
                    delta -= self._quiet_cost
                    child_quiet = quiet_plies + 1
                if not self._opponent_captures(board, caps, changes, me):
                    continue
                child_mask = mask & ~(1 << o) if o >= 0 else mask
                if self._board_quiesce_ok(child_mask, state.ply + 1):
                    b = list(board)
                    for x, code in changes:
                        b[x] = code
                    child_board = tuple(b)
                    value = self._qboard(
                        child_board,
                        1 - me,
                        base + delta,
                        self._piece_counts(child_board, child_mask),
                        -_INF,
                        _INF,
                        qdepth,
                        child_quiet,
                    )
                else:
                    value = self._quiesce(_apply(state, action, o), -_INF, _INF, qdepth)
                total += sign * (value - base - delta)
                if total <= best * k:
                    break  # the rest can only lower it further
            else:
                best, best_action = max((best, best_action), (total / k, action))
        return base + sign * best, best_action

    def _opponent_captures(
        self,
        board: tuple[int, ...],
        caps: list[tuple[int, int]],
        changes: tuple[tuple[int, int], ...],
        me: int,
    ) -> bool:
        """Whether the opponent of ``me`` has a capture after ``changes`` to ``board``."""
        changed = dict(changes)
        for f, t in caps:
            if f not in changed and t not in changed:
                return True
        ev = self._dark
        assert ev is not None
        battle = self._battle
        opp_lo = (1 - me) * 8
        me_lo = me * 8
        for x, code in changes:
            if not 0 < code < 17:
                continue
            for nb in ev.neighbours[x]:
                other = changed.get(nb, board[nb])
                if opp_lo < code <= opp_lo + 8:
                    if me_lo < other <= me_lo + 8 and battle[code * 20 + other] in _REMOVES:
                        return True
                elif opp_lo < other <= opp_lo + 8 and battle[other * 20 + code] in _REMOVES:
                    return True
        return False

    # ---------------------------------------------------------------- quiescence

    def _captures(self, state: State) -> list[int]:
        """Moves onto an opposing face-up piece that remove it (take or both removed),
        most valuable victim first."""
        board = state.board
        n = self._n
        battle = self._battle
        out: list[tuple[int, int]] = []
        if self._dark_rules:
            for action in legal_actions(state):
                if action < n:
                    continue
                sq, d = divmod(action - n, 4)
                q = board[self._step[sq * 4 + d]]
                if 0 < q < 17:
                    p = board[sq]
                    if battle[p * 20 + q] in _REMOVES:
                        out.append((-(((q - 1) & 7) * 16) + ((p - 1) & 7), action))
        else:
            return classic_captures(state)
        out.sort()
        return [a for _, a in out]

    def _board_quiesce_ok(self, mask: int, ply: int) -> bool:
        """Whether :meth:`_qboard` may search captures from a DARK position: nobody can be
        left without a legal action (a reveal stays possible, captures keep the face-down
        set) and no ply limit falls within the quiescence horizon."""
        rules = self.rules
        if rules.ply_limit and ply + self.config.qdepth >= rules.ply_limit:
            return False
        if self._reveal_any:
            return mask != 0
        return (mask & 0xFF) != 0 and (mask >> 8) != 0

    @staticmethod
    def _piece_counts(board: tuple[int, ...], mask: int) -> list[int]:
        counts = [(mask & 0xFF).bit_count(), (mask >> 8).bit_count()]
        for c in board:
            if 0 < c < 17:
                counts[(c - 1) >> 3] += 1
        return counts

    def _qboard(
        self,
        board: tuple[int, ...],
        to_move: int,
        stand: float,
        counts: list[int],
        alpha: float,
        beta: float,
        qdepth: int,
        quiet_plies: int,
    ) -> float:
        """DARK quiescence on a bare board (see :meth:`_board_quiesce_ok`), each child's
        evaluation computed from its parent's; ``counts`` are the players' pieces and
        ``quiet_plies`` the plies since a removal (every capture resets them)."""
        if qdepth == 0:
            return stand
        ev = self._dark_eval
        assert ev is not None
        battle = self._battle
        n = self._n
        lo = to_move * 8
        opp_lo = 8 - lo
        caps: list[tuple[int, int]] = []
        dirs = self._nbr_dirs
        for sq, c in enumerate(board):
            if lo < c <= lo + 8:
                row = c * 20
                for d, nb in dirs[sq]:
                    q = board[nb]
                    if opp_lo < q <= opp_lo + 8:
                        r = battle[row + q]
                        if r in _REMOVES:
                            caps.append((-((q - 1) & 7) * 16 + ((c - 1) & 7), n + 4 * sq + d))
        if not caps:
            return stand
        caps.sort()
        ab = self.config.alphabeta
        maximizing = to_move == self.player
        if ab:
            if maximizing:
                if stand >= beta:
                    return stand
                alpha = max(alpha, stand)
            else:
                if stand <= alpha:
                    return stand
                beta = min(beta, stand)
        best = stand
        opp = 1 - to_move
        given_back = self._quiet_cost * quiet_plies
        for _, action in caps:
            changes, delta = ev.child_change(board, to_move, action, -1)
            self.nodes += 1
            b = list(board)
            for x, code in changes:
                b[x] = code
            child_counts = counts.copy()
            child_counts[opp] -= 1
            if changes[1][1] == 0:  # both removed
                child_counts[to_move] -= 1
            if not (child_counts[0] and child_counts[1]):
                if child_counts[0] == child_counts[1]:
                    v = self._draw
                else:
                    v = WIN if child_counts[self.player] else -WIN
            else:
                v = self._qboard(
                    tuple(b),
                    opp,
                    stand + delta + given_back,
                    child_counts,
                    alpha,
                    beta,
                    qdepth - 1,
                    0,
                )
            if maximizing:
                if v > best:
                    best = v
                    if ab and v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
            elif v < best:
                best = v
                if ab and v < beta:
                    beta = v
                    if alpha >= beta:
                        break
        return best

    def _quiesce(self, state: State, alpha: float, beta: float, qdepth: int) -> float:
        if self._dark_eval is not None and self._board_quiesce_ok(state.face_down_mask, state.ply):
            return self._qboard(
                state.board,
                state.to_move,
                self._evaluate(state),
                self._piece_counts(state.board, state.face_down_mask),
                alpha,
                beta,
                qdepth,
                state.plies_since_removal,
            )
        if self._evaluate_moves is not None:
            stand, moves = self._evaluate_moves(state)
            if not moves:
                return self._score(stuck_outcome(state), 0)
        else:
            stand = self._evaluate(state)
        if qdepth == 0:
            return stand
        captures = self._captures(state)
        if not captures:
            return stand
        ab = self.config.alphabeta
        maximizing = state.to_move == self.player
        best = stand
        if maximizing:
            if ab:
                if stand >= beta:
                    return stand
                alpha = max(alpha, stand)
            for action in captures:
                child = _apply(state, action, -1)
                self.nodes += 1
                v = self._terminal_value(child, 0)
                if v is None:
                    v = self._quiesce(child, alpha, beta, qdepth - 1)
                if v > best:
                    best = v
                    if ab and v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
        else:
            if ab:
                if stand <= alpha:
                    return stand
                beta = min(beta, stand)
            for action in captures:
                child = _apply(state, action, -1)
                self.nodes += 1
                v = self._terminal_value(child, 0)
                if v is None:
                    v = self._quiesce(child, alpha, beta, qdepth - 1)
                if v < best:
                    best = v
                    if ab and v < beta:
                        beta = v
                        if alpha >= beta:
                            break
        return best

    # ------------------------------------------------------------------ helpers

    def _tt_move(self, state: State) -> int:
        entry = self._tt.get(state)
        return entry[3] if entry is not None else -1

    def _tt_store(self, state: State, depth: int, value: float, flag: int, move: int) -> None:
        tt = self._tt
        if len(tt) >= _TT_LIMIT:
            tt.clear()
        old = tt.get(state)
        if old is not None and old[0] > depth:
            return  # keep the deeper entry's move
        tt[state] = (depth, value, flag, move)

    def _order(self, state: State, actions: Sequence[int], tt_move: int) -> list[int]:
        """TT move first, then captures (MVV/LVA), then by the history heuristic."""
        board = state.board
        n = self._n
        step = self._step
        history = self._history
        dark = self._dark_rules
        keyed: list[tuple[int, int]] = []
        for action in actions:
            if action == tt_move:
                key = -1_000_000
            elif action < n:
                key = -history.get(action, 0)
            else:
                sq, d = divmod(action - n, 4)
                t = step[sq * 4 + d]
                if not dark:
                    t = classic_target(state, action)
                q = board[t]
                if 0 < q < 17:
                    key = -100_000 - ((q - 1) & 7) * 100 + ((board[sq] - 1) & 7)
                else:
                    key = -history.get(action, 0)
            keyed.append((key, action))
        keyed.sort(key=_first)
        return [a for _, a in keyed]


def _first(pair: tuple[int, int]) -> int:
    return pair[0]


class MinimaxAgent:
    """Expectiminimax with the SPEC §7 evaluation and switchable enhancements.

    ``weights`` (DARK) are the evaluation weights, for ablations; on CLASSIC the CLASSIC
    evaluation is used (:mod:`jungle_agents._classic_eval`). ``last`` holds the
    :class:`SearchInfo` of the latest decision.

    >>> from jungle_core import DARK, new_game, legal_actions
    >>> agent = MinimaxAgent(DARK, SearchConfig(depth=1))
    >>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    True
    """

    def __init__(
        self,
        rules: Rules,
        config: SearchConfig | None = None,
        weights: DarkWeights | None = None,
        name: str = "minimax",
    ) -> None:
        self.rules = rules
        self.config = config or SearchConfig()
        self.weights = weights
        self.name = name
        self._searchers: dict[int, Searcher] = {}
        self.last: SearchInfo | None = None

    def searcher(self, player: int) -> Searcher:
        """The (cached) searcher that plays for ``player``.

        >>> from jungle_core import DARK
        >>> MinimaxAgent(DARK).searcher(1).player
        1
        """
        found = self._searchers.get(player)
        if found is None:
            evaluator = None
            if self.rules.is_dark:
                evaluator = DarkEvaluator(self.rules, player, self.weights)
            found = self._searchers[player] = Searcher(self.rules, player, self.config, evaluator)
        return found

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The best action found by the search (ties broken by ``rng``)."""
        info = self.searcher(state.to_move).search(state, rng)
        self.last = info
        return info.action
