"""The value network: targets, the numpy forward pass, the trainer, the playing agent."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import zipfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_agents import AgentSpecError, MinimaxAgent, make_agent
from jungle_core import DARK, from_fen, legal_actions, new_game, parse_action, step
from jungle_core.jax_env import JaxState
from jungle_train.common._errors import CheckpointError
from jungle_train.common._metrics import read_metrics
from jungle_train.common._run import run_training
from jungle_train.jitted._nets import ValueNetwork
from jungle_train.players._value import SearchValue, ValueAgent, ValueEvaluator
from jungle_train.players._vnet import observe_numpy, value_numpy
from jungle_train.value import CONFIGS, ValueTrainer, _observe, _Parts, make_train
from tests._checkpoints import assert_damage_refused

TINY = CONFIGS["tiny"]


def targets_by_loop(
    mover: np.ndarray, next_mover: np.ndarray, ended: np.ndarray, result: np.ndarray,
    next_value: np.ndarray, lam: float,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The targets written as the plain definition, one game column at a time."""
    t, b = mover.shape
    targets = np.zeros((t, b))
    valid = np.zeros((t, b), bool)
    for j in range(b):
        later, later_valid = (next_value[-1, j], True) if lam < 1 else (0.0, False)
        for i in reversed(range(t)):
            if ended[i, j]:
                later, later_valid = result[i, j], True
            else:
                sign = 1.0 if next_mover[i, j] == mover[i, j] else -1.0
                later = sign * ((1 - lam) * next_value[i, j] + lam * later)
            targets[i, j], valid[i, j] = later, later_valid
    return targets, valid


@pytest.mark.parametrize("lam", [1.0, 0.5])
def test_the_reverse_scan_equals_the_plain_definition(lam: float) -> None:
    rng = np.random.default_rng(1)
    t, b = 12, 5
    mover = rng.integers(0, 2, (t, b))
    next_mover = np.concatenate([mover[1:], rng.integers(0, 2, (1, b))])
    ended = rng.random((t, b)) < 0.2
    result = rng.choice([-1.0, 0.0, 1.0], (t, b))
    next_value = rng.uniform(-1, 1, (t, b))
    parts = _Parts(dataclasses.replace(TINY, td_lambda=lam))
    got, got_valid = parts._targets(
        jnp.asarray(mover), jnp.asarray(next_mover), jnp.asarray(ended),
        jnp.asarray(result, jnp.float32), jnp.asarray(next_value, jnp.float32),
    )  # fmt: skip
    want, want_valid = targets_by_loop(mover, next_mover, ended, result, next_value, lam)
    np.testing.assert_array_equal(np.asarray(got_valid), want_valid)
    np.testing.assert_allclose(np.asarray(got)[want_valid], want[want_valid], atol=1e-5)


def test_numpy_forward_equals_the_flax_network() -> None:
    net = ValueNetwork(channels=8, conv_layers=2)
    params = net.init(jax.random.key(0), jnp.zeros(337))["params"]
    states = [new_game()]
    rng = np.random.default_rng(0)
    for _ in range(30):
        s = states[-1]
        states.append(step(s, legal_actions(s)[int(rng.integers(len(legal_actions(s))))], rng))
    x = np.stack([observe_numpy(s) for s in states])
    want = np.asarray(net.apply({"params": params}, jnp.asarray(x)))
    got = value_numpy(jax.tree_util.tree_map(np.asarray, params), x)
    np.testing.assert_allclose(got, want, atol=1e-5)


# Cornered: a lone Cat (or Wolf) with both its neighbours held by stronger enemy pieces.
# The strong side to move takes it and wins; the lone piece to move must attack one of
# them and is lost (it has no other move), so every game ends within two plies.
CORNERED = ["8/8/8/8/8/W7/cD6", "6Lc/7T/8/8/8/8/8", "Cd6/w7/8/8/8/8/8", "8/8/8/8/8/7l/6tC"]


def test_train_labels_games_and_learns_won_from_lost() -> None:
    """Rounds of play from the same cornered positions (both sides to move in each): the
    games end, their positions are labelled, the loss falls, and the network ends up
    valuing the positions of the side to move that wins above those of the side that
    loses."""
    config = dataclasses.replace(
        TINY, rollout_length=4, updates_per_round=16, learning_rate=1e-2, total_steps=64 * 6
    )
    parts = _Parts(config)
    states = [from_fen(f"{board} {mover} 0 0 - -", DARK) for board in CORNERED for mover in (0, 1)]
    wins = np.array([len(legal_actions(s)) > 2 for s in states])  # the lone piece has 2 moves
    assert wins.sum() == 4
    starts = jax.tree_util.tree_map(
        lambda *x: jnp.stack(x), *[parts.env.from_state(s) for s in states * 2]
    )
    runner = parts.init(jax.random.key(0))
    play_and_fit = jax.jit(parts.round)
    losses = []
    for _ in range(config.num_rounds):
        runner, metrics = play_and_fit(runner._replace(games=starts))
        losses.append(float(metrics["loss"]))
        assert float(metrics["decisive"]) >= 10  # most of the 16 games end decisively
        assert 0.0 < float(metrics["labelled"]) <= 1.0
    assert np.isfinite(losses).all()
    assert np.mean(losses[-2:]) < 0.25 * np.mean(losses[:2]), losses

    def observe(state: JaxState) -> jax.Array:
        return _observe(parts.env, state)

    value = np.asarray(parts.value(runner.params, jax.vmap(observe)(starts)))[: len(states)]
    assert value[wins].min() > 0.5 and value[~wins].max() < -0.5, value


def test_chunked_trainer_equals_one_jitted_train() -> None:
    config = dataclasses.replace(TINY, total_steps=TINY.steps_per_round * 3)
    runner, _ = make_train(config)(jax.random.key(7))
    trainer = ValueTrainer(config)
    state = trainer.init(7)
    state, _ = trainer.advance(state, TINY.steps_per_round)
    state, _ = trainer.advance(state, 2 * TINY.steps_per_round)
    assert trainer.steps_done(state) == config.total_steps
    for a, b in zip(
        jax.tree_util.tree_leaves(runner.params),
        jax.tree_util.tree_leaves(state.params),
        strict=True,
    ):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_run_training_resume_and_agent(tmp_path: Path) -> None:
    out = tmp_path / "run"
    steps = TINY.steps_per_round
    run_training(ValueTrainer(TINY), out, steps=2 * steps, seed=0, chunk_steps=steps,
                 eval_games=2, eval_opponents=("random",))  # fmt: skip
    lines = read_metrics(out / "metrics.jsonl")
    assert [line["step"] for line in lines] == [steps, 2 * steps]
    assert {"loss", "labelled", "mean_target"} <= set(lines[-1])
    assert {k for k in lines[-1] if k.startswith("score/")} == {"score/random"}
    run_training(ValueTrainer(TINY), out, steps=3 * steps, seed=0, chunk_steps=steps,
                 eval_games=0, eval_opponents=(), resume=True)  # fmt: skip
    assert read_metrics(out / "metrics.jsonl")[-1]["step"] == 3 * steps
    agent = make_agent(f"value:path={out / 'agent.npz'}", DARK)
    rng = np.random.default_rng(0)
    assert agent.act(new_game(), rng) in legal_actions(new_game())
    trainer = ValueTrainer(TINY)
    with zipfile.ZipFile(out / "run.npz") as archive:  # flip a bit in the largest array
        largest = max(archive.infolist(), key=lambda info: info.file_size).filename
    assert_damage_refused(trainer.load, out / "run.npz", largest.encode(), 0.5, 200)
    with pytest.raises(CheckpointError):
        ValueTrainer(dataclasses.replace(TINY, channels=16)).load(str(out / "run.npz"))
    with pytest.raises(CheckpointError):
        ValueEvaluator(DARK, str(out / "run.npz"))  # a run checkpoint is not a network


def test_the_agent_takes_a_winning_capture_whoever_moves() -> None:
    """Exact results of finished children outrank any network value, with the right sign
    for either player to move (the shipped network)."""
    agent = ValueAgent(DARK)
    rng = np.random.default_rng(0)
    # player 0's Elephant on b1 beside player 1's last piece, a Dog on b2
    s = from_fen("8/8/8/8/8/1d6/1E6 0 0 0 - -", DARK)
    assert agent.act(s, rng) == parse_action(s, "b1xb2")
    # the mirror: player 1's elephant takes player 0's last piece
    s = from_fen("8/8/8/8/8/1D6/1e6 1 0 0 - -", DARK)
    assert agent.act(s, rng) == parse_action(s, "b1xb2")
    values = agent.action_values(s)
    assert values[parse_action(s, "b1xb2")] == 1.0


def test_the_agent_registry_loads_no_jax() -> None:
    """Every learned agent's entry point (and the agents themselves) load without JAX, so
    arena and server worker processes start quickly and time only the decisions."""
    code = (
        "import sys, numpy as np; from jungle_agents import make_agent; from jungle_core "
        "import DARK, new_game\n"
        "for kind in ('dqn', 'qlearn', 'approxq', 'value'):\n"
        "    make_agent(kind, DARK).act(new_game(), np.random.default_rng(0))\n"
        "from jungle_agents import agent_kinds\n"
        "assert 'azero' in agent_kinds()\n"
        "bad = sorted(m for m in ('jax', 'flax', 'optax', 'mctx') if m in sys.modules)\n"
        "sys.exit(f'imported {bad}' if bad else 0)"
    )
    run = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def test_the_frontier_batches_the_networks_evaluations_without_changing_the_search() -> None:
    """With ``eval=value`` a frontier node hands all its children to the network in one
    batched pass (``SearchValue.prefetch``); the search's action and node count are
    those of evaluating the leaves one at a time, its value equal to float32 rounding (a
    batched matrix product rounds differently)."""
    s = from_fen("8/2e5/8/3D1w2/8/1R3l2/8 0 0 0 - -", DARK)
    results = []
    for batched in (True, False):
        minimax = make_agent("minimax:depth=2,eval=value", DARK)
        assert isinstance(minimax, MinimaxAgent)
        searcher = minimax.searcher(0)
        evaluator = searcher.evaluator
        assert isinstance(evaluator, SearchValue)
        evaluator._cache.clear()
        searcher._prefetch = evaluator.prefetch if batched else None
        info = searcher.search(s, np.random.default_rng(0))
        results.append((info.action, info.value, info.nodes))
    assert results[0][0::2] == results[1][0::2]
    assert results[0][1] == pytest.approx(results[1][1], rel=1e-6)
    ev = SearchValue(DARK, 0)
    children = [new_game(), s]
    ev.prefetch(children)
    assert set(ev._cache) == set(children)
    assert ev.evaluate(s) == ev._cache[s]
    assert ev.evaluate(s) == pytest.approx(-SearchValue(DARK, 1).evaluate(s), rel=1e-6)


def test_minimax_with_the_value_network_at_its_leaves(tmp_path: Path) -> None:
    agent = make_agent("minimax:depth=2,eval=value", DARK)
    assert isinstance(agent, MinimaxAgent)
    assert agent.name == "minimax:depth=2,eval=value"
    searcher = agent.searcher(1)
    assert isinstance(searcher.evaluator, SearchValue) and searcher.evaluator.player == 1
    rng = np.random.default_rng(0)
    s = from_fen("8/8/8/8/8/1D6/1e6 1 0 0 - -", DARK)  # player 1 wins by b1xb2
    assert agent.act(s, rng) == parse_action(s, "b1xb2")
    v = searcher.evaluator.evaluate(new_game())
    assert searcher.evaluator.evaluate(new_game()) == v  # cached, and from the searcher's side
    assert agent.searcher(0).evaluator.evaluate(new_game()) == -v
    with pytest.raises(AgentSpecError, match="valid: hand, value"):
        make_agent("minimax:eval=nope", DARK)
    with pytest.raises(AgentSpecError, match="value_path"):
        make_agent("minimax:value_path=x.npz", DARK)
    with pytest.raises(AgentSpecError, match="eval=value"):
        make_agent(f"minimax:eval=value,value_path={tmp_path / 'missing.npz'}", DARK)
