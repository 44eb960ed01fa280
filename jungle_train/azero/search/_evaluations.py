"""The search's evaluators: ``evaluate(params, states[B]) -> Evaluation`` (prior logits,
value, afterstate values), what :func:`jungle_train.azero.search._search.make_search` calls at
every expansion.

- :func:`blended_evaluation`: an AlphaZero network (:mod:`jungle_train.azero._net`) with
  the hand-made value mixed into its values;
- :func:`dqn_prior_evaluation`: a trained DQN's action values as the prior, the
  hand-made value as the leaf value (what ``make_agent("azero", DARK)`` plays);
- :func:`hand_evaluation`: no network at all.

The hand-made values themselves are in :mod:`jungle_train.azero._hand_value`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jungle_core.jax_env import JaxEnv, JaxState
from jungle_train.azero._hand_value import classic_prior_logits, hand_value, heuristic_value
from jungle_train.azero._net import Evaluation, PolicyValueNetwork, network_evaluation

__all__ = ["blended_evaluation", "dqn_prior_evaluation", "hand_evaluation"]


def blended_evaluation(
    env: JaxEnv, network: PolicyValueNetwork, params: tuple[Any, jax.Array], states: JaxState
) -> Evaluation:
    """:func:`network_evaluation` with :func:`heuristic_value` mixed into its values:
    ``params = (network parameters, weight)`` (``weight``: ``float32[]`` in [0, 1]);
    value ``(1 - weight) · v + weight · heuristic_value(state, mover)``, and each
    afterstate value the same with the position's own heuristic value (a capture shows
    in the value of the state after it, one expansion later). Weight 0 is the network
    alone."""
    net_params, weight = params
    ev = network_evaluation(env, network, net_params, states)
    balance = jax.vmap(functools.partial(heuristic_value, env.rules))(states, states.current_player)
    value = (1.0 - weight) * ev.value + weight * balance
    afterstate = (1.0 - weight) * ev.afterstate + weight * balance[:, None]
    return Evaluation(ev.logits, value, afterstate)


def dqn_prior_evaluation(
    env: JaxEnv,
    q_network: Callable[[Any, jax.Array], jax.Array],
    observe: Callable[[JaxState], jax.Array],
    win_reward: float,
    params: tuple[Any, ...],
    states: JaxState,
) -> Evaluation:
    """A trained DQN (:mod:`jungle_train.dqn`) in the search's place of a policy-value
    network: ``params = (Q-network parameters, 1 / tau, weight)`` (more entries are
    ignored).

    - prior logits ``Q(s, ·) / tau``: the DQN's action values as a softmax policy at
      temperature ``tau`` (``float32[]``);
    - value ``weight · heuristic_value(s) + (1 - weight) ·
      clip(max_legal Q(s, ·) / win_reward, -1, 1)`` (the DQN's return is about
      ``±win_reward`` for a won or lost game, so the scaled maximum reads as a value in
      [-1, 1]);
    - afterstate value of action ``a``: the same mix with ``clip(Q(s, a) / win_reward)``,
      the DQN's own value of playing ``a`` before its chance outcome is known.

    ``q_network(params, obs[B, obs]) -> float32[B, A]`` and ``observe(state) ->
    float32[obs]`` are the checkpoint's network and observation
    (:func:`jungle_train.dqn.make_network`, :func:`jungle_train.dqn.observe`).
    """
    q_params, inverse_temperature, weight = params[:3]
    q = q_network(q_params, jax.vmap(observe)(states))
    legal = states.legal_action_mask
    hand = functools.partial(heuristic_value, env.rules)
    balance = jax.vmap(hand)(states, states.current_player)
    best = jnp.max(jnp.where(legal, q, -jnp.inf), axis=-1)
    best = jnp.where(jnp.any(legal, axis=-1), best, 0.0)
    value = weight * balance + (1.0 - weight) * jnp.clip(best / win_reward, -1.0, 1.0)
    afterstate = weight * balance[:, None] + (1.0 - weight) * jnp.clip(q / win_reward, -1.0, 1.0)
    return Evaluation(q * inverse_temperature, value, afterstate)


def hand_evaluation(
    env: JaxEnv, params: tuple[jax.Array, jax.Array], states: JaxState
) -> Evaluation:
    """No network: :func:`hand_value` for the player to move as the value of the
    position and of each of its afterstates (a chance node is valued by its parent);
    the prior uniform (DARK) or :func:`classic_prior_logits` (CLASSIC). ``params``:
    ``(classic_piece_squares, classic_targets)`` (read for CLASSIC only). The search's
    baseline: what the true model and a hand-made evaluation find without anything
    learned."""
    pst, targets = params
    value = jax.vmap(functools.partial(hand_value, env.rules, pst))(states, states.current_player)
    if env.rules.is_dark:
        logits = jnp.zeros(states.legal_action_mask.shape, jnp.float32)
    else:
        logits = jax.vmap(functools.partial(classic_prior_logits, env.rules, pst, targets))(states)
    afterstate = jnp.broadcast_to(value[:, None], logits.shape)
    return Evaluation(logits, value, afterstate)
