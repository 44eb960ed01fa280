"""Approximate Q-learning: updates, schedules, the shared runner, checkpoints, resume."""

from __future__ import annotations

import dataclasses
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from jungle_core import DARK, from_fen, legal_actions, new_game, outcome, step
from jungle_train.common._errors import CheckpointError, ConfigError
from jungle_train.common._metrics import read_metrics
from jungle_train.common._run import run_training
from jungle_train.tabular import approxq as approx_q
from jungle_train.tabular._features import action_features
from jungle_train.tabular._shaping import rng_state
from jungle_train.tabular.approxq import ApproxQAgent, ApproxQLearner, Buffer, Config, RunState
from tests._checkpoints import assert_damage_refused

CONFIG = Config(
    buffer_size=40, batch_size=8, self_sync_steps=25, opponents="random=1,greedy=1,self=1"
)


def same_run(a: RunState, b: RunState) -> None:
    assert np.array_equal(a.w, b.w) and np.array_equal(a.frozen, b.frozen)
    for field in ("phi", "reward", "done", "next_phi", "next_count"):
        assert np.array_equal(getattr(a.buffer, field), getattr(b.buffer, field)), field
    assert (a.buffer.position, a.buffer.size) == (b.buffer.position, b.buffer.size)
    assert rng_state(a.rng) == rng_state(b.rng)
    assert a.game.state == b.game.state
    assert (a.game.learner, a.game.opponent) == (b.game.learner, b.game.opponent)
    assert (a.steps, a.games, a.updates, a.epsilon, list(a.recent)) == (
        b.steps,
        b.games,
        b.updates,
        b.epsilon,
        list(b.recent),
    )


def test_smoke_run_training(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_training(
        ApproxQLearner(CONFIG),
        out,
        steps=60,
        seed=3,
        chunk_steps=30,
        eval_games=2,
        eval_opponents=("random",),
    )
    lines = read_metrics(out / "metrics.jsonl")
    assert [line["step"] for line in lines] == [30, 60]
    assert {"loss", "td_error", "epsilon", "gamma", "reward", "recent_score"} <= set(lines[-1])
    assert 0.0 <= lines[-1]["score/random"] <= 1.0
    assert (out / "run.npz").exists() and (out / "agent.npz").exists()


def test_update_is_a_huber_gradient_step_by_hand() -> None:
    config = Config(buffer_size=1, batch_size=1, l2=0.0, huber_delta=1.0, learning_rate=0.5)
    learner = ApproxQLearner(config)
    run = learner.init(0)
    run.buffer = Buffer.empty(1)
    phi = np.zeros(16)
    phi[0], phi[3] = 1.0, 0.5
    nxt = np.zeros((2, 16))
    nxt[0, 1] = 1.0
    run.w = np.zeros(16)
    run.w[1] = 2.0
    run.buffer.add(phi, 3.0, False, nxt)
    loss, td = learner._update(run)
    # target 3 + γ0 0.5 * max(2, 0) = 4; delta 4 - 0 = 4: clipped to 1, loss 1 * (4 - 0.5)
    assert td == pytest.approx(4.0) and loss == pytest.approx(3.5)
    expected = np.zeros(16)
    expected[1] = 2.0
    expected[0], expected[3] = 0.5 * 1.0, 0.5 * 0.5  # lr 0.5 / (1 + 0)^0.25 * 1 * phi
    assert np.allclose(run.w, expected)
    run.buffer.add(phi, 3.0, True, None)  # a terminal transition: target = reward
    run.w = np.zeros(16)
    _, td = learner._update(run)
    assert td == pytest.approx(3.0)


def test_schedules() -> None:
    c = Config()
    assert c.gamma(0) == 0.5 and c.gamma(50) == pytest.approx(0.725)
    assert c.gamma(100) == c.gamma(1000) == 0.95
    learner = ApproxQLearner(c)
    run = learner.init(0)
    won = from_fen("8/8/8/8/8/8/E7 1 0 9 - -")  # player 0 has won
    # recent scores before the game, the side the learner played -> ε's factor
    for before, side, factor in (([], 0, 0.95), ([], 1, 0.999), ([0.0], 0, 0.995)):
        run.recent = deque(before)
        run.epsilon = 0.5
        learner._finish(run, won, side)
        assert run.epsilon == pytest.approx(0.5 * factor)
    run.epsilon = c.epsilon_min
    learner._finish(run, won, 1)
    assert run.epsilon == c.epsilon_min


def test_save_load_round_trip_is_exact(tmp_path: Path) -> None:
    learner = ApproxQLearner(CONFIG)
    run, _ = learner.advance(learner.init(1), 120)
    learner.save(run, str(tmp_path / "run.npz"))
    same_run(learner.load(str(tmp_path / "run.npz")), run)


def test_resume_continues_exactly(tmp_path: Path) -> None:
    learner = ApproxQLearner(CONFIG)
    whole, _ = learner.advance(learner.init(2), 150)
    first, _ = learner.advance(learner.init(2), 70)
    learner.save(first, str(tmp_path / "run.npz"))
    fresh = ApproxQLearner(CONFIG)
    rest, _ = fresh.advance(fresh.load(str(tmp_path / "run.npz")), 80)
    same_run(rest, whole)


def test_other_kind_config_or_damage_is_refused(tmp_path: Path) -> None:
    learner = ApproxQLearner(CONFIG)
    run, _ = learner.advance(learner.init(0), 30)
    path = tmp_path / "run.npz"
    learner.save(run, str(path))
    with pytest.raises(CheckpointError, match="another config"):
        ApproxQLearner(dataclasses.replace(CONFIG, discount=0.9)).load(str(path))
    from jungle_train.tabular.qlearn import QLearner

    with pytest.raises(CheckpointError, match="not of 'qlearn'"):
        QLearner().load(str(path))
    assert_damage_refused(learner.load, path, b"buffer/phi", 1 / 3, 300)


def test_agent_is_the_argmax_of_w_phi(tmp_path: Path) -> None:
    learner = ApproxQLearner(CONFIG)
    run, _ = learner.advance(learner.init(0), 60)
    path = str(tmp_path / "agent.npz")
    learner.save_agent(run, path)
    agent = ApproxQAgent(DARK, path)
    assert agent.name == f"approxq:path={path}" and np.array_equal(agent.w, run.w)
    rng = np.random.default_rng(0)
    s = new_game()
    while outcome(s) is None and s.ply < 60:
        action = agent.act(s, rng)
        actions, phi = action_features(s)
        values = phi @ run.w
        assert values[actions.index(action)] == pytest.approx(values.max())
        s = step(s, action, rng)
    explorer = ApproxQAgent(DARK, path, epsilon=1.0)
    assert explorer.act(new_game(), rng) in legal_actions(new_game())


def test_missing_shipped_checkpoint_names_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approx_q, "SHIPPED", tmp_path / "approxq.npz")
    with pytest.raises(CheckpointError, match="jungle train approxq"):
        ApproxQAgent(DARK)


def test_config_is_checked() -> None:
    with pytest.raises(ConfigError):
        Config(batch_size=0)
    with pytest.raises(ConfigError):
        Config(opponents="random=-1")
