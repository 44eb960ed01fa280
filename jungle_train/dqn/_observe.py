"""What the DQN's network sees, and the network: :func:`observe` turns a position into the
learner's input, :func:`make_network` builds the config's Q-network over it.

The base observation says what is on each square, but a 3×3 convolution sees only its
neighbourhood and reads ranks as rank / 8, leaving the capture rule's exception (an
Elephant never takes a Rat) to be inferred. The per-square planes spell those out:
:func:`enemy_fields` (how far each enemy rank is) and :func:`battle_planes` (what moving
onto the neighbouring enemy does). Both are computed from the position alone and have
numpy twins in :mod:`jungle_train.players` (which play the checkpoint without JAX).
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from jungle_core.jax_env import JaxEnv, JaxState
from jungle_train.dqn._config import Config
from jungle_train.jitted import ConvQNetwork, QNetwork
from jungle_train.players import (
    BATTLE_PLANES,
    DANGER_PLANES,
    FIELD_PLANES,
    OBSERVATIONS,
    battle_table,
    danger_table,
    field_table,
)

__all__ = ["battle_planes", "danger_planes", "enemy_fields", "make_network", "observe"]


def make_network(config: Config) -> nn.Module:
    """The config's Q-network (:class:`QNetwork` or :class:`ConvQNetwork`)."""
    if config.network == "conv":
        planes = OBSERVATIONS[config.observation][1]
        return ConvQNetwork(
            config.channels, config.conv_layers, config.dueling, square_planes=planes
        )
    return QNetwork(config.hidden, config.dropout)


# ------------------------------------------------------------------------ observation


def observe(env: JaxEnv, config: Config, state: JaxState) -> jax.Array:
    """``float32[obs]``: the learner's input for one position (the 336 floats of
    ``JaxEnv.observe`` for the player to move, then the clock and the planes)."""
    clock, planes = OBSERVATIONS[config.observation]
    parts = [env.observe(state).reshape(-1)]
    if clock:
        since = state.plies_since_removal.astype(jnp.float32) / env.rules.no_removal_limit
        parts.append(since[None])
    if planes:
        squares = env.num_squares
        per_square = [enemy_fields(env, state).reshape(squares, FIELD_PLANES)]
        if planes > FIELD_PLANES:
            per_square.append(battle_planes(env, state).reshape(squares, BATTLE_PLANES))
        if planes > FIELD_PLANES + BATTLE_PLANES:
            per_square.append(danger_planes(env, state).reshape(squares, DANGER_PLANES))
        parts.append(jnp.concatenate(per_square, axis=-1).reshape(-1))
    return jnp.concatenate(parts)


def _neighbour_codes(env: JaxEnv, state: JaxState) -> jax.Array:
    """``int32[squares, 4]``: the code on each square's neighbour in each direction (0,
    empty, off the board)."""
    neighbour = jnp.asarray(battle_table(env.rules)[0])
    board = state.board.astype(jnp.int32)
    return jnp.where(neighbour >= 0, board[neighbour], 0)


def battle_planes(env: JaxEnv, state: JaxState) -> jax.Array:
    """``float32[squares * 4]``: for each face-up piece of the player to move and each
    direction, what moving onto the face-up enemy there does (1 takes, 0.5 both removed,
    -1 the mover removed, 0 no battle; square-major). Equal to the numpy
    :func:`jungle_train.players._numpy.battle_planes`, which documents why.

    >>> from jungle_core import from_fen
    >>> from jungle_core.jax_env import make
    >>> env = make()
    >>> s = env.from_state(from_fen("8/8/8/8/8/8/Er6 0 0 0 - -"))
    >>> battle_planes(env, s).reshape(56, 4)[0].tolist()
    [0.0, 0.0, 0.0, -1.0]
    """
    _, value = battle_table(env.rules)
    board = state.board.astype(jnp.int32)
    lo = state.current_player * 8
    mine = (board > lo) & (board <= lo + 8)
    target = _neighbour_codes(env, state)
    planes = jnp.where(mine[:, None], jnp.asarray(value)[board[:, None], target], 0.0)
    return planes.reshape(-1)


def danger_planes(env: JaxEnv, state: JaxState) -> jax.Array:
    """``float32[squares * 8]``: for each square and each rank of the player to move, the
    worst a face-up enemy next to the square does to a piece of that rank standing there
    by moving onto it (1 taken, 0.5 both removed; square-major). Equal to the numpy
    :func:`jungle_train.players._numpy.danger_planes`, which documents why.

    >>> from jungle_core import from_fen
    >>> from jungle_core.jax_env import make
    >>> env = make()
    >>> s = env.from_state(from_fen("8/8/8/8/8/8/1e6 0 0 0 - -"))
    >>> danger_planes(env, s).reshape(56, 8)[0].tolist()
    [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]
    """
    danger = jnp.asarray(danger_table(env.rules))[state.current_player]  # [codes, 8]
    return danger[_neighbour_codes(env, state)].max(axis=1).reshape(-1)


def enemy_fields(env: JaxEnv, state: JaxState) -> jax.Array:
    """``float32[squares * 8]``: for each square and each rank of the opponent of the
    player to move, ``1 / (1 + Manhattan distance)`` to that piece while it is face up on
    the board, else 0 (square-major). Equal to the numpy
    :func:`jungle_train.players._numpy.enemy_fields`, which documents why.

    >>> from jungle_core import from_fen
    >>> from jungle_core.jax_env import make
    >>> env = make()
    >>> s = env.from_state(from_fen("8/8/8/8/8/8/T1e5 0 0 0 - -"))
    >>> float(enemy_fields(env, s).reshape(56, 8)[2, 7])
    1.0
    """
    board = state.board.astype(jnp.int32)
    codes = (1 - state.current_player) * 8 + jnp.arange(1, FIELD_PLANES + 1, dtype=jnp.int32)
    hit = board[:, None] == codes[None, :]  # bool[squares, 8]
    where = jnp.argmax(hit, axis=0)  # int[8]: the square of each enemy rank
    table = jnp.asarray(field_table(env.rules.rows, env.rules.cols))
    fields = jnp.where(jnp.any(hit, axis=0)[None, :], table[:, where], 0.0)
    return fields.reshape(-1)
