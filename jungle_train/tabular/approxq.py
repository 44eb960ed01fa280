"""Approximate Q-learning on the pure DARK core: a linear Q over hand-made features.

``Q(s, a) = w · φ(s, a)`` with the 16 features of :mod:`jungle_train.tabular._features`, the
reward of :mod:`jungle_train.tabular._shaping`, learned by one-step Q-learning from a replay
buffer: each step stores ``(φ(s, a), r, done, φ(s', ·))`` and then takes one gradient
step on a minibatch drawn uniformly from the buffer, on the Huber loss of the TD error
``r + γ max_a' w · φ(s', a') - w · φ(s, a)`` (the target held fixed) plus an L2 penalty
``λ/2 |w|²``, with the learning rate ``η₀ / (1 + t)^0.25`` (``t`` = updates so far). A step
is one decision of the learner (its ply and the opponent's reply).

Schedules: after each finished game, ε is multiplied by 0.999 while the recent win rate
(:attr:`Config.recent_games` games) is below 0.3, by 0.95 above 0.6 and by 0.995
otherwise, down to :attr:`Config.epsilon_min`; γ grows linearly from
:attr:`Config.discount_start` (γ₀) to :attr:`Config.discount` (γ_max) over the first
:attr:`Config.discount_games` (100) games.

Further choices:

- ``w`` starts at 0 (every action ties: the first games are random play).
- The win rate that drives ε counts a draw as half a win (the learner's score).
- ``φ(s', ·)`` of every legal action of the next state is stored in the buffer (at most
  48 actions in DARK: 16 reveals and 4 moves of each of 8 pieces), so a replayed target
  uses the current ``w`` without recomputing features; a terminal ``s'`` stores none.
- Opponents (:attr:`Config.opponents`) are drawn per game; ``self`` plays the frozen
  weights, copied every :attr:`Config.self_sync_steps` steps, greedily.
- Checkpoints: the run state holds ``w``, the frozen copy, the buffer arrays and, in the
  header, the generator's state, the game in progress, ε, the counters and the recent
  results (resuming continues exactly); the playing checkpoint holds ``w`` (``float64[16]``).

**The shipped checkpoint** ``checkpoints/approxq.npz``: ``run_training(ApproxQLearner(
Config()), out, steps=200_000, seed=1, chunk_steps=10_000, eval_every=50_000,
eval_games=100, eval_opponents=("random",))`` (the default config), 267 s wall on a shared
2-core CPU (a second run with the same seed reproduced the first's metrics exactly);
``out/agent.npz`` copied. Against ``random``, 200 games (half first): 195 wins, 5 draws,
0 losses, score 0.9875; against ``greedy``: 0 / 200 / 0, score 0.5 (every game reaches the
no-removal draw). Evaluations during training (100 games vs random): 0.955 at 50k steps,
0.99 at 100k, 0.985 at 150k and 200k; ``w = 0`` (the untrained agent) plays at random.
At the end ε had reached its floor and the weights were still growing slowly (the
learning rate decays only as ``t^-0.25``): ``w`` = [8.75, -2.35, 3.17, -7.24, 20.04, -6.56,
-2.62, -2.51, 10.56, 1.98, 4.09, 1.00, 8.82, 8.14, -0.19, 4.24] in :data:`FEATURE_NAMES`
order: the own value share weighs most, then the best opportunity and the own piece
count; the opponent's revealed and value shares count against; ``is_reveal`` and
``is_move`` (one of them is 1 for every action) act together as a bias. Training against
``opponents="random=0.5,greedy=0.5"`` instead (150k steps, seed 1) did not help: 0.825
against random and 0.5 against greedy (100 games each) at the end.

>>> learner = ApproxQLearner(Config(batch_size=4))
>>> state = learner.init(seed=0)
>>> state, metrics = learner.advance(state, 10)
>>> learner.steps_done(state), metrics["buffer"]
(10, 10.0)
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from jungle_core import DARK, Rules, State, from_fen, score, to_fen
from jungle_train.common import (
    LOSS,
    TRAIN_SCORE,
    CheckpointError,
    ConfigError,
    config_to_json,
    load_checkpoint,
    parse_mix,
    save_checkpoint,
)
from jungle_train.tabular._features import FEATURE_NAMES, NUM_FEATURES, action_features
from jungle_train.tabular._shaping import (
    Policy,
    TrainingGame,
    best_action,
    rng_from_state,
    rng_state,
)

__all__ = ["FEATURE_NAMES", "KIND", "MAX_ACTIONS", "ApproxQAgent", "ApproxQLearner", "Config"]

KIND = "approxq"
SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints" / f"{KIND}.npz"
MAX_ACTIONS = 48
"""The most legal actions a DARK position has (16 reveals + 8 pieces x 4 moves)."""

Floats = npt.NDArray[np.float64]


@dataclasses.dataclass(frozen=True)
class Config:
    """Approximate Q-learning's settings (every field checked on construction)."""

    learning_rate: float = 0.05
    """η₀ of the learning rate η₀ / (1 + t)^0.25."""
    l2: float = 1e-4
    """L2 regularisation λ (the gradient adds λ w)."""
    huber_delta: float = 10.0
    """The Huber loss's threshold: TD errors beyond it count linearly."""
    discount: float = 0.95
    """γ_max, the discount after the first :attr:`discount_games` games."""
    discount_start: float = 0.5
    """γ₀, the discount of the first game."""
    discount_games: int = 100
    """Games over which γ grows from γ₀ to γ_max."""
    epsilon_start: float = 0.5
    """ε of the first game."""
    epsilon_min: float = 0.02
    """The floor of ε."""
    buffer_size: int = 5000
    """Replay buffer capacity (transitions)."""
    batch_size: int = 32
    """Minibatch size of each update."""
    opponents: str = "random"
    """The opponent mix (``random``, ``greedy``, ``self`` with weights)."""
    self_sync_steps: int = 10_000
    """Steps between refreshes of the frozen copy that ``self`` play meets."""
    recent_games: int = 50
    """Games in the recent win rate (drives ε)."""

    def __post_init__(self) -> None:
        parse_mix(self.opponents)
        for name in ("discount", "discount_start", "epsilon_start", "epsilon_min"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], not {getattr(self, name)}")
        if self.learning_rate <= 0 or self.l2 < 0 or self.huber_delta <= 0:
            raise ConfigError("learning_rate and huber_delta must be > 0, l2 >= 0")
        for name in (
            "discount_games",
            "buffer_size",
            "batch_size",
            "self_sync_steps",
            "recent_games",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, not {getattr(self, name)}")

    @property
    def mix(self) -> tuple[float, float, float]:
        """The normalised opponent weights (random, greedy, self)."""
        return parse_mix(self.opponents)

    def gamma(self, games: int) -> float:
        """The discount after ``games`` finished games.

        >>> Config().gamma(0), Config().gamma(50), Config().gamma(500)
        (0.5, 0.725, 0.95)
        """
        frac = min(1.0, games / self.discount_games)
        return self.discount_start + (self.discount - self.discount_start) * frac


@dataclasses.dataclass
class Buffer:
    """The replay buffer, a ring of ``capacity`` transitions (float32 storage)."""

    phi: npt.NDArray[np.float32]
    """``float32[N, 16]``: φ(s, a)."""
    reward: npt.NDArray[np.float32]
    """``float32[N]``."""
    done: npt.NDArray[np.bool_]
    """``bool[N]``: s' ended the game."""
    next_phi: npt.NDArray[np.float32]
    """``float32[N, 48, 16]``: φ(s', a') per legal a' (rows past ``next_count`` are 0)."""
    next_count: npt.NDArray[np.int8]
    """``int8[N]``: the legal actions of s' (0 when ``done``)."""
    position: int = 0
    size: int = 0

    @classmethod
    def empty(cls, capacity: int) -> Buffer:
        """An empty buffer."""
        return cls(
            np.zeros((capacity, NUM_FEATURES), np.float32),
            np.zeros(capacity, np.float32),
            np.zeros(capacity, np.bool_),
            np.zeros((capacity, MAX_ACTIONS, NUM_FEATURES), np.float32),
            np.zeros(capacity, np.int8),
        )

    def add(self, phi: Floats, reward: float, done: bool, next_phi: Floats | None) -> None:
        """Store one transition, overwriting the oldest when full."""
        i = self.position
        self.phi[i] = phi
        self.reward[i] = reward
        self.done[i] = done
        self.next_phi[i] = 0.0
        count = 0 if next_phi is None else len(next_phi)
        if next_phi is not None:
            self.next_phi[i, :count] = next_phi
        self.next_count[i] = count
        self.position = (i + 1) % len(self.reward)
        self.size = min(self.size + 1, len(self.reward))


@dataclasses.dataclass
class RunState:
    """An approximate Q-learning run (everything :meth:`ApproxQLearner.save` writes)."""

    w: Floats
    frozen: Floats
    buffer: Buffer
    rng: np.random.Generator
    game: TrainingGame
    steps: int = 0
    games: int = 0
    updates: int = 0
    epsilon: float = 0.5
    recent: deque[float] = dataclasses.field(default_factory=deque)
    cache: tuple[State, list[int], Floats] | None = None
    """The features of the current state (recomputed after a load; not saved)."""


def _policy(weights: Floats, epsilon: float = 0.0) -> Policy:
    def act(state: State, rng: np.random.Generator) -> int:
        actions, phi = action_features(state)
        values = phi @ weights
        return best_action(dict(zip(actions, values.tolist(), strict=True)), rng, epsilon)

    return act


class ApproxQLearner:
    """The approximate Q-learning :class:`jungle_train.common._run.Trainer` (kind ``"approxq"``)."""

    kind = KIND

    def __init__(self, config: Config | None = None, rules: Rules = DARK) -> None:
        self.config = config or Config()
        self.rules = rules

    def init(self, seed: int) -> RunState:
        """A fresh run: ``w = 0``, an empty buffer, the first game started."""
        c = self.config
        rng = np.random.default_rng(seed)
        w = np.zeros(NUM_FEATURES)
        frozen = w.copy()
        game = TrainingGame.start(rng, c.mix, _policy(frozen), self.rules)
        return RunState(w, frozen, Buffer.empty(c.buffer_size), rng, game, epsilon=c.epsilon_start)

    def _features(self, run: RunState, state: State) -> tuple[list[int], Floats]:
        if run.cache is not None and run.cache[0] is state:
            return run.cache[1], run.cache[2]
        actions, phi = action_features(state)
        run.cache = (state, actions, phi)
        return actions, phi

    def advance(self, state: RunState, steps: int) -> tuple[RunState, dict[str, Any]]:
        """Train ``steps`` learner decisions; the chunk's metrics: ``loss`` (Huber),
        ``td_error`` (mean ``|δ|``), ``epsilon``, ``gamma``, ``learning_rate``,
        ``reward`` (per decision), ``episode_length`` and ``train_score/<opponent>`` of
        the games finished, ``recent_score`` (what drives ε), ``games`` (so far),
        ``buffer`` (transitions stored) and ``weights``."""
        c = self.config
        run = state
        losses: list[float] = []
        td_errors: list[float] = []
        rewards: list[float] = []
        lengths: list[int] = []
        scores: dict[str, list[float]] = {}
        length = 0
        for _ in range(steps):
            game = run.game
            frozen = _policy(run.frozen)
            actions, phi = self._features(run, game.state)
            values = phi @ run.w
            q = dict(zip(actions, values.tolist(), strict=True))
            action = best_action(q, run.rng, run.epsilon)
            reward, after, done = game.play(action, run.rng, frozen)
            next_phi = None if done else self._features(run, after)[1]
            run.buffer.add(phi[actions.index(action)], reward, done, next_phi)
            loss, td = self._update(run)
            losses.append(loss)
            td_errors.append(td)
            rewards.append(reward)
            run.steps += 1
            length += 1
            if run.steps % c.self_sync_steps == 0:
                run.frozen = run.w.copy()
            if done:
                self._finish(run, after, game.learner)
                scores.setdefault(game.opponent, []).append(run.recent[-1])
                lengths.append(length)
                length = 0
                run.game = TrainingGame.start(run.rng, c.mix, frozen, self.rules)
        return run, {
            LOSS: float(np.mean(losses)),
            "td_error": float(np.mean(td_errors)),
            "epsilon": run.epsilon,
            "gamma": c.gamma(run.games),
            "learning_rate": c.learning_rate / (1 + run.updates) ** 0.25,
            "reward": float(np.mean(rewards)),
            "episode_length": float(np.mean(lengths)) if lengths else float("nan"),
            **{TRAIN_SCORE + o: float(np.mean(v)) for o, v in sorted(scores.items())},
            "recent_score": float(np.mean(run.recent)) if run.recent else 0.0,
            "games": run.games,
            "buffer": float(run.buffer.size),
            "weights": run.w.round(3).tolist(),
        }

    def _update(self, run: RunState) -> tuple[float, float]:
        """One gradient step on a minibatch; its (Huber loss, mean |TD error|)."""
        c = self.config
        b = run.buffer
        idx = run.rng.integers(b.size, size=min(c.batch_size, b.size))
        w = run.w
        phi = b.phi[idx].astype(np.float64)
        next_q = b.next_phi[idx].astype(np.float64) @ w
        valid = np.arange(MAX_ACTIONS)[None, :] < b.next_count[idx][:, None]
        best = np.where(valid, next_q, -np.inf).max(axis=1)
        best = np.where(b.done[idx] | (b.next_count[idx] == 0), 0.0, best)
        target = b.reward[idx].astype(np.float64) + c.gamma(run.games) * best
        delta = target - phi @ w
        clipped = np.clip(delta, -c.huber_delta, c.huber_delta)
        huber = np.where(
            np.abs(delta) <= c.huber_delta,
            0.5 * delta**2,
            c.huber_delta * (np.abs(delta) - 0.5 * c.huber_delta),
        )
        grad = -(clipped[:, None] * phi).mean(axis=0) + c.l2 * w
        lr = c.learning_rate / (1 + run.updates) ** 0.25
        run.w = w - lr * grad
        run.updates += 1
        return float(huber.mean()), float(np.abs(delta).mean())

    def _finish(self, run: RunState, final: State, learner: int) -> None:
        c = self.config
        run.games += 1
        run.recent.append(score(final, learner))
        while len(run.recent) > c.recent_games:
            run.recent.popleft()
        rate = float(np.mean(run.recent))
        factor = 0.999 if rate < 0.3 else 0.95 if rate > 0.6 else 0.995
        run.epsilon = max(c.epsilon_min, run.epsilon * factor)

    def steps_done(self, state: RunState) -> int:
        """Learner decisions trained so far."""
        return state.steps

    def save(self, state: RunState, path: str) -> None:
        """The whole run state (resumable exactly)."""
        b = state.buffer
        save_checkpoint(
            path,
            {
                "w": state.w,
                "frozen": state.frozen,
                "buffer/phi": b.phi,
                "buffer/reward": b.reward,
                "buffer/done": b.done,
                "buffer/next_phi": b.next_phi,
                "buffer/next_count": b.next_count,
            },
            kind=KIND,
            config=config_to_json(self.config),
            step=state.steps,
            rng=json.dumps(rng_state(state.rng)),
            game=[to_fen(state.game.state), state.game.learner, state.game.opponent],
            games=state.games,
            updates=state.updates,
            epsilon=state.epsilon,
            recent=list(state.recent),
            buffer_position=b.position,
            buffer_size=b.size,
        )

    def load(self, path: str) -> RunState:
        """A run state :meth:`save` wrote, refused (:class:`CheckpointError`) when it is
        another kind's or was written with another config."""
        ckpt = load_checkpoint(path, kind=KIND, config=config_to_json(self.config))
        a, meta = ckpt.arrays, ckpt.meta
        try:
            fen, learner, opponent = meta["game"]
            buffer = Buffer(
                a["buffer/phi"].copy(),
                a["buffer/reward"].copy(),
                a["buffer/done"].copy(),
                a["buffer/next_phi"].copy(),
                a["buffer/next_count"].copy(),
                int(meta["buffer_position"]),
                int(meta["buffer_size"]),
            )
            return RunState(
                a["w"].astype(np.float64),
                a["frozen"].astype(np.float64),
                buffer,
                rng_from_state(json.loads(meta["rng"])),
                TrainingGame(from_fen(fen, self.rules), int(learner), str(opponent)),
                steps=ckpt.step,
                games=int(meta["games"]),
                updates=int(meta["updates"]),
                epsilon=float(meta["epsilon"]),
                recent=deque(float(x) for x in meta["recent"]),
            )
        except (KeyError, ValueError, TypeError) as error:
            raise CheckpointError(f"{path}: not a {KIND} run state ({error})") from None

    def save_agent(self, state: RunState, path: str) -> None:
        """The playing checkpoint: ``w``."""
        save_checkpoint(
            path, {"w": state.w}, kind=KIND, config=config_to_json(self.config), step=state.steps
        )

    def agent(self, path: str) -> ApproxQAgent:
        """The playing agent of a checkpoint :meth:`save_agent` wrote."""
        return ApproxQAgent(self.rules, path)


class ApproxQAgent:
    """Plays ``argmax_a w · φ(s, a)`` over the legal actions (ties at random), exploring
    with probability ``epsilon``. ``path=""`` is the shipped checkpoint
    ``jungle_train/checkpoints/approxq.npz``.

    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> agent = ApproxQAgent(DARK)
    >>> agent.name, agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    ('approxq', True)
    """

    def __init__(self, rules: Rules, path: str = "", epsilon: float = 0.0) -> None:
        where = Path(path) if path else SHIPPED
        if not path and not SHIPPED.exists():
            raise CheckpointError(
                f"{SHIPPED}: the shipped approximate Q checkpoint is missing; make it with "
                f"`jungle train approxq --out DIR` and copy DIR/agent.npz to {SHIPPED}"
            )
        ckpt = load_checkpoint(where, kind=KIND)
        w = ckpt.arrays.get("w")
        if w is None or w.shape != (NUM_FEATURES,):
            raise CheckpointError(f"{where}: no weights w of shape ({NUM_FEATURES},)")
        self.w = w.astype(np.float64)
        self.rules = rules
        self.epsilon = float(epsilon)
        self.name = KIND if not path else f"{KIND}:path={path}"
        self._act = _policy(self.w, self.epsilon)

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The greedy legal action (ε-greedy when ``epsilon > 0``)."""
        return int(self._act(state, rng))
