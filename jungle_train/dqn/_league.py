"""The DQN's league: a pool of the learner's past snapshots, and which member each
league game meets (prioritised fictitious self-play), all inside the jitted loop.

The league's members are the ``pool_size`` snapshots (taken every ``self_play_period``
updates, the oldest evicted first) and, as the last member, the current network. A
league game draws its member when it starts, with weight ``(1 - x_k) ** p`` for member
``k`` (``p = pfsp_exponent``), ``x_k`` the learner's score against ``k`` over its recent
games (:func:`pfsp_weights`): AlphaStar's prioritised fictitious self-play, which spends
the games on the members the learner does not yet beat. Scores are counted with one win
and one loss of prior, over a sliding window of about :data:`WINDOW` games per member
(older results are scaled down, as the learner has changed since), and a slot's count
restarts when a new snapshot overwrites it.

Everything is a fixed-shape array: the pool is the parameters' pytree with a leading
axis ``[pool_size, ...]``, the counts are ``float32[pool_size + 1]``, and each game's
member is an ``int32`` index, so sampling, recording and snapshotting are jittable.

>>> import jax.numpy as jnp
>>> points, games = jnp.array([0.0, 9.0, 5.0]), jnp.array([10.0, 10.0, 10.0])
>>> w = pfsp_weights(points, games, jnp.array([True, True, True]), 2.0)
>>> [round(float(v), 3) for v in w]   # member 0 beats the learner: drawn most
[0.752, 0.025, 0.224]
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jungle_core import DARK
from jungle_train.common import CheckpointError
from jungle_train.players import DQNAgent

__all__ = [
    "WINDOW",
    "add_snapshot",
    "draw_members",
    "frozen_params",
    "member_count",
    "pfsp_weights",
    "record_results",
]

WINDOW = 200.0
"""Games per member over which the learner's recent score is counted (a soft window:
beyond it, the counts are scaled down to it)."""


def member_count(pool_size: int) -> int:
    """Members of a league: the pool's snapshots and the current network."""
    return pool_size + 1


def pfsp_weights(
    points: jax.Array, games: jax.Array, available: jax.Array, exponent: float
) -> jax.Array:
    """``float32[M]``: the probability of drawing each member, ``∝ (1 - x_k) ** exponent``
    over the ``available`` members (``x_k = (points_k + 1) / (games_k + 2)``, the
    learner's score against ``k`` with one win and one loss of prior); 0 elsewhere."""
    score = (points + 1.0) / (games + 2.0)
    raw = jnp.where(available, jnp.power(jnp.clip(1.0 - score, 1e-6, 1.0), exponent), 0.0)
    return raw / jnp.sum(raw)


def draw_members(words: jax.Array, weights: jax.Array) -> jax.Array:
    """``int32[n]``: a member for each of ``n`` games, drawn from ``weights: float32[M]``
    (summing to 1) with one ``uint32`` word each (inverse transform sampling).

    >>> import jax.numpy as jnp
    >>> draw_members(jnp.array([0, 2**31, 2**32 - 1], jnp.uint32), jnp.array([0.5, 0.0, 0.5]))
    Array([0, 2, 2], dtype=int32)
    """
    u = (words >> 8).astype(jnp.float32) / jnp.float32(1 << 24)
    edges = jnp.cumsum(weights)
    last = jnp.max(jnp.where(weights > 0, jnp.arange(weights.shape[0]), 0))
    member = jnp.sum(u[:, None] >= edges[None, :], axis=1)
    return jnp.minimum(member, last).astype(jnp.int32)


def record_results(
    points: jax.Array,
    games: jax.Array,
    member: jax.Array,
    score: jax.Array,
    counted: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """The counts ``(points, games)`` (``float32[M]``) after the games where ``counted``
    (``bool[n]``) ended with the learner's ``score`` (``float32[n]``, 1 / 0.5 / 0) against
    ``member`` (``int32[n]``); a member past :data:`WINDOW` games is scaled back to it."""
    m = points.shape[0]
    points = points + jax.ops.segment_sum(jnp.where(counted, score, 0.0), member, m)
    games = games + jax.ops.segment_sum(counted.astype(jnp.float32), member, m)
    scale = jnp.minimum(1.0, WINDOW / jnp.maximum(games, 1.0))
    return points * scale, games * scale


def add_snapshot(pool: Any, params: Any, slot: jax.Array, take: jax.Array) -> Any:
    """The pool (a pytree of ``[pool_size, ...]`` leaves) with ``params`` written at
    ``slot`` when ``take`` (``bool[]``), unchanged otherwise."""
    return jax.tree.map(lambda p, x: jnp.where(take, p.at[slot].set(x), p), pool, params)


def frozen_params(path: str, template: Any) -> Any:
    """The network of the DQN playing checkpoint at ``path`` as a pytree of
    ``template``'s structure and shapes; :class:`CheckpointError` naming the file when it
    holds another network."""
    agent = DQNAgent(DARK, path)
    tree = {"params": agent.params}
    leaves, treedef = jax.tree.flatten(template)
    loaded, loaded_def = jax.tree.flatten(tree)
    if str(loaded_def) != str(treedef) or any(
        a.shape != b.shape for a, b in zip(loaded, leaves, strict=True)
    ):
        raise CheckpointError(
            f"{path}: its network does not have the shape of this config's network "
            "(train the exploiter with the frozen agent's network settings)"
        )
    return jax.tree.map(lambda a, t: jnp.asarray(a, t.dtype), tree, template)
