"""Every learner's metrics under the common names, their plot with no empty panel (old
runs' files included), the rate and time left with compile time left out, and the
progress points of a short run."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from jungle_cli._progress import Eta, TrainProgress
from jungle_train.common._metrics import COMPILE_S, DECISIONS_PER_S, LOSS, read_metrics, upgrade
from jungle_train.common._plots import panels, plot_training, training_figure
from jungle_train.common._run import PROGRESS_POINTS, Trainer, run_training
from tests._requires import needs_jax


def _qlearn() -> tuple[Trainer, int]:
    from jungle_train.tabular.qlearn import Config, QLearner

    return QLearner(Config()), 40


def _approxq() -> tuple[Trainer, int]:
    from jungle_train.tabular.approxq import ApproxQLearner, Config

    return ApproxQLearner(Config(batch_size=4)), 40


def _dqn() -> tuple[Trainer, int]:
    from jungle_train.dqn import DQNTrainer
    from tests._dqn import LIGHT

    return DQNTrainer(LIGHT), 2 * LIGHT.steps_per_round


def _value() -> tuple[Trainer, int]:
    from jungle_train.value import CONFIGS, ValueTrainer

    return ValueTrainer(CONFIGS["tiny"]), 2 * CONFIGS["tiny"].steps_per_round


def _azero() -> tuple[Trainer, int]:
    from jungle_train.azero import TINY_CONFIG, AZeroTrainer

    return AZeroTrainer(TINY_CONFIG), 2 * TINY_CONFIG.steps_per_round


LEARNERS: dict[str, Callable[[], tuple[Trainer, int]]] = {
    "qlearn": _qlearn,
    "approxq": _approxq,
    "dqn": _dqn,
    "value": _value,
    "azero": _azero,
}
JAX_LEARNERS = {"dqn", "value", "azero"}


def _empty_axes(fig: Figure) -> list[str]:
    """The titles of the figure's axes that draw nothing."""
    empty = []
    for ax in fig.axes:
        drawn = [line for line in ax.lines if np.asarray(line.get_xdata()).size > 0]
        if not drawn and not ax.collections:
            empty.append(ax.get_title())
    return empty


@pytest.fixture
def figure_of() -> Iterator[Callable[[Path], Figure]]:
    made: list[Figure] = []

    def make(run: Path) -> Figure:
        made.append(training_figure(run))
        return made[-1]

    yield make
    for fig in made:
        plt.close(fig)


@pytest.mark.parametrize(
    "kind",
    [pytest.param(k, marks=needs_jax) if k in JAX_LEARNERS else k for k in LEARNERS],
)
def test_every_learner_writes_the_common_metrics_and_plots_fully(
    kind: str, tmp_path: Path, figure_of: Callable[[Path], Figure]
) -> None:
    trainer, steps = LEARNERS[kind]()
    out = tmp_path / kind
    run_training(trainer, out, steps=steps, eval_games=2, eval_opponents=("random",))
    lines = read_metrics(out / "metrics.jsonl")
    assert len(lines) >= 2
    for line in lines:
        assert line[DECISIONS_PER_S] > 0
    assert any(isinstance(m.get(LOSS), float) and math.isfinite(m[LOSS]) for m in lines)
    assert 0.0 <= lines[-1]["score/random"] <= 1.0
    assert not any(name.startswith(("score_", "eval", "steps_per")) for m in lines for name in m)
    fig = figure_of(out)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:3] == ["evaluation score (arena games)", "loss", "decisions per second"]
    assert _empty_axes(fig) == []
    assert len(fig.axes) == len(panels(lines))


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


OLD_RUNS: dict[str, list[dict[str, Any]]] = {
    "dqn": [
        {"step": s, "time": s / 10, "steps_per_second": 900.0, "loss": 1 / s, "td_error": 0.5,
         "reward": 0.1, "epsilon": 0.5, "episodes": 3.0, "episode_length": 40.0,
         "score_random": 0.6, "win_rate_random": 0.5, "score_endgame": 0.7,
         **({"eval": {"random": 0.8, "greedy": 0.4}} if s == 200 else {})}
        for s in (100, 200)
    ],
    "qlearn": [
        {"step": s, "time": s / 10, "steps_per_second": 90.0, "td_error": 0.3, "epsilon": 0.2,
         "mean_reward": 0.05, "episode_length": None, "win_rate": 0.5, "games": 3,
         "table_states": 40, "eval": {"random": 0.9}}
        for s in (30, 60)
    ],
    "azero": [
        {"step": s, "time": s / 10, "steps_per_second": 50.0, "games": 2.0, "root_value": 0.1,
         "policy_loss": None if s == 16 else 5.0, "value_loss": 0.5, "afterstate_loss": 0.5,
         "value_targets": 0.3, "game_length": 60.0, "loss": None if s == 16 else 6.0,
         "episode_length": 60.0, "first_win_rate": 0.5, "draw_rate": 0.5, "score_random": 1.0}
        for s in (16, 32)
    ],
}  # fmt: skip
"""Metrics files as runs wrote them before the common names."""


@pytest.mark.parametrize("kind", sorted(OLD_RUNS))
def test_old_runs_plot_under_todays_names(
    kind: str, tmp_path: Path, figure_of: Callable[[Path], Figure]
) -> None:
    _write(tmp_path / "metrics.jsonl", OLD_RUNS[kind])
    lines = read_metrics(tmp_path / "metrics.jsonl")
    old_names = {"eval", "steps_per_second", "mean_reward", "win_rate", "game_length"}
    assert not any(
        n in old_names or n.startswith(("score_", "win_rate_")) for m in lines for n in m
    )
    assert all(DECISIONS_PER_S in m for m in lines)
    fig = figure_of(tmp_path)
    titles = [ax.get_title() for ax in fig.axes]
    common = ["evaluation score (arena games)", "loss", "decisions per second"]
    had = [t for t in common if t in titles]
    assert titles[: len(had)] == had and "decisions per second" in had
    assert ("evaluation score (arena games)" in had) == any("eval" in m for m in OLD_RUNS[kind])
    assert _empty_axes(fig) == []
    assert plot_training(tmp_path).stat().st_size > 1000


def test_upgrade_translates_each_old_name_and_keeps_todays() -> None:
    old = {"step": 5, "steps_per_second": 1.0, "mean_reward": 0.1, "win_rate": 0.5,
           "game_length": 9.0, "score_self": 0.4, "win_rate_greedy": 0.2,
           "eval": {"greedy": 0.3}}  # fmt: skip
    assert upgrade(old) == {
        "step": 5,
        DECISIONS_PER_S: 1.0,
        "reward": 0.1,
        "recent_score": 0.5,
        "episode_length": 9.0,
        "train_score/self": 0.4,
        "win_rate/greedy": 0.2,
        "score/greedy": 0.3,
    }
    both = {"game_length": 1.0, "episode_length": 2.0}
    assert upgrade(both) == {"episode_length": 2.0}
    assert upgrade(upgrade(old)) == upgrade(old)


def test_resuming_an_old_run_rewrites_its_lines_in_todays_names(tmp_path: Path) -> None:
    from jungle_train.common._metrics import MetricsLog

    _write(tmp_path / "metrics.jsonl", OLD_RUNS["qlearn"])
    log = MetricsLog(tmp_path / "metrics.jsonl")
    log.truncate_after(30)
    log.close()
    raw = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in raw] == [30]
    assert {"decisions_per_s", "reward", "recent_score", "score/random"} <= set(raw[0])


def test_a_file_without_metrics_is_refused_by_name(tmp_path: Path) -> None:
    _write(tmp_path / "metrics.jsonl", [{"step": 1, "time": 0.1}])
    with pytest.raises(ValueError, match=r"metrics\.jsonl: no metrics to plot"):
        training_figure(tmp_path)


# ------------------------------------------------------------- rate and time left


@needs_jax
def test_compile_time_is_left_out_of_the_rate(tmp_path: Path) -> None:
    from jungle_train.value import CONFIGS, ValueTrainer

    config = CONFIGS["tiny"]
    run_training(
        ValueTrainer(config),
        tmp_path,
        steps=2 * config.steps_per_round,
        chunk_steps=config.steps_per_round,
        eval_games=0,
    )
    first, second = read_metrics(tmp_path / "metrics.jsonl")
    assert first[COMPILE_S] > 0 and COMPILE_S not in second  # compiled once, in chunk 1
    working = first["time"] - first[COMPILE_S]
    assert first[DECISIONS_PER_S] == pytest.approx(config.steps_per_round / working, rel=0.05)


def test_eta_leaves_the_first_chunk_out() -> None:
    eta = Eta()
    eta.start(0.0, 0)
    assert math.isnan(eta.left(100.0, 10, 100))  # 10 steps, 99 s of them compiling
    assert eta.left(101.0, 20, 100) == pytest.approx(8.0)  # 10 steps a second since
    assert eta.left(103.0, 40, 100) == pytest.approx(6.0)
    assert eta.left(110.0, 100, 100) == 0.0
    resumed = Eta()
    resumed.start(0.0, 500)
    resumed.left(60.0, 510, 1000)
    assert resumed.left(61.0, 520, 1000) == pytest.approx(48.0)
    guess = Eta(guess_first=True)
    guess.start(0.0, 0)
    assert guess.left(10.0, 1, 4) == pytest.approx(30.0)  # the pace so far, before any other


def test_train_progress_times_left_from_after_the_first_chunk() -> None:
    out = io.StringIO()
    clock = iter([0.0, 120.0, 122.0, 124.0, 126.0]).__next__  # the first chunk compiles
    bar = TrainProgress(out, clock=clock, tty=False)
    bar.start(0)
    for done in (25, 50, 75, 100):
        bar(done, 100, {DECISIONS_PER_S: 12.5, "score/random": done / 100})
    etas = [line.rsplit("ETA ", 1)[1] for line in out.getvalue().splitlines()]
    assert etas == ["-", "4s", "2s", "0s"]
    assert "eval: random 1.00" in out.getvalue().splitlines()[-1]


def test_a_short_run_reports_progress_several_times(tmp_path: Path) -> None:
    from jungle_train.tabular.qlearn import Config, QLearner

    out = io.StringIO()
    bar = TrainProgress(out, clock=iter(range(100)).__next__, tty=False)
    bar.start(0)
    run_training(QLearner(Config()), tmp_path / "a", steps=24, eval_games=0, progress=bar)
    printed = out.getvalue().splitlines()
    assert len(printed) == PROGRESS_POINTS
    assert [m["step"] for m in read_metrics(tmp_path / "a" / "metrics.jsonl")] == list(
        range(3, 25, 3)
    )
    # a run shorter than the points reports every step; a chunk given is kept
    run_training(QLearner(Config()), tmp_path / "b", steps=3, eval_games=0)
    assert [m["step"] for m in read_metrics(tmp_path / "b" / "metrics.jsonl")] == [1, 2, 3]
    run_training(QLearner(Config()), tmp_path / "c", steps=20, chunk_steps=10, eval_games=0)
    assert [m["step"] for m in read_metrics(tmp_path / "c" / "metrics.jsonl")] == [10, 20]
