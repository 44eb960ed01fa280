"""Exact endgame tables for DARK: every face-up position with few pieces, solved.

Once every piece is face up, DARK has no chance left: a position with a handful of pieces
is a small deterministic game, and its value can be computed for every placement at once
by retrograde analysis (as chess endgame tablebases are). This module builds such a table
for one *material* (the set of pieces still in the game) on first use, from the tables of
the core (:func:`jungle_core.lowlevel.tables`: neighbours, ``dark_target_ok``,
``dark_effect``), keeps it in memory, and keeps it on disk for the next process (below).

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

Tables of three or four pieces are kept on disk once solved, in :func:`cache_dir`
(``$JUNGLE_CACHE_DIR``, else ``$XDG_CACHE_HOME/jungle``, else ``~/.cache/jungle``), one
compressed ``.npz`` file each (a four-piece table: 79 MB in memory, 0.3-6 MB on disk,
loaded in 0.1-0.5 s), so each is solved once per machine; a solved four-piece table is
reported once on the ``jungle.endgame`` logger (at WARNING: its time and size). A file that
is unreadable or not the table its name says raises :class:`EndgameCacheError` naming it;
a folder that cannot be written leaves the tables in memory with one
:class:`EndgameCacheWarning`. ``EndgameTables(persist=False)`` never touches the disk.
The file format and its checks: :mod:`jungle_agents.endgame._cache`.

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
import logging
import time

import attrs
import numpy as np

from jungle_agents.endgame._cache import (
    EndgameCacheError,
    EndgameCacheWarning,
    cache_dir,
    load,
    save,
    table_path,
)
from jungle_agents.endgame._solver import UNSOLVED, Material, remaining, solve, terminal_result
from jungle_core import Rules, State, legal_actions, outcome
from jungle_core.lowlevel import apply

__all__ = [
    "UNSOLVED",
    "EndgameCacheError",
    "EndgameCacheWarning",
    "EndgameTables",
    "Probe",
    "cache_dir",
    "material_of",
    "supported",
]

_log = logging.getLogger("jungle.endgame")

PERSIST_FROM = 3
"""Tables of at least this many pieces are kept on disk (two-piece ones solve in
milliseconds: a file would cost as much as it saves)."""


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

    material: Material
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


def material_of(state: State) -> Material | None:
    """The codes of the pieces in play in ascending order, or None while any piece is face
    down.

    >>> from jungle_core import from_fen
    >>> material_of(from_fen("8/8/8/8/8/8/E1t5 0 0 0 - -"))
    (8, 14)
    """
    if state.face_down_mask:
        return None
    return tuple(code for code in sorted(state.board) if code)


class EndgameTables:
    """Exact values of DARK positions with every piece face up and at most
    ``max_pieces`` pieces, one material solved on first use and kept (``cache``
    materials at most, least recently used dropped; by default 64, or 16 with four
    pieces, whose tables take 79 MB each: a game meets at most one four-piece material,
    since its next removal leaves three pieces or fewer, and 16 keep it with all its
    smaller ones). ``persist``: keep tables of three or four pieces on disk (see the
    module docstring); False solves every table in memory, as each process did before.

    >>> from jungle_core import from_fen
    >>> tables = EndgameTables()
    >>> s = from_fen("8/8/8/8/8/8/E1t5 1 0 0 - -")
    >>> tables.best_actions(s) == tables.best_actions(s) and len(tables.best_actions(s)) >= 1
    True
    """

    def __init__(
        self, max_pieces: int = 3, cache: int | None = None, *, persist: bool = True
    ) -> None:
        if not 2 <= max_pieces <= 4:
            raise ValueError(f"max_pieces must be 2, 3 or 4, not {max_pieces}")
        self.max_pieces = max_pieces
        self.persist = persist
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
            and terminal_result(material, 0) is None
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
        room = remaining(state.rules, state.plies_since_removal)
        win = int(table.win_plies[state.to_move, index])
        if win <= room:
            return Probe(1, win)
        loss = int(table.loss_plies[state.to_move, index])
        if loss <= room:
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

    def _fresh(self, rules: Rules, material: Material) -> np.ndarray:
        """``int8[2, squares**k]``: the result for the side to move of each placement with
        the no-removal count at 0."""
        table = self._solve(rules, material)
        limit = remaining(rules, 0)
        result = np.zeros(table.win_plies.shape, np.int8)
        result[table.loss_plies <= limit] = -1
        result[table.win_plies <= limit] = 1
        return result

    def _solve_uncached(self, rules: Rules, material: Material) -> _Table:
        """The table of one material: read from the disk cache where it is there, else
        solved (:func:`jungle_agents.endgame._solver.solve`, its smaller materials
        through this cache) and written there."""
        path = None
        if self.persist and len(material) >= PERSIST_FROM:
            path = table_path(cache_dir(), rules, material)
            stored = load(path, rules, material)
            if stored is not None:
                return _Table(material, *stored)
        start = time.perf_counter()
        win, loss = solve(rules, material, self._fresh)
        seconds = time.perf_counter() - start
        if path is not None and save(path, rules, material, win, loss):
            level = logging.WARNING if len(material) >= 4 else logging.INFO
            _log.log(
                level,
                "endgame table %s (%d pieces) solved in %.1f s (%.0f MB in memory) and "
                "kept in %s (%.1f MB): later runs read it instead",
                material,
                len(material),
                seconds,
                (win.nbytes + loss.nbytes) / 1e6,
                path,
                path.stat().st_size / 1e6,
            )
        return _Table(material, win, loss)


def _index(state: State, material: Material) -> int:
    n = state.rules.rows * state.rules.cols
    where = {code: sq for sq, code in enumerate(state.board) if code}
    index = 0
    for code in material:
        index = index * n + where[code]
    return index
