"""The DQN's rewards, from the learner's side, and its schedules of ε and β.

A transition spans the learner's ply and the opponent's reply, so its reward is the sum
of: a cost per decision (``decision_reward``), the learner's ply (reveal, plain move,
material, shaping: :func:`learner_ply_rewards`), the game's result if that ply ended it,
the reply's material and shaping if not (:func:`ply_rewards`), and the result if the
reply ended it (:func:`terminal_rewards`). The board arithmetic is
:mod:`jungle_train.jitted`'s, shared with the Q-learners' shaping.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jungle_core.jax_env import JaxEnv, JaxState
from jungle_train.dqn._config import Config
from jungle_train.jitted import potential, present, removed_ranks

__all__ = ["learner_ply_rewards", "ply_reward", "ply_rewards", "schedule", "terminal_rewards"]


def ply_reward(config: Config, before: JaxState, after: JaxState, learner: jax.Array) -> jax.Array:
    """Material (and shaping) part of the reward of one ply, from the learner's side."""
    present0, present1 = present(before), present(after)
    _, taken = removed_ranks(present0, present1, 1 - learner)
    lost, lost_ranks = removed_ranks(present0, present1, learner)
    reward = (
        config.capture_reward * taken
        + config.lost_piece_reward * lost
        + config.lost_rank_reward * lost_ranks
    )
    if config.shaping:
        reward += config.shaping * (potential(after, learner) - potential(before, learner))
    return reward


def ply_rewards(config: Config, before: JaxState, after: JaxState, learner: jax.Array) -> jax.Array:
    """``float32[B]``: :func:`ply_reward` of a batch of games."""
    return jax.vmap(functools.partial(ply_reward, config))(before, after, learner)


def learner_ply_rewards(
    config: Config,
    env: JaxEnv,
    before: JaxState,
    after: JaxState,
    action: jax.Array,
    learner: jax.Array,
) -> jax.Array:
    """``float32[B]``: the reward of the learner's own ply in a batch of games: the cost
    of a decision, material and shaping, a reveal, and a plain move (one that turns
    nothing face up and removes nothing)."""
    reward = config.decision_reward + ply_rewards(config, before, after, learner)
    reward += jnp.where(action < env.num_squares, config.reveal_reward, 0.0)
    unchanged = (before.face_down_mask == after.face_down_mask) & (
        jax.vmap(present)(before) == jax.vmap(present)(after)
    )
    reward += jnp.where((action >= env.num_squares) & unchanged, config.move_reward, 0.0)
    return reward


def _terminal_reward(
    config: Config, state: JaxState, learner: jax.Array, ended: jax.Array
) -> jax.Array:
    result = state.rewards[learner]  # +1 / -1 / 0 on the step that ended the game
    value = jnp.where(
        result > 0, config.win_reward, jnp.where(result < 0, -config.win_reward, config.draw_reward)
    )
    return jnp.where(ended, value, 0.0)


def terminal_rewards(
    config: Config, state: JaxState, learner: jax.Array, ended: jax.Array
) -> jax.Array:
    """``float32[B]``: the result's reward (win, loss, draw) in the games that ``ended``
    on the step that reached ``state``, else 0."""
    return jax.vmap(functools.partial(_terminal_reward, config))(state, learner, ended)


def schedule(config: Config, step: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(phase 1?, ε, β)`` at learner decision ``step``: ε falls linearly within each
    phase, β rises linearly over the run.

    >>> import jax.numpy as jnp
    >>> phase1, eps, beta = schedule(Config(total_steps=100), jnp.int32(20))
    >>> bool(phase1), round(float(eps), 3), round(float(beta), 3)
    (True, 0.46, 0.52)
    """
    total = jnp.float32(config.total_steps)
    split = jnp.float32(config.phase1_fraction) * total
    s = step.astype(jnp.float32)
    phase1 = s < split
    f1 = jnp.clip(s / jnp.maximum(split, 1.0), 0.0, 1.0)
    f2 = jnp.clip((s - split) / jnp.maximum(total - split, 1.0), 0.0, 1.0)
    (a1, b1), (a2, b2) = config.phase1_epsilon, config.phase2_epsilon
    eps = jnp.where(phase1, a1 + (b1 - a1) * f1, a2 + (b2 - a2) * f2)
    beta = config.beta_start + (config.beta_end - config.beta_start) * jnp.clip(s / total, 0.0, 1.0)
    return phase1, eps, beta
