"""DQN on the JAX core: thousands of DARK games at once, the whole loop jitted.

In the style of PureJaxRL / CleanRL, in one module: :class:`Config` (a frozen, typed
dataclass; derived values are properties) and :func:`make_train` ``(config) -> train(key)``,
where ``train`` is a pure function whose whole loop is jitted and scanned::

    round = rollout of `rollout_length` iterations over `num_envs` games
              (each iteration: the learner acts in every game, the opponent replies
               inside the same step, finished games reset, the learner's transition
               is kept)
            -> add the [num_envs, rollout_length] block to the prioritised replay
            -> `updates_per_rollout` updates (sample, double-DQN n-step loss, Adam),
               target sync and self-play snapshot on their periods
    train(key) = init(key), then `num_rounds` rounds in a `lax.scan`; the metrics of each
                 round are the only thing that leaves the device.

:class:`DQNTrainer` runs the same rounds in chunks for ``jungle train dqn`` (checkpoints,
metrics file, evaluation through the arena, resume after a kill); chunked and in-one-go
runs of the same key give the same network.

**Configs** (docs/training.md measures them). :data:`SPEC_CONFIG` is the reference DQN:
the 336-float observation, MLP 512-512-512 with dropout 0.2, Adam 1e-4, γ 0.99, batch
64, Huber, gradient clip 1.0, double DQN, prioritised replay (β 0.4 → 1.0), rewards for
reveals (+0.1), plain moves (+0.05), captures (+0.2·rank), own pieces lost (−0.3) and
the result (±10 / 0), and a two-phase curriculum (the first 40 % explores with the Greedy
heuristic's action, ε 0.9 → 0.02; then uniformly, ε 0.5 → 0.02), against random
opponents. Its rewards pay for stalling until the 100-ply draw, so :data:`CPU_CONFIG`
(what learned in 30 minutes on a 2-core CPU) pays for material only and charges each
decision, shows the network the no-removal clock and the per-square planes (below),
and uses the dueling convolutional network (:class:`ConvQNetwork`) against 40 % Greedy
opponents, half of the games after the first starting from random endgames (below).
:data:`GPU_CONFIG` is :data:`CPU_CONFIG` with sixteen times the games and updates a
round (the same replay ratio and schedules), for one GPU.

**Observation planes.** The base observation says what is on each square, but a 3×3
convolution sees only its neighbourhood and reads ranks as rank / 8, leaving the capture
rule's exception (an Elephant never takes a Rat) to be inferred. ``observation =
"spec+clock+fields"`` adds, for each rank of the opponent, a plane of ``1 / (1 +
Manhattan distance)`` to that piece (:func:`enemy_fields`); ``"spec+clock+fields+battles"``
adds, for each of the mover's face-up pieces and each direction, what moving onto the
enemy there does (:func:`battle_planes`). Both are computed from the position alone (the
numpy twins in :mod:`jungle_train.players._numpy` play the checkpoint without JAX).

**Endgame starts.** With ``endgame_starts`` > 0, that share of the games that finish
restart from a random endgame (:mod:`jungle_train.jitted._starts`: every piece face up, the
learner to move) instead of the start position, so the network learns to convert won
endgames. Their results are kept apart (``train_score/endgame``), so the per-opponent
scores still describe games from the start.

**Learner and opponent.** Each game has a learner seat (alternating from game to game)
and an opponent fixed by its slot in the batch: the opponent mix
(:func:`jungle_train.common._opponents.parse_mix`) is realised as contiguous slots, so the
costly Greedy (:mod:`jungle_train.jitted._greedy`) runs only on its slots; self-play meets
a frozen copy of the network, refreshed every ``self_play_period`` updates. A transition
is the learner's decision: its position, its action, the reward over its ply and the
opponent's reply, and whether the game ended.

**Replay and loss.** flashbax's prioritised trajectory buffer holds compact positions
in ``[num_envs, time]`` order; sampling sequences of ``n_step + 1`` gives n-step returns
(cut at the end of a game), and observations are computed when sampled. Importance
weights ``(N·P)^−β`` are normalised by the batch's largest; new priorities are ``|δ| +
ε``. The loss is :func:`double_q_loss`; ``optax`` clips the gradient's norm, then Adam.

**Randomness.** Every key is split and used once. Per iteration one ``jax.random.bits``
call gives a few 32-bit words per game; exploration coins, uniform legal actions and
Greedy's tie-breaks are integer hashes of those words (:mod:`jungle_train.jitted._sampling`):
``jax.random`` over ``[B, 280]`` costs more than a DARK step on a CPU.

**Layout.** The algorithm stays in this one module, as in PureJaxRL; the networks
(:mod:`jungle_train.jitted._nets`), the board arithmetic of the rewards
(:mod:`jungle_train.jitted._board`) and pytrees in checkpoints
(:mod:`jungle_train.jitted._pytree_io`)
live beside it.

**Devices.** The batch of games (environment states, and the replay's leading axis) is
sharded over every device of every process (:class:`jungle_train.common._distributed.GameSharding`,
a 1-D mesh named ``"games"``); parameters and optimiser state are replicated, so one CPU,
one GPU, eight, or several hosts run the same computation: XLA all-reduces the gradients
of a batch sampled across the shards. Across processes, call
:func:`jungle_train.common._distributed.initialize` on each before building the trainer
(``jungle train dqn --coordinator HOST:PORT --num-processes N --process-id I``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import flashbax
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jungle_core import DARK, Rules
from jungle_core.jax_env import JaxEnv, JaxState, make
from jungle_train.common import LOSS, TRAIN_SCORE, GameSharding, RoundSchedule, parse_mix
from jungle_train.jitted import (
    ConvQNetwork,
    JaxGreedy,
    JaxRoundTrainer,
    QNetwork,
    best_action,
    coin,
    hash_words,
    potential,
    present,
    random_endgame,
    removed_ranks,
    uniform_legal,
)
from jungle_train.players import (
    BATTLE_PLANES,
    FIELD_PLANES,
    OBSERVATIONS,
    DQNAgent,
    battle_table,
    field_table,
)

__all__ = [
    "CPU_CONFIG",
    "GPU_CONFIG",
    "SPEC_CONFIG",
    "Config",
    "DQNTrainer",
    "QNetwork",
    "battle_planes",
    "enemy_fields",
    "make_train",
]

KIND = "dqn"


@dataclasses.dataclass(frozen=True)
class Config(RoundSchedule):
    """A DQN run. Defaults are the reference DQN's (:data:`SPEC_CONFIG`)."""

    total_steps: int = 20_000_000
    """Learner decisions to train for, over all games (sets the schedules' length)."""
    num_envs: int = 1024
    """Games played side by side (sharded over every device of every process)."""
    rollout_length: int = 1
    """Iterations (one learner decision per game each) per round of updates."""
    updates_per_rollout: int = 16
    """Gradient updates per round (replay ratio = updates × batch / (envs × rollout))."""
    network: str = "mlp"
    """``"mlp"`` (the reference) or ``"conv"``: 3×3 convolutions over the board with a
    per-square head (each square's reveal and four moves), see :class:`ConvQNetwork`."""
    hidden: tuple[int, ...] = (512, 512, 512)
    """Widths of the MLP's hidden layers (ReLU)."""
    dropout: float = 0.2
    """Dropout rate after each MLP hidden layer, in training updates only."""
    channels: int = 32
    """Channels of the convolutional network's layers."""
    conv_layers: int = 3
    """3×3 convolution layers of the convolutional network."""
    dueling: bool = False
    """Dueling head for the convolutional network (a state value plus advantages)."""
    observation: str = "spec"
    """``"spec"``: the 336 floats of ``JaxEnv.observe``; ``"spec+clock"``: plus plies
    since a removal / 100; ``"spec+clock+fields"``: plus 8 planes of 56 floats
    (:func:`enemy_fields`); ``"spec+clock+fields+battles"``: plus 4 more
    (:func:`battle_planes`)."""
    learning_rate: float = 1e-4
    """Adam's learning rate."""
    gamma: float = 0.99
    """Discount per learner decision."""
    n_step: int = 1
    """Steps of the return before bootstrapping (1: one-step DQN)."""
    batch_size: int = 64
    """Transitions per gradient update."""
    grad_clip: float = 1.0
    """Global gradient-norm clip."""
    huber_delta: float = 1.0
    """Huber loss's delta."""
    buffer_size: int = 262_144
    """Replay capacity in transitions (a multiple of ``num_envs``)."""
    min_buffer: int = 16_384
    """Transitions stored before the first update."""
    priority_exponent: float = 0.6
    """α of prioritised replay: sampling ∝ (|δ| + ε)^α."""
    priority_epsilon: float = 1e-3
    """ε added to |δ| for the priority."""
    beta_start: float = 0.4
    """Importance-sampling exponent β at the start (annealed linearly)."""
    beta_end: float = 1.0
    """β at the end of training."""
    reveal_reward: float = 0.1
    """Reward for the learner revealing a piece."""
    move_reward: float = 0.05
    """Reward for the learner's move onto an empty square."""
    capture_reward: float = 0.2
    """Per rank of each opponent piece removed (in the learner's ply or the reply)."""
    lost_piece_reward: float = -0.3
    """Per learner piece removed."""
    lost_rank_reward: float = 0.0
    """Per rank of each learner piece removed."""
    decision_reward: float = 0.0
    """Added at every learner decision (a cost when negative)."""
    shaping: float = 0.0
    """Scale of the shaping ``Δ(Opp) − Δ(Threat)`` per ply (0: off); the potential is
    :func:`jungle_train.tabular._shaping.potential`'s (:func:`potential`)."""
    win_reward: float = 10.0
    """Terminal reward of a win (a loss gets its negative)."""
    draw_reward: float = 0.0
    """Terminal reward of a draw (negative: contempt)."""
    phase1_fraction: float = 0.4
    """Share of training in phase 1 (heuristic-guided exploration)."""
    phase1_epsilon: tuple[float, ...] = (0.9, 0.02)
    """ε at the start and end of phase 1 (linear); exploring plays Greedy's action."""
    phase2_epsilon: tuple[float, ...] = (0.5, 0.02)
    """ε at the start and end of phase 2 (linear); exploring plays a uniform legal action."""
    phase1_target_period: int = 250
    """Updates between target-network syncs in phase 1."""
    phase2_target_period: int = 1000
    """Updates between target-network syncs in phase 2."""
    opponents: str = "random"
    """Opponent mix, e.g. ``"random=0.5,greedy=0.25,self=0.25"`` (slots of the batch)."""
    self_play_period: int = 2000
    """Updates between refreshes of the frozen self-play copy."""
    endgame_starts: float = 0.0
    """Share of the games that start from a random endgame instead of the start
    (:mod:`jungle_train.jitted._starts`: every piece face up, the learner to move); they
    count in the ``endgame`` metrics, not per opponent."""
    endgame_pieces: int = 5
    """Most pieces the learner holds in a random endgame start (1..8)."""
    endgame_opponent_pieces: int = 5
    """Most pieces the opponent holds in a random endgame start (1..8; fewer than
    ``endgame_pieces`` makes most starts ones the learner should convert)."""

    def __post_init__(self) -> None:
        checks = [
            (self.total_steps >= 1, "total_steps must be >= 1"),
            (self.num_envs >= 1, "num_envs must be >= 1"),
            (self.rollout_length >= 1, "rollout_length must be >= 1"),
            (self.updates_per_rollout >= 0, "updates_per_rollout must be >= 0"),
            (len(self.hidden) >= 1 and min(self.hidden) >= 1, "hidden needs widths >= 1"),
            (0.0 <= self.dropout < 1.0, "dropout must be in [0, 1)"),
            (self.observation in OBSERVATIONS, f"observation must be one of {list(OBSERVATIONS)}"),
            (self.network in ("mlp", "conv"), "network must be mlp|conv"),
            (self.channels >= 1 and self.conv_layers >= 1, "channels and conv_layers must be >= 1"),
            (0.0 < self.gamma <= 1.0, "gamma must be in (0, 1]"),
            (self.n_step >= 1, "n_step must be >= 1"),
            (self.batch_size >= 1, "batch_size must be >= 1"),
            (self.buffer_size >= self.num_envs * (self.n_step + 2), "buffer_size too small"),
            (self.buffer_size % self.num_envs == 0, "buffer_size must be a multiple of num_envs"),
            (len(self.phase1_epsilon) == 2, "phase1_epsilon is (start, end)"),
            (len(self.phase2_epsilon) == 2, "phase2_epsilon is (start, end)"),
            (0.0 <= self.phase1_fraction <= 1.0, "phase1_fraction must be in [0, 1]"),
            (self.phase1_target_period >= 1 and self.phase2_target_period >= 1, "periods >= 1"),
            (self.self_play_period >= 1, "self_play_period must be >= 1"),
            (0.0 <= self.endgame_starts <= 1.0, "endgame_starts must be in [0, 1]"),
            (1 <= self.endgame_pieces <= 8, "endgame_pieces must be in 1..8"),
            (1 <= self.endgame_opponent_pieces <= 8, "endgame_opponent_pieces must be in 1..8"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"DQN config: {message}")
        parse_mix(self.opponents)

    @property
    def observation_size(self) -> int:
        """Inputs of the network: 336, plus the clock and the per-square planes."""
        clock, planes = OBSERVATIONS[self.observation]
        return 336 + (1 if clock else 0) + planes * 56

    @property
    def opponent_slots(self) -> tuple[int, int, int]:
        """Games per opponent (random, greedy, self), in that order along the batch."""
        weights = parse_mix(self.opponents)
        greedy = round(weights[1] * self.num_envs)
        self_play = round(weights[2] * self.num_envs)
        greedy = min(greedy, self.num_envs)
        self_play = min(self_play, self.num_envs - greedy)
        return (self.num_envs - greedy - self_play, greedy, self_play)


SPEC_CONFIG = Config()
"""The reference DQN (reproducible; measured not to learn in 30 CPU minutes)."""

CPU_CONFIG = Config(
    total_steps=11_000_000,
    num_envs=256,
    rollout_length=4,
    updates_per_rollout=4,
    network="conv",
    dueling=True,
    dropout=0.0,
    observation="spec+clock+fields+battles",
    learning_rate=3e-4,
    batch_size=128,
    buffer_size=131_072,
    min_buffer=8_192,
    reveal_reward=0.0,
    move_reward=0.0,
    lost_piece_reward=0.0,
    lost_rank_reward=-0.2,
    decision_reward=-0.05,
    phase1_fraction=0.3,
    phase1_epsilon=(0.5, 0.05),
    phase2_epsilon=(0.2, 0.02),
    phase2_target_period=500,
    opponents="random=0.6,greedy=0.4",
    self_play_period=1000,
    endgame_starts=0.5,
    endgame_opponent_pieces=2,
)
"""The config of the shipped checkpoint, sized for 30 minutes on a 2-core CPU (the
fields it does not name keep the reference's values)."""

GPU_CONFIG = dataclasses.replace(
    CPU_CONFIG, total_steps=100_000_000, num_envs=4096, updates_per_rollout=64
)
"""The shipped config's run on one GPU: 4,096 games at once instead of 256, and 64
updates of 128 a round instead of 4, so that the replay ratio (0.5 sampled transitions
per decision), the replay's age in updates and every schedule per decision stay the
``cpu`` config's. ``total_steps`` is a round figure (``--steps`` replaces it, and sizes
the schedules too)."""

CONFIGS = {"spec": SPEC_CONFIG, "cpu": CPU_CONFIG, "gpu": GPU_CONFIG}
"""Named configs for ``jungle train dqn --config NAME``."""


# ----------------------------------------------------------------------------- network


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
        parts.append(jnp.concatenate(per_square, axis=-1).reshape(-1))
    return jnp.concatenate(parts)


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
    neighbour, value = battle_table(env.rules)
    board = state.board.astype(jnp.int32)
    lo = state.current_player * 8
    mine = (board > lo) & (board <= lo + 8)
    target = jnp.where(jnp.asarray(neighbour) >= 0, board[jnp.asarray(neighbour)], 0)
    planes = jnp.where(mine[:, None], jnp.asarray(value)[board[:, None], target], 0.0)
    return planes.reshape(-1)


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


class Position(NamedTuple):
    """A compact position as replay stores it (one game; batch axes in front)."""

    board: jax.Array  # int8[56]
    face_down_mask: jax.Array  # int32[]
    player: jax.Array  # int32[]
    since: jax.Array  # int32[]
    legal: jax.Array  # bool[280]


def _position(state: JaxState) -> Position:
    return Position(
        state.board,
        state.face_down_mask,
        state.current_player,
        state.plies_since_removal,
        state.legal_action_mask,
    )


def _state_of(position: Position) -> JaxState:
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


# ---------------------------------------------------------------------------- rewards


def _ply_reward(config: Config, before: JaxState, after: JaxState, learner: jax.Array) -> jax.Array:
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


def _terminal_reward(
    config: Config, state: JaxState, learner: jax.Array, ended: jax.Array
) -> jax.Array:
    result = state.rewards[learner]  # +1 / -1 / 0 on the step that ended the game
    value = jnp.where(
        result > 0, config.win_reward, jnp.where(result < 0, -config.win_reward, config.draw_reward)
    )
    return jnp.where(ended, value, 0.0)


# ------------------------------------------------------------------------- the runner


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


def _schedule(config: Config, step: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(phase 1?, ε, β)`` at learner decision ``step``."""
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


class _Parts:
    """The pieces of a run built once per config: env, Greedy, network, optimiser,
    replay buffer and the games' sharding over the devices."""

    def __init__(self, config: Config, rules: Rules = DARK) -> None:
        if rules.setup == "scattered":
            raise ValueError("the DQN trainer needs a fixed start position (not setup='scattered')")
        self.config = config
        self.env = make(rules)
        self.greedy = JaxGreedy(self.env)
        self.network = make_network(config)
        # an update whose gradients are not finite is skipped, not applied
        self.optimizer = optax.apply_if_finite(
            optax.chain(
                optax.clip_by_global_norm(config.grad_clip), optax.adam(config.learning_rate)
            ),
            max_consecutive_errors=1_000_000,
        )
        self.buffer = flashbax.make_prioritised_trajectory_buffer(
            add_batch_size=config.num_envs,
            sample_batch_size=config.batch_size,
            sample_sequence_length=config.n_step + 1,
            period=1,
            min_length_time_axis=max(config.min_buffer // config.num_envs, config.n_step + 1),
            max_length_time_axis=config.buffer_size // config.num_envs,
            priority_exponent=config.priority_exponent,
            device=jax.default_backend()
            if jax.default_backend() in ("cpu", "gpu", "tpu")
            else "cpu",
        )
        self.games = GameSharding()  # games split over every device of every process
        self.start = self.env.init(jax.random.key(0))
        self.slots = config.opponent_slots

    # -- acting -------------------------------------------------------------------

    def q_values(self, params: Any, state: JaxState) -> jax.Array:
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
        config, env = self.config, self.env
        b = config.num_envs
        key, k_words, k_step, k_reply, k_open = jax.random.split(runner.key, 5)
        words = jax.random.bits(k_words, (b, 5), jnp.uint32)
        state = self.games(runner.env)
        learner = runner.seat
        phase1, eps, _ = _schedule(config, step)

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
        reward = config.decision_reward + _ply_reward_batch(config, state, after_learner, learner)
        reward += jnp.where(action < env.num_squares, config.reveal_reward, 0.0)
        # a plain move: a move that turns nothing face up and removes nothing
        unchanged = (state.face_down_mask == after_learner.face_down_mask) & (
            jax.vmap(present)(state) == jax.vmap(present)(after_learner)
        )
        reward += jnp.where((action >= env.num_squares) & unchanged, config.move_reward, 0.0)
        ended_by_learner = after_learner.terminated
        reward += jax.vmap(functools.partial(_terminal_reward, config))(
            after_learner, learner, ended_by_learner
        )

        # the opponent's reply, inside the same step
        reply = self.opponent_actions(runner.opponent_params, after_learner, words[:, 2])
        after_reply = steps(after_learner, reply, jax.random.split(k_reply, b))
        reward += jnp.where(
            ended_by_learner, 0.0, _ply_reward_batch(config, after_learner, after_reply, learner)
        )
        ended = after_reply.terminated | after_reply.truncated
        ended_by_reply = ended & ~ended_by_learner
        reward += jax.vmap(functools.partial(_terminal_reward, config))(
            after_reply, learner, ended_by_reply
        )

        transition = Transition(_position(state), action, reward.astype(jnp.float32), ended)

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
        for k, name in enumerate(_GAME_KINDS):
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
        fresh = jax.tree.map(lambda o, s: jnp.where(_expand(seat == 1, o), o, s), opened, start)
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
            fresh = jax.tree.map(lambda e, f: jnp.where(_expand(endgame, e), e, f), endgames, fresh)
            endgame = jnp.where(ended, endgame, runner.endgame)
        next_state = jax.tree.map(
            lambda f, s: jnp.where(_expand(ended, f), f, s), fresh, after_reply
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

        obs = jax.vmap(functools.partial(observe, env, config))(_state_of(first))
        obs_next = jax.vmap(functools.partial(observe, env, config))(_state_of(last))
        q = self.network.apply(params, obs, deterministic=False, rngs={"dropout": key})
        q_next_online = jnp.asarray(self.network.apply(params, obs_next))
        q_next_target = jnp.asarray(self.network.apply(target_params, obs_next))
        selector = jnp.where(last.legal, q_next_online, -1e9)
        chosen = (jnp.asarray(q), batch.action[:, 0], returns, bootstrap, q_next_target)
        return double_q_loss(*chosen, selector, weights, config.huber_delta)

    def update(
        self, runner: RunnerState, step: jax.Array, items: jax.Array
    ) -> tuple[RunnerState, dict[str, jax.Array]]:
        config = self.config
        key, k_sample, k_drop = jax.random.split(runner.key, 3)
        sample = self.buffer.sample(runner.buffer, k_sample)
        batch: Transition = sample.experience
        _, _, beta = _schedule(config, step)
        # importance weights (N·P)^−β over the batch's largest; a sample drawn with
        # probability 0 (the sum tree's rounding at an edge) weighs nothing rather than ∞
        drawn = sample.probabilities > 0
        safe = jnp.where(drawn, items.astype(jnp.float32) * sample.probabilities, 1.0)
        weights = jnp.where(drawn, safe ** (-beta), 0.0)
        weights = weights / jnp.maximum(jnp.max(weights), 1e-12)
        (loss, td), grads = jax.value_and_grad(self.loss, has_aux=True)(
            runner.params, runner.target_params, batch, weights, k_drop
        )
        updates, opt_state = self.optimizer.update(grads, runner.opt_state, runner.params)
        params = optax.apply_updates(runner.params, updates)
        priority = jnp.nan_to_num(jnp.abs(td), nan=0.0, posinf=1e6) + config.priority_epsilon
        buffer = self.buffer.set_priorities(runner.buffer, sample.indices, priority)
        count = runner.updates + 1
        phase1, _, _ = _schedule(config, step)
        period = jnp.where(phase1, config.phase1_target_period, config.phase2_target_period)
        target = optax.periodic_update(params, runner.target_params, count, period)
        opponent = optax.periodic_update(
            params, runner.opponent_params, count, config.self_play_period
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
        config, env = self.config, self.env
        b = config.num_envs
        k_params, k_open, k_words, key = jax.random.split(key, 4)
        params = self.network.init(k_params, jnp.zeros((1, config.observation_size)))
        seat = jnp.arange(b, dtype=jnp.int32) % 2
        start = jax.tree.map(lambda a: jnp.broadcast_to(a, (b, *a.shape)), self.start)
        words = jax.random.bits(k_words, (b,), jnp.uint32)
        opening = self.openings(params, words)
        opened = jax.vmap(env.step)(start, opening, jax.random.split(k_open, b))
        state = jax.tree.map(lambda o, s: jnp.where(_expand(seat == 1, o), o, s), opened, start)
        example = Transition(
            jax.tree.map(lambda a: a[0], _position(state)),
            jnp.zeros((), jnp.int32),
            jnp.zeros((), jnp.float32),
            jnp.zeros((), jnp.bool_),
        )
        return RunnerState(
            params=params,
            target_params=params,
            opponent_params=params,
            opt_state=self.optimizer.init(params),
            buffer=self.games(self.buffer.init(example)),
            env=self.games(state),
            seat=seat,
            episode_return=jnp.zeros(b, jnp.float32),
            episode_length=jnp.zeros(b, jnp.int32),
            endgame=jnp.zeros(b, jnp.bool_),
            key=key,
            rounds=jnp.zeros((), jnp.int32),
            updates=jnp.zeros((), jnp.int32),
        )

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


_GAME_KINDS = ("random", "greedy", "self", "endgame")
"""The training games' kinds in the metrics: by opponent, and the endgame starts."""


def _ply_reward_batch(
    config: Config, before: JaxState, after: JaxState, learner: jax.Array
) -> jax.Array:
    return jax.vmap(functools.partial(_ply_reward, config))(before, after, learner)


def _expand(mask: jax.Array, like: jax.Array) -> jax.Array:
    return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))


def make_train(config: Config) -> Any:
    """``train(key) -> (RunnerState, metrics)``: a whole run in one jitted function.

    ``metrics`` maps each name to ``float32[num_rounds]`` (one value per round): games
    finished and points per opponent, mean reward, ε, loss, |δ|.

    >>> import jax
    >>> tiny = Config(total_steps=64, num_envs=8, rollout_length=2, updates_per_rollout=1,
    ...               hidden=(16,), batch_size=8, buffer_size=64, min_buffer=16,
    ...               opponents="random")
    >>> runner, metrics = make_train(tiny)(jax.random.key(0))
    >>> metrics["loss"].shape, int(runner.rounds)
    ((4,), 4)
    """
    parts = _Parts(config)

    def train(key: jax.Array) -> tuple[RunnerState, dict[str, jax.Array]]:
        runner = parts.init(key)
        return jax.lax.scan(lambda r, _: parts.round(r), runner, None, length=config.num_rounds)

    return jax.jit(train)


# ------------------------------------------------------------------ checkpoints, CLI


class DQNTrainer(JaxRoundTrainer):
    """:class:`jungle_train.common._run.Trainer` for the DQN: the rounds of :func:`make_train`,
    compiled once and run a chunk at a time (same network as one ``train(key)`` call).
    Checkpoints hold the whole run (network, target, self-play copy, Adam, replay, games,
    key); the playing checkpoint holds the online network."""

    kind = KIND

    def __init__(self, config: Config) -> None:
        super().__init__(config, _Parts(config))

    def summarize(self, history: list[dict[str, Any]]) -> dict[str, float]:
        """:func:`summarize_rounds`."""
        return summarize_rounds(history)

    def agent(self, path: str) -> Any:
        """The agent that plays from a checkpoint :meth:`save_agent` wrote."""
        return DQNAgent(self._parts.env.rules, path)  # type: ignore[attr-defined]


def summarize_rounds(history: list[dict[str, Any]]) -> dict[str, float]:
    """One metrics line from the metrics of several rounds: counts summed into win
    rates per opponent, means of the rest.

    >>> line = summarize_rounds([{"games_random": 2.0, "points_random": 1.5, "wins_random": 1.0,
    ...     "episodes": 2.0, "episode_length": 100.0, "episode_return": 4.0,
    ...     "loss": 0.5, "reward": 0.1, "epsilon": 0.3, "td_error": 1.0}])
    >>> line["train_score/random"], line["episode_length"], line["loss"]
    (0.75, 50.0, 0.5)
    """
    total: dict[str, float] = {}
    for name in history[0]:
        values = np.array([float(h[name]) for h in history], np.float64)
        total[name] = (
            float(np.nansum(values))
            if name.startswith(("games_", "points_", "wins_", "episode"))
            else float(np.nanmean(values))
            if np.isfinite(values).any()
            else float("nan")
        )
    nan = float("nan")
    out = {name: total.get(name, nan) for name in (LOSS, "td_error", "reward")}
    out["epsilon"] = float(history[-1]["epsilon"])
    out["episodes"] = episodes = total.get("episodes", 0.0)
    for name in ("episode_length", "episode_return"):
        out[name] = total.get(name, 0.0) / episodes if episodes else nan
    for name in _GAME_KINDS:
        games = total.get(f"games_{name}", 0.0)
        if games:
            out[TRAIN_SCORE + name] = total[f"points_{name}"] / games
            out[f"win_rate/{name}"] = total[f"wins_{name}"] / games
    return out
