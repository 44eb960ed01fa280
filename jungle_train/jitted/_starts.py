"""Random DARK endgames as training starts, drawn inside jitted loops.

A learner that wins material but cannot hunt down the last pieces draws: of 30 games of
the first shipped DQN against Greedy, 22 were drawn, 16 of them at the 100-ply no-removal
limit with the DQN one to four pieces ahead (e.g. four pieces against one).
Games that start from a random endgame teach that phase directly: every piece face up,
each side holding a random subset of its eight ranks, on random distinct squares, the
given player to move. :func:`random_endgame` draws one from a single 32-bit word with
integer hashes (as :mod:`jungle_train.jitted._sampling` does for actions), so it costs no
``jax.random`` call per game.

>>> import jax.numpy as jnp
>>> from jungle_core.jax_env import make
>>> env = make()
>>> s = random_endgame(env, jnp.uint32(7), jnp.int32(1), 4)
>>> pieces = [int(c) for c in s.board if c]
>>> 2 <= len(pieces) <= 8, int(s.face_down_mask), int(s.current_player)
(True, 0, 1)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jungle_core.jax_env import JaxEnv, JaxState
from jungle_train.jitted._sampling import hash_words

__all__ = ["random_endgame"]

_SALT = 0x5EED_E1D6
"""Mixed into the word, so an endgame's draws differ from other choices made with it."""


def _smallest(keys: jax.Array, count: jax.Array) -> jax.Array:
    """``bool[n]``: the ``count`` entries of ``keys: uint32[n]`` that hash lowest (keys
    are made distinct by their low bits holding the index)."""
    n = keys.shape[-1]
    keys = (keys & jnp.uint32(~0xFF & 0xFFFFFFFF)) | jnp.arange(n, dtype=jnp.uint32)
    rank = jnp.argsort(jnp.argsort(keys))
    chosen: jax.Array = rank < count
    return chosen


def random_endgame(
    env: JaxEnv,
    word: jax.Array,
    player: jax.Array,
    max_pieces: int = 5,
    max_other_pieces: int | None = None,
) -> JaxState:
    """One random DARK endgame (unbatched; ``vmap`` it): the player to move holds
    between 1 and ``max_pieces`` (≤ 8) of its ranks, the other player between 1 and
    ``max_other_pieces`` (default: ``max_pieces``), chosen uniformly (the count uniform,
    then the subset), all face up on distinct squares chosen uniformly; ``player`` to
    move; the no-removal clock at 0. A drawn position that is already over (the player
    to move has no legal action) is returned as it is; callers check ``terminated``.

    ``word: uint32[]``, ``player: int32[]`` → a :class:`JaxState`.
    """
    other = max_pieces if max_other_pieces is None else max_other_pieces
    for name, value in (("max_pieces", max_pieces), ("max_other_pieces", other)):
        if not 1 <= value <= 8:
            raise ValueError(f"{name} must be in 1..8, not {value}")
    n = env.num_squares
    h = hash_words(jnp.asarray(word, jnp.uint32) ^ jnp.uint32(_SALT), 2 + 16 + n)
    player = jnp.asarray(player, jnp.int32)
    mover = 1 + (h[0] % jnp.uint32(max_pieces)).astype(jnp.int32)
    waiting = 1 + (h[1] % jnp.uint32(other)).astype(jnp.int32)
    counts = jnp.where(player == 0, jnp.stack([mover, waiting]), jnp.stack([waiting, mover]))
    present = jnp.concatenate(
        [_smallest(h[2:10], counts[0]), _smallest(h[10:18], counts[1])]
    )  # bool[16]: player 0's ranks 1..8, then player 1's
    squares = jnp.argsort((h[18:] & jnp.uint32(0xFFFFFFC0)) | jnp.arange(n, dtype=jnp.uint32))
    codes = jnp.where(present, jnp.arange(1, 17, dtype=jnp.int32), 0).astype(jnp.int8)
    board = jnp.zeros(n, jnp.int8).at[squares[:16]].set(codes)
    zero = jnp.zeros((), jnp.int32)
    return env.from_position(board, zero, player, zero)
