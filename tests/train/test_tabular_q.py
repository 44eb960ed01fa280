"""Tabular Q-learning: training through the shared runner, checkpoints, resume."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from jungle_core import (
    DARK,
    from_fen,
    legal_actions,
    new_game,
    outcome,
    parse_action,
    step,
    to_fen,
)
from jungle_train.common._errors import CheckpointError, ConfigError
from jungle_train.common._metrics import read_metrics
from jungle_train.common._run import run_training
from jungle_train.tabular import qlearn as tabular_q
from jungle_train.tabular._shaping import TrainingGame, expected_ply_reward, rng_state
from jungle_train.tabular.qlearn import Config, QLearner, QTableAgent, RunState, table_key
from tests._boards import position
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


# Player 0's D d4 next to player 1's t e4; spares: player 0's C a1, player 1's r h7.
DOG_VS_TIGER = """
    . . . . . . . r
    . . . . . . . .
    . . . . . . . .
    . . . D t . . .
    . . . . . . . .
    . . . . . . . .
    C . . . . . . .
"""


def test_one_step_is_the_q_learning_update_by_hand() -> None:
    """One greedy step from a hand-built position, ``Q += α (r + γ max Q' - Q)`` with α =
    0.1, γ = 0.95: Q from the table, the reply fixed through the frozen copy, r scored by
    hand and max Q' from the learner's table at the position after the reply."""
    learner = QLearner(Config(opponents="self"))
    start = position(DOG_VS_TIGER)
    move = parse_action(start, "a1-a2")
    mid = step(start, move, np.random.default_rng(0))
    reply = parse_action(mid, "e4xd4")
    after = step(mid, reply, np.random.default_rng(0))
    onward = parse_action(after, "a2-a3")
    # Q(s, a1-a2) = 30 beats the priors of the other moves (below 1: D d4 stepping away
    # from t e4); the learner's Q(s', a2-a3) = 7 beats the other priors at s' (below 0)
    table = {table_key(start): {move: 30.0}, table_key(after): {onward: 7.0}}
    frozen = {table_key(mid): {reply: 1000.0}}  # the frozen copy replies t e4xd4
    run = RunState(table, frozen, np.random.default_rng(0), TrainingGame(start, 0, "self"),
                   epsilon=0.0)  # fmt: skip
    run, metrics = learner.advance(run, 1)
    assert run.game.state == after
    # C a1-a2: the step cost, shaping from -2.5 (D d4: -4/2, C a1: t e4 at d 7, -4/8) to
    # -2 - 4/7 (C a2: t e4 at d 6); the reply takes D: -8 * V'(dog) 1.5, shaping from
    # -2 - 4/7 to -4/6 (C a2: t d4 at d 5)
    reward = (-0.1 + (-2 - 4 / 7) + 2.5) + (-8 * 1.5 - 4 / 6 + (2 + 4 / 7))
    assert metrics["reward"] == pytest.approx(reward)
    assert run.table[table_key(start)][move] == pytest.approx(
        30.0 + 0.1 * (reward + 0.95 * 7.0 - 30.0)
    )


def test_the_last_step_of_a_game_has_no_bootstrap() -> None:
    """E a1 takes the last enemy piece, w b1: r = -0.1 + 10 * V'(wolf) 2 + shaping
    (0 - 3/2) + 100 for the win, and nothing after it (``r + 0``)."""
    learner = QLearner(Config())
    start = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")
    take = parse_action(start, "a1xb1")
    run = RunState({table_key(start): {take: 30.0}}, {}, np.random.default_rng(0),
                   TrainingGame(start, 0, "random"), epsilon=0.0)  # fmt: skip
    run, metrics = learner.advance(run, 1)
    assert metrics["games"] == 1
    reward = -0.1 + 20.0 - 1.5 + 100.0
    assert run.table[table_key(start)][take] == pytest.approx(30.0 + 0.1 * (reward - 30.0))


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
    from jungle_train.tabular.approxq import ApproxQLearner

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
