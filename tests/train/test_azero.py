"""AlphaZero's trainer (``jungle_train.azero``): the targets equal a plain loop, and the
trainer, its checkpoints, its teacher and the registered agent work end to end (tiny
budgets)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_core import CLASSIC, DARK, legal_actions, new_game
from jungle_train import azero, resolve_config
from jungle_train.azero._agent import AZeroAgent, AZeroSettings
from jungle_train.common._errors import CheckpointError
from jungle_train.common._run import run_training
from tests._azero import TINY

ROOT = Path(__file__).resolve().parents[2]

# the measured CLASSIC run's config, read as `jungle train azero --config FILE` reads it
CLASSIC_RUN = resolve_config(
    "azero", str(ROOT / "experiments/configs/azero-classic-cpu.toml"), None
)


def test_value_targets_equal_a_plain_loop() -> None:
    rng = np.random.default_rng(0)
    reward = rng.choice([-1.0, 0.0, 0.3, 1.0], size=(5, 40)).astype(np.float32)
    discount = rng.choice([-1.0, -1.0, -1.0, 1.0, 0.0], size=(5, 40)).astype(np.float32)
    reward = np.where(discount == 0, reward, 0.0).astype(np.float32)
    g, ok = azero.value_targets(jnp.asarray(reward), jnp.asarray(discount))
    for b in range(5):
        future, resolved = 0.0, False
        for t in reversed(range(40)):
            future = reward[b, t] + discount[b, t] * future
            resolved = bool(discount[b, t] == 0) or resolved
            assert float(ok[b, t]) == resolved
            if resolved:
                assert float(g[b, t]) == pytest.approx(future)


# ------------------------------------------------------------------------ training


@pytest.fixture(scope="module")
def tiny_run() -> Any:
    return azero.make_train(TINY)(jax.random.key(3))


def test_train_smoke(tiny_run: Any) -> None:
    runner, metrics = tiny_run
    assert int(runner.rounds) == TINY.num_rounds
    assert np.isnan(float(metrics["policy_loss"][0]))  # round 0 only plays
    for name in ("policy_loss", "value_loss", "afterstate_loss"):
        assert np.isfinite(np.asarray(metrics[name][1:])).all()
    assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(runner.params))


def test_chunked_trainer_equals_one_jitted_run(tiny_run: Any) -> None:
    runner, _ = tiny_run
    trainer = azero.AZeroTrainer(TINY)
    state = trainer.init(3)
    state, _ = trainer.advance(state, TINY.steps_per_round)
    state, _ = trainer.advance(state, 3 * TINY.steps_per_round)
    assert trainer.steps_done(state) == TINY.num_rounds * TINY.steps_per_round
    for a, b in zip(jax.tree.leaves(state.params), jax.tree.leaves(runner.params), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


def test_run_training_checkpoints_resume_and_agent(tmp_path: Any) -> None:
    config = dataclasses.replace(TINY, total_steps=32)
    trainer = azero.AZeroTrainer(config)
    out = tmp_path / "run"
    run_training(trainer, out, steps=16, chunk_steps=16, eval_games=0)
    state = run_training(trainer, out, steps=32, chunk_steps=16, eval_games=0, resume=True)
    assert trainer.steps_done(state) == 32
    agent = AZeroAgent(DARK, AZeroSettings(path=str(out / "agent.npz"), simulations=4))
    game = new_game(DARK)
    assert agent.act(game, np.random.default_rng(0)) in legal_actions(game)
    with pytest.raises(CheckpointError):
        AZeroAgent(CLASSIC, AZeroSettings(path=str(out / "agent.npz"), simulations=4))


@pytest.mark.parametrize("teacher", ["", "shipped"], ids=["self", "teacher"])
def test_teacher_plays_self_play_whatever_the_network(teacher: str) -> None:
    """With a teacher, self-play's moves and targets come from the DQN-guided search and
    not from the network being trained: two different networks give the same round;
    without one, the network's own search plays and they differ."""
    config = dataclasses.replace(
        TINY, policy_target="visits", teacher=teacher, updates_per_round=0, random_games=0.0
    )
    parts = azero._Parts(config)
    runner = parts.init(jax.random.key(0))
    other = runner._replace(params=parts.init(jax.random.key(1)).params)
    one_round = jax.jit(parts.round)
    played = [one_round(r)[0].previous for r in (runner, other)]
    same = all(
        np.array_equal(np.asarray(a), np.asarray(b))
        for a, b in zip(jax.tree.leaves(played[0]), jax.tree.leaves(played[1]), strict=True)
    )
    assert same == bool(teacher)
    assert bool(np.asarray(played[0].valid).all())


def test_teacher_config_is_checked() -> None:
    with pytest.raises(ValueError, match="teacher"):
        dataclasses.replace(TINY, teacher="shipped")  # policy_target=completed_q
    with pytest.raises(ValueError, match="teacher"):
        dataclasses.replace(CLASSIC_RUN, teacher="shipped", policy_target="visits")
    with pytest.raises(CheckpointError):
        azero._Parts(dataclasses.replace(TINY, policy_target="visits", teacher="missing.npz"))


def test_chance_order_reaches_the_searches_of_training() -> None:
    shuffled = dataclasses.replace(TINY, chance_order="shuffled")
    assert shuffled.search_config(self_play=True).chance_order == "shuffled"
    assert shuffled.search_config(self_play=False).chance_order == "shuffled"
    assert TINY.search_config(self_play=True).chance_order == "index"
    with pytest.raises(ValueError, match="chance_order"):
        dataclasses.replace(TINY, chance_order="random")


def test_registered_agent_kind() -> None:
    """``azero`` is registered through its entry point, and a bad parameter is refused
    by the agent itself, naming the parameter (not as an unknown kind)."""
    from jungle_agents import AgentSpecError, agent_kinds, make_agent
    from jungle_train._registry import register_azero

    assert "azero" in agent_kinds()  # loaded from the `jungle.agents` entry point
    register_azero()  # what that entry point runs: registering again replaces it
    assert "azero" in agent_kinds()
    with pytest.raises(AgentSpecError, match=r"azero:simulations=0.*simulations must be >= 1"):
        make_agent("azero:simulations=0", DARK)
