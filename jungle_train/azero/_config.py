"""The AlphaZero trainer's settings: :class:`Config` and the named configs of
``jungle train azero --config NAME`` (:data:`CONFIGS`), re-exported by
:mod:`jungle_train.azero`, whose docstring says what the switches are for and what each
named config measured.
"""

from __future__ import annotations

import dataclasses

from jungle_core import Rules
from jungle_train.azero._guides import RULES
from jungle_train.azero.search import SearchConfig
from jungle_train.common import RoundSchedule

__all__ = [
    "CONFIGS",
    "KIND",
    "TINY_CONFIG",
    "Config",
]

KIND = "azero"


@dataclasses.dataclass(frozen=True)
class Config(RoundSchedule):
    """An AlphaZero run. The defaults are plain AlphaZero on DARK (no hand-made value,
    results-only targets); ``experiments/configs/azero-cpu.toml`` is the measured CPU run."""

    rules: str = "dark"
    """``"dark"`` (Stochastic MuZero search) or ``"classic"`` (Gumbel MuZero)."""
    total_steps: int = 200_000
    """Self-play decisions to train for, over all games."""
    num_envs: int = 64
    """Games played side by side (one batched search per decision)."""
    rollout_length: int = 32
    """Decisions per game per round."""
    simulations: int = 32
    """Search simulations per self-play decision."""
    max_depth: int = 0
    """Deepest line searched, in decisions (0: no limit but ``simulations``)."""
    dirichlet_fraction: float = 0.25
    """DARK: Dirichlet noise mixed into the root prior in self-play."""
    dirichlet_alpha: float = 0.3
    """DARK: the noise's concentration."""
    sample_plies: int = 30
    """DARK: for the first ``sample_plies`` plies of a game the move is drawn ∝ visits,
    then the most visited is played."""
    afterstate: str = "head"
    """DARK: a chance node's value before its outcomes are searched, ``"head"`` (the
    network's afterstate head), ``"parent"`` (the position's value) or ``"expected"``
    (that plus the action's expected change of material)
    (:attr:`jungle_train.azero.search._config.SearchConfig.afterstate`)."""
    prior_mix: float = 0.0
    """Share of the uniform distribution mixed into the search's priors, in self-play and
    in play (:attr:`jungle_train.azero.search._config.SearchConfig.prior_mix`)."""
    policy_target: str = "visits"
    """DARK's policy target: ``"visits"`` (AlphaZero: the root's visit distribution) or
    ``"completed_q"`` (Gumbel MuZero's: ``softmax(prior logits + σ(completed Q))``, the
    Q-values of unvisited actions completed by the mixed value, rescaled or not by
    ``rescale_q``; it does not collapse onto the prior when simulations are few).
    CLASSIC's search gives its own (rescaled) version."""
    rescale_q: bool = False
    """DARK with ``completed_q``: rescale the completed Q-values to [0, 1] per position,
    as Gumbel MuZero does (true in the measured CPU run, ``experiments/configs/azero-cpu.toml``)."""
    gumbel_scale: float = 1.0
    """CLASSIC: Gumbel noise at the root in self-play."""
    max_considered: int = 16
    """CLASSIC: actions considered at the root."""
    batching: str = "auto"
    """How self-play searches its ``num_envs`` games: ``"vectorized"``, ``"sequential"``
    or ``"auto"`` (sequential on a CPU, vectorized elsewhere;
    :attr:`jungle_train.azero.search._config.SearchConfig.batching`): each game is searched the
    same way either way, only the random draws differ. On this CPU, sequential made the
    measured CPU run 1.7× faster (415 against 243 decisions a second) and the
    teacher one 3.3× (208 against 64; experiments/configs/)."""
    slots: bool = True
    """Search in slots (:attr:`jungle_train.azero.search._config.SearchConfig.slots`): each
    node's action axis holds its legal actions (at most 40 in DARK, 32 in CLASSIC)
    instead of all 280 (315) actions. The same search, cheaper on a CPU; the policy
    targets are mapped back to the rules' actions. One difference in self-play: DARK's
    root Dirichlet noise is drawn over the 40 slots, not the 280 actions, so more of
    its mass falls on the legal actions (AlphaZero draws it over the legal moves
    alone). Runs before this field existed searched the full action axis
    (``slots=False``)."""
    chance_order: str = "index"
    """DARK: the order in which the search visits a chance node's equally likely outcomes:
    ``"index"`` (mctx's rule, ties to the lowest piece identity), ``"shuffled"`` (a
    random order per node) or ``"stratified"`` (a fixed spread of ranks;
    :attr:`jungle_train.azero.search._config.SearchConfig.chance_order`), in self-play
    (a teacher's too). The playing agent, and so the trainer's evaluation games, take
    their own ``chance_order`` parameter."""
    channels: int = 32
    """Channels of the network's convolutions."""
    conv_layers: int = 3
    """3×3 convolution layers (the later ones residual)."""
    learning_rate: float = 1e-3
    """Adam's learning rate."""
    weight_decay: float = 1e-4
    """Decoupled weight decay (AdamW)."""
    grad_clip: float = 1.0
    """Global gradient-norm clip."""
    batch_size: int = 256
    """Positions per gradient update."""
    updates_per_round: int = 8
    """Gradient updates per round, on the previous round's block."""
    value_weight: float = 1.0
    """Weight of the value loss (squared error) beside the policy's cross-entropy."""
    afterstate_weight: float = 1.0
    """Weight of the afterstate head's loss (squared error on the action played)."""
    random_games: float = 0.0
    """Share of the games (the first slots of the batch) in which one side, player 0 in
    even slots and player 1 in odd ones, plays uniformly random legal moves instead of
    the search's. Every position of those games is still searched and learned like any
    other (the random side changes only the move played), so the network meets the
    positions a careless opponent leaves: capture chances that two careful searchers
    never allow each other."""
    heuristic_prior: tuple[float, ...] = (0.0, 0.0)
    """The search's leaf values mix in a hand-made value (material balance and the Q-learners'
    shaping potential, :func:`jungle_train.azero._hand_value.heuristic_value`) with this
    weight, from ``heuristic_prior[0]`` at the start to ``heuristic_prior[1]`` at the
    end of the run (linear in rounds); the agent plays with the final weight.
    ``(0, 0)``: the network alone, pure AlphaZero. The network always learns the
    targets below, unmixed."""
    material_value: float = 0.0
    """Material in the value targets (0: pure AlphaZero, results only, unfinished games
    masked). When positive, a *drawn* game's result for the mover is this weight times
    the final material balance ``(M_mover - M_other) / (M_mover + M_other)`` instead of
    0 (``M``: the Greedy agent's piece values of the pieces still in the game, face-down
    ones by identity), and a position whose game has not ended within the window gets
    this weight times the balance at the window's end instead of no target. The
    search's own rewards stay the game's. See the module docstring."""

    teacher: str = ""
    """DARK: a DQN checkpoint (``"shipped"``: the shipped ``dqn.npz``) whose search plays
    self-play instead of the network's: the search of ``make_agent("azero", DARK)``
    (the DQN's ``softmax(Q)`` as prior, the hand-made value at the leaves with
    ``heuristic_prior``'s weight, the rest the DQN's ``max Q``;
    :func:`jungle_train.azero.search._evaluations.dqn_prior_evaluation`). The network learns its
    visits, the games' results and afterstate values as ever, but from a strong
    player's games from the first round: expert iteration, the student distilling the
    teacher's search. Empty: the network searches for itself (AlphaZero). Needs
    ``policy_target="visits"`` (the completed-Q target is built on the searching
    network's own prior)."""

    def __post_init__(self) -> None:
        checks = [
            (self.rules in RULES, f"rules must be one of {sorted(RULES)}"),
            (self.total_steps >= 1, "total_steps must be >= 1"),
            (self.num_envs >= 1, "num_envs must be >= 1"),
            (self.rollout_length >= 1, "rollout_length must be >= 1"),
            (self.channels >= 1 and self.conv_layers >= 1, "channels, conv_layers >= 1"),
            (self.learning_rate > 0, "learning_rate must be > 0"),
            (self.batch_size >= 1, "batch_size must be >= 1"),
            (self.updates_per_round >= 0, "updates_per_round must be >= 0"),
            (self.sample_plies >= 0, "sample_plies must be >= 0"),
            (0.0 <= self.random_games <= 1.0, "random_games must be in [0, 1]"),
            (self.policy_target in ("visits", "completed_q"), "policy_target: visits|completed_q"),
            (
                len(self.heuristic_prior) == 2 and all(0 <= w <= 1 for w in self.heuristic_prior),
                "heuristic_prior is (start, end), each in [0, 1]",
            ),
            (
                not self.teacher or (self.rules == "dark" and self.policy_target == "visits"),
                "a teacher plays DARK, with policy_target=visits",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"azero config: {message}")
        self.search_config(self_play=True)  # validates the search fields

    @property
    def rule_set(self) -> Rules:
        """The :class:`jungle_core.Rules` value ``rules`` names."""
        return RULES[self.rules]

    def search_config(self, *, self_play: bool, simulations: int = 0) -> SearchConfig:
        """The search of self-play (noise on) or of play (noise off, most visited)."""
        return SearchConfig(
            simulations=simulations or self.simulations,
            max_depth=self.max_depth,
            dirichlet_fraction=self.dirichlet_fraction if self_play else 0.0,
            dirichlet_alpha=self.dirichlet_alpha,
            temperature=0.0,
            gumbel_scale=self.gumbel_scale if self_play else 0.0,
            max_considered=self.max_considered,
            prior_mix=self.prior_mix,
            afterstate=self.afterstate,
            batching=self.batching,
            chance_order=self.chance_order,
            slots=self.slots,
        )


TINY_CONFIG = Config(
    total_steps=64,
    num_envs=4,
    rollout_length=4,
    simulations=4,
    channels=4,
    conv_layers=1,
    batch_size=8,
    updates_per_round=1,
    policy_target="completed_q",
    heuristic_prior=(1.0, 0.5),
    material_value=1.0,
    random_games=0.5,
    prior_mix=0.25,
)
"""For tests: 4 rounds of 4 games × 4 decisions, 4 simulations, a 4-channel network,
every optional part switched on (two games against a random side)."""

CONFIGS = {"default": Config(), "tiny": TINY_CONFIG}
"""Named configs for ``jungle train azero --config NAME``: plain AlphaZero (the class's
defaults) and the test config. The measured runs' configs (the CPU run that did not beat
random, the GPU run that drew every game, CLASSIC, and the DQN-guided teacher on a CPU
and a GPU) are TOML files in ``experiments/configs/`` with what each measured."""
