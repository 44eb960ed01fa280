"""The DQN's learning: the double-DQN n-step loss, the prioritised update, and the round
that ties acting and learning together (:class:`Parts`, what the trainer compiles).

One round is a rollout of ``rollout_length`` iterations over every game
(:meth:`Parts.iteration`), the ``[num_envs, rollout_length]`` block of transitions added
to replay, then ``updates_per_rollout`` updates: a prioritised sample, importance weights
``(N·P)^−β`` over the batch's largest, the loss :func:`double_q_loss` on the n-step
returns, gradients clipped by their global norm, then Adam (an update whose gradients
are not finite is skipped), new priorities ``|δ| + ε``, and the target network and the
self-play copy refreshed on their periods. Parameters and the optimiser state are
replicated over the devices while the games are sharded, so XLA all-reduces the
gradients of a batch sampled across the shards.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import optax

from jungle_core import DARK, Rules
from jungle_train.common import LOSS
from jungle_train.dqn._config import Config
from jungle_train.dqn._league import add_snapshot, draw_members, frozen_params, member_count
from jungle_train.dqn._observe import observe
from jungle_train.dqn._replay import (
    Transition,
    importance_weights,
    make_buffer,
    position_of,
    state_of,
)
from jungle_train.dqn._rewards import schedule
from jungle_train.dqn._rollout import Rollout, RunnerState, expand

__all__ = ["Parts", "double_q_loss"]


def double_q_loss(
    q: jax.Array,
    action: jax.Array,
    returns: jax.Array,
    bootstrap: jax.Array,
    q_next_target: jax.Array,
    q_next_selector: jax.Array,
    weights: jax.Array,
    delta: float,
) -> tuple[jax.Array, jax.Array]:
    """The weighted Huber loss of double-DQN TD errors, and the errors ``float32[M]``.

    For each of the ``M`` transitions, the target is ``returns + bootstrap ·
    q_next_target[argmax q_next_selector]`` (the online network picks the next action,
    the target network values it; ``bootstrap`` is γⁿ, or 0 after the game's end) and the
    error ``target - q[action]``, the target held fixed (no gradient flows into it).
    ``q``, ``q_next_target`` and ``q_next_selector`` are ``float32[M, A]`` (illegal
    actions already pushed down in the selector), ``action`` ``int32[M]``, the rest
    ``float32[M]``; the loss is ``mean(weights · huber(error, delta))``.

    >>> import jax.numpy as jnp
    >>> q, nxt = jnp.array([[1.0, 2.0]]), jnp.array([[3.0, 5.0]])
    >>> loss, td = double_q_loss(q, jnp.array([1]), jnp.array([1.0]), jnp.array([0.5]),
    ...                          nxt, jnp.array([[0.0, -1.0]]), jnp.array([1.0]), 1.0)
    >>> float(td[0]), float(loss)  # 1 + 0.5 * 3 - 2; 0.5 * 0.5²
    (0.5, 0.125)
    """
    best = jnp.argmax(q_next_selector, axis=-1)
    next_value = jnp.take_along_axis(q_next_target, best[:, None], axis=-1)[:, 0]
    target = jax.lax.stop_gradient(returns + bootstrap * next_value)
    td = target - jnp.take_along_axis(q, action[:, None], axis=-1)[:, 0]
    return jnp.mean(weights * optax.huber_loss(td, delta=delta)), td


class Parts(Rollout):
    """Everything a run builds once per config: the acting side (:class:`Rollout`), the
    optimiser and the replay buffer; :meth:`init` and :meth:`round` are the learner's
    :class:`jungle_train.jitted.JaxRoundTrainer` parts."""

    def __init__(self, config: Config, rules: Rules = DARK) -> None:
        super().__init__(config, rules)
        # an update whose gradients are not finite is skipped, not applied
        self.optimizer = optax.apply_if_finite(
            optax.chain(
                optax.clip_by_global_norm(config.grad_clip), optax.adam(config.learning_rate)
            ),
            max_consecutive_errors=1_000_000,
        )
        self.buffer = make_buffer(config)
        self.frozen: Any = None
        """The fixed opponent's network (``frozen_opponent``), or None."""
        if config.frozen_opponent:
            template = jax.eval_shape(
                self.network.init, jax.random.key(0), jnp.zeros((1, config.observation_size))
            )
            self.frozen = frozen_params(config.frozen_opponent, template)

    # -- learning -----------------------------------------------------------------

    def loss(
        self,
        params: Any,
        target_params: Any,
        batch: Transition,
        weights: jax.Array,
        key: jax.Array,
    ) -> tuple[jax.Array, jax.Array]:
        """Weighted Huber loss of the double-DQN n-step TD errors, and the errors.

        ``batch`` holds sequences ``[M, n + 1]``: the transition at 0 is learned, the
        rewards of 0..n-1 make the return (cut at the first ``done``), and position n is
        bootstrapped from (unless a game ended in between)."""
        config, env = self.config, self.env
        n, gamma = config.n_step, config.gamma
        first = jax.tree.map(lambda a: a[:, 0], batch.position)
        last = jax.tree.map(lambda a: a[:, n], batch.position)
        done = batch.done[:, :n].astype(jnp.float32)
        alive = jnp.cumprod(1.0 - done, axis=1)  # alive after step k
        alive_before = jnp.concatenate([jnp.ones_like(alive[:, :1]), alive[:, :-1]], axis=1)
        discounts = gamma ** jnp.arange(n, dtype=jnp.float32)
        returns = jnp.sum(batch.reward[:, :n] * alive_before * discounts, axis=1)
        bootstrap = alive[:, -1] * gamma**n

        obs = jax.vmap(functools.partial(observe, env, config))(state_of(first))
        obs_next = jax.vmap(functools.partial(observe, env, config))(state_of(last))
        q = self.network.apply(params, obs, deterministic=False, rngs={"dropout": key})
        q_next_online = jnp.asarray(self.network.apply(params, obs_next))
        q_next_target = jnp.asarray(self.network.apply(target_params, obs_next))
        selector = jnp.where(last.legal, q_next_online, -1e9)
        chosen = (jnp.asarray(q), batch.action[:, 0], returns, bootstrap, q_next_target)
        return double_q_loss(*chosen, selector, weights, config.huber_delta)

    def update(
        self, runner: RunnerState, step: jax.Array, items: jax.Array
    ) -> tuple[RunnerState, dict[str, jax.Array]]:
        """One gradient update at learner decision ``step`` with ``items`` transitions
        stored: sample, learn, reprioritise, refresh the target and the self-play copy."""
        config = self.config
        key, k_sample, k_drop = jax.random.split(runner.key, 3)
        sample = self.buffer.sample(runner.buffer, k_sample)
        batch: Transition = sample.experience
        _, _, beta = schedule(config, step)
        weights = importance_weights(sample.probabilities, items, beta)
        (loss, td), grads = jax.value_and_grad(self.loss, has_aux=True)(
            runner.params, runner.target_params, batch, weights, k_drop
        )
        updates, opt_state = self.optimizer.update(grads, runner.opt_state, runner.params)
        params = optax.apply_updates(runner.params, updates)
        priority = jnp.nan_to_num(jnp.abs(td), nan=0.0, posinf=1e6) + config.priority_epsilon
        buffer = self.buffer.set_priorities(runner.buffer, sample.indices, priority)
        count = runner.updates + 1
        phase1, _, _ = schedule(config, step)
        period = jnp.where(phase1, config.phase1_target_period, config.phase2_target_period)
        target = optax.periodic_update(params, runner.target_params, count, period)
        snapshot = count % config.self_play_period == 0
        opponent = runner.opponent_params
        if self.frozen is None:
            opponent = jax.tree.map(lambda p, o: jnp.where(snapshot, p, o), params, opponent)
        if self.league:
            assert runner.pool_next is not None
            assert runner.pool_points is not None and runner.pool_games is not None
            slot = runner.pool_next % config.pool_size
            runner = runner._replace(
                pool=add_snapshot(runner.pool, params, slot, snapshot),
                pool_next=runner.pool_next + snapshot.astype(jnp.int32),
                pool_points=runner.pool_points.at[slot].multiply(jnp.where(snapshot, 0.0, 1.0)),
                pool_games=runner.pool_games.at[slot].multiply(jnp.where(snapshot, 0.0, 1.0)),
            )
        runner = runner._replace(
            params=params,
            target_params=target,
            opponent_params=opponent,
            opt_state=opt_state,
            buffer=buffer,
            key=key,
            updates=count,
        )
        return runner, {"loss": loss, "td_error": jnp.mean(jnp.abs(td))}

    # -- init and rounds ------------------------------------------------------------

    def init(self, key: jax.Array) -> RunnerState:
        """The run's first state: fresh networks (target and self-play copies equal to
        the online one), Adam, an empty replay, every game at the start with the
        learner in alternating seats (the opponent's first action played where the
        learner is second)."""
        config, env = self.config, self.env
        b = config.num_envs
        k_params, k_open, k_words, key = jax.random.split(key, 4)
        params = self.network.init(k_params, jnp.zeros((1, config.observation_size)))
        seat = jnp.arange(b, dtype=jnp.int32) % 2
        start = jax.tree.map(lambda a: jnp.broadcast_to(a, (b, *a.shape)), self.start)
        runner = RunnerState(
            params=params,
            target_params=params,
            opponent_params=params if self.frozen is None else self.frozen,
            opt_state=self.optimizer.init(params),
            buffer=None,
            env=start,
            seat=seat,
            episode_return=jnp.zeros(b, jnp.float32),
            episode_length=jnp.zeros(b, jnp.int32),
            endgame=jnp.zeros(b, jnp.bool_),
            key=key,
            rounds=jnp.zeros((), jnp.int32),
            updates=jnp.zeros((), jnp.int32),
        )
        if self.league:
            # the pool starts with the fresh network as its first snapshot
            m = member_count(config.pool_size)
            runner = runner._replace(
                pool=jax.tree.map(lambda x: jnp.stack([x] * config.pool_size), params),
                pool_next=jnp.ones((), jnp.int32),
                pool_points=jnp.zeros(m, jnp.float32),
                pool_games=jnp.zeros(m, jnp.float32),
            )
            draws = jax.random.bits(jax.random.fold_in(k_words, 1), (b,), jnp.uint32)
            runner = runner._replace(member=draw_members(draws, self.league_weights(runner)))
        words = jax.random.bits(k_words, (b,), jnp.uint32)
        opening = self.openings(runner, words, runner.member)
        opened = jax.vmap(env.step)(start, opening, jax.random.split(k_open, b))
        state = jax.tree.map(lambda o, s: jnp.where(expand(seat == 1, o), o, s), opened, start)
        example = Transition(
            jax.tree.map(lambda a: a[0], position_of(state)),
            jnp.zeros((), jnp.int32),
            jnp.zeros((), jnp.float32),
            jnp.zeros((), jnp.bool_),
        )
        return runner._replace(buffer=self.games(self.buffer.init(example)), env=self.games(state))

    def round(self, runner: RunnerState) -> tuple[RunnerState, dict[str, jax.Array]]:
        """One round: a rollout, its transitions into replay, then the updates."""
        config = self.config
        step0 = runner.rounds * config.steps_per_round

        def act(
            r: RunnerState, t: jax.Array
        ) -> tuple[RunnerState, tuple[Transition, dict[str, jax.Array]]]:
            r, transition, stats = self.iteration(r, step0 + t * config.num_envs)
            return r, (transition, stats)

        runner, (block, stats) = jax.lax.scan(act, runner, jnp.arange(config.rollout_length))
        block = jax.tree.map(lambda a: jnp.swapaxes(a, 0, 1), block)  # [B, T, ...]
        buffer = self.buffer.add(runner.buffer, self.games(block))
        runner = runner._replace(buffer=buffer)
        step = step0 + config.steps_per_round
        items = jnp.minimum(step, config.buffer_size)

        def learn(r: RunnerState, _: None) -> tuple[RunnerState, dict[str, jax.Array]]:
            return self.update(r, step, items)

        def skip(r: RunnerState) -> tuple[RunnerState, dict[str, jax.Array]]:
            nan = jnp.full((config.updates_per_rollout,), jnp.nan)
            return r, {LOSS: nan, "td_error": nan}

        def run(r: RunnerState) -> tuple[RunnerState, dict[str, jax.Array]]:
            return jax.lax.scan(learn, r, None, length=config.updates_per_rollout)

        if config.updates_per_rollout:
            ready = self.buffer.can_sample(runner.buffer) & (step >= config.min_buffer)
            runner, learned = jax.lax.cond(ready, run, skip, runner)
            learn_stats = {k: jnp.nanmean(v) for k, v in learned.items()}
        else:
            learn_stats = {"loss": jnp.float32(jnp.nan), "td_error": jnp.float32(jnp.nan)}
        summed = {k: jnp.sum(v) for k, v in stats.items() if k not in {"reward", "epsilon"}}
        metrics = {
            **summed,
            "reward": jnp.mean(stats["reward"]),
            "epsilon": stats["epsilon"][-1],
            **learn_stats,
        }
        return runner._replace(rounds=runner.rounds + 1), metrics
