"""Quiescence: at the horizon, captures are searched (with stand pat) until none is left
or ``qdepth`` plies are used.

A capture is a move onto an opposing face-up piece that removes it (takes it, or both are
removed). Two searches: :meth:`CaptureSearch._quiesce` on states, for either rule set,
and :meth:`CaptureSearch._quiesce_board` on bare DARK boards, where each child's
evaluation is its parent's plus the local change (:meth:`DarkEvaluator.child_change`) and
no state is built; it runs wherever no game can end within the quiescence horizon save
by a capture that removes a side's last piece, which it scores itself.
"""

from __future__ import annotations

from jungle_agents.minimax._base import REMOVING, SearchBase
from jungle_agents.minimax._classic_eval import classic_captures
from jungle_agents.minimax._config import WIN
from jungle_core import State, legal_actions
from jungle_core.lowlevel import HIDDEN, NUM_CODES, apply

__all__ = ["CaptureSearch"]


class CaptureSearch(SearchBase):
    """The searcher's quiescence searches (see the module docstring)."""

    def _captures(self, state: State) -> list[int]:
        """Moves onto an opposing face-up piece that remove it (take or both removed),
        most valuable victim first."""
        board = state.board
        n = self._num_squares
        battle = self._battle
        out: list[tuple[int, int]] = []
        if self._rules_are_dark:
            for action in legal_actions(state):
                if action < n:
                    continue
                sq, d = divmod(action - n, 4)
                q = board[self._step[sq * 4 + d]]
                if 0 < q < HIDDEN:
                    p = board[sq]
                    if battle[p * NUM_CODES + q] in REMOVING:
                        out.append((-(((q - 1) & 7) * 16) + ((p - 1) & 7), action))
        else:
            return classic_captures(state)
        out.sort()
        return [a for _, a in out]

    def _board_quiesce_ok(self, mask: int, ply: int) -> bool:
        """Whether :meth:`_quiesce_board` may search captures from a DARK position: nobody
        can be left without a legal action (a reveal stays possible, captures keep the
        face-down set) and no ply limit falls within the quiescence horizon."""
        rules = self.rules
        if rules.ply_limit and ply + self.config.qdepth >= rules.ply_limit:
            return False
        if self._reveal_any:
            return mask != 0
        return (mask & 0xFF) != 0 and (mask >> 8) != 0

    def _quiesce_board(
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
        ev = self._dark_evaluator
        assert ev is not None
        battle = self._battle
        n = self._num_squares
        mover_base = to_move * 8
        opp_base = 8 - mover_base
        caps: list[tuple[int, int]] = []
        dirs = self._neighbours_with_dirs
        for sq, c in enumerate(board):
            if mover_base < c <= mover_base + 8:
                row = c * NUM_CODES
                for d, nb in dirs[sq]:
                    q = board[nb]
                    if opp_base < q <= opp_base + 8:
                        r = battle[row + q]
                        if r in REMOVING:
                            caps.append((-((q - 1) & 7) * 16 + ((c - 1) & 7), n + 4 * sq + d))
        if not caps:
            return stand
        caps.sort()
        ab = self.config.alphabeta
        maximizing = to_move == self.player
        # as in _value: the mover maximises sign * value within its window (low, high)
        sign = 1.0 if maximizing else -1.0
        low, high = (alpha, beta) if maximizing else (-beta, -alpha)
        best = sign * stand
        if ab:
            if best >= high:
                return stand
            low = max(low, best)
            alpha, beta = (low, high) if maximizing else (-high, -low)
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
                v = self._quiesce_board(
                    tuple(b),
                    opp,
                    stand + delta + given_back,
                    child_counts,
                    alpha,
                    beta,
                    qdepth - 1,
                    0,
                )
            v *= sign
            if v > best:
                best = v
                if ab and v > low:
                    low = v
                    if low >= high:
                        break
                    alpha, beta = (low, high) if maximizing else (-high, -low)
        return sign * best

    def _quiesce(self, state: State, alpha: float, beta: float, qdepth: int) -> float:
        """The value of ``state`` at the horizon, fail-soft within (alpha, beta): the
        better of standing pat and each capture, at most ``qdepth`` plies deep (on a bare
        board where :meth:`_board_quiesce_ok` allows)."""
        mask = state.face_down_mask
        if self._dark_evaluator is not None and self._board_quiesce_ok(mask, state.ply):
            return self._quiesce_board(
                state.board,
                state.to_move,
                self._evaluate(state),
                self._piece_counts(state.board, mask),
                alpha,
                beta,
                qdepth,
                state.plies_since_removal,
            )
        stand = self._static_value(state)
        if qdepth == 0:
            return stand
        captures = self._captures(state)
        if not captures:
            return stand
        ab = self.config.alphabeta
        maximizing = state.to_move == self.player
        # as in _value: the mover maximises sign * value within its window (low, high)
        sign = 1.0 if maximizing else -1.0
        low, high = (alpha, beta) if maximizing else (-beta, -alpha)
        best = sign * stand
        if ab:
            if best >= high:
                return stand
            low = max(low, best)
            alpha, beta = (low, high) if maximizing else (-high, -low)
        for action in captures:
            child = apply(state, action, -1)
            self.nodes += 1
            v = self._terminal_value(child, 0)
            if v is None:
                v = self._quiesce(child, alpha, beta, qdepth - 1)
            v *= sign
            if v > best:
                best = v
                if ab and v > low:
                    low = v
                    if low >= high:
                        break
                    alpha, beta = (low, high) if maximizing else (-high, -low)
        return sign * best
