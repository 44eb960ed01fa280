"""The DQN's games: the learner acting in every game of the batch, the opponents'
replies, restarts, and the transition each decision leaves for replay.

Each game has a learner seat (alternating from game to game) and an opponent fixed by
its slot in the batch: the opponent mix (:func:`jungle_train.common.parse_mix`) is
realised as contiguous slots, so the costly Greedy (:class:`jungle_train.jitted.JaxGreedy`)
runs only on its slots; self-play meets a frozen copy of the network, refreshed every
``self_play_period`` updates. A transition is the learner's decision: its position, its
action, the reward over its ply and the opponent's reply, and whether the game ended.

With ``endgame_starts`` > 0, that share of the games that finish restart from a random
endgame (:func:`jungle_train.jitted.random_endgame`: every piece face up, the learner to
move) instead of the start position, so the network learns to convert won endgames;
their results are kept apart (the ``endgame`` kind of :data:`GAME_KINDS`).

Per iteration one ``jax.random.bits`` call gives a few 32-bit words per game;
exploration coins, uniform legal actions and Greedy's tie-breaks are integer hashes of
those words (:mod:`jungle_train.jitted`): ``jax.random`` over ``[B, 280]`` costs more
than a DARK step on a CPU.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jungle_core import DARK, Rules
from jungle_core.jax_env import JaxState, make
from jungle_train.common import GameSharding
from jungle_train.dqn._config import Config
from jungle_train.dqn._observe import make_network, observe
from jungle_train.dqn._replay import Transition, position_of
from jungle_train.dqn._rewards import (
    learner_ply_rewards,
    ply_rewards,
    schedule,
    terminal_rewards,
)
from jungle_train.jitted import (
    JaxGreedy,
    best_action,
    coin,
    hash_words,
    random_endgame,
    uniform_legal,
)

__all__ = ["GAME_KINDS", "Rollout", "RunnerState", "expand"]

GAME_KINDS = ("random", "greedy", "self", "endgame")
"""The training games' kinds in the metrics: by opponent, and the endgame starts."""


class RunnerState(NamedTuple):
    """Everything a run carries from round to round (one pytree; resumable)."""

    params: Any
    target_params: Any
    opponent_params: Any
    opt_state: Any
    buffer: Any
    env: JaxState  # [num_envs]
    seat: jax.Array  # int32[num_envs]: the learner's player in each game
    episode_return: jax.Array  # float32[num_envs]
    episode_length: jax.Array  # int32[num_envs]
    endgame: jax.Array  # bool[num_envs]: the game started from a random endgame
    key: jax.Array
    rounds: jax.Array  # int32[]: rounds done
    updates: jax.Array  # int32[]: gradient updates done


def expand(mask: jax.Array, like: jax.Array) -> jax.Array:
    """``mask`` with trailing axes of size 1, to select whole entries of ``like``."""
    return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))


class Rollout:
    """The acting side of a run, built once per config: env, Greedy, network, the
    opponents' slots and the games' sharding over the devices."""

    def __init__(self, config: Config, rules: Rules = DARK) -> None:
        if rules.setup == "scattered":
            raise ValueError("the DQN trainer needs a fixed start position (not setup='scattered')")
        self.config = config
        self.env = make(rules)
        self.greedy = JaxGreedy(self.env)
        self.network = make_network(config)
        self.games = GameSharding()  # games split over every device of every process
        self.start = self.env.init(jax.random.key(0))
        self.slots = config.opponent_slots

    # -- acting -------------------------------------------------------------------

    def q_values(self, params: Any, state: JaxState) -> jax.Array:
        """``float32[B, A]``: the network's Q-values in a batch of positions."""
        obs = jax.vmap(functools.partial(observe, self.env, self.config))(state)
        return jnp.asarray(self.network.apply(params, obs))

    def opponent_actions(self, params: Any, state: JaxState, words: jax.Array) -> jax.Array:
        """``int32[B]``: each slot's opponent's action in ``state`` (slots: random, greedy,
        self-play, in that order along the batch)."""
        n_random, n_greedy, n_self = self.slots
        parts = []

        def pick(s: JaxState, lo: int, hi: int) -> JaxState:
            part: JaxState = jax.tree.map(lambda a: a[lo:hi], s)
            return part

        if n_random:
            s = pick(state, 0, n_random)
            parts.append(uniform_legal(words[:n_random], s.legal_action_mask))
        if n_greedy:
            lo, hi = n_random, n_random + n_greedy
            s = pick(state, lo, hi)
            values = jax.vmap(self.greedy.action_values)(s)
            parts.append(best_action(values, words[lo:hi]))
        if n_self:
            lo = n_random + n_greedy
            s = pick(state, lo, self.config.num_envs)
            q = self.q_values(params, s)
            parts.append(
                jnp.argmax(jnp.where(s.legal_action_mask, q, -jnp.inf), axis=-1).astype(jnp.int32)
            )
        return jnp.concatenate(parts)

    def openings(self, params: Any, words: jax.Array) -> jax.Array:
        """``int32[B]``: each slot's opponent's first action in the start position
        (computed once on the start, not per game)."""
        n_random, n_greedy, n_self = self.slots
        legal = self.start.legal_action_mask
        out = uniform_legal(words, jnp.broadcast_to(legal, (self.config.num_envs, legal.shape[0])))
        slot = jnp.arange(self.config.num_envs)
        if n_greedy:
            values = self.greedy.action_values(self.start)
            greedy = best_action(
                jnp.broadcast_to(values, (self.config.num_envs, values.shape[0])), words
            )
            out = jnp.where((slot >= n_random) & (slot < n_random + n_greedy), greedy, out)
        if n_self:
            q = self.q_values(params, jax.tree.map(lambda a: a[None], self.start))[0]
            best = jnp.argmax(jnp.where(legal, q, -jnp.inf)).astype(jnp.int32)
            out = jnp.where(slot >= n_random + n_greedy, best, out)
        return out

    # -- one iteration over every game -----------------------------------------------

    def iteration(
        self, runner: RunnerState, step: jax.Array
    ) -> tuple[RunnerState, Transition, dict[str, jax.Array]]:
        """One learner decision in every game (``step``: the decisions before it, for the
        schedules): act ε-greedily, step, the opponent's reply, rewards, the statistics
        of the games that ended, and restarts. The runner after it, the transitions and
        the statistics."""
        config, env = self.config, self.env
        b = config.num_envs
        key, k_words, k_step, k_reply, k_open = jax.random.split(runner.key, 5)
        words = jax.random.bits(k_words, (b, 5), jnp.uint32)
        state = self.games(runner.env)
        learner = runner.seat
        phase1, eps, _ = schedule(config, step)

        # the learner's decision: ε-greedy on the network, exploring with Greedy's
        # action in phase 1 and a uniform legal action in phase 2
        q = self.q_values(runner.params, state)
        legal = state.legal_action_mask
        exploit = jnp.argmax(jnp.where(legal, q, -jnp.inf), axis=-1).astype(jnp.int32)
        explore_uniform = uniform_legal(words[:, 1], legal)
        if config.phase1_fraction > 0:
            guided = jax.lax.cond(
                phase1,
                lambda: best_action(jax.vmap(self.greedy.action_values)(state), words[:, 1]),
                lambda: explore_uniform,
            )
        else:
            guided = explore_uniform
        explore = coin(words[:, 0], eps)
        action = jnp.where(explore, guided, exploit)

        steps = jax.vmap(env.step)
        after_learner = steps(state, action, jax.random.split(k_step, b))
        reward = learner_ply_rewards(config, env, state, after_learner, action, learner)
        ended_by_learner = after_learner.terminated
        reward += terminal_rewards(config, after_learner, learner, ended_by_learner)

        # the opponent's reply, inside the same step
        reply = self.opponent_actions(runner.opponent_params, after_learner, words[:, 2])
        after_reply = steps(after_learner, reply, jax.random.split(k_reply, b))
        reward += jnp.where(
            ended_by_learner, 0.0, ply_rewards(config, after_learner, after_reply, learner)
        )
        ended = after_reply.terminated | after_reply.truncated
        ended_by_reply = ended & ~ended_by_learner
        reward += terminal_rewards(config, after_reply, learner, ended_by_reply)

        transition = Transition(position_of(state), action, reward.astype(jnp.float32), ended)

        # statistics of the games that ended
        result = jnp.where(
            ended_by_learner,
            after_learner.rewards[jnp.arange(b), learner],
            after_reply.rewards[jnp.arange(b), learner],
        )
        ret = runner.episode_return + reward
        length = runner.episode_length + 1
        slot = jnp.arange(b)
        n_random, n_greedy, _ = self.slots
        kind = jnp.where(slot < n_random, 0, jnp.where(slot < n_random + n_greedy, 1, 2))
        kind = jnp.where(runner.endgame, 3, kind)
        stats = {
            "reward": jnp.mean(reward),
            "episodes": jnp.sum(ended),
            "episode_return": jnp.sum(jnp.where(ended, ret, 0.0)),
            "episode_length": jnp.sum(jnp.where(ended, length, 0)),
        }
        for k, name in enumerate(GAME_KINDS):
            mine = ended & (kind == k)
            stats[f"games_{name}"] = jnp.sum(mine)
            stats[f"points_{name}"] = jnp.sum(jnp.where(mine, (result + 1.0) / 2.0, 0.0))
            stats[f"wins_{name}"] = jnp.sum(mine & (result > 0))

        # finished games restart; the learner changes seat, and when it is second the
        # opponent's first action is played at once
        seat = jnp.where(ended, 1 - learner, learner)
        start = jax.tree.map(lambda a: jnp.broadcast_to(a, (b, *a.shape)), self.start)
        opening = self.openings(runner.opponent_params, words[:, 3])
        opened = steps(start, opening, jax.random.split(k_open, b))
        fresh = jax.tree.map(lambda o, s: jnp.where(expand(seat == 1, o), o, s), opened, start)
        endgame = runner.endgame
        if config.endgame_starts > 0:
            endgames = jax.vmap(
                functools.partial(
                    random_endgame,
                    env,
                    max_pieces=config.endgame_pieces,
                    max_other_pieces=config.endgame_opponent_pieces,
                )
            )(words[:, 4], seat)
            endgame = coin(hash_words(words[:, 4], 1)[:, 0], jnp.float32(config.endgame_starts))
            endgame &= ~endgames.terminated
            fresh = jax.tree.map(lambda e, f: jnp.where(expand(endgame, e), e, f), endgames, fresh)
            endgame = jnp.where(ended, endgame, runner.endgame)
        next_state = jax.tree.map(
            lambda f, s: jnp.where(expand(ended, f), f, s), fresh, after_reply
        )
        runner = runner._replace(
            env=self.games(next_state),
            seat=seat,
            episode_return=jnp.where(ended, 0.0, ret),
            episode_length=jnp.where(ended, 0, length),
            endgame=endgame,
            key=key,
        )
        return runner, transition, {**stats, "epsilon": eps}
