"""The DQN's runs: :func:`make_train` (a whole run in one jitted function) and
:class:`DQNTrainer` (the same rounds in chunks for ``jungle train dqn``), both over the
learner's :class:`jungle_train.dqn._learner.Parts` through the one trainer of every
jitted learner (:class:`jungle_train.jitted.JaxRoundTrainer`), which runs the chunks,
writes the checkpoints (process 0 alone across processes) and resumes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jungle_core import DARK
from jungle_train.common import LOSS, TRAIN_SCORE
from jungle_train.dqn._config import KIND, Config
from jungle_train.dqn._learner import Parts
from jungle_train.dqn._rollout import GAME_KINDS, RunnerState
from jungle_train.jitted import JaxRoundTrainer
from jungle_train.players import DQNAgent

__all__ = ["DQNTrainer", "make_train", "summarize_rounds"]


class DQNTrainer(JaxRoundTrainer[Parts]):
    """:class:`jungle_train.common.Trainer` for the DQN: the rounds of :func:`make_train`,
    compiled once and run a chunk at a time (same network as one ``train(key)`` call).
    Checkpoints hold the whole run (network, target, self-play copy, Adam, replay, games,
    key); the playing checkpoint holds the online network."""

    kind = KIND

    @classmethod
    def make_parts(cls, config: Config) -> Parts:
        """:class:`jungle_train.dqn._learner.Parts` on DARK."""
        return Parts(config, DARK)

    def summarize(self, history: list[dict[str, Any]]) -> dict[str, float]:
        """:func:`summarize_rounds`."""
        return summarize_rounds(history)

    def agent(self, path: str) -> DQNAgent:
        """The agent that plays from a checkpoint :meth:`save_agent` wrote."""
        return DQNAgent(self._parts.env.rules, path)


def make_train(config: Config) -> Callable[[jax.Array], tuple[RunnerState, dict[str, Any]]]:
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
    return DQNTrainer.train_function(config)


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
    for name in GAME_KINDS:
        games = total.get(f"games_{name}", 0.0)
        if games:
            out[TRAIN_SCORE + name] = total[f"points_{name}"] / games
            out[f"win_rate/{name}"] = total[f"wins_{name}"] / games
    return out
