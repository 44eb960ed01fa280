"""Exact endgame tables for DARK: every face-up position with few pieces, solved.

Once every piece is face up, DARK has no chance left: a position with a handful of pieces
is a small deterministic game, and its value can be computed for every placement at once
by retrograde analysis (as chess endgame tablebases are). This module builds such a table
for one *material* (the set of pieces still in the game) on first use, from the tables of
the core (:func:`jungle_core.lowlevel.tables`: neighbours, ``dark_target_ok``,
``dark_effect``), and keeps it cached in memory.

The 100-ply no-removal rule is part of the value (DTZ, as Syzygy tables do for chess's
50-move rule): for each placement and side to move the table stores

- ``win_plies``: the fewest plies in which the side to move forces a *removal that keeps
  its win* (or the end of the game in its favour), the opponent resisting;
- ``loss_plies``: the most plies the side to move can delay the opponent's such removal.

A position whose no-removal count is ``c`` is then won iff ``win_plies <= limit - c``, lost
iff ``loss_plies <= limit - c``, and drawn otherwise (a win that needs more plies than the
clock leaves is a draw). A removal starts a smaller material with the count at 0, whose
table is solved first.

Cost: a material of ``k`` pieces has ``56**k`` placements per side to move; three pieces
(175,616) solve in about 0.2 s, four (9.8 million) in about 8-20 s with 1.7 GB of memory
at the peak (measured on this project's 2-core CPU beside a match on the other core: a
Lion, Leopard and Rat against a Lion 18 s, a Dog and Tiger against a Dog and Tiger 8 s),
so the default is ``max_pieces=3``.

Supported rules: ``variant="dark"`` with ``repetition="none"`` and ``ply_limit=0`` (every
other DARK option — equal ranks, weaker attacks, ``no_moves``, the limit itself — is read
from the rules); :meth:`EndgameTables.probe` returns None for anything else.

>>> from jungle_core import from_fen
>>> tables = EndgameTables()
>>> tables.probe(from_fen("8/8/8/8/8/8/E1t5 1 0 0 - -"))   # Elephant a1, tiger c1, tiger to move
Probe(result=-1, plies=24)
>>> tables.probe(from_fen("8/8/8/8/8/8/E1t5 0 0 0 - -"))   # the Elephant to move: a draw
Probe(result=0, plies=0)

(One chaser catches a lone piece only if it is to move at an odd distance — every move
changes the distance by one — and then corners it; here in at most 24 plies.)
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import attrs
import numpy as np

from jungle_core import Rules, State, legal_actions, outcome
from jungle_core.lowlevel import EMPTY, NUM_CODES, apply, piece_owner, tables

__all__ = ["UNSOLVED", "EndgameTables", "Probe"]

UNSOLVED = 32767
"""The ``int16`` distance stored for "no such forced result"."""

_Material = tuple[int, ...]


@attrs.frozen
class Probe:
    """The exact value of a position for the player to move.

    - ``result``: +1 a win, 0 a draw, -1 a loss (with best play and the no-removal count
      as it stands);
    - ``plies``: for a win, the plies to the winning side's next removal that keeps the
      win (at best play); for a loss, the most plies the loser can make it wait; 0 for a
      draw.
    """

    result: int
    plies: int


@attrs.frozen
class _Table:
    """``win_plies``/``loss_plies``: ``int16[2, squares**k]`` by side to move and
    placement (``index = Σ square_i · squares**(k-1-i)`` over the material's codes in
    ascending order)."""

    material: _Material
    win_plies: np.ndarray
    loss_plies: np.ndarray


def supported(rules: Rules) -> bool:
    """Whether the tables can solve ``rules`` exactly (DARK, no repetition rule, no ply
    limit).

    >>> from jungle_core import CLASSIC, DARK
    >>> supported(DARK), supported(CLASSIC)
    (True, False)
    """
    return rules.variant == "dark" and rules.repetition == "none" and not rules.ply_limit


def material_of(state: State) -> _Material | None:
    """The codes of the pieces in play in ascending order, or None while any piece is face
    down.

    >>> from jungle_core import from_fen
    >>> material_of(from_fen("8/8/8/8/8/8/E1t5 0 0 0 - -"))
    (8, 14)
    """
    if state.face_down_mask:
        return None
    return tuple(code for code in sorted(state.board) if code)


def _terminal_result(material: _Material, mover: int) -> int | None:
    """The result for ``mover`` of a material one side of which has no piece (a removal
    ended the game), or None while both have pieces."""
    has = [False, False]
    for code in material:
        has[piece_owner(code)] = True
    if has[0] and has[1]:
        return None
    if has[0] == has[1]:
        return 0
    return 1 if has[mover] else -1


class EndgameTables:
    """Exact values of DARK positions with every piece face up and at most
    ``max_pieces`` pieces, one material solved on first use and kept (``cache``
    materials at most, least recently used dropped; by default 64, or 16 with four
    pieces, whose tables take 79 MB each: a game meets at most one four-piece material,
    since its next removal leaves three pieces or fewer, and 16 keep it with all its
    smaller ones).

    >>> from jungle_core import from_fen
    >>> tables = EndgameTables()
    >>> s = from_fen("8/8/8/8/8/8/E1t5 1 0 0 - -")
    >>> tables.best_actions(s) == tables.best_actions(s) and len(tables.best_actions(s)) >= 1
    True
    """

    def __init__(self, max_pieces: int = 3, cache: int | None = None) -> None:
        if not 2 <= max_pieces <= 4:
            raise ValueError(f"max_pieces must be 2, 3 or 4, not {max_pieces}")
        self.max_pieces = max_pieces
        size = cache if cache is not None else 16 if max_pieces == 4 else 64
        self._solve = functools.lru_cache(maxsize=size)(self._solve_uncached)

    def covers(self, state: State) -> bool:
        """Whether :meth:`probe` answers for ``state``: supported rules, every piece face
        up, at most ``max_pieces`` in play, both sides present, and the game not over."""
        material = material_of(state)
        return (
            material is not None
            and 2 <= len(material) <= self.max_pieces
            and supported(state.rules)
            and _terminal_result(material, 0) is None
            and outcome(state) is None
        )

    def probe(self, state: State) -> Probe | None:
        """The exact value of ``state`` for the player to move, or None where the tables
        do not cover it (:meth:`covers`).

        >>> from jungle_core import from_fen
        >>> EndgameTables().probe(from_fen("8/8/8/8/8/8/E6e 0 0 0 - -"))  # equal ranks
        Probe(result=0, plies=0)
        """
        if not self.covers(state):
            return None
        material = material_of(state)
        assert material is not None
        table = self._solve(state.rules, material)
        index = _index(state, material)
        remaining = _remaining(state.rules, state.plies_since_removal)
        win = int(table.win_plies[state.to_move, index])
        if win <= remaining:
            return Probe(1, win)
        loss = int(table.loss_plies[state.to_move, index])
        if loss <= remaining:
            return Probe(-1, loss)
        return Probe(0, 0)

    def action_values(self, state: State) -> dict[int, Probe] | None:
        """For each legal action of ``state``, its exact value for the player to move:
        ``plies`` counts the action itself (1 for a removal that decides, else 1 + the
        reply position's ``plies``). None where :meth:`probe` is None.

        >>> from jungle_core import from_fen
        >>> values = EndgameTables().action_values(from_fen("8/8/8/8/8/8/Et6 0 0 0 - -"))
        >>> values[56 + 0 * 4 + 3]            # a1xb1: the Elephant takes the tiger
        Probe(result=1, plies=1)
        """
        if not self.covers(state):
            return None
        values = {}
        for action in legal_actions(state):
            child = apply(state, action, -1)
            values[action] = self._child_value(child)
        return values

    def best_actions(self, state: State) -> list[int] | None:
        """The legal actions that keep the value of ``state`` at best play: the fastest
        wins, every drawing action, or the slowest losses; None where :meth:`probe` is
        None.

        >>> from jungle_core import from_fen
        >>> EndgameTables().best_actions(from_fen("8/8/8/8/8/8/Et6 0 0 0 - -"))
        [59]
        """
        values = self.action_values(state)
        if values is None:
            return None
        best = max(v.result for v in values.values())
        if best == 1:
            fastest = min(v.plies for v in values.values() if v.result == 1)
            return sorted(a for a, v in values.items() if v.result == 1 and v.plies == fastest)
        if best == 0:
            return sorted(a for a, v in values.items() if v.result == 0)
        slowest = max(v.plies for v in values.values())
        return sorted(a for a, v in values.items() if v.plies == slowest)

    def distances(self, rules: Rules, material: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """``(win_plies, loss_plies)``, each ``int16[2, squares**k]`` by side to move and
        placement (``index = Σ square_i · squares**(k-1-i)`` over ``material``'s codes,
        ascending), with the no-removal count at 0: the whole solved table of one
        material, :data:`UNSOLVED` where no such forced result exists (see the module
        docstring). Solves it on first use.

        >>> from jungle_core import DARK
        >>> win, loss = EndgameTables().distances(DARK, (8, 14))  # Elephant, tiger
        >>> win.shape, int(loss[1, 0 * 56 + 2])    # Elephant a1, tiger c1, tiger to move
        ((2, 3136), 24)
        """
        if list(material) != sorted(set(material)) or not 2 <= len(material) <= self.max_pieces:
            raise ValueError(f"not a material of 2..{self.max_pieces} codes, ascending: {material}")
        table = self._solve(rules, tuple(material))
        return table.win_plies, table.loss_plies

    def _child_value(self, child: State) -> Probe:
        """The value for the player who moved into ``child``."""
        ended = outcome(child)
        if ended is not None:
            if ended.winner is None:
                return Probe(0, 0)
            return Probe(1 if ended.winner != child.to_move else -1, 1)
        reply = self.probe(child)
        assert reply is not None, "a removal or move from a covered position stays covered"
        if reply.result == 0:
            return Probe(0, 0)
        removal = child.plies_since_removal == 0
        return Probe(-reply.result, 1 if removal else 1 + reply.plies)

    def _fresh(self, rules: Rules, material: _Material) -> np.ndarray:
        """``int8[2, squares**k]``: the result for the side to move of each placement with
        the no-removal count at 0."""
        table = self._solve(rules, material)
        limit = _remaining(rules, 0)
        result = np.zeros(table.win_plies.shape, np.int8)
        result[table.loss_plies <= limit] = -1
        result[table.win_plies <= limit] = 1
        return result

    def _solve_uncached(self, rules: Rules, material: _Material) -> _Table:
        """Retrograde analysis of one material (its smaller materials solved first).

        Ply by ply, a position is won for the side to move when one of its moves removes
        to a won position or leads to a position already lost for the other side, and
        lost when every move removes to a lost position or leads to one already won for
        the other side. What a move does apart from those reads (legal or not, a removal
        and its result, the placement it leads to) is fixed, so it is worked out once
        (``_moves``); each ply then reads the successors' values of the positions still
        undecided only, kept packed (:class:`_Undecided`), so a material whose positions
        are mostly decided early costs less every ply (the four-piece table of a Lion,
        Leopard and Rat against a Lion, 99 % of it decided: 18 s instead of 37 s, the same
        table, at 1.7 GB instead of 1.4 GB at the peak; a Dog and Tiger against a Dog and
        Tiger, nearly all drawn: 8 s as before).
        """
        k = len(material)
        t = tables(rules)
        n = rules.rows * rules.cols
        size = n**k
        squares = np.indices((n,) * k, dtype=np.int32).reshape(k, size)
        valid = np.ones(size, bool)
        for i in range(k):
            for j in range(i + 1, k):
                valid &= squares[i] != squares[j]
        step = np.asarray(t.step, np.int32).reshape(n, 4)
        stride = [n ** (k - 1 - i) for i in range(k)]
        undecided = [
            _Undecided.of(
                valid,
                self._moves(rules, material, squares, valid, step, stride, side),
                lose_stuck=rules.no_moves == "loses",
            )
            for side in (0, 1)
        ]
        del squares, valid
        win = np.full((2, size), UNSOLVED, np.int16)
        loss = np.full((2, size), UNSOLVED, np.int16)
        cap = _remaining(rules, 0)  # plies fit int16: the limit, or UNSOLVED - 1 without one
        for plies in range(1, cap + 1):
            changed = False
            # What the other side's positions were before this ply (a value set during it
            # is ``plies``, not below it, so the two sides' updates do not interfere).
            lost = (loss[0] < plies, loss[1] < plies)
            won = (win[0] < plies, win[1] < plies)
            for side in (0, 1):
                new_win, new_loss = undecided[side].step(lost[1 - side], won[1 - side])
                if new_win.size or new_loss.size:
                    changed = True
                    win[side, new_win] = plies
                    loss[side, new_loss] = plies
            if not changed:
                break
        return _Table(material, win, loss)

    def _moves(
        self,
        rules: Rules,
        material: _Material,
        squares: np.ndarray,
        valid: np.ndarray,
        step: np.ndarray,
        stride: list[int],
        side: int,
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each (piece, direction) move of ``side`` over all placements: ``(legal
        bool[P], result int8[P], successor int32[P])``, ``result`` 2 for a move without
        a removal (to placement ``successor``, other side to move, count + 1) and else
        the result (+1/0/-1) for ``side`` of the position the removal leaves (count 0)."""
        t = tables(rules)
        size = squares.shape[1]
        # int32 throughout: four pieces index 56**4 < 2**31 placements.
        base = _index_array(squares, stride).astype(np.int32)
        for i, code in enumerate(material):
            if piece_owner(code) != side:
                continue
            for direction in range(4):
                target = step[squares[i], direction]
                legal = valid & (target >= 0)
                result = np.full(size, 2, np.int8)
                empty = legal.copy()
                for j, other in enumerate(material):
                    if j == i:
                        continue
                    hit = legal & (squares[j] == target)
                    if not hit.any():
                        continue
                    empty &= ~hit
                    if not t.dark_target_ok[code][other] or piece_owner(other) == side:
                        legal &= ~hit
                        continue
                    source_left, _, removed = t.dark_effect[code * NUM_CODES + other]
                    assert source_left == EMPTY and removed, (code, other)
                    result[hit] = self._removal_results(
                        rules, material, squares[:, hit], i, target[hit], removed, side
                    )
                assert t.dark_effect[code * NUM_CODES + EMPTY] == (EMPTY, code, 0)
                moved = base + (target - squares[i]) * np.int32(stride[i])
                yield legal, result, np.where(empty, moved, np.int32(0))

    def _removal_results(
        self,
        rules: Rules,
        material: _Material,
        squares: np.ndarray,
        mover: int,
        target: np.ndarray,
        removed: int,
        side: int,
    ) -> np.ndarray:
        """``int8[H]``: the result for ``side`` of each removal (bits ``removed``) by
        piece ``mover`` moving to ``target`` in the placements ``squares[k, H]``."""
        keep = [j for j, code in enumerate(material) if not removed >> (code - 1) & 1]
        rest = tuple(material[j] for j in keep)
        ended = _terminal_result(rest, side)
        if ended is not None:
            return np.full(squares.shape[1], ended, np.int8)
        n = rules.rows * rules.cols
        where = [target if j == mover else squares[j] for j in keep]
        index = np.zeros(squares.shape[1], np.int64)
        for position in where:
            index = index * n + position
        fresh = self._fresh(rules, rest)
        results: np.ndarray = (-fresh[1 - side, index]).astype(np.int8)
        return results


_REPACK = 0.7
"""Repack an :class:`_Undecided` once fewer than this share of its entries are alive."""


@attrs.define
class _Undecided:
    """One side's positions not yet won or lost, with what each of its moves does there
    (built over every placement by :meth:`of`, packed to the alive ones by :meth:`step`
    once under ``_REPACK`` of its entries are): ``placements`` (``int64[U]``),
    ``wins_now`` (a move removes to a won position), ``stuck_ok`` (the position may count
    as lost once every move loses: it has a move, or being stuck loses), and per (piece,
    direction) move ``quiet`` (legal, no removal), ``loses_now`` (illegal, or removes to
    a lost position) and ``successor`` (``int32[U]``: the placement a quiet move leads
    to); ``alive``: not decided yet."""

    placements: np.ndarray
    wins_now: np.ndarray
    stuck_ok: np.ndarray
    quiet: list[np.ndarray]
    loses_now: list[np.ndarray]
    successor: list[np.ndarray]
    alive: np.ndarray

    @classmethod
    def of(
        cls,
        valid: np.ndarray,
        moves: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]],
        lose_stuck: bool,
    ) -> _Undecided:
        """Every placement (the ``valid`` ones alive), from ``EndgameTables._moves``'
        arrays; not packed yet (packing costs more than it saves in a material whose
        positions are mostly drawn)."""
        has_move = np.zeros(valid.size, bool)
        wins_now = np.zeros(valid.size, bool)
        quiet, loses_now, successor = [], [], []
        for legal, result, moved in moves:
            has_move |= legal
            wins_now |= legal & (result == 1)
            quiet.append(legal & (result == 2))
            loses_now.append(~legal | (result == -1))
            successor.append(moved)
        stuck_ok = np.ones(valid.size, bool) if lose_stuck else has_move
        placements = np.arange(valid.size, dtype=np.int64)
        return cls(placements, wins_now, stuck_ok, quiet, loses_now, successor, valid.copy())

    def step(self, other_lost: np.ndarray, other_won: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One ply: the placements newly won and newly lost, given which of the other
        side's placements (full size, ``bool``) are already lost and won. They leave the
        undecided (``alive`` False); the arrays are repacked once under ``_REPACK`` of
        their entries are alive."""
        can_win = self.wins_now.copy()
        all_lose = self.stuck_ok & self.alive
        for quiet, loses_now, successor in zip(
            self.quiet, self.loses_now, self.successor, strict=True
        ):
            can_win |= quiet & other_lost[successor]
            all_lose &= loses_now | (quiet & other_won[successor])
        can_win &= self.alive
        all_lose &= ~can_win
        new = self.placements[can_win], self.placements[all_lose]
        if new[0].size or new[1].size:
            self.alive &= ~(can_win | all_lose)
            alive = int(np.count_nonzero(self.alive))
            if alive < _REPACK * self.alive.size:
                self._keep(self.alive)
        return new

    def _keep(self, keep: np.ndarray) -> None:
        self.placements = self.placements[keep]
        self.wins_now = self.wins_now[keep]
        self.stuck_ok = self.stuck_ok[keep]
        self.quiet = [a[keep] for a in self.quiet]
        self.loses_now = [a[keep] for a in self.loses_now]
        self.successor = [a[keep] for a in self.successor]
        self.alive = np.ones(self.placements.size, bool)


def _index_array(squares: np.ndarray, stride: list[int]) -> np.ndarray:
    index = np.zeros(squares.shape[1], np.int64)
    for i, s in enumerate(stride):
        index += squares[i].astype(np.int64) * s
    return index


def _index(state: State, material: _Material) -> int:
    n = state.rules.rows * state.rules.cols
    where = {code: sq for sq, code in enumerate(state.board) if code}
    index = 0
    for code in material:
        index = index * n + where[code]
    return index


def _remaining(rules: Rules, count: int) -> int:
    """Plies left before the no-removal limit draws (a large number without a limit)."""
    return rules.no_removal_limit - count if rules.no_removal_limit else UNSOLVED - 1
