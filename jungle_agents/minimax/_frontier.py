"""The DARK frontier: depth-1 nodes scored from the parent's evaluation.

On DARK rules every term of the evaluation is a sum over single squares, the face-down
set or adjacent square pairs (:mod:`jungle_agents.minimax._dark_eval`), so a ply changes the value
by a local sum: a depth-1 node scores each child from its own value and the local change,
expected over the chance outcomes, without building the child
(:meth:`DarkFrontierSearch._frontier`). With quiescence, a child where the opponent has
no capture is worth its evaluation, and elsewhere the evaluation bounds the child's value,
so only the actions whose bound can beat the best exact value are searched
(:meth:`DarkFrontierSearch._frontier_quiesce`). The frontier runs only where no child can
be a finished game; the tests check it against the full evaluation.
"""

from __future__ import annotations

from jungle_agents.minimax._base import INF, REMOVING
from jungle_agents.minimax._quiescence import CaptureSearch
from jungle_core import State, legal_actions
from jungle_core.lowlevel import (
    HIDDEN,
    HIDDEN_P0,
    NUM_CODES,
    BattleResult,
    apply,
    chance_mask,
    mask_outcomes,
)

__all__ = ["DarkFrontierSearch"]


class DarkFrontierSearch(CaptureSearch):
    """The searcher's incremental DARK frontier (see the module docstring)."""

    def _frontier_safe(self, state: State) -> bool:
        """True when no child of ``state`` can be a finished game (so the incremental
        frontier needs no outcome check)."""
        return self._no_end_within(state, 1)

    def _frontier(self, state: State, maximizing: bool) -> tuple[float, int]:
        """Depth-1 node on DARK: the best expected evaluation over the actions, each child
        scored from the parent's evaluation by the local change (no child is built)."""
        assert self._incremental_evaluator is not None
        base = self._evaluate(state)
        deltas = self._frontier_deltas(state)
        best_delta, best_action = max(deltas) if maximizing else min(deltas)
        return base + best_delta, best_action

    def _frontier_deltas(self, state: State) -> list[tuple[float, int]]:
        """``(expected change of the evaluation, action)`` for every legal action (the
        quiet-ply cost of ``contempt`` included: a child without a removal costs one more
        quiet ply, one with a removal gives back the plies so far)."""
        ev = self._incremental_evaluator
        assert ev is not None
        quiet = -self._quiet_cost
        reset = self._quiet_cost * state.plies_since_removal
        board = state.board
        me = state.to_move
        mask = state.face_down_mask
        n = self._num_squares
        piece = ev.piece
        pair = ev.pair
        nbrs = ev.neighbours
        step = self._step
        battle = self._battle
        out: list[tuple[float, int]] = []
        isolated_reveal_delta = ev.isolated_reveal_delta
        pair_mean = ev.pair_mean
        face_down_change_on_reveal = ev.face_down_change_on_reveal
        count = 0
        for action in legal_actions(state):
            if action < n:
                sq = action
                c0 = board[sq]
                # the face-down pieces it may be: anyone's, or its known owner's
                reveal_mask = (
                    mask if c0 == HIDDEN else (mask & 0xFF if c0 == HIDDEN_P0 else mask & 0xFF00)
                )
                delta = isolated_reveal_delta(reveal_mask) + quiet
                for nb in nbrs[sq]:
                    q = board[nb]
                    if 0 < q < HIDDEN:
                        delta += pair_mean(reveal_mask, q)
                count += reveal_mask.bit_count()
            else:
                sq, dd = divmod(action - n, 4)
                t = step[sq * 4 + dd]
                p = board[sq]
                q = board[t]
                prow = p * NUM_CODES
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
                elif q < HIDDEN:
                    result = battle[prow + q]
                    q_old = 0.0
                    qrow = q * NUM_CODES
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
                    outs = mask_outcomes(
                        mask if q == HIDDEN else (mask & 0xFF if q == HIDDEN_P0 else mask & 0xFF00)
                    )
                    # pairs at t with its neighbours other than sq, for any code c: lazily
                    t_nbrs = [board[nb] for nb in nbrs[t] if nb != sq and 0 < board[nb] < HIDDEN]
                    p_new = 0.0
                    for qq in t_nbrs:
                        p_new += pair[prow + qq]
                    total = 0.0
                    for o in outs:
                        c = o + 1
                        d = face_down_change_on_reveal[o]
                        result = BattleResult.FORBIDDEN if (c - 1) >> 3 == me else battle[prow + c]
                        if result == BattleResult.FORBIDDEN:
                            # c turns up on t, next to p
                            d += piece[c] + pair[prow + c] + quiet
                            crow = c * NUM_CODES
                            for qq in t_nbrs:
                                d += pair[crow + qq]
                        elif result == BattleResult.TAKE:
                            d += p_new - p_old + reset
                        elif result == BattleResult.BOTH:
                            d += -piece[p] - p_old + reset
                        else:  # LOSE: p removed, c face up on t
                            d += -piece[p] - p_old + piece[c] + reset
                            crow = c * NUM_CODES
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
        ev = self._incremental_evaluator
        assert ev is not None
        board = state.board
        me = state.to_move
        mask = state.face_down_mask
        n = self._num_squares
        nbrs = ev.neighbours
        step = self._step
        battle = self._battle
        qdepth = self.config.qdepth
        base = self._evaluate(state)
        quiet_plies = state.plies_since_removal
        opp_base = (1 - me) * 8
        mover_base = me * 8
        # the opponent's captures in this state, as (from, to) squares
        caps: list[tuple[int, int]] = []
        for sq, c in enumerate(board):
            if opp_base < c <= opp_base + 8:
                for nb in nbrs[sq]:
                    q = board[nb]
                    if mover_base < q <= mover_base + 8 and battle[c * NUM_CODES + q] in REMOVING:
                        caps.append((sq, nb))
        sign = 1.0 if maximizing else -1.0
        exact: list[tuple[float, int]] = []  # (sign * delta, action), exact
        bounded: list[tuple[float, int]] = []  # (sign * bound, action)
        # squares next to a face-up piece: a piece appearing there may be captured or
        # capture (a superset of what matters is fine: it only costs time)
        hot: set[int] = set()
        for sq, c in enumerate(board):
            if 0 < c < HIDDEN:
                hot.update(nbrs[sq])
        for delta, action in self._frontier_deltas(state):
            if action < n:
                maybe = bool(caps) or action in hot
            else:
                sq, d = divmod(action - n, 4)
                t = step[sq * 4 + d]
                maybe = (
                    board[t] >= HIDDEN
                    or any(f not in (sq, t) and g not in (sq, t) for f, g in caps)
                    or any(0 < board[nb] < HIDDEN and nb != sq for nb in nbrs[t])
                )
            (bounded if maybe else exact).append((sign * delta, action))
        best, best_action = max(exact) if exact else (-INF, -1)
        bounded.sort(reverse=True)
        for bound, action in bounded:
            if bound <= best:
                break
            outs = mask_outcomes(chance_mask(state, action)) or (-1,)
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
                    value = self._quiesce_board(
                        child_board,
                        1 - me,
                        base + delta,
                        self._piece_counts(child_board, child_mask),
                        -INF,
                        INF,
                        qdepth,
                        child_quiet,
                    )
                else:
                    value = self._quiesce(apply(state, action, o), -INF, INF, qdepth)
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
        ev = self._incremental_evaluator
        assert ev is not None
        battle = self._battle
        opp_base = (1 - me) * 8
        mover_base = me * 8
        for x, code in changes:
            if not 0 < code < HIDDEN:
                continue
            for nb in ev.neighbours[x]:
                other = changed.get(nb, board[nb])
                if opp_base < code <= opp_base + 8:
                    if (
                        mover_base < other <= mover_base + 8
                        and battle[code * NUM_CODES + other] in REMOVING
                    ):
                        return True
                elif (
                    opp_base < other <= opp_base + 8
                    and battle[other * NUM_CODES + code] in REMOVING
                ):
                    return True
        return False
