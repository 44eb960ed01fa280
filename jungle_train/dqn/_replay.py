"""The DQN's replay: prioritised sequences of compact positions (flashbax).

Replay stores a learner decision as a :class:`Transition` whose position is a
:class:`Position` (board, face-down mask, mover, clock, legal actions: about 400 bytes
instead of the full state and its observation); the observation is computed again when
a batch is sampled (:func:`state_of`, then
:func:`jungle_train.dqn._observe.observe`). The buffer keeps the games in
``[num_envs, time]`` order, so sampling sequences of ``n_step + 1`` gives n-step returns
(cut at the end of a game); the games' axis is the one sharded over the devices.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import flashbax
import jax
import jax.numpy as jnp

from jungle_core.jax_env import JaxState
from jungle_train.dqn._config import Config

__all__ = [
    "Position",
    "Transition",
    "importance_weights",
    "make_buffer",
    "position_of",
    "state_of",
]


class Position(NamedTuple):
    """A compact position as replay stores it (one game; batch axes in front)."""

    board: jax.Array  # int8[56]
    face_down_mask: jax.Array  # int32[]
    player: jax.Array  # int32[]
    since: jax.Array  # int32[]
    legal: jax.Array  # bool[280]


def position_of(state: JaxState) -> Position:
    """The part of ``state`` replay keeps (any batch axes kept)."""
    return Position(
        state.board,
        state.face_down_mask,
        state.current_player,
        state.plies_since_removal,
        state.legal_action_mask,
    )


def state_of(position: Position) -> JaxState:
    """A state to observe again from a stored ``position``: what :func:`position_of`
    dropped (ply, rewards, the game's end) is zero, which the observation does not read."""
    zero = jnp.zeros_like(position.since)
    return JaxState(
        board=position.board,
        face_down_mask=position.face_down_mask,
        current_player=position.player,
        plies_since_removal=position.since,
        ply=zero,
        legal_action_mask=position.legal,
        rewards=jnp.zeros((*position.since.shape, 2), jnp.float32),
        terminated=jnp.zeros(position.since.shape, jnp.bool_),
        truncated=jnp.zeros(position.since.shape, jnp.bool_),
    )


class Transition(NamedTuple):
    """One learner decision, as stored in replay (batch/time axes in front)."""

    position: Position
    action: jax.Array  # int32[]
    reward: jax.Array  # float32[]
    done: jax.Array  # bool[]: the game ended after this decision (and the reply)


def make_buffer(config: Config) -> Any:
    """The config's prioritised trajectory buffer (flashbax): ``num_envs`` games added
    side by side, ``batch_size`` sequences of ``n_step + 1`` sampled, sampling ∝
    ``priority ** priority_exponent``, on the default device's backend."""
    return flashbax.make_prioritised_trajectory_buffer(
        add_batch_size=config.num_envs,
        sample_batch_size=config.batch_size,
        sample_sequence_length=config.n_step + 1,
        period=1,
        min_length_time_axis=max(config.min_buffer // config.num_envs, config.n_step + 1),
        max_length_time_axis=config.buffer_size // config.num_envs,
        priority_exponent=config.priority_exponent,
        device=jax.default_backend() if jax.default_backend() in ("cpu", "gpu", "tpu") else "cpu",
    )


def importance_weights(probabilities: jax.Array, items: jax.Array, beta: jax.Array) -> jax.Array:
    """``float32[M]``: prioritised replay's importance weights ``(N·P)^−β`` of a sample
    drawn with ``probabilities`` from ``items`` stored transitions, over the batch's
    largest. A sample drawn with probability 0 (the sum tree's rounding at an edge)
    weighs nothing rather than ∞.

    >>> import jax.numpy as jnp
    >>> importance_weights(jnp.array([0.25, 0.5, 0.0]), jnp.int32(4), 1.0).tolist()
    [1.0, 0.5, 0.0]
    """
    drawn = probabilities > 0
    safe = jnp.where(drawn, items.astype(jnp.float32) * probabilities, 1.0)
    weights = jnp.where(drawn, safe ** (-beta), 0.0)
    weights = weights / jnp.maximum(jnp.max(weights), 1e-12)
    return weights
