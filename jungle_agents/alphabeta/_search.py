"""The ``alphabeta`` search: a CLASSIC-only negamax alpha-beta on a mutable board.

The ``minimax`` agent searches both rule families through the core's immutable states:
every node builds a new :class:`jungle_core.State`. This search is for CLASSIC alone (no
chance), and it keeps one private board that it changes and restores in place (make and
unmake), with the piece-square evaluation and a Zobrist hash updated incrementally. The
caller's state is never touched: the board is copied from it at the root.

Move generation reads the core's own move table (``Tables.classic_candidates``: each
piece's moves from each square, and which codes it may land on), so the move rule is the
core's; the tests compare the generated moves with :func:`jungle_core.legal_actions` on
random positions, and the fixed-depth value with a plain minimax over the core's states.

The search, each enhancement a switch of :class:`AlphaBetaConfig`:

- negamax alpha-beta (fail-soft) in iterative deepening under a time budget; a move that
  beat the previous iteration's best in an unfinished iteration is played;
- move order: the transposition table's move, den entries, captures (most valuable victim,
  then least valuable attacker), ``killers``, then ``history``;
- ``tt``: transposition table on a Zobrist hash (entries of at least the depth asked
  are reused, with bounds; wins are stored relative to the node);
- ``pvs``: principal variation search;
- ``quiescence``: captures and den entries with stand-pat at the horizon; a side with an
  enemy piece next to its own den may not stand pat (it must take that piece, or it
  loses);
- ``repetition``: a move back to a position of the game so far (``earlier``) or of the
  search path scores as a draw, ``-contempt`` for the side searching, instead of being
  searched (the ply limit's draw scores the same). CLASSIC has no repetition rule, so
  without it two deterministic engines cycle through a few positions until the ply limit
  even where one of them is ahead.

The game ends as the core says: a piece entering the enemy den wins, a side with no
pieces or no legal move loses (``Rules.no_moves``), and the ply limit draws.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Iterable, Iterator

import numpy as np

from jungle_agents.alphabeta._config import MATE, MAX_PLY, AlphaBetaConfig, AlphaBetaInfo
from jungle_agents.minimax import ClassicEvaluator, ClassicWeights
from jungle_core import JungleError, Rules, State
from jungle_core.lowlevel import NUM_CODES, tables

__all__ = ["AlphaBetaSearch"]

_EXACT, _LOWER, _UPPER = 0, 1, 2
_TT_LIMIT = 1 << 20
"""Entries kept before the table is cleared (about 150 MiB at most)."""
_CLOCK_NODES = 512
"""Nodes between two looks at the clock."""
_DEN_ENTRY = 1 << 30
_CAPTURE = 1 << 24
_KILLER = 1 << 20

# a move: (action, code, from, to, captured code)
Move = tuple[int, int, int, int, int]


class _Timeout(Exception):
    pass


_first = operator.itemgetter(0)


class AlphaBetaSearch:
    """One CLASSIC search (reusable across decisions and both sides). ``weights``: the
    CLASSIC evaluation's (:class:`jungle_agents.ClassicWeights`; its piece-square terms).

    >>> from jungle_core import CLASSIC, legal_actions, new_game
    >>> search = AlphaBetaSearch(CLASSIC, AlphaBetaConfig(time=0.0, depth=3))
    >>> info = search.search(new_game(CLASSIC))
    >>> info.depth, info.action in legal_actions(new_game(CLASSIC))
    (3, True)
    """

    def __init__(
        self,
        rules: Rules,
        config: AlphaBetaConfig | None = None,
        weights: ClassicWeights | None = None,
    ) -> None:
        if rules.variant != "classic" or rules.repetition != "none":
            raise JungleError(
                "the alphabeta search plays CLASSIC rules without repetition bans, "
                f"not {rules.name}"
            )
        self.rules = rules
        self.config = config or AlphaBetaConfig()
        t = tables(rules)
        self._n = rules.num_squares
        self._cand = t.classic_candidates
        self._dens = t.dens
        self._ply_limit = rules.ply_limit or (1 << 62)
        self._stuck_loses = rules.no_moves != "draw"
        # next to each den: the squares from which an enemy piece may enter it
        guard = [tuple(sq for _, sq in t.neighbours[t.dens[p]]) for p in (0, 1)]
        self._den_guard = (guard[0], guard[1])
        evaluator = ClassicEvaluator(rules, 0, weights)
        self._pst = evaluator.pst  # for player 0: + own pieces, - the opponent's
        w = evaluator.weights
        self._victim = tuple(
            0 if not c else int(w.value[((c - 1) & 7) + 1]) for c in range(NUM_CODES)
        )
        rng = np.random.default_rng(20261206)
        self._zobrist = tuple(
            tuple(int(x) for x in rng.integers(1, 2**62, self._n)) for _ in range(NUM_CODES)
        )
        self._zside = int(rng.integers(1, 2**62))
        self._tt: dict[int, tuple[int, int, float, int]] = {}
        self._history: dict[int, int] = {}
        self._killers: list[list[int]] = [[-1, -1] for _ in range(MAX_PLY + 2)]
        self.nodes = 0
        self._deadline = float("inf")
        self._clock = 0
        self._rep: set[int] = set()
        self._drawv = [0.0, 0.0]

    # ------------------------------------------------------------------ board

    def _load(self, state: State) -> None:
        board = list(state.board)
        self._board = board
        where = [-1] * NUM_CODES
        score = 0.0
        pst = self._pst
        for sq, c in enumerate(board):
            if c:
                where[c] = sq
                score += pst[c][sq]
        self._where = where
        self._score = score
        self._side = state.to_move
        self._hash = self.position_key(state)
        self._ply = state.ply
        self._count = [
            sum(1 for c in range(1, 9) if where[c] >= 0),
            sum(1 for c in range(9, 17) if where[c] >= 0),
        ]

    def position_key(self, state: State) -> int:
        """The Zobrist key of ``state``'s board and side to move (what ``repetition``
        compares)."""
        z = self._zobrist
        h = self._zside if state.to_move else 0
        for sq, c in enumerate(state.board):
            if c:
                h ^= z[c][sq]
        return h

    def _moves(self, side: int) -> list[Move]:
        board = self._board
        where = self._where
        cand = self._cand
        out: list[Move] = []
        for code in range(side * 8 + 1, side * 8 + 9):
            sq = where[code]
            if sq < 0:
                continue
            for action, target, ok, crossed in cand[code][sq]:
                q = board[target]
                if not ok[q]:
                    continue
                if crossed:
                    blocked = False
                    for w in crossed:
                        if board[w]:
                            blocked = True
                            break
                    if blocked:
                        continue
                out.append((action, code, sq, target, q))
        return out

    def _make(self, m: Move) -> None:
        _, code, frm, to, q = m
        board = self._board
        pst = self._pst
        z = self._zobrist
        board[frm] = 0
        board[to] = code
        self._where[code] = to
        self._score += pst[code][to] - pst[code][frm]
        h = self._hash ^ z[code][frm] ^ z[code][to] ^ self._zside
        if q:
            self._where[q] = -1
            self._score -= pst[q][to]
            h ^= z[q][to]
            self._count[(q - 1) >> 3] -= 1
        self._hash = h
        self._side ^= 1
        self._ply += 1

    def _unmake(self, m: Move) -> None:
        _, code, frm, to, q = m
        board = self._board
        pst = self._pst
        z = self._zobrist
        board[frm] = code
        board[to] = q
        self._where[code] = frm
        self._score -= pst[code][to] - pst[code][frm]
        h = self._hash ^ z[code][frm] ^ z[code][to] ^ self._zside
        if q:
            self._where[q] = to
            self._score += pst[q][to]
            h ^= z[q][to]
            self._count[(q - 1) >> 3] += 1
        self._hash = h
        self._side ^= 1
        self._ply -= 1

    def _threatened(self, side: int) -> bool:
        """Whether an enemy piece stands next to ``side``'s den (it enters next ply)."""
        board = self._board
        lo = (1 - side) * 8
        for sq in self._den_guard[side]:
            c = board[sq]
            if lo < c <= lo + 8:
                return True
        return False

    def _evaluate(self) -> float:
        """The static value for the side to move."""
        return self._score if self._side == 0 else -self._score

    # ----------------------------------------------------------------- search

    def search(self, state: State, earlier: Iterable[State] = ()) -> AlphaBetaInfo:
        """Search ``state`` (CLASSIC, not finished) for the side to move.

        With ``time > 0``, iterative deepening until the time is spent (or ``depth``);
        with ``time == 0``, iterative deepening to exactly ``depth``. ``earlier``: positions
        of the game before ``state``; with ``repetition``, moving back to one of them (or
        to ``state``) scores as a draw.
        """
        cfg = self.config
        start = time.perf_counter()
        self._load(state)
        self._rep = {self._hash, *map(self.position_key, earlier)} if cfg.repetition else set()
        self._drawv[state.to_move] = -cfg.contempt
        self._drawv[1 - state.to_move] = cfg.contempt
        self.nodes = 0
        self._clock = 0
        self._tt.clear()
        self._history.clear()
        for k in self._killers:
            k[0] = k[1] = -1
        root_moves = self._moves(self._side)
        if not root_moves:
            raise JungleError("the side to move has no legal move")
        self._deadline = start + cfg.time if cfg.time > 0 else float("inf")
        best = root_moves[0]
        value = 0.0
        depth_done = 0
        pv: tuple[int, ...] = (best[0],)
        for depth in range(1, cfg.depth + 1):
            try:
                v, m = self._root(root_moves, depth, best)
            except _Timeout:
                if self._improved is not None:  # a better move found in the unfinished depth
                    best = self._improved
                    pv = (best[0],)
                self._load(state)
                break
            best, value, depth_done = m, v, depth
            pv = self._pv(state, best)
            if abs(v) >= MATE - MAX_PLY:
                break  # a forced result
        self._deadline = float("inf")
        return AlphaBetaInfo(
            best[0], value, depth_done, self.nodes, time.perf_counter() - start, pv
        )

    def _pv(self, state: State, first: Move) -> tuple[int, ...]:
        """The principal variation: ``first``, then the table's best moves."""
        self._load(state)
        line = [first[0]]
        self._make(first)
        seen = {self._hash}
        for _ in range(30):
            entry = self._tt.get(self._hash)
            if entry is None:
                break
            move = next((m for m in self._moves(self._side) if m[0] == entry[3]), None)
            if move is None:
                break
            line.append(move[0])
            self._make(move)
            if self._hash in seen:
                break
            seen.add(self._hash)
        self._load(state)
        return tuple(line)

    def _root(self, moves: list[Move], depth: int, first: Move) -> tuple[float, Move]:
        """The root's value and best move at ``depth``: ``first`` (the previous
        iteration's best) searched first, then the ordered rest; a later move that beats
        it is remembered in ``_improved`` (played if the iteration runs out of time)."""
        self._improved: Move | None = None
        ordered = self._order(moves, first[0], 0)
        best_v = -float("inf")
        best = ordered[0]
        pvs = self.config.pvs
        for i, m in enumerate(ordered):
            if self._wins(m):
                v = float(MATE - 1)
            else:
                self._make(m)  # a timeout reloads the board: no try/finally needed
                if self._hash in self._rep:
                    v = self._drawv[self._side ^ 1]
                elif i and pvs:
                    v = -self._node(depth - 1, -best_v - 1, -best_v, 1)
                    if v > best_v:
                        v = -self._node(depth - 1, -float("inf"), -best_v, 1)
                else:
                    v = -self._node(depth - 1, -float("inf"), -best_v, 1)
                self._unmake(m)
            if v > best_v:
                best_v = v
                best = m
                if i:
                    self._improved = m
        if self.config.tt:
            self._tt[self._hash] = (depth, _EXACT, best_v, best[0])
        return best_v, best

    def _wins(self, m: Move) -> bool:
        """Whether move ``m`` of the side to move ends the game in its favour."""
        side = self._side
        if m[3] == self._dens[1 - side]:
            return True
        return bool(m[4]) and self._count[1 - side] == 1

    def _order(self, moves: list[Move], tt_move: int, ply: int) -> list[Move]:
        cfg = self.config
        enemy_den = self._dens[1 - self._side]
        victim = self._victim
        history = self._history if cfg.history else None
        k0, k1 = self._killers[ply] if cfg.killers else (-1, -1)
        scored = []
        for m in moves:
            action, code, _, to, q = m
            if action == tt_move:
                s = 1 << 40
            elif to == enemy_den:
                s = _DEN_ENTRY
            elif q:
                s = _CAPTURE + victim[q] * 64 - victim[code]
            elif action == k0:
                s = _KILLER + 1
            elif action == k1:
                s = _KILLER
            elif history is not None:
                s = history.get(action, 0)
            else:
                s = 0
            scored.append((s, m))
        scored.sort(key=_first, reverse=True)  # stable: ties keep the generation order
        return [m for _, m in scored]

    def _staged(self, side: int, tt_move: int, ply: int) -> Iterator[Move]:
        """The moves in search order; the table's move first, before the others are
        generated (a cut-off on it saves generating them)."""
        first = self._move_of(side, tt_move) if tt_move >= 0 else None
        if first is None:
            yield from self._order(self._moves(side), -1, ply)
            return
        yield first
        for m in self._order(self._moves(side), tt_move, ply):
            if m[0] != tt_move:
                yield m

    def _move_of(self, side: int, action: int) -> Move | None:
        """The move ``action`` of ``side`` if it is legal here (a table entry may come
        from another position with the same hash), else None."""
        frm = (action - self._n) >> 2
        if not 0 <= frm < self._n:
            return None
        board = self._board
        code = board[frm]
        if not side * 8 < code <= side * 8 + 8:
            return None
        for a, target, ok, crossed in self._cand[code][frm]:
            if a == action:
                q = board[target]
                if not ok[q]:
                    return None
                for w in crossed:
                    if board[w]:
                        return None
                return (a, code, frm, target, q)
        return None

    def _visit(self) -> bool:
        """Count a node (every ``_CLOCK_NODES`` nodes, look at the clock) and say whether
        the game has reached its ply limit here."""
        self.nodes += 1
        self._clock += 1
        if self._clock >= _CLOCK_NODES:
            self._clock = 0
            if time.perf_counter() > self._deadline:
                raise _Timeout
        return self._ply >= self._ply_limit

    def _node(self, depth: int, alpha: float, beta: float, ply: int) -> float:
        """The value for the side to move, fail-soft within (alpha, beta)."""
        if self._visit():
            return self._drawv[self._side]  # the ply limit: a draw
        cfg = self.config
        h = self._hash
        if depth <= 0 or ply >= MAX_PLY:
            return self._quiesce(alpha, beta, ply, cfg.qdepth if cfg.quiescence else 0)
        tt_move = -1
        if cfg.tt:
            entry = self._tt.get(h)
            if entry is not None:
                e_depth, flag, value, tt_move = entry
                if e_depth >= depth:
                    if value > MATE - MAX_PLY:
                        value -= ply
                    elif value < -MATE + MAX_PLY:
                        value += ply
                    if flag == _EXACT:
                        return value
                    if flag == _LOWER and value >= beta:
                        return value
                    if flag == _UPPER and value <= alpha:
                        return value
        side = self._side
        alpha0 = alpha
        best_v = -float("inf")
        best_action = -1
        pvs = cfg.pvs
        rep = self._rep
        drawn = self._drawv[side]
        if cfg.repetition:
            rep.add(h)  # this node's position is on the path below it
        # no try/finally: a timeout reloads the board at the root
        for i, m in enumerate(self._staged(side, tt_move, ply)):
            if self._wins(m):
                v = float(MATE - ply - 1)
            else:
                self._make(m)
                if self._hash in rep:
                    v = drawn
                elif i == 0 or not pvs:
                    v = -self._node(depth - 1, -beta, -alpha, ply + 1)
                else:
                    v = -self._node(depth - 1, -alpha - 1, -alpha, ply + 1)
                    if alpha < v < beta:
                        v = -self._node(depth - 1, -beta, -alpha, ply + 1)
                self._unmake(m)
            if v > best_v:
                best_v = v
                best_action = m[0]
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        if not m[4]:
                            if cfg.killers:
                                k = self._killers[ply]
                                if k[0] != m[0]:
                                    k[1] = k[0]
                                    k[0] = m[0]
                            if cfg.history:
                                self._history[m[0]] = self._history.get(m[0], 0) + depth * depth
                        break
        rep.discard(h)
        if best_action < 0:  # no legal move
            return -(MATE - ply) if self._stuck_loses else drawn
        if cfg.tt:
            if len(self._tt) >= _TT_LIMIT:
                self._tt.clear()
            stored = best_v
            if stored > MATE - MAX_PLY:
                stored += ply
            elif stored < -MATE + MAX_PLY:
                stored -= ply
            flag = _UPPER if best_v <= alpha0 else _LOWER if best_v >= beta else _EXACT
            self._tt[h] = (depth, flag, stored, best_action)
        return best_v

    def _quiesce(self, alpha: float, beta: float, ply: int, qdepth: int) -> float:
        """Captures and den entries with stand-pat; no stand-pat under a den threat."""
        if self._visit():
            return self._drawv[self._side]  # the ply limit: a draw
        side = self._side
        threatened = qdepth > 0 and self._threatened(side)
        if threatened:
            best_v = -float(MATE - ply - 1)  # the enemy enters next ply unless a capture stops it
        else:
            best_v = self._evaluate()
            if best_v >= beta or qdepth <= 0 or ply >= MAX_PLY:
                return best_v
            alpha = max(alpha, best_v)
        enemy_den = self._dens[1 - side]
        moves = [m for m in self._moves(side) if m[4] or m[3] == enemy_den]
        if not moves:
            return best_v
        for m in self._order(moves, -1, ply):
            if self._wins(m):
                return float(MATE - ply - 1)
            self._make(m)
            v = -self._quiesce(-beta, -alpha, ply + 1, qdepth - 1)
            self._unmake(m)
            if v > best_v:
                best_v = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        return best_v
