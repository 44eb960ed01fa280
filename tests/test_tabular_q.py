"""Tabular Q-learning: training through the shared runner, checkpoints, resume."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from jungle_core import DARK, from_fen, legal_actions, new_game, outcome, step, to_fen
from jungle_train import tabular_q
from jungle_train._errors import CheckpointError, ConfigError
from jungle_train._metrics import read_metrics
from jungle_train._run import run_training
from jungle_train._shaping import expected_ply_reward, rng_state
from jungle_train.tabular_q import Config, QLearner, QTableAgent, RunState, table_key
from tests._checkpoints import assert_damage_refused

CONFIG = Config(self_sync_steps=25, opponents="random=1,greedy=1,self=1")


def same_run(a: RunState, b: RunState) -> None:
    assert a.table == b.table
    assert a.frozen == b.frozen
    assert rng_state(a.rng) == rng_state(b.rng)
    assert a.game.state == b.game.state
    assert (a.game.learner, a.game.opponent) == (b.game.learner, b.game.opponent)
    assert (a.steps, a.games, a.epsilon, list(a.recent)) == (
        b.steps,
        b.games,
        b.epsilon,
        list(b.recent),
    )


def test_smoke_run_training(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_training(
        QLearner(CONFIG),
        out,
        steps=60,
        seed=3,
        chunk_steps=30,
        eval_games=2,
        eval_opponents=("random",),
    )
    lines = read_metrics(out / "metrics.jsonl")
    assert [line["step"] for line in lines] == [30, 60]
    assert {"loss", "td_error", "epsilon", "reward", "games"} <= set(lines[-1])
    assert 0.0 <= lines[-1]["score/random"] <= 1.0
    assert (out / "run.npz").exists() and (out / "agent.npz").exists()


def test_one_step_moves_the_entry_from_its_prior_by_alpha() -> None:
    greedy = Config(epsilon_start=0.0, epsilon_min=0.0)
    learner = QLearner(greedy)
    run = learner.init(0)
    start = run.game.state
    run, _ = learner.advance(run, 1)
    ((key, entry),) = run.table.items()
    assert key == table_key(start)
    ((action, value),) = entry.items()
    prior = expected_ply_reward(start, action)
    # the same step with alpha = 1 stores the TD target itself
    full = QLearner(dataclasses.replace(greedy, alpha=1.0))
    target = full.advance(full.init(0), 1)[0].table[key][action]
    assert value == pytest.approx(prior + 0.1 * (target - prior))
    assert target != pytest.approx(prior)


def test_table_key_ignores_counters() -> None:
    a = from_fen("8/8/8/8/8/8/Ew6 0 7 31 - -")
    b = from_fen("8/8/8/8/8/8/Ew6 0 0 2 - -")
    assert table_key(a) == table_key(b) and hash(table_key(a)) == hash(table_key(b))


def test_save_load_round_trip_is_exact(tmp_path: Path) -> None:
    learner = QLearner(CONFIG)
    run, _ = learner.advance(learner.init(1), 120)
    learner.save(run, str(tmp_path / "run.npz"))
    same_run(learner.load(str(tmp_path / "run.npz")), run)


def test_resume_continues_exactly(tmp_path: Path) -> None:
    learner = QLearner(CONFIG)
    whole, _ = learner.advance(learner.init(2), 150)
    first, _ = learner.advance(learner.init(2), 70)
    learner.save(first, str(tmp_path / "run.npz"))
    rest, _ = QLearner(CONFIG).advance(QLearner(CONFIG).load(str(tmp_path / "run.npz")), 80)
    same_run(rest, whole)


def test_runner_resume_equals_uninterrupted(tmp_path: Path) -> None:
    run_training(
        QLearner(CONFIG),
        tmp_path / "a",
        steps=90,
        seed=4,
        chunk_steps=30,
        eval_games=2,
        eval_opponents=("random",),
    )
    run_training(
        QLearner(CONFIG),
        tmp_path / "b",
        steps=60,
        seed=4,
        chunk_steps=30,
        eval_games=2,
        eval_opponents=("random",),
    )
    final = run_training(
        QLearner(CONFIG),
        tmp_path / "b",
        steps=90,
        seed=4,
        chunk_steps=30,
        resume=True,
        eval_games=2,
        eval_opponents=("random",),
    )
    same_run(QLearner(CONFIG).load(str(tmp_path / "a" / "run.npz")), final)


def test_other_kind_config_or_damage_is_refused(tmp_path: Path) -> None:
    learner = QLearner(CONFIG)
    run, _ = learner.advance(learner.init(0), 40)
    path = tmp_path / "run.npz"
    learner.save(run, str(path))
    with pytest.raises(CheckpointError, match="another config"):
        QLearner(dataclasses.replace(CONFIG, discount=0.9)).load(str(path))
    from jungle_train.approx_q import ApproxQLearner

    with pytest.raises(CheckpointError, match="not of 'approxq'"):
        ApproxQLearner().load(str(path))
    assert_damage_refused(learner.load, path, b"entry_value", 1 / 2, 200)


def test_agent_plays_legal_actions(tmp_path: Path) -> None:
    learner = QLearner(CONFIG)
    run, _ = learner.advance(learner.init(0), 60)
    path = str(tmp_path / "agent.npz")
    learner.save_agent(run, path)
    agent = QTableAgent(DARK, path, epsilon=0.2)
    assert agent.name == f"qlearn:path={path}"
    assert agent.table == {
        to_fen(k): {a: float(np.float32(v)) for a, v in e.items()} for k, e in run.table.items()
    }
    # a trained state plays its table's best action; Q of unseen actions is the prior
    key, entry = next(iter(run.table.items()))
    values = agent.action_values(key)
    assert all(values[a] == pytest.approx(v, rel=1e-6) for a, v in entry.items())
    assert all(
        values[a] == pytest.approx(expected_ply_reward(key, a))
        for a in legal_actions(key)
        if a not in entry
    )
    rng = np.random.default_rng(0)
    s = new_game()
    while outcome(s) is None and s.ply < 60:
        action = agent.act(s, rng)
        assert action in legal_actions(s)
        s = step(s, action, rng)


def test_missing_shipped_checkpoint_names_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tabular_q, "SHIPPED", tmp_path / "qlearn.npz")
    with pytest.raises(CheckpointError, match="jungle train qlearn"):
        QTableAgent(DARK)


def test_config_is_checked() -> None:
    with pytest.raises(ConfigError):
        Config(opponents="nobody")
    with pytest.raises(ConfigError):
        Config(discount=1.5)
