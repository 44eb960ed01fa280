"""Tabular Q-learning on the pure DARK core.

``Q(s, a)`` lives in a table keyed by the hashable :class:`jungle_core.State`; one-step
Q-learning ``Q(s, a) += α (r + γ max_a' Q(s', a') - Q(s, a))`` (``r + 0`` at the end of
the game) with α = 0.1, γ = 0.95 (:attr:`Config.discount`, for the ablation over γ),
ε-greedy exploration with decay, the reward of :mod:`jungle_train.tabular._shaping`. A step is one
decision of the learner (its ply and the opponent's reply).

The choices beyond the textbook algorithm:

- **The key** is the state with its counters normalised: ``ply``,
  ``plies_since_removal`` and ``history`` set to 0 / ``()``, so the key is the board, the
  side to move and the face-down set. ``ply`` alone would make nearly every DARK state
  unique; the counters only decide the no-removal draw, whose reward is 0 either way.
- **An unseen entry** ``Q(s, a)`` (never updated) is the immediate expected reward of the
  learner's own ply, :func:`jungle_train.tabular._shaping.expected_ply_reward` (the step cost, the
  expected material change and shaping, the end of the game if the ply ends it). DARK has
  far more states than a game visits, so most positions a trained agent meets are unseen:
  this initialisation makes them a one-ply look-ahead on the training reward instead of
  random play, and the table corrects it where experience exists. Only updated entries are
  stored.
- **Exploration**: ε starts at :attr:`Config.epsilon_start` and is multiplied by
  :attr:`Config.epsilon_decay` after every finished game, down to
  :attr:`Config.epsilon_min`. Ties between equal values are broken at random.
- **Opponents** (:attr:`Config.opponents`, a :func:`jungle_train.common._opponents.parse_mix`
  mix) are drawn per game; ``self`` plays a frozen copy of the table, refreshed every
  :attr:`Config.self_sync_steps` steps, greedily (ε = 0).
- **Checkpoints** hold the table as arrays (never pickle): ``fens`` (``bytes[S]``, each
  key's position string, rebuilt with :func:`jungle_core.from_fen`), ``entry_state``
  (``int32[E]``, index into ``fens``), ``entry_action`` (``int16[E]``), ``entry_value``
  (``float64[E]`` in the run state, ``float32[E]`` in the playing checkpoint); the run
  state adds the frozen copy (``frozen/...``), and in the header the generator's state,
  the game in progress, ε, the game count and the recent results, so a resumed run
  continues exactly.

**The shipped checkpoint** ``checkpoints/qlearn.npz`` (116,358 table states, 7.5 MB):
``run_training(QLearner(Config()), out, steps=120_000, seed=1, chunk_steps=10_000,
eval_every=40_000, eval_games=100, eval_opponents=("random",))`` (the default config),
242 s wall on a shared 2-core CPU (a second run wrote a byte-identical ``agent.npz``);
``out/agent.npz`` copied. Against ``random``, 200 games
(half first): 179 wins, 21 draws, 0 losses, score 0.9475; against ``greedy``: 24 / 176 / 0,
score 0.56. Evaluations during training (100 games vs random): 0.925 at 40k steps, 0.965
at 80k, 0.92 at 120k. What limits it: an empty table (the prior alone) already scores
172 / 28 / 0 (0.93) against random and 27 / 173 / 0 (0.5675) against greedy, because in
evaluation games only about 2 % of the agent's decisions meet a state the table holds
(mostly the first few plies): DARK's chance-driven state space is far larger than what a
table can cover, so the table adds little beyond the reward-greedy prior. The draws are
games the one-ply look-ahead cannot finish (the no-removal limit).

>>> import numpy as np
>>> learner = QLearner(Config())
>>> state = learner.init(seed=0)
>>> state, metrics = learner.advance(state, 20)
>>> learner.steps_done(state), metrics["loss"] >= 0.0
(20, True)
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from jungle_core import DARK, Rules, State, from_fen, legal_actions, score, to_fen
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
from jungle_train.tabular._shaping import (
    Policy,
    TrainingGame,
    best_action,
    expected_ply_reward,
    rng_from_state,
    rng_state,
)

__all__ = ["KIND", "Config", "QLearner", "QTableAgent", "Table", "table_key"]

KIND = "qlearn"
SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints" / f"{KIND}.npz"

Table = dict[State, dict[int, float]]
"""The Q-table: normalised state -> {action: Q} (updated entries only)."""


@dataclasses.dataclass(frozen=True)
class Config:
    """Tabular Q-learning's settings (every field checked on construction)."""

    alpha: float = 0.1
    """Learning rate α."""
    discount: float = 0.95
    """Discount γ."""
    epsilon_start: float = 0.3
    """ε of the first game."""
    epsilon_decay: float = 0.999
    """ε is multiplied by this after each finished game."""
    epsilon_min: float = 0.05
    """The floor of ε."""
    opponents: str = "random"
    """The opponent mix (``random``, ``greedy``, ``self`` with weights)."""
    self_sync_steps: int = 20_000
    """Steps between refreshes of the frozen copy that ``self`` play meets."""
    recent_games: int = 100
    """Games in the recent win rate (a metric)."""

    def __post_init__(self) -> None:
        parse_mix(self.opponents)
        if not 0.0 < self.alpha <= 1.0:
            raise ConfigError(f"alpha must be in (0, 1], not {self.alpha}")
        if not 0.0 <= self.discount <= 1.0:
            raise ConfigError(f"discount must be in [0, 1], not {self.discount}")
        for name in ("epsilon_start", "epsilon_decay", "epsilon_min"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], not {getattr(self, name)}")
        if self.self_sync_steps < 1 or self.recent_games < 1:
            raise ConfigError("self_sync_steps and recent_games must be >= 1")

    @property
    def mix(self) -> tuple[float, float, float]:
        """The normalised opponent weights (random, greedy, self)."""
        return parse_mix(self.opponents)


def table_key(state: State) -> State:
    """The table's key of a state: its counters normalised (module docstring).

    >>> from jungle_core import from_fen
    >>> table_key(from_fen("8/8/8/8/8/8/Ew6 0 7 31 - -")).ply
    0
    """
    return State(state.rules, state.board, state.to_move, state.face_down_mask)


class _Values:
    """Q of every legal action: the table's entry where there is one, the prior (the
    immediate expected reward, memoised per key) otherwise."""

    def __init__(self) -> None:
        self.prior: dict[State, dict[int, float]] = {}

    def of(self, table: Table, state: State) -> tuple[State, dict[int, float]]:
        key = table_key(state)
        prior = self.prior.get(key)
        if prior is None:
            if len(self.prior) > 200_000:
                self.prior.clear()
            prior = self.prior[key] = {
                a: expected_ply_reward(state, a) for a in legal_actions(state)
            }
        entry = table.get(key)
        if not entry:
            return key, dict(prior)
        return key, {a: entry.get(a, v) for a, v in prior.items()}


def _table_arrays(table: Table, dtype: Any, prefix: str = "") -> dict[str, np.ndarray[Any, Any]]:
    keys = [k for k, entry in table.items() if entry]
    fens = [to_fen(k).encode() for k in keys]
    index = [i for i, k in enumerate(keys) for _ in table[k]]
    actions = [a for k in keys for a in table[k]]
    values = [v for k in keys for v in table[k].values()]
    return {
        f"{prefix}fens": np.array(fens, dtype=bytes) if fens else np.zeros(0, dtype="S1"),
        f"{prefix}entry_state": np.array(index, dtype=np.int32),
        f"{prefix}entry_action": np.array(actions, dtype=np.int16),
        f"{prefix}entry_value": np.array(values, dtype=dtype),
    }


def _entries(
    arrays: Mapping[str, np.ndarray[Any, Any]], where: str, prefix: str = ""
) -> dict[str, dict[int, float]]:
    """A checkpoint's table keyed by position strings."""
    try:
        fens = [f.decode() for f in arrays[f"{prefix}fens"].tolist()]
        index = arrays[f"{prefix}entry_state"].tolist()
        actions = arrays[f"{prefix}entry_action"].tolist()
        values = arrays[f"{prefix}entry_value"].astype(np.float64).tolist()
        table: dict[str, dict[int, float]] = {}
        for i, a, v in zip(index, actions, values, strict=True):
            table.setdefault(fens[i], {})[a] = v
    except (KeyError, ValueError, IndexError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{where}: not a Q-table checkpoint ({error})") from None
    return table


def _table_from(
    arrays: Mapping[str, np.ndarray[Any, Any]], rules: Rules, where: str, prefix: str = ""
) -> Table:
    """A checkpoint's table keyed by states (each position string checked by ``from_fen``)."""
    entries = _entries(arrays, where, prefix)
    try:
        return {from_fen(fen, rules): entry for fen, entry in entries.items()}
    except ValueError as error:
        raise CheckpointError(f"{where}: a bad position in the Q-table ({error})") from None


@dataclasses.dataclass
class RunState:
    """A tabular Q-learning run (everything :meth:`QLearner.save` writes)."""

    table: Table
    frozen: Table
    rng: np.random.Generator
    game: TrainingGame
    steps: int = 0
    games: int = 0
    epsilon: float = 0.3
    recent: deque[float] = dataclasses.field(default_factory=deque)
    """Scores (1 / 0.5 / 0) of the latest finished games."""


class QLearner:
    """The tabular Q-learning :class:`jungle_train.common._run.Trainer` (kind ``"qlearn"``)."""

    kind = KIND

    def __init__(self, config: Config | None = None, rules: Rules = DARK) -> None:
        self.config = config or Config()
        self.rules = rules
        self._values = _Values()

    def _frozen_policy(self, run: RunState) -> Policy:
        def policy(state: State, rng: np.random.Generator) -> int:
            return best_action(self._values.of(run.frozen, state)[1], rng)

        return policy

    def init(self, seed: int) -> RunState:
        """A fresh run: an empty table, the first game started."""
        rng = np.random.default_rng(seed)
        frozen: Table = {}

        def policy(state: State, rng: np.random.Generator) -> int:
            return best_action(self._values.of(frozen, state)[1], rng)

        game = TrainingGame.start(rng, self.config.mix, policy, self.rules)
        return RunState({}, frozen, rng, game, epsilon=self.config.epsilon_start)

    def advance(self, state: RunState, steps: int) -> tuple[RunState, dict[str, Any]]:
        """Train ``steps`` learner decisions; the chunk's metrics: ``loss`` (the mean of
        ½δ², which each update descends by a step of α), ``td_error`` (mean ``|δ|``),
        ``epsilon``, ``reward`` (per decision), ``episode_length`` and
        ``train_score/<opponent>`` of the games finished, ``games`` (so far) and
        ``table_states``."""
        c = self.config
        run = state
        frozen = self._frozen_policy(run)
        td_errors: list[float] = []
        rewards: list[float] = []
        lengths: list[int] = []
        scores: dict[str, list[float]] = {}
        length = 0
        for _ in range(steps):
            game = run.game
            key, values = self._values.of(run.table, game.state)
            action = best_action(values, run.rng, run.epsilon)
            reward, after, done = game.play(action, run.rng, frozen)
            target = reward
            if not done:
                target += c.discount * max(self._values.of(run.table, after)[1].values())
            error = target - values[action]
            run.table.setdefault(key, {})[action] = values[action] + c.alpha * error
            td_errors.append(error)
            rewards.append(reward)
            run.steps += 1
            length += 1
            if run.steps % c.self_sync_steps == 0:
                run.frozen = {k: dict(v) for k, v in run.table.items()}
            if done:
                self._finish(run, after, game.learner)
                scores.setdefault(game.opponent, []).append(run.recent[-1])
                lengths.append(length)
                length = 0
                run.game = TrainingGame.start(run.rng, c.mix, frozen, self.rules)
        errors = np.array(td_errors)
        return run, {
            LOSS: float(np.mean(0.5 * errors**2)),
            "td_error": float(np.mean(np.abs(errors))),
            "epsilon": run.epsilon,
            "reward": float(np.mean(rewards)),
            "episode_length": float(np.mean(lengths)) if lengths else float("nan"),
            **{TRAIN_SCORE + o: float(np.mean(v)) for o, v in sorted(scores.items())},
            "games": run.games,
            "table_states": len(run.table),
        }

    def _finish(self, run: RunState, final: State, learner: int) -> None:
        run.games += 1
        run.recent.append(score(final, learner))
        while len(run.recent) > self.config.recent_games:
            run.recent.popleft()
        run.epsilon = max(self.config.epsilon_min, run.epsilon * self.config.epsilon_decay)

    def steps_done(self, state: RunState) -> int:
        """Learner decisions trained so far."""
        return state.steps

    def save(self, state: RunState, path: str) -> None:
        """The whole run state (resumable exactly)."""
        arrays = {
            **_table_arrays(state.table, np.float64),
            **_table_arrays(state.frozen, np.float64, "frozen/"),
        }
        save_checkpoint(
            path,
            arrays,
            kind=KIND,
            config=config_to_json(self.config),
            step=state.steps,
            rng=json.dumps(rng_state(state.rng)),
            game=[to_fen(state.game.state), state.game.learner, state.game.opponent],
            games=state.games,
            epsilon=state.epsilon,
            recent=list(state.recent),
        )

    def load(self, path: str) -> RunState:
        """A run state :meth:`save` wrote, refused (:class:`CheckpointError`) when it is
        another kind's or was written with another config."""
        ckpt = load_checkpoint(path, kind=KIND, config=config_to_json(self.config))
        meta = ckpt.meta
        try:
            fen, learner, opponent = meta["game"]
            return RunState(
                _table_from(ckpt.arrays, self.rules, path),
                _table_from(ckpt.arrays, self.rules, path, "frozen/"),
                rng_from_state(json.loads(meta["rng"])),
                TrainingGame(from_fen(fen, self.rules), int(learner), str(opponent)),
                steps=ckpt.step,
                games=int(meta["games"]),
                epsilon=float(meta["epsilon"]),
                recent=deque(float(x) for x in meta["recent"]),
            )
        except (KeyError, ValueError, TypeError) as error:
            raise CheckpointError(f"{path}: not a {KIND} run state ({error})") from None

    def save_agent(self, state: RunState, path: str) -> None:
        """The playing checkpoint: the table (values as float32)."""
        save_checkpoint(
            path,
            _table_arrays(state.table, np.float32),
            kind=KIND,
            config=config_to_json(self.config),
            step=state.steps,
        )

    def agent(self, path: str) -> QTableAgent:
        """The playing agent of a checkpoint :meth:`save_agent` wrote."""
        return QTableAgent(self.rules, path)


class QTableAgent:
    """Plays the greedy action of a Q-table checkpoint (unseen entries: the immediate
    expected reward, as in training); explores with probability ``epsilon``.

    ``path=""`` is the shipped checkpoint ``jungle_train/checkpoints/qlearn.npz``.

    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> agent = QTableAgent(DARK)
    >>> agent.name, agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    ('qlearn', True)
    """

    def __init__(self, rules: Rules, path: str = "", epsilon: float = 0.0) -> None:
        where = Path(path) if path else SHIPPED
        if not path and not SHIPPED.exists():
            raise CheckpointError(
                f"{SHIPPED}: the shipped tabular Q checkpoint is missing; make it with "
                f"`jungle train qlearn --out DIR` and copy DIR/agent.npz to {SHIPPED}"
            )
        ckpt = load_checkpoint(where, kind=KIND)
        self.table = _entries(ckpt.arrays, str(where))
        """The table keyed by the position strings of :func:`table_key` (looked up per
        decision, so loading a large table builds no states)."""
        self.rules = rules
        self.epsilon = float(epsilon)
        self.name = KIND if not path else f"{KIND}:path={path}"

    def action_values(self, state: State) -> dict[int, float]:
        """Q of every legal action: the table's entry, else the immediate expected reward."""
        entry = self.table.get(to_fen(table_key(state)), {})
        return {
            a: entry[a] if a in entry else expected_ply_reward(state, a)
            for a in legal_actions(state)
        }

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The greedy legal action (ε-greedy when ``epsilon > 0``)."""
        return best_action(self.action_values(state), rng, self.epsilon)
