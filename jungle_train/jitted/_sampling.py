"""Cheap random choices inside jitted loops, from 32-bit random words.

On this CPU, ``jax.random.categorical`` or ``uniform`` over ``[B, 280]`` costs more than
a whole DARK step of the JAX core (measured in ``benchmarks/train_speed.py``). The
choices here draw *one* 32-bit word per game with ``jax.random.bits`` and spread it over
the actions with an integer hash (lowbias32 of the word and the action index): the
legal action with the highest hashed priority is uniform among the legal actions up to
the hash's quality (tested with a chi-square test in ``tests/train/test_dqn_learning.py``).

>>> import jax, jax.numpy as jnp
>>> mask = jnp.array([[False, True, False, True]])
>>> int(uniform_legal(jnp.array([12345], jnp.uint32), mask)[0]) in (1, 3)
True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["best_action", "coin", "hash_words", "uniform_legal"]


def hash_words(seed: jax.Array, n: int) -> jax.Array:
    """``uint32[..., n]``: ``n`` well-mixed words derived from ``seed: uint32[...]``.

    >>> hash_words(jax.numpy.array(7, jax.numpy.uint32), 3).shape
    (3,)
    """
    index = jnp.arange(n, dtype=jnp.uint32)
    x = seed[..., None] ^ (index * jnp.uint32(0x9E3779B9))
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    out: jax.Array = x ^ (x >> 16)
    return out


def uniform_legal(seed: jax.Array, mask: jax.Array) -> jax.Array:
    """``int32[...]``: a uniformly random True index of each row of ``mask: bool[..., A]``
    (``A <= 512``), from one word ``seed: uint32[...]`` per row; 0 for an empty row."""
    num_actions = mask.shape[-1]
    index = jnp.arange(num_actions, dtype=jnp.uint32)
    priority = jnp.where(mask, (hash_words(seed, num_actions) & jnp.uint32(0xFFFFFE00)) | index, 0)
    return (jnp.max(priority, axis=-1) & 0x1FF).astype(jnp.int32)


def best_action(values: jax.Array, seed: jax.Array, tolerance: float = 1e-3) -> jax.Array:
    """``int32[...]``: the index of the best of ``values: float32[..., A]`` (``-inf`` =
    not allowed), ties within ``tolerance`` (absolute) broken uniformly with ``seed``.

    >>> v = jnp.array([1.0, 3.0, -jnp.inf, 3.0])
    >>> int(best_action(v, jnp.array(1, jnp.uint32))) in (1, 3)
    True
    """
    best = jnp.max(values, axis=-1, keepdims=True)
    return uniform_legal(seed, values >= best - tolerance)


def coin(seed: jax.Array, probability: jax.Array) -> jax.Array:
    """``bool[...]``: True with ``probability`` (``float32``, broadcast), from a word.

    >>> bool(coin(jnp.array(5, jnp.uint32), jnp.float32(1.0)))
    True
    """
    u = (seed >> 8).astype(jnp.float32) * jnp.float32(2.0**-24)
    heads: jax.Array = u < probability
    return heads
