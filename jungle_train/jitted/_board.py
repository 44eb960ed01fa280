"""Board arithmetic of the DQN's rewards on the JAX core (one game; ``vmap`` for a batch):
which pieces are still in the game, what a ply removed, and the Q-learners' Opp − Threat
shaping potential; and the gather-free reads the JAX opponents (Greedy, the look-ahead)
share: a square's neighbour as a shifted slice (:func:`neighbour_shift`), and a relation
of two ranks packed in two 32-bit words (:func:`rank_words`, :func:`rank_bit`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jungle_core import DARK, Rules
from jungle_core.jax_env import JaxState
from jungle_core.lowlevel import BattleResult, tables
from jungle_train.players import square_distances

__all__ = [
    "DELTAS",
    "neighbour_shift",
    "potential",
    "present",
    "rank_bit",
    "rank_words",
    "removed_ranks",
    "shaping_tables",
]

DELTAS = ((-1, 0), (1, 0), (0, -1), (0, 1))
"""The ``(row, col)`` step of directions 0..3."""


def neighbour_shift(x: jax.Array, d: int, cols: int) -> jax.Array:
    """``x`` (``[N, ...]``, one row per square) read at each square's neighbour in
    direction ``d``: zeros off the top and bottom, the wrong row's square off the left and
    right edges (only illegal moves read those). A slice of a padded array: no gather,
    which XLA compiles to slow scalar loops on a CPU.

    >>> import jax.numpy as jnp
    >>> neighbour_shift(jnp.arange(6), 3, 3).tolist()   # the square to the right
    [1, 2, 3, 4, 5, 0]
    """
    n = x.shape[0]
    dr, dc = DELTAS[d]
    zeros = jnp.zeros((cols, *x.shape[1:]), x.dtype)
    padded = jnp.concatenate([zeros, x, zeros])
    start = cols + dr * cols + dc
    return jax.lax.slice_in_dim(padded, start, start + n)


def rank_words(table: np.ndarray[Any, Any]) -> tuple[int, int]:
    """A relation of two rank indices (``bool[8, 8]``) as two 32-bit words: bit
    ``(a & 3) * 8 + b`` of word ``a >> 2`` is ``table[a, b]`` (read by :func:`rank_bit`).

    >>> rank_words(np.eye(8, dtype=bool)) == (0x08040201, 0x80402010)
    True
    """
    words = [0, 0]
    for a in range(8):
        for b in range(8):
            if table[a, b]:
                words[a >> 2] |= 1 << ((a & 3) * 8 + b)
    return words[0], words[1]


def rank_bit(words: tuple[int, int], a: jax.Array, b: jax.Array) -> jax.Array:
    """``bool[...]``: the relation :func:`rank_words` packed, for rank indices ``a`` and
    ``b`` (``uint32``, 0..7), read with shifts (elementwise, no gather)."""
    low, high = words
    word = jnp.where(a >= 4, jnp.uint32(high), jnp.uint32(low))
    return ((word >> ((a & 3) * 8 + b)) & 1) == 1


_RANKS = np.array([(i % 8) + 1 for i in range(16)], np.float32)


def present(state: JaxState) -> jax.Array:
    """``int32[]``: bit ``owner*8 + rank-1`` set for every piece still in the game."""
    b = state.board.astype(jnp.int32)
    up = (b >= 1) & (b <= 16)
    on_board = jnp.sum(jnp.where(up, jnp.left_shift(1, jnp.maximum(b - 1, 0)), 0))
    return state.face_down_mask | on_board.astype(jnp.int32)


def removed_ranks(
    before: jax.Array, after: jax.Array, owner: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """``(count, rank sum)`` of ``owner``'s pieces present in ``before`` but not ``after``."""
    gone = (before & ~after) >> (owner * 8)
    bits = ((gone >> jnp.arange(8)) & 1).astype(jnp.float32)
    return jnp.sum(bits), jnp.sum(bits * jnp.asarray(_RANKS[:8]))


def shaping_tables(rules: Rules) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``(distance float32[N, N], takes bool[20, 20])``: Manhattan distances between
    squares, and the strict "can take" relation of square codes (the battle table)."""
    distance = square_distances(rules.rows, rules.cols)
    battle = np.asarray(tables(rules).battle).reshape(20, 20)
    return distance, battle == BattleResult.TAKE


def potential(state: JaxState, player: jax.Array | int, rules: Rules = DARK) -> jax.Array:
    """``float32[]``: the Q-learners' shaping potential ``Σ Opp(i) − Σ Threat(i)`` of ``player``
    (over its revealed pieces ``i`` with the nearest revealed enemy at distance ``d``:
    ``3/(1+d)`` if ``i`` can take one of the nearest, ``−4/(1+d)`` if one can take ``i``),
    equal to the pure ``jungle_train.tabular._shaping.potential``; one game.

    >>> from jungle_core import from_fen
    >>> from jungle_core.jax_env import make
    >>> float(potential(make().from_state(from_fen("8/8/8/8/8/8/E1w5 0 0 0 - -")), 0))
    1.0
    """
    distance, takes = shaping_tables(rules)
    b = state.board.astype(jnp.int32)
    up = (b >= 1) & (b <= 16)
    owner = (b - 1) >> 3
    mine = up & (owner == player)
    enemy = up & (owner != player)
    d = jnp.where(enemy[None, :], jnp.asarray(distance), jnp.inf)
    nearest_d = jnp.min(d, axis=1)
    nearest = enemy[None, :] & (d == nearest_d[:, None])
    t = jnp.asarray(takes)
    can = jnp.any(nearest & t[b[:, None], b[None, :]], axis=1)
    hit = jnp.any(nearest & t[b[None, :], b[:, None]], axis=1)
    scale = jnp.where(jnp.isfinite(nearest_d), 1.0 / (1.0 + nearest_d), 0.0)
    per_piece = scale * (3.0 * can - 4.0 * hit)
    return jnp.sum(jnp.where(mine, per_piece, 0.0))
