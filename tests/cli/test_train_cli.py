"""The training commands: ``jungle train`` (with resume), ``jungle plot``, ``jungle ablate``,
and the learned agents in the registry and the arena."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from jungle_agents import agent_kinds, make_agent
from jungle_agents.arena import play_match
from jungle_cli import main
from jungle_core import DARK
from jungle_train._trainers import resolve_config
from jungle_train.ablate import GAMMA_FIELD
from jungle_train.common._metrics import read_metrics
from tests._requires import needs_jax


def test_train_resume_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "q"
    args = [
        "train",
        "qlearn",
        "--steps",
        "60",
        "--chunk",
        "30",
        "--eval-games",
        "2",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    assert "trained qlearn to 60 steps" in capsys.readouterr().out
    assert [m["step"] for m in read_metrics(out / "metrics.jsonl")] == [30, 60]
    assert main(args) == 2  # the run is there: refused without --resume
    assert "already there" in capsys.readouterr().err
    assert main([*args[:2], "--steps", "90", *args[4:], "--resume"]) == 0
    assert [m["step"] for m in read_metrics(out / "metrics.jsonl")] == [30, 60, 90]
    assert main(["plot", str(out)]) == 0
    assert (out / "curves.png").stat().st_size > 1000
    # the checkpoint plays through the registry, in the arena's worker processes too
    result = play_match(DARK, f"qlearn:path={out / 'agent.npz'}", "random", 2, workers=2)
    assert result.games == 2


def test_train_rejects_bad_configs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("learning_rat = 0.1\n")
    assert main(["train", "qlearn", "--config", str(bad), "--out", str(tmp_path / "d")]) == 2
    assert "bad.toml: unknown field 'learning_rat'" in capsys.readouterr().err
    assert main(["train", "qlearn", "--out", str(tmp_path / "q")]) == 2
    assert "--steps is needed" in capsys.readouterr().err


def test_ablate_gamma_writes_the_table_and_plot(tmp_path: Path) -> None:
    out = tmp_path / "ablate"
    argv = ["ablate", "gamma", "--kinds", "qlearn,approxq", "--gammas", "0.5,0.99"]
    argv += ["--steps", "qlearn=20,approxq=20", "--games", "2", "--out", str(out)]
    assert main(argv) == 0
    table = (out / "results.md").read_text()
    assert table.count("| qlearn |") == 2 and table.count("| approxq |") == 2
    assert (out / "gamma.png").exists() and (out / "results.csv").read_text().startswith("kind,")


@needs_jax
def test_each_kinds_discount_field_is_its_discount() -> None:
    """The field the ablation sets is each config's discount: a field of it, a default
    near 1 (a learning rate or an exploration rate would be far below), and checked as a
    discount on construction (a value above 1 is refused, naming the field)."""
    for kind, field in GAMMA_FIELD.items():
        config = resolve_config(kind, None, 10 if kind == "dqn" else None)
        assert field in {f.name for f in dataclasses.fields(config)}, kind
        assert 0.9 <= getattr(config, field) <= 1.0, (kind, field)
        assert getattr(dataclasses.replace(config, **{field: 0.5}), field) == 0.5
        with pytest.raises(ValueError, match=field):
            dataclasses.replace(config, **{field: 1.5})


def test_learned_agents_are_registered() -> None:
    assert {"dqn", "qlearn", "approxq"} <= set(agent_kinds())
    for kind in ("dqn", "qlearn", "approxq"):
        assert make_agent(kind, DARK).name == kind  # the shipped checkpoints
