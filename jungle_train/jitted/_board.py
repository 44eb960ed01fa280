"""Board arithmetic of the DQN's rewards on the JAX core (one game; ``vmap`` for a batch):
which pieces are still in the game, what a ply removed, and the Q-learners' Opp − Threat
shaping potential.
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

__all__ = ["potential", "present", "removed_ranks", "shaping_tables"]

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
