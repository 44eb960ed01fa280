"""The exact endgame tables inside the JAX search: leaf values of small face-up positions.

:mod:`jungle_agents.endgame` solves DARK positions with every piece face up exactly, but
the agent consults it only at the root. The search below the root values a position
after a capture by the hand-made evaluation, which misjudges exactly the small endings
the tables know (a Tiger and a Lion against an Elephant are +0.24 by material and a dead
draw; a Rat and a Cat against it −0.23 and won from 97–100 % of placements).
:func:`leaf_tables` packs every two- and three-piece material's table into one array the
jitted search can index, and :func:`exact_value` reads it, so every leaf with at most
three pieces, all face up, gets its exact result (the no-removal count included).

Layout: ``slots int16[65536]`` maps the 16-bit mask of the pieces in play (bit
``owner * 8 + rank - 1``) to a row of ``plies int8[M, 2, 56**3]``, or -1 for a material
not in the tables; a row holds, for each side to move and placement (``index = Σ square_i
· 56**(k-1-i)`` over the material's codes in ascending order, as the tables index), the
plies to the mover's winning removal (positive), to its losing one (negative, the most
the mover can delay it), or 0 where neither side can force one (``int16`` where the
no-removal limit is over 127 plies). 2 × 176 KB a material,
512 materials: 180 MB, built in about 90 s on this project's CPU (once per process).
"""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np

from jungle_agents.endgame import UNSOLVED, EndgameTables, supported
from jungle_core import Rules
from jungle_core.jax_env import JaxState
from jungle_train.jitted import present

__all__ = ["LeafTables", "all_materials", "exact_value", "leaf_tables"]

LeafTables = tuple[jax.Array, jax.Array]
"""``(slots int16[65536], plies int8[M, 2, squares**3])`` (``int16`` plies for a
no-removal limit over 127), as the module docstring says."""

NUM_IDENTITIES = 16
"""Pieces of DARK: 2 owners × 8 ranks."""

_NO_LIMIT_ROOM = 1 << 20
"""Plies left on the clock under rules without a no-removal limit."""


def all_materials() -> tuple[tuple[int, ...], ...]:
    """Every material of two or three pieces with both sides present (codes ascending):
    64 + 448.

    >>> len(all_materials()), all_materials()[0]
    (512, (1, 9))
    """
    found = []
    for k in (2, 3):
        for codes in itertools.combinations(range(1, NUM_IDENTITIES + 1), k):
            if {(code - 1) >> 3 for code in codes} == {0, 1}:
                found.append(codes)
    return tuple(found)


@functools.cache
def leaf_tables(rules: Rules, materials: tuple[tuple[int, ...], ...] = ()) -> LeafTables:
    """The two- and three-piece tables of ``rules`` packed for :func:`exact_value`:
    ``materials`` (codes ascending), or all of them (:func:`all_materials`; about 90 s
    and 180 MB for DARK). Cached per process.

    :raises ValueError: rules the tables do not solve (:func:`jungle_agents.endgame.supported`).

    >>> from jungle_core import DARK
    >>> slots, plies = leaf_tables(DARK, ((8, 14),))   # an Elephant against a tiger
    >>> int(slots[(1 << 7) | (1 << 13)]), plies.shape, plies.dtype
    (0, (1, 2, 175616), dtype('int8'))
    """
    if not supported(rules):
        raise ValueError(f"the endgame tables do not solve {rules.name}")
    n = rules.num_squares
    chosen = materials or all_materials()
    slots = np.full(1 << NUM_IDENTITIES, -1, np.int16)
    limit = rules.no_removal_limit
    plies = np.zeros((len(chosen), 2, n**3), np.int8 if limit < 128 else np.int16)
    tables = EndgameTables(max_pieces=3, cache=8)
    for row, material in enumerate(chosen):
        win, loss = (a.astype(np.int32) for a in tables.distances(rules, material))
        # a side that can force a win cannot also be forced to lose
        assert not np.any((win != UNSOLVED) & (loss != UNSOLVED)), material
        if rules.no_removal_limit:  # plies, so that the clock can turn a win into a draw
            signed = np.where(win <= limit, win, np.where(loss <= limit, -loss, 0))
        else:  # no clock: the result alone
            signed = np.where(win != UNSOLVED, 1, np.where(loss != UNSOLVED, -1, 0))
        plies[row, :, : signed.shape[1]] = signed
        slots[sum(1 << (code - 1) for code in material)] = row
    return jnp.asarray(slots), jnp.asarray(plies)


def exact_value(
    rules: Rules, leaves: LeafTables, state: JaxState, player: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """``(covered bool[], value float32[])``: whether ``leaves`` hold ``state`` (every
    piece face up, two or three in play, both sides present, its material packed) and
    its exact value for ``player``: +1 a win, -1 a loss, 0 a draw at best play, with the
    no-removal count as it stands (a win the clock leaves no room for is a draw);
    ``value`` is 0 where not covered.

    >>> from jungle_core import DARK, from_fen
    >>> from jungle_core.jax_env import make
    >>> leaves = leaf_tables(DARK, ((8, 14),))
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/E1t5 1 0 0 - -"))  # the tiger to move
    >>> [tuple(map(float, exact_value(DARK, leaves, s, p))) for p in (0, 1)]
    [(1.0, 1.0), (1.0, -1.0)]
    """
    n = rules.num_squares
    slots, plies = leaves
    bits = present(state)
    slot = slots[bits & 0xFFFF].astype(jnp.int32)
    board = state.board.astype(jnp.int32)
    covered = (state.face_down_mask == 0) & (slot >= 0)
    # the square of each piece code 1..16 (each code stands on one square at most)
    square_of = jnp.zeros(NUM_IDENTITIES + 1, jnp.int32).at[board].max(jnp.arange(n))
    held = (bits >> jnp.arange(NUM_IDENTITIES)) & 1
    identities = jnp.nonzero(held, size=3, fill_value=-1)[0]
    index = jnp.zeros((), jnp.int32)
    for i in range(3):
        identity = identities[i]
        index = jnp.where(identity >= 0, index * n + square_of[identity + 1], index)
    mover = state.current_player
    signed = plies[jnp.maximum(slot, 0), mover, index].astype(jnp.int32)
    if rules.no_removal_limit:
        room = rules.no_removal_limit - state.plies_since_removal
    else:
        room = jnp.int32(_NO_LIMIT_ROOM)
    result = jnp.where((signed > 0) & (signed <= room), 1.0, 0.0)
    result = jnp.where((signed < 0) & (-signed <= room), -1.0, result)
    value = jnp.where(player == mover, result, -result)
    return covered, jnp.where(covered, value, 0.0).astype(jnp.float32)
