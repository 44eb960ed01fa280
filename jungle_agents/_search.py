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

from jungle_agents._dark_eval import DarkEvaluator, DarkWeights
from jungle_core import Rules, State, legal_actions, outcome
from jungle_core._game import _apply, _chance_mask, _mask_outcomes
from jungle_core._tables import BattleResult, tables

__all__ = ["Evaluator", "MinimaxAgent", "SearchConfig", "SearchInfo", "Searcher"]

WIN = 100_000.0
"""The value of a won game (plus the depth left, so that sooner wins score higher)."""
_INF = math.inf
_EXACT, _LOWER, _UPPER = 0, 1, 2
_TT_LIMIT = 3_000_000


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
    time: float = 0.0
    """Time budget per decision in seconds; > 0 turns on iterative deepening."""

    def __attrs_post_init__(self) -> None:
        if self.depth < 1:
            raise ValueError(f"depth must be >= 1, not {self.depth}")
        if self.qdepth < 0:
            raise ValueError(f"qdepth must be >= 0, not {self.qdepth}")
        if self.time < 0:
            raise ValueError(f"time must be >= 0 seconds, not {self.time}")


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
                from jungle_agents._classic_eval import ClassicEvaluator

                evaluator = ClassicEvaluator(rules, player)
        self.evaluator: Evaluator = evaluator
        self._dark: DarkEvaluator | None = (
            evaluator if isinstance(evaluator, DarkEvaluator) and incremental else None
        )
        self._evaluate: Evaluate = evaluator.evaluate
        t = tables(rules)
        self._step = t.step
        self._battle = t.battle
        self._n = rules.num_squares
        self._dark_rules = rules.is_dark
        self._max_change = evaluator.max_ply_change()
        self._tt: dict[State, tuple[int, float, int, int]] = {}
        self._history: dict[int, int] = {}
        self.nodes = 0
        self._deadline = _INF
        self._check = 0
        # terminal-free frontier: see _frontier_safe
        self._reveal_any = rules.reveal == "any"

    # ----------------------------------------------------------------- public

    def search(
        self, state: State, rng: np.random.Generator | None = None, depth: int | None = None
    ) -> SearchInfo:
        """Search ``state`` (the searcher's player to move) and return the decision.

        ``rng`` shuffles the root actions before ordering, so that equally good actions
        are chosen at random; ``depth`` overrides the configured depth.
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
                action, value = self._root(state, actions, d)
            except _Timeout:
                break
            best = (action, value, d)
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
        move), with the configured enhancements; no time limit."""
        self.nodes = 0
        self._tt.clear()
        self._history.clear()
        self._deadline = _INF
        return self._value(state, depth, -_INF, _INF)

    # ------------------------------------------------------------------ nodes

    def _root(self, state: State, actions: list[int], depth: int) -> tuple[int, float]:
        cfg = self.config
        ordered = self._order(state, actions, self._tt_move(state)) if cfg.ordering else actions
        alpha = -_INF
        best_action = ordered[0]
        for action in ordered:
            v = self._action(state, action, depth, alpha if cfg.alphabeta else -_INF, _INF)
            if v > alpha:
                alpha = v
                best_action = action
        self.nodes += 1
        if cfg.tt:
            self._tt_store(state, depth, alpha, _EXACT, best_action)
        return best_action, alpha

    def _terminal_value(self, state: State, depth: int) -> float | None:
        result = outcome(state)
        if result is None:
            return None
        if result.winner is None:
            return 0.0
        return WIN + depth if result.winner == self.player else -WIN - depth

    def _value(self, state: State, depth: int, alpha: float, beta: float) -> float:
        """The value of a decision node, fail-soft within (alpha, beta)."""
        self.nodes += 1
        self._check += 1
        if self._check >= 4096:
            self._check = 0
            if time.perf_counter() > self._deadline:
                raise _Timeout
        result = outcome(state)
        if result is not None:
            if result.winner is None:
                return 0.0
            return WIN + depth if result.winner == self.player else -WIN - depth
        if depth == 0:
            if self.config.quiescence:
                return self._quiesce(state, alpha, beta, self.config.qdepth)
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
            and not cfg.quiescence
            and self._frontier_safe(state)
        ):
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
        horizon = depth + (self.config.qdepth if self.config.quiescence else 0)
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
        board = state.board
        counts = [(mask & 0xFF).bit_count(), (mask >> 8).bit_count()]
        for c in board:
            if 0 < c < 17:
                counts[(c - 1) >> 3] += 1
        if min(counts) <= plies:
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
        ev = self._dark
        assert ev is not None
        board = state.board
        me = state.to_move
        mask = state.face_down_mask
        n = self._n
        piece = ev.piece
        pair = ev.pair
        nbrs = ev.neighbours
        step = self._step
        battle = self._battle
        base = ev.evaluate(state)
        best = -_INF if maximizing else _INF
        best_action = -1
        iso = ev.isolated_reveal_delta
        pair_mean = ev.pair_mean
        fd_drop = ev.fd_drop
        count = 0
        for action in legal_actions(state):
            if action < n:
                sq = action
                c0 = board[sq]
                reveal_mask = mask if c0 == 17 else (mask & 0xFF if c0 == 18 else mask & 0xFF00)
                delta = iso(reveal_mask)
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
                    delta = p_new - p_old
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
                            d += piece[c] + pair[prow + c]
                            crow = c * 20
                            for qq in t_nbrs:
                                d += pair[crow + qq]
                        elif result == BattleResult.TAKE:
                            d += p_new - p_old
                        elif result == BattleResult.BOTH:
                            d += -piece[p] - p_old
                        else:  # LOSE: p removed, c face up on t
                            d += -piece[p] - p_old + piece[c]
                            crow = c * 20
                            for qq in t_nbrs:
                                d += pair[crow + qq]
                        total += d
                    delta = total / len(outs)
                    count += len(outs)
            if maximizing:
                if delta > best:
                    best = delta
                    best_action = action
            elif delta < best:
                best = delta
                best_action = action
        self.nodes += count
        return base + best, best_action

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
                    if battle[p * 20 + q] in (BattleResult.TAKE, BattleResult.BOTH):
                        out.append((-(((q - 1) & 7) * 16) + ((p - 1) & 7), action))
        else:
            from jungle_core._notation import _destination

            for action in legal_actions(state):
                t = _destination(state, action)
                q = board[t]
                if q:
                    p = board[(action - n) // 4]
                    out.append((-(((q - 1) & 7) * 16) + ((p - 1) & 7), action))
        out.sort()
        return [a for _, a in out]

    def _quiesce(self, state: State, alpha: float, beta: float, qdepth: int) -> float:
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
                if not dark and t >= 0:
                    from jungle_core._notation import _destination

                    t = _destination(state, action)
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
        """The (cached) searcher that plays for ``player``."""
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
