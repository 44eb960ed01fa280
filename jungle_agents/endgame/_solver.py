"""Retrograde analysis of one DARK material: the tables :class:`EndgameTables` reads.

The digest of this file's text is part of the key of every table kept on disk
(:mod:`jungle_agents.endgame._cache`), so any change here makes new files rather than
reading tables an older solver wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs
import numpy as np

from jungle_core import Rules
from jungle_core.lowlevel import EMPTY, NUM_CODES, piece_owner, tables

__all__ = ["UNSOLVED", "Material", "remaining", "solve", "terminal_result"]

UNSOLVED = 32767
"""The ``int16`` distance stored for "no such forced result"."""

Material = tuple[int, ...]
"""The codes of the pieces in play, ascending."""

Fresh = Callable[[Rules, Material], np.ndarray]
"""``fresh(rules, material)``: ``int8[2, squares**k]``, the result for the side to move of
each placement of a smaller material with the no-removal count at 0."""


def terminal_result(material: Material, mover: int) -> int | None:
    """The result for ``mover`` of a material one side of which has no piece (a removal
    ended the game), or None while both have pieces.

    >>> terminal_result((8,), 0), terminal_result((8, 14), 0)
    (1, None)
    """
    has = [False, False]
    for code in material:
        has[piece_owner(code)] = True
    if has[0] and has[1]:
        return None
    if has[0] == has[1]:
        return 0
    return 1 if has[mover] else -1


def remaining(rules: Rules, count: int) -> int:
    """Plies left before the no-removal limit draws (a large number without a limit).

    >>> from jungle_core import DARK
    >>> remaining(DARK, 30)
    70
    """
    return rules.no_removal_limit - count if rules.no_removal_limit else UNSOLVED - 1


def solve(rules: Rules, material: Material, fresh: Fresh) -> tuple[np.ndarray, np.ndarray]:
    """``(win_plies, loss_plies)``, each ``int16[2, squares**k]``: retrograde analysis of
    one material, reading the smaller materials a removal leaves through ``fresh``.

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
            _moves(rules, material, squares, valid, step, stride, side, fresh),
            lose_stuck=rules.no_moves == "loses",
        )
        for side in (0, 1)
    ]
    del squares, valid
    win = np.full((2, size), UNSOLVED, np.int16)
    loss = np.full((2, size), UNSOLVED, np.int16)
    cap = remaining(rules, 0)  # plies fit int16: the limit, or UNSOLVED - 1 without one
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
    return win, loss


def _moves(
    rules: Rules,
    material: Material,
    squares: np.ndarray,
    valid: np.ndarray,
    step: np.ndarray,
    stride: list[int],
    side: int,
    fresh: Fresh,
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
                result[hit] = _removal_results(
                    rules, material, squares[:, hit], i, target[hit], removed, side, fresh
                )
            assert t.dark_effect[code * NUM_CODES + EMPTY] == (EMPTY, code, 0)
            moved = base + (target - squares[i]) * np.int32(stride[i])
            yield legal, result, np.where(empty, moved, np.int32(0))


def _removal_results(
    rules: Rules,
    material: Material,
    squares: np.ndarray,
    mover: int,
    target: np.ndarray,
    removed: int,
    side: int,
    fresh: Fresh,
) -> np.ndarray:
    """``int8[H]``: the result for ``side`` of each removal (bits ``removed``) by
    piece ``mover`` moving to ``target`` in the placements ``squares[k, H]``."""
    keep = [j for j, code in enumerate(material) if not removed >> (code - 1) & 1]
    rest = tuple(material[j] for j in keep)
    ended = terminal_result(rest, side)
    if ended is not None:
        return np.full(squares.shape[1], ended, np.int8)
    n = rules.rows * rules.cols
    where = [target if j == mover else squares[j] for j in keep]
    index = np.zeros(squares.shape[1], np.int64)
    for position in where:
        index = index * n + position
    results: np.ndarray = (-fresh(rules, rest)[1 - side, index]).astype(np.int8)
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
        """Every placement (the ``valid`` ones alive), from ``_moves``' arrays; not
        packed yet (packing costs more than it saves in a material whose positions are
        mostly drawn)."""
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
