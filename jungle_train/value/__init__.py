"""A value network for search: positions from many games at once, labelled by the result.

``jungle train value`` trains the network that search agents use at their leaves. Each
round, jitted as one function:

1. **Play.** ``num_envs`` DARK games run ``rollout_length`` plies on the JAX core with
   auto-reset. Both seats of a game play ε-greedy on the Greedy agent (the exact JAX
   Greedy, :mod:`jungle_train.jitted._greedy`), with ε spread over the games from
   ``epsilon_low`` to ``epsilon_high`` and a share of games fully random: positions from
   careful play and from wild play, decisive games and drawn ones.
2. **Label.** A reverse scan gives every position the final result of its game for the
   player to move there (+1 win, -1 loss, 0 draw), flipping the sign whenever the mover
   changes; positions whose game did not end inside the window are masked out (pgx's
   AlphaZero example does the same with its value targets). With ``td_lambda < 1`` the
   target mixes in the network's own value of the next position (TD(λ)), which also
   labels the unfinished tails.
3. **Fit.** ``updates_per_round`` minibatches of ``batch_size`` drawn from the round's
   positions (masked ones weigh 0): mean squared error on the ``tanh`` output, Adam.

Only the per-round metrics leave the device. The network (:mod:`jungle_train.players._vnet`) is
the DQN's convolutional trunk with a pooled ``tanh`` head; the playing side reads it with
numpy (:func:`jungle_train.players._vnet.value_numpy`): the ``value`` agent (one ply of
expectimax on the network) and ``minimax:eval=value`` (the network at the leaves).

>>> config = Config(num_envs=8, rollout_length=16, updates_per_round=2, batch_size=16,
...                 channels=8, conv_layers=1, total_steps=256)
>>> runner, metrics = make_train(config)(jax.random.key(0))
>>> sorted(metrics), metrics["loss"].shape
(['decisive', 'games_ended', 'labelled', 'loss', 'mean_target'], (2,))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jungle_core import DARK
from jungle_core.jax_env import JaxEnv, JaxState, make
from jungle_train.common import ConfigError, RoundSchedule
from jungle_train.jitted import (
    JaxGreedy,
    JaxRoundTrainer,
    ValueNetwork,
    best_action,
    coin,
    uniform_legal,
)
from jungle_train.players import ValueAgent

__all__ = ["CONFIGS", "Config", "ValueTrainer", "make_train"]

KIND = "value"


@dataclasses.dataclass(frozen=True)
class Config(RoundSchedule):
    """The value network's training run (DARK)."""

    num_envs: int = 256
    """Games played at once."""
    rollout_length: int = 256
    """Plies each game plays per round (a game continues into the next round)."""
    epsilon_low: float = 0.02
    """ε of the most careful games (ε-greedy on the Greedy agent)."""
    epsilon_high: float = 0.5
    """ε of the wildest ε-greedy games."""
    random_share: float = 0.25
    """Share of the games in which both seats play uniformly at random."""
    td_lambda: float = 1.0
    """1: the game's result as target (Monte Carlo); below 1: TD(λ) targets."""
    channels: int = 32
    """Channels of each convolution and of the head."""
    conv_layers: int = 3
    """3×3 convolution layers."""
    learning_rate: float = 3e-4
    """Adam's step size."""
    max_grad_norm: float = 1.0
    """Gradients are clipped to this global norm."""
    batch_size: int = 256
    """Positions per update."""
    updates_per_round: int = 64
    """Updates after each round of play."""
    total_steps: int = 4_000_000
    """Plies played in all (``num_envs * rollout_length`` per round)."""

    def __post_init__(self) -> None:
        if self.num_envs < 1 or self.rollout_length < 1:
            raise ConfigError("num_envs and rollout_length must be >= 1")
        if not 0.0 <= self.epsilon_low <= self.epsilon_high <= 1.0:
            raise ConfigError("need 0 <= epsilon_low <= epsilon_high <= 1")
        if not 0.0 <= self.random_share <= 1.0:
            raise ConfigError(f"random_share must be in [0, 1], not {self.random_share}")
        if not 0.0 <= self.td_lambda <= 1.0:
            raise ConfigError(f"td_lambda must be in [0, 1], not {self.td_lambda}")
        if self.batch_size < 1 or self.updates_per_round < 0 or self.total_steps < 1:
            raise ConfigError("batch_size, total_steps must be >= 1, updates_per_round >= 0")


CONFIGS = {
    "cpu": Config(),
    "tiny": Config(
        num_envs=16,
        rollout_length=32,
        channels=8,
        conv_layers=1,
        batch_size=32,
        updates_per_round=4,
        total_steps=2048,
    ),
}
"""``cpu``: the shipped network's run; ``tiny``: for tests."""


class Runner(NamedTuple):
    """The whole state of a run (a pytree; what a checkpoint holds)."""

    params: Any
    opt_state: Any
    games: JaxState  # [B] games in progress
    key: jax.Array
    rounds: jax.Array  # int32[]


def _observe(env: JaxEnv, state: JaxState) -> jax.Array:
    """``float32[337]``: the network's input (``JaxEnv.observe`` for the mover, then the
    clock)."""
    clock = state.plies_since_removal.astype(jnp.float32) / env.rules.no_removal_limit
    return jnp.concatenate([env.observe(state).reshape(-1), clock[None]])


class _Parts:
    """The round's pieces for one config (the env, the policies, the network)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.env = make(DARK)
        self.greedy = JaxGreedy(self.env)
        self.network = ValueNetwork(config.channels, config.conv_layers)
        self.optimizer = optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm), optax.adam(config.learning_rate)
        )
        b = config.num_envs
        n_random = round(b * config.random_share)
        spread = np.linspace(config.epsilon_low, config.epsilon_high, max(1, b - n_random))
        self.epsilon = jnp.asarray(
            np.concatenate([np.ones(n_random), spread])[:b].astype(np.float32)
        )
        """``float32[B]``: each game's ε (1: random play)."""

    def value(self, params: Any, x: jax.Array) -> jax.Array:
        """``float32[...]``: the network on ``float32[..., 337]``."""
        out: jax.Array = self.network.apply(params, x)  # type: ignore[assignment]
        return out

    def init(self, key: jax.Array) -> Runner:
        k_net, k_games, k_run = jax.random.split(key, 3)
        params = self.network.init(k_net, jnp.zeros(337, jnp.float32))
        games = jax.vmap(self.env.init)(jax.random.split(k_games, self.config.num_envs))
        return Runner(params, self.optimizer.init(params), games, k_run, jnp.zeros((), jnp.int32))

    def _ply(
        self, games: JaxState, key: jax.Array
    ) -> tuple[JaxState, tuple[jax.Array, jax.Array, jax.Array, jax.Array]]:
        """One ply of every game: (games after, (observation, mover, ended, result))."""
        env, b = self.env, self.config.num_envs
        k_words, k_step, k_reset = jax.random.split(key, 3)
        words = jax.random.bits(k_words, (b, 3), jnp.uint32)
        legal = games.legal_action_mask
        careful = best_action(jax.vmap(self.greedy.action_values)(games), words[:, 0])
        wild = uniform_legal(words[:, 1], legal)
        action = jnp.where(coin(words[:, 2], self.epsilon), wild, careful)
        obs = jax.vmap(lambda s: _observe(env, s))(games)
        mover = games.current_player
        after = jax.vmap(env.step)(games, action, jax.random.split(k_step, b))
        ended = after.terminated | after.truncated
        result = after.rewards[jnp.arange(b), mover]
        fresh = jax.vmap(env.init)(jax.random.split(k_reset, b))
        games = jax.tree_util.tree_map(
            lambda new, old: jnp.where(ended.reshape(-1, *([1] * (old.ndim - 1))), new, old),
            fresh,
            after,
        )
        return games, (obs, mover, ended, result)

    def _targets(
        self,
        mover: jax.Array,
        next_mover: jax.Array,
        ended: jax.Array,
        result: jax.Array,
        next_value: jax.Array,
    ) -> tuple[jax.Array, jax.Array]:
        """``float32[T, B]`` targets and ``bool[T, B]`` validity, by a reverse scan.

        ``result[t]`` is the game's result for ``mover[t]`` when ply ``t`` ended it;
        ``next_value[t]`` is the network's value of the position after ply ``t`` for
        ``next_mover[t]`` (TD(λ) only). The target of ply ``t`` is the result if the game
        ended there, else ``±((1 - λ)·next_value + λ·target[t + 1])`` with the sign
        flipped when the mover changes; with λ = 1, a ply whose game does not end inside
        the window has no target (``valid`` False).
        """
        lam = self.config.td_lambda
        sign = jnp.where(next_mover == mover, 1.0, -1.0)

        def back(
            carry: tuple[jax.Array, jax.Array], x: tuple[jax.Array, ...]
        ) -> tuple[tuple[jax.Array, jax.Array], tuple[jax.Array, jax.Array]]:
            later, later_valid = carry
            ended_t, result_t, sign_t, next_v = x
            bootstrap = sign_t * ((1.0 - lam) * next_v + lam * later)
            target = jnp.where(ended_t, result_t, bootstrap)
            valid = ended_t | later_valid
            return (target, valid), (target, valid)

        b = mover.shape[1]
        if lam < 1.0:  # beyond the window: the network's value of the last position
            start = (next_value[-1], jnp.ones(b, bool))
        else:
            start = (jnp.zeros(b, jnp.float32), jnp.zeros(b, bool))
        _, (targets, valid) = jax.lax.scan(
            back, start, (ended, result, sign, next_value), reverse=True
        )
        return targets, valid

    def round(self, runner: Runner) -> tuple[Runner, dict[str, jax.Array]]:
        """Play ``rollout_length`` plies of every game, label them, fit the network."""
        config = self.config
        key, k_play, k_fit = jax.random.split(runner.key, 3)
        games, (obs, mover, ended, result) = jax.lax.scan(
            self._ply, runner.games, jax.random.split(k_play, config.rollout_length)
        )
        t, b = mover.shape
        next_mover = jnp.concatenate([mover[1:], games.current_player[None]], axis=0)
        if config.td_lambda < 1.0:
            values = self.value(runner.params, obs)  # [T, B]
            last = self.value(runner.params, jax.vmap(lambda s: _observe(self.env, s))(games))
            next_value = jnp.concatenate([values[1:], last[None]], axis=0)
            # the value after a game's last ply is the result, never the next game's start
            next_value = jnp.where(ended, 0.0, next_value)
        else:
            next_value = jnp.zeros((t, b), jnp.float32)
        targets, valid = self._targets(mover, next_mover, ended, result, next_value)
        flat_obs = obs.reshape(t * b, -1)
        flat_target = targets.reshape(-1)
        weight = valid.reshape(-1).astype(jnp.float32)

        def loss_fn(params: Any, index: jax.Array) -> jax.Array:
            v = self.value(params, flat_obs[index])
            w = weight[index]
            return jnp.sum(w * (v - flat_target[index]) ** 2) / jnp.maximum(jnp.sum(w), 1.0)

        def update(carry: tuple[Any, Any], k: jax.Array) -> tuple[tuple[Any, Any], jax.Array]:
            params, opt_state = carry
            index = jax.random.randint(k, (config.batch_size,), 0, t * b)
            loss, grads = jax.value_and_grad(loss_fn)(params, index)
            updates, opt_state = self.optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), loss

        (params, opt_state), losses = jax.lax.scan(
            update,
            (runner.params, runner.opt_state),
            jax.random.split(k_fit, config.updates_per_round),
        )
        metrics = {
            "loss": jnp.mean(losses) if config.updates_per_round else jnp.float32(jnp.nan),
            "labelled": jnp.mean(weight),
            "mean_target": jnp.sum(weight * flat_target) / jnp.maximum(jnp.sum(weight), 1.0),
            "games_ended": jnp.sum(ended).astype(jnp.float32),
            "decisive": jnp.sum(ended & (result != 0)).astype(jnp.float32),
        }
        return Runner(params, opt_state, games, key, runner.rounds + 1), metrics


def make_train(config: Config) -> Callable[[jax.Array], tuple[Runner, dict[str, Any]]]:
    """``train(key) -> (runner, metrics)``: the whole run (``config.num_rounds`` rounds) as one
    jitted function; ``metrics`` holds one entry per round (``float32[rounds]``)."""
    return ValueTrainer.train_function(config)


class ValueTrainer(JaxRoundTrainer[_Parts]):
    """:class:`jungle_train.common.Trainer` for the value network on the one trainer of
    every jitted learner (:class:`jungle_train.jitted.JaxRoundTrainer`), with only what
    differs here: the parts, the metrics line and the agent. The rounds are those of
    :func:`make_train`, compiled once and run a chunk at a time. Its games are not
    sharded, so the base refuses it across processes."""

    kind = KIND

    @classmethod
    def make_parts(cls, config: Config) -> _Parts:
        """The round's parts of ``config``."""
        return _Parts(config)

    def summarize(self, history: list[dict[str, Any]]) -> dict[str, float]:
        """Means over the rounds; the game counts summed."""
        out: dict[str, float] = {}
        for name in history[0]:
            values = np.array([float(h[name]) for h in history], np.float64)
            summed = name in ("games_ended", "decisive")
            out[name] = float(values.sum() if summed else np.nanmean(values))
        return out

    def agent(self, path: str) -> ValueAgent:
        """The one-ply ``value`` agent playing from a checkpoint :meth:`save_agent` wrote."""
        return ValueAgent(DARK, path)
