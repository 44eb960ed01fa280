"""AlphaZero on the JAX core: self-play with ``mctx`` search, the true rules as the model.

The search (:mod:`jungle_train.azero.search._search`) is Stochastic MuZero for DARK (reveals
and bumps into face-down pieces are chance nodes over the 16 piece identities) and
Gumbel MuZero for CLASSIC, with the JAX core stepping the real rules inside the tree;
the network (:mod:`jungle_train.azero._net`) gives the prior, the value and DARK's
afterstate values. Training is in the style of pgx's AlphaZero example and of
:mod:`jungle_train.dqn`: :class:`Config` (frozen, one docstring per field) and
:func:`make_train` ``(config) -> train(key)``, the whole run one jitted ``lax.scan``::

    round = `rollout_length` self-play decisions in each of `num_envs` games
              (search every game, play: DARK draws ∝ visits for the first
               `sample_plies` plies of a game, then the most visited; CLASSIC plays
               Gumbel MuZero's choice; finished games restart)
            -> value targets of the *previous* round's block, computed over that block
               and this one (2 × rollout_length decisions of future)
            -> `updates_per_round` minibatch updates (Adam) on the previous block
    train(key) = init(key), then `num_rounds` rounds in a `lax.scan`.

**Targets.** The policy target is the search's ``action_weights`` (visit distribution
for DARK, Gumbel MuZero's improved policy for CLASSIC), or for DARK with
``policy_target="completed_q"`` Gumbel MuZero's improved policy computed from the
Stochastic MuZero tree. The value target of a position is the game's final result for
the player to move there, ``G_t = r_t + d_t G_{t+1}`` with ``r_t`` the result for the
mover on the step that ends the game and ``d_t`` the search's discount (-1 when the turn
passes, +1 when it does not, 0 at the end); it is *masked* (no value loss) for positions
whose game did not end within the window. The window is the position's own block and
the next one, so training runs one round behind self-play: a game of ``L`` plies gives
value targets for its last ``L`` positions as long as ``L <= rollout_length`` and for
at least its last ``rollout_length`` otherwise. The afterstate head learns the same
``G_t`` for the action that was played. Positions of games that do not finish in the
window still train the policy (their target needs no future).

**What pure AlphaZero did here, and the two departures.** With the settings above and
nothing else (``heuristic_prior=(0, 0)``, ``material_value=0``), short DARK runs on the
2-core CPU (16–24 simulations, 16–32 channels, up to 280k decisions) collapsed: after
the reveals neither side ever attacked, every self-play game ran into the 100-ply
no-removal draw, every value target was 0, and the policy's cross-entropy fell below 1
(a fixed shuffle). The network never sees a capture pay, so it never plays one. Two
switches break that loop, each off by default and on in the measured CPU run
(``experiments/configs/azero-cpu.toml``):

- ``material_value``: a drawn game's value target is the final material balance (times
  the weight) instead of 0, and a position whose game has not ended within the window
  gets the balance at the window's end instead of no target; the network learns that
  material is worth having before any game is won.
- ``heuristic_prior``: the search's leaf values mix in a hand-made value (material and
  the shaping potential of :mod:`jungle_train.tabular._shaping`), weight 1 → 0.5 over the run;
  the agent plays with the final weight. Measured (10 games each, 64 / 256
  simulations, untrained network at weight 1): 9-1-0 / 10-0-0 against random; material
  alone (no potential) drew 9 of 10 against random, as a search cannot see a capture
  beyond its horizon.

Both are departures from AlphaZero (which learns from results alone), taken for a
20-minute CPU budget; the search's own rewards and discounts stay the game's.

**Configs.** ``default`` is plain AlphaZero (the class's defaults) and ``tiny`` is for
tests (a few seconds of compute, untrained afterwards): ``jungle train azero --config
default|tiny``. The measured runs are TOML files in ``experiments/configs/`` (pass the
file as ``--config``): ``azero-cpu.toml`` (23 minutes on the shared 2-core CPU; its agent
did not beat random, so no checkpoint ships), ``azero-gpu.toml``,
``azero-classic-cpu.toml`` and the DQN-guided teacher, ``azero-teacher-cpu.toml`` and
``azero-teacher-gpu.toml`` (:attr:`Config.teacher`).

**Devices.** As the DQN's, the batch of games is sharded over every device of every
process (:class:`jungle_train.common.GameSharding`); across processes, process 0 alone
writes the checkpoints.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import optax

from jungle_core.jax_env import JaxEnv, JaxState, make
from jungle_train.azero._agent import (
    AZeroAgent,
    AZeroSettings,
    calibration_position,
    params_from_arrays,
)
from jungle_train.azero._config import (
    CONFIGS,
    KIND,
    TINY_CONFIG,
    Config,
)
from jungle_train.azero._guides import build_network, dqn_guide
from jungle_train.azero._hand_value import (
    PIECE_VALUES,
    POTENTIAL_WEIGHT,
    capture_gain,
    material_balance,
)
from jungle_train.azero._net import network_evaluation, planes_shape
from jungle_train.azero.search import (
    COMPILER_OPTIONS,
    blended_evaluation,
    in_actions_values,
    make_search,
    step_result,
)
from jungle_train.common import LOSS, TRAIN_SCORE, GameSharding
from jungle_train.jitted import JaxRoundTrainer, uniform_legal

__all__ = [
    "CONFIGS",
    "KIND",
    "PIECE_VALUES",
    "POTENTIAL_WEIGHT",
    "TINY_CONFIG",
    "AZeroTrainer",
    "Config",
    "RunnerState",
    "build_network",
    "calibration_position",
    "capture_gain",
    "completed_q_policy",
    "dqn_guide",
    "make_train",
    "material_balance",
    "network_evaluation",
    "params_from_arrays",
    "value_targets",
]

# ---------------------------------------------------------------------------- targets


class Block(NamedTuple):
    """``rollout_length`` self-play decisions of every game (axes ``[B, T]`` in front)."""

    states: JaxState  # the positions searched
    policy: jax.Array  # float32[B, T, A]: the policy target (see Config.policy_target)
    action: jax.Array  # int32[B, T]: the action played
    reward: jax.Array  # float32[B, T]: the result for the mover on a game-ending step
    # (a draw: material_value × the mover's material balance)
    discount: jax.Array  # float32[B, T]: -1 / +1 / 0 (turn passes / does not / game over)
    valid: jax.Array  # bool[B, T]: a real decision (False in the empty block before round 1)


def value_targets(reward: jax.Array, discount: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(G, resolved)``, ``float32[B, T]`` and ``bool[B, T]``: each position's final
    result for its mover, ``G_t = r_t + d_t G_{t+1}``, and whether its game ended within
    the ``T`` steps given (where not, ``G`` is meaningless and the value loss is masked).

    >>> import jax.numpy as jnp
    >>> r = jnp.array([[0.0, 0.0, 1.0, 0.0]])      # the mover of step 2 won
    >>> d = jnp.array([[-1.0, -1.0, 0.0, -1.0]])   # game over after step 2
    >>> g, ok = value_targets(r, d)
    >>> g.tolist(), ok.tolist()
    ([[1.0, -1.0, 1.0, 0.0]], [[True, True, True, False]])
    """

    def back(
        carry: tuple[jax.Array, jax.Array], x: tuple[jax.Array, jax.Array]
    ) -> tuple[tuple[jax.Array, jax.Array], tuple[jax.Array, jax.Array]]:
        g_next, ok_next = carry
        r, d = x
        g = r + d * g_next
        ok = (d == 0) | ok_next
        return (g, ok), (g, ok)

    b = reward.shape[0]
    init = (jnp.zeros(b, jnp.float32), jnp.zeros(b, jnp.bool_))
    _, (g, ok) = jax.lax.scan(back, init, (reward.T, discount.T), reverse=True)
    return g.T, ok.T


# ------------------------------------------------------------------------- the runner


def completed_q_policy(
    tree: mctx.Tree, logits: jax.Array, legal: jax.Array, *, rescale: bool
) -> jax.Array:
    """``float32[B, A]``: Gumbel MuZero's improved policy at the root of a DARK search,
    ``softmax(logits + σ(completed Q))`` over the legal actions (``bool[B, A]``), from
    the network's prior ``logits`` (``float32[B, A]``) and the Q-values of ``tree``
    (mctx's ``qtransform_completed_by_mix_value``: unvisited actions take the mixed
    value; ``rescale``: Q rescaled to [0, 1] per position). A tree searched in slots
    (:attr:`jungle_train.azero.search._config.SearchConfig.slots`) has its Q-values mapped back
    through the root's slots, so the policy is over the rules' actions either way.

    >>> import jax, jax.numpy as jnp
    >>> from jungle_core import DARK
    >>> from jungle_core.jax_env import make
    >>> from jungle_train.azero.search._search import make_search, zero_evaluator
    >>> from jungle_train.azero.search._config import SearchConfig
    >>> env = make(DARK)
    >>> games = jax.tree.map(lambda x: x[None], env.init(jax.random.key(0)))
    >>> search = make_search(env, zero_evaluator(280), SearchConfig(simulations=8, slots=True))
    >>> out = search(None, jax.random.key(1), games)
    >>> policy = completed_q_policy(
    ...     out.search_tree, jnp.zeros((1, 280)), games.legal_action_mask, rescale=True)
    >>> illegal = policy[~games.legal_action_mask]
    >>> policy.shape, round(float(policy.sum()), 4), bool((illegal == 0).all())
    ((1, 280), 1.0, True)
    """
    complete = functools.partial(mctx.qtransform_completed_by_mix_value, rescale_values=rescale)
    completed = jax.vmap(complete, in_axes=(0, None))(tree, tree.ROOT_INDEX)
    num_actions = legal.shape[-1]
    if tree.num_actions != num_actions:  # in slots: [B, K] -> [B, A]
        root_slots = tree.embeddings.state_embedding.slots[:, tree.ROOT_INDEX]
        completed = in_actions_values(completed, root_slots, num_actions)
    policy: jax.Array = jax.nn.softmax(jnp.where(legal, logits + completed, -1e30), axis=-1)
    return policy


class RunnerState(NamedTuple):
    """Everything a run carries from round to round (one pytree; resumable)."""

    params: Any
    opt_state: Any
    games: JaxState  # [num_envs]: the games being played
    previous: Block  # [num_envs, rollout_length]: last round's decisions, not yet learned
    key: jax.Array
    rounds: jax.Array  # int32[]: rounds done


class _Parts:
    """The pieces of a run built once per config: env, network, searches, optimiser."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.games = GameSharding()  # games split over every device of every process
        self.env: JaxEnv = make(config.rule_set)
        self.network = build_network(config.rule_set, config.channels, config.conv_layers)
        evaluate: Any = functools.partial(blended_evaluation, self.env, self.network)
        self.teacher: Any = None
        if config.teacher:
            source = "" if config.teacher == "shipped" else config.teacher
            evaluate, (self.teacher, *_) = dqn_guide(self.env, source)
        self.search = make_search(self.env, evaluate, config.search_config(self_play=True))
        self.optimizer = optax.chain(
            optax.clip_by_global_norm(config.grad_clip),
            optax.adamw(config.learning_rate, weight_decay=config.weight_decay),
        )
        self.start = self.env.init(jax.random.key(0))
        self.random_slots = round(config.random_games * config.num_envs)

    def batch_start(self) -> JaxState:
        b = self.config.num_envs
        out: JaxState = jax.tree.map(lambda a: jnp.broadcast_to(a, (b, *a.shape)), self.start)
        return out

    def init(self, key: jax.Array) -> RunnerState:
        config, env = self.config, self.env
        k_params, key = jax.random.split(key)
        games = self.batch_start()
        params = self.network.init(k_params, jnp.zeros((1, *planes_shape(config.rule_set))))
        b, t, a = config.num_envs, config.rollout_length, env.num_actions
        states: JaxState = jax.tree.map(
            lambda x: jnp.broadcast_to(x[:, None], (b, t, *x.shape[1:])), games
        )
        previous = Block(
            states=states,
            policy=jnp.zeros((b, t, a), jnp.float32),
            action=jnp.zeros((b, t), jnp.int32),
            reward=jnp.zeros((b, t), jnp.float32),
            discount=jnp.zeros((b, t), jnp.float32),
            valid=jnp.zeros((b, t), jnp.bool_),
        )
        return RunnerState(
            params=params,
            opt_state=self.optimizer.init(params),
            games=self.games(games),
            previous=self.games(previous),
            key=key,
            rounds=jnp.zeros((), jnp.int32),
        )

    # -- self-play ------------------------------------------------------------------

    def heuristic_weight(self, rounds: jax.Array) -> jax.Array:
        """``float32[]``: the search's heuristic weight in round ``rounds``."""
        start, end = self.config.heuristic_prior
        progress = jnp.minimum(rounds / max(self.config.num_rounds - 1, 1), 1.0)
        weight: jax.Array = jnp.float32(start) + (end - start) * progress.astype(jnp.float32)
        return weight

    def decide(
        self, params: Any, weight: jax.Array, games: JaxState, key: jax.Array
    ) -> tuple[JaxState, Block, dict[str, jax.Array]]:
        """One decision in every game: search, play, restart finished games."""
        config, env = self.config, self.env
        b = config.num_envs
        k_search, k_pick, k_step, k_random = jax.random.split(key, 4)
        if self.teacher is None:
            out = self.search((params, weight), k_search, games)
        else:  # the DQN-guided search: (Q parameters, 1 / tau, hand weight, hunt weight)
            out = self.search(
                (self.teacher, jnp.float32(1.0), weight, jnp.float32(0.0)), k_search, games
            )
        weights = out.action_weights
        target = weights
        if env.rules.variant == "dark" and config.policy_target == "completed_q":
            prior = network_evaluation(env, self.network, params, games).logits
            target = completed_q_policy(
                out.search_tree, prior, games.legal_action_mask, rescale=config.rescale_q
            )
        if env.rules.variant == "dark":
            drawn = jax.random.categorical(
                k_pick, jnp.log(jnp.maximum(weights, 1e-30)) + jnp.where(weights > 0, 0.0, -1e30)
            )
            best = jnp.argmax(weights, axis=-1)
            action = jnp.where(games.ply < config.sample_plies, drawn, best).astype(jnp.int32)
        else:
            action = out.action.astype(jnp.int32)
        slot = jnp.arange(b)
        random_seat = jnp.where(slot < self.random_slots, slot % 2, -1)  # -1: self-play
        if self.random_slots:
            words = jax.random.bits(k_random, (b,), jnp.uint32)
            uniform = uniform_legal(words, games.legal_action_mask)
            action = jnp.where(games.current_player == random_seat, uniform, action)
        after = jax.vmap(env.step)(games, action, jax.random.split(k_step, b))
        reward, discount = step_result(games, after)
        ended = discount == 0
        if config.material_value:
            drawn = ended & (after.rewards[:, 0] == 0)
            balance = jax.vmap(material_balance)(after, games.current_player)
            reward = jnp.where(drawn, config.material_value * balance, reward)
        start = self.batch_start()
        games_next: JaxState = jax.tree.map(
            lambda s, g: jnp.where(ended.reshape(ended.shape + (1,) * (g.ndim - 1)), s, g),
            start,
            after,
        )
        step = Block(games, target, action, reward, discount, jnp.ones(b, jnp.bool_))
        winner0 = after.rewards[:, 0]
        stats = {
            "games": jnp.sum(ended),
            "game_length": jnp.sum(jnp.where(ended, after.ply, 0)),
            "first_wins": jnp.sum(ended & (winner0 > 0)),
            "draws": jnp.sum(ended & (winner0 == 0)),
            "root_value": jnp.mean(out.search_tree.summary().value),
        }
        against = ended & (random_seat >= 0)
        searcher = jnp.take_along_axis(after.rewards, (1 - random_seat)[:, None] % 2, axis=1)[:, 0]
        stats["random_games"] = jnp.sum(against)
        stats["random_points"] = jnp.sum(jnp.where(against, (searcher + 1.0) / 2.0, 0.0))
        return games_next, step, stats

    # -- learning -------------------------------------------------------------------

    def loss(
        self, params: Any, batch: Block, target: jax.Array, resolved: jax.Array
    ) -> tuple[jax.Array, dict[str, jax.Array]]:
        config = self.config
        ev = network_evaluation(self.env, self.network, params, batch.states)
        pmask = batch.valid.astype(jnp.float32)
        vmask = (batch.valid & resolved).astype(jnp.float32)
        policy = optax.softmax_cross_entropy(ev.logits, batch.policy)
        policy_loss = jnp.sum(pmask * policy) / jnp.maximum(jnp.sum(pmask), 1.0)
        value_loss = jnp.sum(vmask * (ev.value - target) ** 2) / jnp.maximum(jnp.sum(vmask), 1.0)
        played = jnp.take_along_axis(ev.afterstate, batch.action[:, None], axis=1)[:, 0]
        after_loss = jnp.sum(vmask * (played - target) ** 2) / jnp.maximum(jnp.sum(vmask), 1.0)
        total = (
            policy_loss + config.value_weight * value_loss + config.afterstate_weight * after_loss
        )
        return total, {
            "policy_loss": policy_loss,
            "value_loss": value_loss,
            "afterstate_loss": after_loss,
            "value_targets": jnp.mean(vmask),
        }

    def learn(
        self, runner: RunnerState, current: Block, key: jax.Array
    ) -> tuple[Any, Any, dict[str, jax.Array]]:
        """``updates_per_round`` updates on the previous block, its value targets
        computed over it and ``current``."""
        config = self.config
        prev = runner.previous
        both_r = jnp.concatenate([prev.reward, current.reward], axis=1)
        both_d = jnp.concatenate([prev.discount, current.discount], axis=1)
        g, ok = value_targets(both_r, both_d)
        t = config.rollout_length
        g, ok = g[:, :t], ok[:, :t]
        if config.material_value:  # unfinished games: the material at the window's end
            end: JaxState = jax.tree.map(lambda x: x[:, -1], current.states)
            balance0 = jax.vmap(material_balance)(end, jnp.zeros(config.num_envs, jnp.int32))
            sign = jnp.where(prev.states.current_player == 0, 1.0, -1.0)
            g = jnp.where(ok, g, config.material_value * sign * balance0[:, None])
            ok = jnp.ones_like(ok)
        flat: Block = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), prev)
        target = g.reshape(-1)
        resolved = ok.reshape(-1)
        n = config.num_envs * t
        order = jax.random.permutation(key, n)

        def update(
            carry: tuple[Any, Any], i: jax.Array
        ) -> tuple[tuple[Any, Any], dict[str, jax.Array]]:
            params, opt_state = carry
            idx = order[(i * config.batch_size + jnp.arange(config.batch_size)) % n]
            batch: Block = jax.tree.map(lambda x: x[idx], flat)
            grads, metrics = jax.grad(self.loss, has_aux=True)(
                params, batch, target[idx], resolved[idx]
            )
            updates, opt_state = self.optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), metrics

        (params, opt_state), metrics = jax.lax.scan(
            update,
            (runner.params, runner.opt_state),
            jnp.arange(config.updates_per_round),
        )
        return params, opt_state, {k: jnp.mean(v) for k, v in metrics.items()}

    def round(self, runner: RunnerState) -> tuple[RunnerState, dict[str, jax.Array]]:
        """One round: ``rollout_length`` decisions in every game, then the updates on
        the previous round's block."""
        config = self.config
        key, k_play, k_learn = jax.random.split(runner.key, 3)
        weight = self.heuristic_weight(runner.rounds)

        def play(
            games: JaxState, k: jax.Array
        ) -> tuple[JaxState, tuple[Block, dict[str, jax.Array]]]:
            games, step, stats = self.decide(runner.params, weight, games, k)
            return games, (step, stats)

        games, (block, stats) = jax.lax.scan(
            play, self.games(runner.games), jax.random.split(k_play, config.rollout_length)
        )
        current: Block = self.games(jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), block))
        nan = jnp.float32(jnp.nan)
        skipped = {
            "policy_loss": nan,
            "value_loss": nan,
            "afterstate_loss": nan,
            "value_targets": nan,
        }
        if config.updates_per_round:
            params, opt_state, learned = jax.lax.cond(
                runner.rounds > 0,
                lambda: self.learn(runner, current, k_learn),
                lambda: (runner.params, runner.opt_state, skipped),
            )
        else:
            params, opt_state, learned = runner.params, runner.opt_state, skipped
        metrics = {
            "games": jnp.sum(stats["games"]).astype(jnp.float32),
            "game_length": jnp.sum(stats["game_length"]).astype(jnp.float32),
            "first_wins": jnp.sum(stats["first_wins"]).astype(jnp.float32),
            "draws": jnp.sum(stats["draws"]).astype(jnp.float32),
            "random_games": jnp.sum(stats["random_games"]).astype(jnp.float32),
            "random_points": jnp.sum(stats["random_points"]).astype(jnp.float32),
            "root_value": jnp.mean(stats["root_value"]),
            **learned,
        }
        runner = RunnerState(
            params=params,
            opt_state=opt_state,
            games=self.games(games),
            previous=current,
            key=key,
            rounds=runner.rounds + 1,
        )
        return runner, metrics


def make_train(config: Config) -> Callable[[jax.Array], tuple[RunnerState, dict[str, Any]]]:
    """``train(key) -> (RunnerState, metrics)``: a whole run in one jitted function;
    ``metrics`` maps each name to ``float32[num_rounds]``: games finished, their summed
    lengths, first-player wins, draws, the mean root value, and the losses (NaN in
    round 0, which only plays).

    >>> import jax
    >>> runner, metrics = make_train(TINY_CONFIG)(jax.random.key(0))
    >>> metrics["policy_loss"].shape, int(runner.rounds)
    ((4,), 4)
    """
    return AZeroTrainer.train_function(config)


# ------------------------------------------------------------------ checkpoints, CLI


class AZeroTrainer(JaxRoundTrainer[_Parts]):
    """:class:`jungle_train.common.Trainer` for AlphaZero on the one trainer of every
    jitted learner (:class:`jungle_train.jitted.JaxRoundTrainer`: chunks of rounds,
    checkpoints written by process 0 alone, resume), with only what differs here: the
    parts, the search's XLA options, the metrics line and the agent. The rounds are
    those of :func:`make_train` (same network as one ``train(key)`` call); the run state
    holds the network, Adam, the games and the last block, the playing checkpoint the
    network's parameters and the config."""

    kind = KIND
    compiler_options = COMPILER_OPTIONS

    @classmethod
    def make_parts(cls, config: Config) -> _Parts:
        """The self-play and learning parts of ``config``."""
        return _Parts(config)

    def summarize(self, history: list[dict[str, Any]]) -> dict[str, float]:
        """:func:`summarize_rounds`."""
        return summarize_rounds(history)

    def agent(self, path: str) -> AZeroAgent:
        """The agent that plays from a checkpoint :meth:`save_agent` wrote (the self-play
        search's simulation count; no noise)."""
        settings = AZeroSettings(path=path, simulations=self.config.simulations)
        return AZeroAgent(self.config.rule_set, settings)


def summarize_rounds(history: list[dict[str, Any]]) -> dict[str, float]:
    """One metrics line from several rounds' metrics: game counts summed into rates,
    means of the rest; ``loss`` is the sum of the three losses, ``episode_length`` the
    mean length of the games finished (plies), ``train_score/random`` the searcher's
    score in the games against a random player.

    >>> line = summarize_rounds([{"games": 2.0, "game_length": 100.0, "first_wins": 1.0,
    ...     "draws": 1.0, "root_value": 0.1, "policy_loss": 5.0, "value_loss": 0.5,
    ...     "afterstate_loss": 0.5, "value_targets": 0.25}])
    >>> line["episode_length"], line["first_win_rate"], line["draw_rate"], line["loss"]
    (50.0, 0.5, 0.5, 6.0)
    """
    summed = {k: float(np.sum([float(h[k]) for h in history])) for k in history[0]}
    games = summed["games"]
    out = {"games": games}
    for name in ("root_value", "policy_loss", "value_loss", "afterstate_loss", "value_targets"):
        values = np.array([float(h[name]) for h in history], np.float64)
        out[name] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
    out[LOSS] = out["policy_loss"] + out["value_loss"] + out["afterstate_loss"]
    out["episode_length"] = summed["game_length"] / games if games else float("nan")
    out["first_win_rate"] = summed["first_wins"] / games if games else float("nan")
    out["draw_rate"] = summed["draws"] / games if games else float("nan")
    against = summed.get("random_games", 0.0)
    if against:
        out[TRAIN_SCORE + "random"] = summed["random_points"] / against
    return out
