"""The DQN's config: :class:`Config` (frozen, one docstring per field; derived values are
properties) and the named configs ``jungle train dqn --config NAME`` runs.

Pure Python (no JAX), so the config can be built, checked and read back from a checkpoint
without compiling anything.
"""

from __future__ import annotations

import dataclasses

from jungle_train.common import RoundSchedule, parse_weights
from jungle_train.players import OBSERVATIONS

__all__ = [
    "CONFIGS",
    "CPU_CONFIG",
    "GPU_CONFIG",
    "KIND",
    "LEAGUE_CONFIG",
    "OPPONENT_KINDS",
    "SPEC_CONFIG",
    "Config",
]

KIND = "dqn"
"""The agent kind of the DQN's checkpoints."""

OPPONENT_KINDS = ("random", "greedy", "lookahead", "self", "league")
"""The DQN's training opponents, in the order of their slots along the batch: uniform
random, Greedy (:class:`jungle_train.jitted.JaxGreedy`), the Q-learners' one-ply
look-ahead on the shaped reward (:class:`jungle_train.jitted.JaxLookahead`), the frozen
self-play copy (the latest snapshot, or ``frozen_opponent``), and the league (the current
network and the pool of past snapshots, drawn per game by prioritised fictitious
self-play)."""


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
    (:func:`battle_planes`); ``"spec+clock+fields+battles+dangers"``: plus 8 more
    (:func:`danger_planes`)."""
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
    """Opponent mix over :data:`OPPONENT_KINDS`, e.g. ``"random=0.5,greedy=0.25,self=0.25"``:
    each kind's share of the batch's games (contiguous slots, so each opponent's policy is
    computed on its own slots only)."""
    self_play_period: int = 2000
    """Updates between snapshots of the learner: each refreshes the frozen self-play copy
    and, with league games, enters the pool (evicting the oldest when it is full)."""
    pool_size: int = 4
    """Past snapshots the league pool holds; a league game's opponent is one of them or
    the current network (one forward pass each per league game and decision)."""
    pfsp_exponent: float = 2.0
    """Prioritised fictitious self-play: a league game draws member ``k`` with weight
    ``(1 - x_k) ** pfsp_exponent``, ``x_k`` the learner's recent score against it (0:
    uniform; larger: the members that beat the learner more often)."""
    frozen_opponent: str = ""
    """A DQN playing checkpoint (``agent.npz``) whose network plays the ``self`` slots and
    is never refreshed: train a fresh learner against a fixed agent to measure how much
    that agent leaves to exploit. Its network must have this config's shape."""
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
            (self.pool_size >= 1, "pool_size must be >= 1"),
            (self.pfsp_exponent >= 0.0, "pfsp_exponent must be >= 0"),
            (0.0 <= self.endgame_starts <= 1.0, "endgame_starts must be in [0, 1]"),
            (1 <= self.endgame_pieces <= 8, "endgame_pieces must be in 1..8"),
            (1 <= self.endgame_opponent_pieces <= 8, "endgame_opponent_pieces must be in 1..8"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"DQN config: {message}")
        parse_weights(self.opponents, OPPONENT_KINDS)

    @property
    def observation_size(self) -> int:
        """Inputs of the network: 336, plus the clock and the per-square planes."""
        clock, planes = OBSERVATIONS[self.observation]
        return 336 + (1 if clock else 0) + planes * 56

    @property
    def opponent_slots(self) -> tuple[int, ...]:
        """Games per opponent kind, in the order of :data:`OPPONENT_KINDS` along the batch
        (rounded; random takes what rounding leaves).

        >>> Config(num_envs=16, opponents="random=0.5,lookahead=0.3,league=0.2").opponent_slots
        (8, 0, 5, 0, 3)
        """
        weights = parse_weights(self.opponents, OPPONENT_KINDS)
        slots = [0] * len(OPPONENT_KINDS)
        left = self.num_envs
        for k in range(1, len(OPPONENT_KINDS)):
            slots[k] = min(round(weights[k] * self.num_envs), left)
            left -= slots[k]
        slots[0] = left
        return tuple(slots)


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
"""The config of the shipped checkpoint, sized for 30 minutes on a 2-core CPU, against
scripted opponents (60 % random, 40 % Greedy), half of the games after the first from
random endgames (the fields it does not name keep the reference's values)."""

LEAGUE_CONFIG = dataclasses.replace(
    CPU_CONFIG,
    total_steps=12_000_000,
    updates_per_rollout=10,
    observation="spec+clock+fields+battles+dangers",
    opponents="random=0.05,greedy=0.2,lookahead=0.45,league=0.3",
    self_play_period=2500,
    pool_size=4,
)
""":data:`CPU_CONFIG`'s learner in a league, sized for an hour on a 2-core CPU: a
twentieth of the games against random, a fifth against Greedy, 45 % against the
Q-learners' one-ply look-ahead, and 30 % in the league (the current network and its last
four snapshots, one every 2,500 updates, drawn by prioritised fictitious self-play).
It sees the ``dangers`` planes (what a reply can take on each square) and makes 10
updates a round (1.25 sampled transitions a decision, the ``cpu`` config's 0.5). Each of
the three raised its score against tabular Q: 0.250 → 0.378 → 0.405 → 0.480. Measured,
not shipped: it scores higher than the shipped network against tabular Q and minimax
and lower against Greedy and random (docs/results.md)."""

GPU_CONFIG = dataclasses.replace(
    CPU_CONFIG, total_steps=100_000_000, num_envs=4096, updates_per_rollout=64
)
"""The shipped config's run on one GPU: 4,096 games at once instead of 256, and 64
updates of 128 a round instead of 4, so that the replay ratio (0.5 sampled transitions
per decision), the replay's age in updates and every schedule per decision stay the
``cpu`` config's. ``total_steps`` is a round figure (``--steps`` replaces it, and sizes
the schedules too)."""

CONFIGS = {
    "spec": SPEC_CONFIG,
    "cpu": CPU_CONFIG,
    "league": LEAGUE_CONFIG,
    "gpu": GPU_CONFIG,
}
"""Named configs for ``jungle train dqn --config NAME``."""
