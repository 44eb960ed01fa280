"""The Minimax agent's search: depth-limited expectiminimax with switchable enhancements.

Decision nodes maximise (the agent to move) or minimise (the opponent) the evaluation
(:mod:`jungle_agents.minimax._dark_eval`, :mod:`jungle_agents.minimax._classic_eval`), always
scored for
the agent at the root. Every action that turns a piece face up
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

Two switches change what is scored, beyond plain expectiminimax; both are on by default,
and ``contempt=0,reply=0`` is the plain scoring (a draw is 0, no extra ply at the
horizon; the tests check each against its own plain definition):

- ``contempt`` (100): a draw scores ``-contempt`` instead of 0, and on DARK every position
  carries the share of it that its run of quiet plies has used up,
  ``contempt * plies_since_removal / no_removal_limit``. The default weights score the even
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
(:mod:`jungle_agents.minimax._dark_eval`); the tests check it against the full evaluation.

Where each part lives: the settings in :mod:`jungle_agents.minimax._config`; what the
parts share (evaluation, game-end scores) in :mod:`jungle_agents.minimax._base`; the
transposition table and move ordering in :mod:`jungle_agents.minimax._ordering`; quiescence
in :mod:`jungle_agents.minimax._quiescence`; the DARK frontier in
:mod:`jungle_agents.minimax._frontier`; here the node search (one routine for both rule
sets, the transposition table, Star1, the reply), iterative deepening and the root's
tie-break; the agent in :mod:`jungle_agents.minimax._agent`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from jungle_agents.minimax._base import INF, REMOVING, Evaluator
from jungle_agents.minimax._classic_eval import classic_moves, classic_ordered_moves, stuck_outcome
from jungle_agents.minimax._config import MAX_DEPTH, WIN, SearchConfig, SearchInfo
from jungle_agents.minimax._frontier import DarkFrontierSearch
from jungle_agents.minimax._ordering import EXACT, LOWER, UPPER
from jungle_core import State, legal_actions
from jungle_core.lowlevel import HIDDEN, NUM_CODES, apply, chance_mask, mask_outcomes

__all__ = ["MAX_DEPTH", "WIN", "Evaluator", "SearchConfig", "SearchInfo", "Searcher"]

_TIE = 1e-6
"""Root values closer than this are ties."""


class _Timeout(Exception):
    pass


class Searcher(DarkFrontierSearch):
    """One expectiminimax search for the player ``player`` (reusable across decisions):
    ``Searcher(rules, player, config=None, evaluator=None, *, incremental=True)``.

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
        self._fresh()
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
            self._deadline = INF
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
        self._deadline = INF
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
        >>> literal = SearchConfig(contempt=0.0, reply=False)   # the plain scoring
        >>> Searcher(DARK, 0, literal).value(s, 2)
        60.0
        >>> # the defaults: w answers the threat (reply) and steps away again, and the
        >>> # three quiet plies cost 3 * contempt / 100
        >>> Searcher(DARK, 0, SearchConfig()).value(s, 2)
        37.0
        """
        self._fresh()
        return self._value(state, depth, -INF, INF)

    def action_values(self, state: State, depth: int) -> dict[int, float]:
        """Every legal action's exact value at ``depth`` for the searcher's player (to
        move in ``state``), each searched with a full window; no time limit. The largest
        is :meth:`value`'s; a search's root keeps exact values only near the best, so
        this is for analysis (how far an action falls short of the best), not for play.

        >>> from jungle_core import DARK, from_fen
        >>> s = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")   # E on a1 takes the w on b1
        >>> values = Searcher(DARK, 0, SearchConfig(depth=1)).action_values(s, 1)
        >>> values[56 + 3] == WIN, max(values, key=values.__getitem__) == 56 + 3
        (True, True)
        """
        if state.to_move != self.player:
            raise ValueError(f"player {state.to_move} is to move, not the searcher's {self.player}")
        self._fresh()
        return {a: self._action(state, a, depth, -INF, INF) for a in legal_actions(state)}

    def _fresh(self) -> None:
        """Forget the previous search: node count, transposition table, history."""
        self.nodes = 0
        self._tt.clear()
        self._move_order.history.clear()
        self._deadline = INF

    # ------------------------------------------------------------------ nodes

    def _root(self, state: State, actions: list[int], depth: int) -> tuple[int, float, list[int]]:
        """The best action, its value, and every action whose value is within
        ``margin`` (at least ``_TIE``) of it. Alpha-beta searches each later action with
        alpha lowered by that much, so that the value of such an action comes back exact."""
        cfg = self.config
        ordered = (
            self._move_order.order(state, actions, self._tt.best_action(state))
            if cfg.ordering
            else actions
        )
        slack = cfg.margin + _TIE
        alpha = -INF
        best_action = ordered[0]
        near: list[tuple[float, int]] = []
        for action in ordered:
            v = self._action(state, action, depth, alpha - slack if cfg.alphabeta else -INF, INF)
            if v > alpha - slack:
                near.append((v, action))
            if v > alpha:
                alpha = v
                best_action = action
        self.nodes += 1
        if cfg.tt:
            self._tt.store(state, depth, alpha, EXACT, best_action)
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
        if not mask_outcomes(chance_mask(state, action)):
            board = apply(state, action, -1).board
        else:
            board = state.board
        me = state.to_move
        cols = self.rules.cols
        battle = self._battle
        mine = [(sq, c) for sq, c in enumerate(board) if me * 8 < c <= me * 8 + 8]
        theirs = [(sq, c) for sq, c in enumerate(board) if 0 < c < HIDDEN and (c - 1) >> 3 != me]
        total = 0
        for sq, c in mine:
            r, k = divmod(sq, cols)
            near = [
                abs(r - tsq // cols) + abs(k - tsq % cols)
                for tsq, q in theirs
                if battle[c * NUM_CODES + q] in REMOVING
            ]
            if near:
                total += min(near)
        return total

    def _threatened(self, state: State) -> bool:
        """Whether a face-up piece of the opponent stands next to one of the agent's that
        can remove it (take it, or both be removed)."""
        board = state.board
        battle = self._battle
        own_base = self._own_code_base
        opp_base = self._opp_code_base
        for sq, c in enumerate(board):
            if own_base < c <= own_base + 8:
                row = c * NUM_CODES
                for _, nb in self._neighbours_with_dirs[sq]:
                    q = board[nb]
                    if opp_base < q <= opp_base + 8 and battle[row + q] in REMOVING:
                        return True
        return False

    def _value(self, state: State, depth: int, alpha: float, beta: float) -> float:
        """The value of a decision node, fail-soft within (alpha, beta), on either rule set.

        The side to move maximises the value (the agent) or minimises it (the opponent);
        the loop over the actions is written once for both, on values and a window
        multiplied by ``sign`` (+1 or -1: exact in floating point), so that the mover
        always maximises."""
        self.nodes += 1
        self._nodes_since_clock_check += 1
        if self._nodes_since_clock_check >= self._clock_check_nodes:
            self._nodes_since_clock_check = 0
            if time.perf_counter() > self._deadline:
                raise _Timeout
        result = self._game_over(state)
        if result is not None:
            return self._score(result, depth)
        cfg = self.config
        if depth == 0:
            if cfg.quiescence:
                return self._quiesce(state, alpha, beta, cfg.qdepth)
            if (
                self._reply
                and not state.face_down_mask
                and state.to_move != self.player
                and self._threatened(state)
            ):
                # the opponent answers the threat: a depth-1 node of its own, whose
                # children (the agent to move) are evaluated as they stand
                return self._value(state, 1, alpha, beta)
            return self._static_value(state)
        tt_move = -1
        if cfg.tt:
            entry = self._tt.get(state)
            if entry is not None:
                e_depth, e_value, e_flag, tt_move = entry
                if e_depth == depth:
                    if e_flag == EXACT:
                        return e_value
                    if e_flag == LOWER:
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
            and self._incremental_evaluator is not None
            # with the reply, a child may need its own answer: build the children
            and not (self._reply and maximizing and state.face_down_mask.bit_count() <= 1)
            and self._frontier_safe(state)
        ):
            if cfg.quiescence:
                best, best_action = self._frontier_quiesce(state, maximizing)
            else:
                best, best_action = self._frontier(state, maximizing)
            alpha0, beta0 = -INF, INF  # the frontier value is exact
        else:
            actions = self._ordered_actions(state, tt_move)
            if not actions:  # only the CLASSIC move generator leaves this to the node
                return self._score(stuck_outcome(state), depth)
            if depth == 1 and self._prefetch is not None and not cfg.quiescence:
                self._prefetch_children(state, actions)
            ab = cfg.alphabeta
            chance = self._rules_are_dark  # CLASSIC actions have no chance outcomes
            sign = 1.0 if maximizing else -1.0
            # the window as the mover sees it: it raises ``low``, and ``high`` cuts
            low, high = (alpha, beta) if maximizing else (-beta, -alpha)
            best = -INF
            best_action = actions[0]
            for action in actions:
                if chance:
                    v = sign * self._action(state, action, depth, alpha, beta)
                else:
                    v = sign * self._value(apply(state, action, -1), depth - 1, alpha, beta)
                if v > best:
                    best = v
                    best_action = action
                    if ab and v > low:
                        low = v
                        if low >= high:
                            break
                        alpha, beta = (low, high) if maximizing else (-high, -low)
            best *= sign
            if cfg.ordering and ab and low >= high:
                self._move_order.reward_cutoff(best_action, depth)
        if cfg.tt:
            if best <= alpha0:
                flag = UPPER
            elif best >= beta0:
                flag = LOWER
            else:
                flag = EXACT
            self._tt.store(state, depth, best, flag, best_action)
        return best

    def _prefetch_children(self, state: State, actions: Sequence[int]) -> None:
        """Hand every child of a frontier node (each outcome of each action) to the
        evaluator's ``prefetch`` at once, so that one batched pass scores them."""
        assert self._prefetch is not None
        children = []
        for action in actions:
            for o in mask_outcomes(chance_mask(state, action)) or (-1,):
                children.append(apply(state, action, o))
        self._prefetch(children)

    def _action(self, state: State, action: int, depth: int, alpha: float, beta: float) -> float:
        """The value of ``action`` in ``state``: a chance node or one deterministic child."""
        outcomes = mask_outcomes(chance_mask(state, action))
        cfg = self.config
        if not cfg.alphabeta:
            alpha, beta = -INF, INF
        if not outcomes:
            return self._value(apply(state, action, -1), depth - 1, alpha, beta)
        k = len(outcomes)
        p = 1.0 / k
        if not (cfg.star1 and cfg.alphabeta) or k == 1:
            total = 0.0
            for o in outcomes:
                total += self._value(apply(state, action, o), depth - 1, -INF, INF)
            return total * p
        lo, hi = self._bounds(state, depth)
        if alpha <= lo and beta >= hi:
            # the window cannot cut: plain expectation, children with exact windows
            total = 0.0
            for o in outcomes:
                total += self._value(apply(state, action, o), depth - 1, -INF, INF)
            return total * p
        total = 0.0  # sum of p * value of the children searched so far
        for i, o in enumerate(outcomes):
            rest = (k - i - 1) * p
            child_alpha = (alpha - total - rest * hi) / p
            child_beta = (beta - total - rest * lo) / p
            v = self._value(
                apply(state, action, o),
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

    def _ordered_actions(self, state: State, tt_move: int) -> Sequence[int]:
        """The legal actions of a decision node in the order the search tries them."""
        if self._fast_classic:
            if self.config.ordering:
                return classic_ordered_moves(state, tt_move, self._move_order.history)
            return classic_moves(state)
        actions = legal_actions(state)
        if self.config.ordering:
            return self._move_order.order(state, actions, tt_move)
        return actions
