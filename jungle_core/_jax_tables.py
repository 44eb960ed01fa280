"""Numpy lookup tables for the JAX core, derived from :func:`jungle_core._tables.tables`.

Both cores read one description of the rules: the neighbour table, the battle table and
the CLASSIC terrain/jump tables of :mod:`jungle_core._tables`. This module only re-packs
them into fixed-shape numpy arrays that traced JAX code can gather from (off-board
squares and missing jumps point at a padding square ``N = rows * cols`` that holds the
code ``WALL``), plus a few bit tables that let the legal-move generator work with
shifts instead of per-square branching.

Nothing here imports JAX; the arrays become constants when a jitted function is traced.
"""

from __future__ import annotations

import functools

import attrs
import numpy as np
import numpy.typing as npt

from jungle_core._codes import HIDDEN, HIDDEN_OWNED, HIDDEN_P0, NUM_CODES
from jungle_core._rules import Rules
from jungle_core._tables import BattleResult, tables

__all__ = ["WALL", "JaxTables", "jax_tables"]

WALL = 20
"""Board code of the padding square beyond the edge (never on a real board)."""

_NUM_CODES = 21  # board codes 0..19 plus WALL


@attrs.frozen(eq=False)
class JaxTables:
    """Fixed-shape tables for one rule set (``N`` squares, ``A = 5 * N`` actions).

    - ``step``: ``int32[N, 4]``, the neighbour of ``sq`` in direction ``d``; ``N`` (the
      padding square) off the board.
    - ``battle``: ``int8[20 * 20]``, the :class:`BattleResult` of face-up code ``p``
      attacking face-up code ``q`` at ``p * NUM_CODES + q``.
    - ``move_bits``: ``uint32[2 * 20]``: bit ``q`` of entry ``me * NUM_CODES + p`` is set when
      player ``me``'s piece with code ``p`` may move onto a square holding code ``q``
      (``q`` in 0..20, ``WALL`` never) under the DARK options: ``p`` must be ``me``'s
      face-up piece; ``q`` empty, face-down (if ``attack_face_down``), or an opponent's
      face-up piece it may attack (battle result not FORBIDDEN). The traced generator
      rebuilds these words with shifts (a gather per square is slow on CPU); the tests
      check the two agree.
    - ``reveal_bits``: ``uint32[2]``: bit ``c`` of entry ``me`` set when ``me`` may reveal
      a face-down piece of code ``c`` (17, 18, 19) under the ``reveal`` option.
    - ``water``, ``den_of``, ``trap_of``: ``bool/int8[N + 1]`` CLASSIC terrain (padding:
      land, no den, no trap).
    - ``jump_land``: ``int32[N, 4]``, the landing square of a Lion/Tiger jump from ``sq``
      in direction ``d`` (``N`` when there is none); ``jump_cross``: ``int32[N, 4, 3]``
      the water squares crossed (padded with ``N``).
    - ``dens``: ``(den of player 0, den of player 1)``, ``-1`` for DARK.
    """

    rows: int
    cols: int
    num_squares: int
    num_actions: int
    step: npt.NDArray[np.int32]
    battle: npt.NDArray[np.int8]
    move_bits: npt.NDArray[np.uint32]
    reveal_bits: npt.NDArray[np.uint32]
    water: npt.NDArray[np.bool_]
    den_of: npt.NDArray[np.int8]
    trap_of: npt.NDArray[np.int8]
    jump_land: npt.NDArray[np.int32]
    jump_cross: npt.NDArray[np.int32]
    dens: tuple[int, int]


@functools.cache
def jax_tables(rules: Rules) -> JaxTables:
    """The JAX core's tables for a rule set (cached).

    >>> from jungle_core import DARK
    >>> t = jax_tables(DARK)
    >>> t.step.shape, int(t.step[0, 0]), int(t.step[0, 1])   # a1: off the board, a2
    ((56, 4), 56, 8)
    """
    base = tables(rules)
    n = rules.rows * rules.cols
    step = np.array(base.step, dtype=np.int32).reshape(n, 4)
    step[step < 0] = n
    battle = np.array(base.battle, dtype=np.int8)

    move_bits = np.zeros(2 * NUM_CODES, dtype=np.uint32)
    for me in (0, 1):
        for p in range(me * 8 + 1, me * 8 + 9):
            bits = 1  # q = 0, an empty square
            if rules.attack_face_down:
                bits |= (1 << 17) | (1 << 18) | (1 << 19)
            for q in range(1, 17):
                if battle[p * NUM_CODES + q] != BattleResult.FORBIDDEN:
                    bits |= 1 << q
            move_bits[me * NUM_CODES + p] = bits
    reveal_bits = np.zeros(2, dtype=np.uint32)
    for me in (0, 1):
        for code in (HIDDEN, *HIDDEN_OWNED):
            if rules.reveal == "any" or code == HIDDEN_P0 + me:
                reveal_bits[me] |= np.uint32(1 << code)

    water = np.zeros(n + 1, dtype=np.bool_)
    water[:n] = base.water
    den_of = np.full(n + 1, -1, dtype=np.int8)
    den_of[:n] = base.den_of
    trap_of = np.full(n + 1, -1, dtype=np.int8)
    trap_of[:n] = base.trap_of
    jump_land = np.full((n, 4), n, dtype=np.int32)
    jump_cross = np.full((n, 4, 3), n, dtype=np.int32)
    for i, jump in enumerate(base.jump):
        if jump is not None:
            landing, crossed = jump
            if len(crossed) > 3:
                raise ValueError(f"a jump over {len(crossed)} water squares does not fit")
            jump_land[i // 4, i % 4] = landing
            jump_cross[i // 4, i % 4, : len(crossed)] = crossed
    return JaxTables(
        rows=rules.rows,
        cols=rules.cols,
        num_squares=n,
        num_actions=rules.num_actions,
        step=step,
        battle=battle,
        move_bits=move_bits,
        reveal_bits=reveal_bits,
        water=water,
        den_of=den_of,
        trap_of=trap_of,
        jump_land=jump_land,
        jump_cross=jump_cross,
        dens=base.dens,
    )
