"""One training loop around every learner: checkpoints, metrics, evaluation, resume.

A learner implements :class:`Trainer` (its own state and update; the DQN's is a jitted
JAX loop, tabular and approximate Q run on the pure core). :func:`run_training` drives it
in chunks of steps (by default at least :data:`PROGRESS_POINTS` of them, so a short run
reports its progress several times) and, after each chunk:

1. appends the chunk's metrics to ``OUT/metrics.jsonl`` (:mod:`jungle_train.common._metrics`):
   the learner's own, and ``decisions_per_s`` (the chunk's steps per second, the
   seconds JAX spent compiling left out);
2. every ``eval_every`` steps, writes the playing checkpoint ``OUT/agent.npz`` and plays
   evaluation games against each opponent spec through the arena's game loop (the
   learner plays exactly as ``make_agent("<kind>:path=OUT/agent.npz")`` would), and logs
   the scores as ``score/<opponent>``;
3. writes the whole run state to ``OUT/run.npz`` atomically (a resumable checkpoint);
4. calls ``progress`` with the steps done and the line it logged.

``resume=True`` continues from ``OUT/run.npz`` (refused if it was written by another
kind of learner or another config) and drops the metrics lines of steps after it, so a
run killed at any moment (SIGKILL included) resumes from its last checkpoint and ends at
the same step count with a parseable metrics file.

Across processes (``jax.distributed``, :mod:`jungle_train.common._distributed`) every process
calls :func:`run_training` with the same arguments and trains; process 0 alone reads and
writes ``OUT`` (checkpoints, metrics, evaluation, ``progress``), so ``OUT`` need only
exist on its host.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from jungle_agents import Agent, make_agent
from jungle_agents.arena import game_seed, play_game
from jungle_core import DARK, Rules
from jungle_train.common._checkpoint import atomic_write
from jungle_train.common._config import config_to_json
from jungle_train.common._distributed import agree, is_main
from jungle_train.common._errors import CheckpointError, ConfigError
from jungle_train.common._metrics import COMPILE_S, DECISIONS_PER_S, SCORE, MetricsLog, read_metrics

__all__ = ["CHUNK_STEPS", "PROGRESS_POINTS", "Progress", "Trainer", "evaluate", "run_training"]

RUN_FILE = "run.npz"
AGENT_FILE = "agent.npz"
METRICS_FILE = "metrics.jsonl"
CHUNK_STEPS = 100_000
"""The most steps of a chunk when :func:`run_training` chooses the chunks."""
PROGRESS_POINTS = 8
"""The fewest chunks (metrics lines, checkpoints, progress reports) a run is cut into
when :func:`run_training` chooses the chunks."""


class Trainer(Protocol):
    """What :func:`run_training` needs of a learner."""

    kind: str
    """The agent kind its checkpoints play as (``"dqn"``, ``"qlearn"``, ``"approxq"``)."""
    config: Any
    """The learner's frozen config dataclass."""

    def init(self, seed: int) -> Any:
        """A fresh run state for ``seed``."""
        ...

    def advance(self, state: Any, steps: int) -> tuple[Any, dict[str, Any]]:
        """Train for about ``steps`` environment steps (at least one); the new state and
        the metrics of this chunk (plain floats, in the names of
        :mod:`jungle_train.common._metrics`: ``loss`` among them, and ``compile_s`` where some
        of the chunk's time went to compiling)."""
        ...

    def steps_done(self, state: Any) -> int:
        """Environment steps trained so far."""
        ...

    def save(self, state: Any, path: str) -> None:
        """Write the whole run state (resumable) with :func:`save_checkpoint`."""
        ...

    def load(self, path: str) -> Any:
        """Read a run state :meth:`save` wrote; :class:`CheckpointError` when it is not
        this learner's with this config."""
        ...

    def save_agent(self, state: Any, path: str) -> None:
        """Write the playing checkpoint (what ``make_agent("<kind>:path=...")`` loads)."""
        ...

    def agent(self, path: str) -> Agent:
        """The playing agent of a checkpoint :meth:`save_agent` wrote."""
        ...


Progress = Callable[[int, int, dict[str, Any]], None]
"""``progress(steps done, steps in all, the latest metrics line)``."""


def evaluate(
    agent: Agent,
    opponent: str,
    games: int,
    *,
    rules: Rules = DARK,
    seed: int = 0,
) -> dict[str, float]:
    """Play ``games`` games of ``agent`` against the agent spec ``opponent`` (half with
    each first, seeded as the arena seeds a match) in this process; the agent's
    ``score`` (wins + draws / 2) / games, and ``wins``, ``draws``, ``losses``.

    >>> from jungle_core import DARK
    >>> r = evaluate(make_agent("greedy", DARK), "random", 2)
    >>> r["wins"] + r["draws"] + r["losses"]
    2.0
    """
    other = make_agent(opponent, rules)
    wins = draws = losses = 0
    for index in range(games):
        first = index % 2 == 0
        players = (agent, other) if first else (other, agent)
        record = play_game(rules, *players, game_seed(seed, agent.name, opponent, index))
        me = 0 if first else 1
        if record.winner is None:
            draws += 1
        elif record.winner == me:
            wins += 1
        else:
            losses += 1
    return {
        "score": (wins + draws / 2) / games,
        "wins": float(wins),
        "draws": float(draws),
        "losses": float(losses),
    }


def run_training(
    trainer: Trainer,
    out: str | os.PathLike[str],
    *,
    steps: int,
    seed: int = 0,
    resume: bool = False,
    chunk_steps: int | None = None,
    eval_every: int = 0,
    eval_games: int = 20,
    eval_opponents: Sequence[str] = ("random", "greedy"),
    progress: Progress | None = None,
) -> Any:
    """Train ``trainer`` to ``steps`` environment steps, writing into folder ``out``
    (see the module docstring); returns the final run state.

    Without ``resume``, an ``out`` that already holds a run is refused (so a run is
    never overwritten by mistake). ``eval_every=0`` evaluates only at the end.
    ``chunk_steps=None`` cuts the steps left into at least :data:`PROGRESS_POINTS`
    chunks of at most :data:`CHUNK_STEPS` steps.
    """
    folder = Path(out)
    run_path = folder / RUN_FILE
    for name, value, least in (
        ("steps", steps, 1),
        ("eval_games", eval_games, 0),
        ("eval_every", eval_every, 0),
        ("chunk_steps", 1 if chunk_steps is None else chunk_steps, 1),
    ):
        if value < least:
            raise ConfigError(f"{name} must be >= {least}, not {value}")
    # across processes (jax.distributed) process 0 alone reads and writes the folder,
    # and tells the others whether the run resumes
    main = is_main()
    there = main and run_path.exists()
    if not agree(int(not there or resume)):
        raise CheckpointError(
            f"{run_path}: a run is already there; pass resume (--resume) to continue it, "
            "or choose another output folder"
        )
    log: MetricsLog | None = None
    if main:
        folder.mkdir(parents=True, exist_ok=True)
        config_json = config_to_json(trainer.config)
        header = {"kind": trainer.kind, "seed": seed, "config": config_json}
        atomic_write(folder / "config.json", (json.dumps(header, indent=1) + "\n").encode())
        log = MetricsLog(folder / METRICS_FILE)
    if agree(int(resume and there)):
        state = trainer.load(str(run_path))
        if log is not None:
            log.truncate_after(trainer.steps_done(state))
    else:
        state = trainer.init(seed)
        if log is not None:
            log.truncate_after(-1)
    done = trainer.steps_done(state)
    elapsed = _last_time(folder / METRICS_FILE) if main else 0.0
    next_eval = (done // eval_every + 1) * eval_every if eval_every > 0 else steps
    if chunk_steps is None:
        chunk_steps = min(CHUNK_STEPS, max(1, math.ceil((steps - done) / PROGRESS_POINTS)))
    try:
        while done < steps:
            start = time.perf_counter()
            state, metrics = trainer.advance(state, min(chunk_steps, steps - done))
            new_done = trainer.steps_done(state)
            seconds = time.perf_counter() - start
            elapsed += seconds
            working = max(seconds - float(metrics.get(COMPILE_S, 0.0)), 1e-9)
            line: dict[str, Any] = {
                "step": new_done,
                "time": round(elapsed, 3),
                DECISIONS_PER_S: (new_done - done) / working,
                **metrics,
            }
            done = new_done
            if done >= next_eval or done >= steps:
                agent_path = folder / AGENT_FILE
                trainer.save_agent(state, str(agent_path))
                if main and eval_games > 0 and eval_opponents:
                    agent = trainer.agent(str(agent_path))
                    for opp in eval_opponents:
                        line[SCORE + opp] = evaluate(agent, opp, eval_games, seed=done)["score"]
                while next_eval <= done:
                    next_eval += eval_every if eval_every > 0 else steps
            if log is not None:
                log.append(line)
            trainer.save(state, str(run_path))
            if progress is not None and main:
                progress(done, steps, line)
    finally:
        if log is not None:
            log.close()
    return state


def _last_time(path: Path) -> float:
    lines = read_metrics(path)
    return float(lines[-1].get("time", 0.0)) if lines else 0.0
