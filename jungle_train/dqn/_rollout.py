"""The DQN's games: the learner acting in every game of the batch, the opponents'
replies, restarts, and the transition each decision leaves for replay.

Each game has a learner seat (alternating from game to game) and an opponent kind fixed
by its slot in the batch: the opponent mix (``Config.opponents``, over
:data:`jungle_train.dqn.OPPONENT_KINDS`) is realised as contiguous slots, so the costly
Greedy (:class:`jungle_train.jitted.JaxGreedy`) and look-ahead
(:class:`jungle_train.jitted.JaxLookahead`) run only on their slots; self-play meets a
frozen copy of the network, refreshed every ``self_play_period`` updates (or a fixed
agent's network, ``frozen_opponent``); a league game meets the member it drew when it
started (:mod:`jungle_train.dqn._league`: a past snapshot or the current network, drawn
by prioritised fictitious self-play). A transition is the learner's decision: its position, its
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
import numpy as np

from jungle_core import DARK, Rules
from jungle_core.jax_env import JaxState, make
from jungle_train.common import GameSharding
from jungle_train.dqn._config import OPPONENT_KINDS, Config
from jungle_train.dqn._league import draw_members, pfsp_weights, record_results
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
    JaxLookahead,
    best_action,
    coin,
    hash_words,
    random_endgame,
    uniform_legal,
)

__all__ = ["GAME_KINDS", "Rollout", "RunnerState", "expand"]

GAME_KINDS = (*OPPONENT_KINDS, "endgame")
"""The training games' kinds in the metrics: by opponent, and the endgame starts."""


class RunnerState(NamedTuple):
    """Everything a run carries from round to round (one pytree; resumable). The league's
    fields are ``None`` in a run without league games."""

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
    pool: Any = None  # the snapshots, leaves [pool_size, ...]
    pool_next: jax.Array | None = None  # int32[]: snapshots taken so far
    pool_points: jax.Array | None = None  # float32[pool_size + 1]: the learner's points
    pool_games: jax.Array | None = None  # float32[pool_size + 1]: ... over these games
    member: jax.Array | None = None  # int32[num_envs]: each league game's member


def expand(mask: jax.Array, like: jax.Array) -> jax.Array:
    """``mask`` with trailing axes of size 1, to select whole entries of ``like``."""
    return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))


def _rows(state: JaxState, lo: int, hi: int) -> JaxState:
    part: JaxState = jax.tree.map(lambda a: a[lo:hi], state)
    return part


def _best(q: jax.Array, legal: jax.Array) -> jax.Array:
    return jnp.argmax(jnp.where(legal, q, -jnp.inf), axis=-1).astype(jnp.int32)


class Rollout:
    """The acting side of a run, built once per config: env, Greedy, the look-ahead,
    network, the opponents' slots and the games' sharding over the devices."""

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
        self.lookahead = JaxLookahead(self.env)
        self.bounds = tuple(int(x) for x in np.cumsum((0, *self.slots)))
        """``bounds[k]:bounds[k + 1]``: the games of opponent kind ``k``."""
        self.league = self.slots[4] > 0

    def slot_kinds(self) -> jax.Array:
        """``int32[num_envs]``: each game's opponent kind (index into
        :data:`OPPONENT_KINDS`)."""
        return jnp.asarray(np.repeat(np.arange(len(self.slots)), self.slots), jnp.int32)

    # -- acting -------------------------------------------------------------------

    def observations(self, state: JaxState) -> jax.Array:
        """``float32[B, F]``: the network's input in a batch of positions."""
        return jax.vmap(functools.partial(observe, self.env, self.config))(state)

    def q_values(self, params: Any, state: JaxState) -> jax.Array:
        """``float32[B, A]``: the network's Q-values in a batch of positions."""
        return jnp.asarray(self.network.apply(params, self.observations(state)))

    def members(self, runner: RunnerState) -> Any:
        """The league's networks, leaves ``[pool_size + 1, ...]``: the pool, then the
        current network."""
        return jax.tree.map(lambda p, x: jnp.concatenate([p, x[None]]), runner.pool, runner.params)

    def league_q(self, runner: RunnerState, state: JaxState, member: jax.Array) -> jax.Array:
        """``float32[n, A]``: each game's Q-values under its own league member's network
        (every member evaluated once on the batch, then each game's row picked)."""
        obs = self.observations(state)
        q = jax.vmap(lambda p: jnp.asarray(self.network.apply(p, obs)))(self.members(runner))
        return q[member, jnp.arange(member.shape[0])]

    def opponent_actions(self, runner: RunnerState, state: JaxState, words: jax.Array) -> jax.Array:
        """``int32[B]``: each game's opponent's action in ``state``, every kind computed
        on its own slots only (:data:`OPPONENT_KINDS`, in that order along the batch)."""
        lo = self.bounds
        parts = []
        if self.slots[0]:
            s = _rows(state, lo[0], lo[1])
            parts.append(uniform_legal(words[lo[0] : lo[1]], s.legal_action_mask))
        if self.slots[1]:
            s = _rows(state, lo[1], lo[2])
            parts.append(best_action(jax.vmap(self.greedy.action_values)(s), words[lo[1] : lo[2]]))
        if self.slots[2]:
            s = _rows(state, lo[2], lo[3])
            values = jax.vmap(self.lookahead.action_values)(s)
            values = jnp.where(s.legal_action_mask, values, -jnp.inf)
            parts.append(best_action(values, words[lo[2] : lo[3]]))
        if self.slots[3]:
            s = _rows(state, lo[3], lo[4])
            parts.append(_best(self.q_values(runner.opponent_params, s), s.legal_action_mask))
        if self.slots[4]:
            assert runner.member is not None
            s = _rows(state, lo[4], lo[5])
            q = self.league_q(runner, s, runner.member[lo[4] : lo[5]])
            parts.append(_best(q, s.legal_action_mask))
        return jnp.concatenate(parts)

    def openings(
        self, runner: RunnerState, words: jax.Array, member: jax.Array | None
    ) -> jax.Array:
        """``int32[B]``: each game's opponent's first action in the start position
        (computed on the start once, not per game; ``member``: the league games' members)."""
        b, lo = self.config.num_envs, self.bounds
        start = jax.tree.map(lambda a: a[None], self.start)
        legal = self.start.legal_action_mask
        out = uniform_legal(words, jnp.broadcast_to(legal, (b, legal.shape[0])))
        slot = jnp.arange(b)

        def scripted(values: jax.Array) -> jax.Array:
            values = jnp.where(legal, values, -jnp.inf)
            return best_action(jnp.broadcast_to(values, (b, values.shape[0])), words)

        if self.slots[1]:
            values = self.greedy.action_values(self.start)
            out = jnp.where((slot >= lo[1]) & (slot < lo[2]), scripted(values), out)
        if self.slots[2]:
            values = self.lookahead.action_values(self.start)
            out = jnp.where((slot >= lo[2]) & (slot < lo[3]), scripted(values), out)
        if self.slots[3]:
            best = _best(self.q_values(runner.opponent_params, start)[0], legal)
            out = jnp.where((slot >= lo[3]) & (slot < lo[4]), best, out)
        if self.slots[4]:
            assert member is not None
            obs = self.observations(start)
            q = jax.vmap(lambda p: jnp.asarray(self.network.apply(p, obs))[0])(self.members(runner))
            best_of = _best(q, legal)  # [M]
            out = jnp.where(slot >= lo[4], best_of[jnp.clip(member, 0, q.shape[0] - 1)], out)
        return out

    def league_weights(self, runner: RunnerState) -> jax.Array:
        """``float32[M]``: the probability of drawing each league member now."""
        assert runner.pool_next is not None and runner.pool_points is not None
        assert runner.pool_games is not None
        filled = jnp.arange(self.config.pool_size) < runner.pool_next
        available = jnp.concatenate([filled, jnp.ones(1, jnp.bool_)])
        return pfsp_weights(
            runner.pool_points, runner.pool_games, available, self.config.pfsp_exponent
        )

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
        words = jax.random.bits(k_words, (b, 6 if self.league else 5), jnp.uint32)
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
        reply = self.opponent_actions(runner, after_learner, words[:, 2])
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
        kind = jnp.where(runner.endgame, len(OPPONENT_KINDS), self.slot_kinds())
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

        # league games: the result against the member counts (not from endgame starts),
        # and every game that ended draws the member it meets next
        member = runner.member
        if self.league:
            assert member is not None
            assert runner.pool_points is not None and runner.pool_games is not None
            counted = ended & (kind == OPPONENT_KINDS.index("league"))
            points, games = record_results(
                runner.pool_points, runner.pool_games, member, (result + 1.0) / 2.0, counted
            )
            runner = runner._replace(pool_points=points, pool_games=games)
            drawn = draw_members(words[:, 5], self.league_weights(runner))
            member = jnp.where(ended, drawn, member)

        # finished games restart; the learner changes seat, and when it is second the
        # opponent's first action is played at once
        seat = jnp.where(ended, 1 - learner, learner)
        start = jax.tree.map(lambda a: jnp.broadcast_to(a, (b, *a.shape)), self.start)
        opening = self.openings(runner, words[:, 3], member)
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
            member=member,
        )
        return runner, transition, {**stats, "epsilon": eps}
