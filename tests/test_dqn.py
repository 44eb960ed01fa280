"""The DQN trainer (``jungle_train.dqn``): loss against a NumPy reference, prioritised
sampling, the cheap samplers, rewards, seeds, checkpoints, resume after a kill, and the
two-device run."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import flashbax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_agents import make_agent
from jungle_core import DARK, from_fen, legal_actions, new_game, observation, outcome, step
from jungle_core.jax_env import make
from jungle_train import dqn
from jungle_train._checkpoint import load_checkpoint, save_checkpoint
from jungle_train._endgames import random_endgame
from jungle_train._errors import CheckpointError, ConfigError
from jungle_train._learned import (
    DQNAgent,
    conv_numpy,
    enemy_fields,
    extra_inputs,
    network_numpy,
)
from jungle_train._metrics import read_metrics
from jungle_train._run import run_training
from jungle_train._sampling import best_action, coin, uniform_legal
from jungle_train._shaping import potential as pure_potential
from jungle_train._trainers import resolve_config

TINY = dqn.Config(
    total_steps=128,
    num_envs=8,
    rollout_length=2,
    updates_per_rollout=2,
    hidden=(16,),
    dropout=0.0,
    observation="spec+clock",
    batch_size=8,
    n_step=3,
    buffer_size=64,
    min_buffer=16,
    draw_reward=-1.0,
    opponents="random=2,greedy=1,self=1",
)


# without Greedy opponents the program is much smaller, so it compiles much faster
LIGHT = dataclasses.replace(TINY, opponents="random=3,self=1", dropout=0.2)


@pytest.fixture(scope="module")
def tiny_train() -> Any:
    return dqn.make_train(TINY)


@pytest.fixture(scope="module")
def tiny_run(tiny_train: Any) -> tuple[Any, dict[str, Any]]:
    runner, metrics = tiny_train(jax.random.key(0))
    return runner, metrics


def _subprocess_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a child Python: JAX's compilation cache shared between the
    children of one test, so only the first compiles."""
    return dict(
        os.environ,
        JAX_COMPILATION_CACHE_DIR=str(tmp_path / "jax-cache"),
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        **extra,
    )


# ---------------------------------------------------------------------- samplers


def test_uniform_legal_is_uniform() -> None:
    """Chi-square test: each legal action equally likely (280 actions, 40 legal)."""
    rng = np.random.default_rng(0)
    mask = np.zeros(280, bool)
    legal = rng.choice(280, 40, replace=False)
    mask[legal] = True
    n = 40_000
    seeds = jax.random.bits(jax.random.key(1), (n,), jnp.uint32)
    picks = np.asarray(jax.jit(uniform_legal)(seeds, jnp.broadcast_to(mask, (n, 280))))
    assert set(picks.tolist()) <= set(legal.tolist())
    counts = np.bincount(picks, minlength=280)[legal]
    expected = n / 40
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 72.0  # 39 degrees of freedom: p ≈ 0.001


def test_best_action_breaks_ties_uniformly_and_coin_has_its_rate() -> None:
    values = jnp.array([1.0, 5.0, 5.0, -jnp.inf, 4.9995, 2.0])
    seeds = jax.random.bits(jax.random.key(2), (9_000,), jnp.uint32)
    picks = np.asarray(jax.vmap(best_action, in_axes=(None, 0))(values, seeds))
    counts = np.bincount(picks, minlength=6)
    assert counts[[0, 3, 5]].sum() == 0
    assert all(abs(c - 3_000) < 250 for c in counts[[1, 2, 4]])
    heads = np.asarray(coin(seeds, jnp.float32(0.3)))
    assert abs(heads.mean() - 0.3) < 0.02


# ----------------------------------------------------------------- replay sampling


def test_prioritised_sampling_is_proportional_to_priority() -> None:
    """The replay samples item i with probability p_i^α / Σ p^α (α = 0.6)."""
    alpha = 0.6
    buffer = flashbax.make_prioritised_trajectory_buffer(
        add_batch_size=1,
        sample_batch_size=256,
        sample_sequence_length=1,
        period=1,
        min_length_time_axis=1,
        max_length_time_axis=8,
        priority_exponent=alpha,
    )
    state = buffer.init(jnp.zeros((), jnp.int32))
    state = buffer.add(state, jnp.arange(8, dtype=jnp.int32)[None, :])
    priorities = jnp.array([1.0, 2.0, 4.0, 8.0, 0.5, 1.0, 3.0, 6.0])
    state = buffer.set_priorities(state, jnp.arange(8), priorities)
    sample = jax.jit(buffer.sample)
    counts = np.zeros(8)
    key = jax.random.key(3)
    for _ in range(100):
        key, k = jax.random.split(key)
        counts += np.bincount(np.asarray(sample(state, k).experience[:, 0]), minlength=8)
    expected = np.asarray(priorities) ** alpha
    expected = expected / expected.sum() * counts.sum()
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 24.3  # 7 degrees of freedom: p ≈ 0.001


# -------------------------------------------------------------------------- loss


def _numpy_loss(
    config: dqn.Config, params: Any, target: Any, batch: dqn.Transition, weights: np.ndarray
) -> tuple[float, np.ndarray]:
    """The double-DQN n-step Huber loss written out in NumPy, one transition at a time."""
    env = make(DARK)
    n, gamma = config.n_step, config.gamma
    p = jax.device_get(params["params"])
    t = jax.device_get(target["params"])

    def obs(position: Any, i: int, k: int) -> np.ndarray:
        state = env.to_state(
            dqn._state_of(jax.tree.map(lambda a: a[i, k], position)).replace(ply=jnp.int32(0))
        )
        o = observation(state).reshape(-1)
        clock = np.float32(state.plies_since_removal / 100)
        return np.concatenate([o, [clock]]).astype(np.float32)

    losses, tds = [], []
    for i in range(batch.action.shape[0]):
        ret, disc = 0.0, 1.0
        for k in range(n):
            ret += disc * float(batch.reward[i, k])
            disc *= gamma
            if bool(batch.done[i, k]):
                disc = 0.0
                break
        q = network_numpy(p, obs(batch.position, i, 0))
        q_next_online = network_numpy(p, obs(batch.position, i, n))
        q_next_target = network_numpy(t, obs(batch.position, i, n))
        legal = np.asarray(batch.position.legal[i, n])
        best = int(np.argmax(np.where(legal, q_next_online, -np.inf)))
        target_value = ret + disc * q_next_target[best]
        td = target_value - q[int(batch.action[i, 0])]
        huber = (
            0.5 * td**2
            if abs(td) <= config.huber_delta
            else config.huber_delta * (abs(td) - 0.5 * config.huber_delta)
        )
        losses.append(weights[i] * huber)
        tds.append(td)
    return float(np.mean(losses)), np.array(tds)


def test_loss_equals_a_numpy_reference(tiny_run: tuple[Any, dict[str, Any]]) -> None:
    runner, _ = tiny_run
    parts = dqn._Parts(TINY)
    sample = parts.buffer.sample(runner.buffer, jax.random.key(7))
    batch = sample.experience
    # games that end inside the n steps: the return is cut there, nothing is bootstrapped
    batch = batch._replace(done=batch.done.at[::3, 1].set(True).at[1::4, 0].set(True))
    weights = np.linspace(0.5, 1.0, TINY.batch_size).astype(np.float32)
    # a target network that differs from the online one
    target = jax.tree.map(lambda a: a * 0.9, runner.params)
    loss, td = jax.jit(parts.loss)(
        runner.params, target, batch, jnp.asarray(weights), jax.random.key(0)
    )
    ref_loss, ref_td = _numpy_loss(TINY, runner.params, target, batch, weights)
    np.testing.assert_allclose(np.asarray(td), ref_td, rtol=1e-4, atol=1e-4)
    assert abs(float(loss) - ref_loss) < 1e-4 * max(1.0, abs(ref_loss))


def test_numpy_forward_equals_the_flax_network(tiny_run: tuple[Any, dict[str, Any]]) -> None:
    runner, _ = tiny_run
    x = np.random.default_rng(0).random((5, 337)).astype(np.float32)
    net = dqn.QNetwork(TINY.hidden, TINY.dropout)
    expected = np.asarray(net.apply(runner.params, x))
    np.testing.assert_allclose(
        network_numpy(jax.device_get(runner.params["params"]), x), expected, rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("dueling", [False, True])
def test_numpy_forward_equals_the_conv_network(dueling: bool) -> None:
    config = dataclasses.replace(TINY, network="conv", channels=8, conv_layers=2, dueling=dueling)
    net = dqn.make_network(config)
    x = np.random.default_rng(1).random((3, 337)).astype(np.float32)
    params = net.init(jax.random.key(0), jnp.asarray(x))
    expected = np.asarray(net.apply(params, x))
    got = np.stack([conv_numpy(jax.device_get(params["params"]), row) for row in x])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    # the per-square head: action 56 + 4*sq + d reads square sq
    probe = np.zeros((1, 337), np.float32)
    probe[0, 6 * 20 : 6 * 20 + 6] = 1.0  # a piece on square 20 only
    near = (
        np.asarray(net.apply(params, probe))
        - np.asarray(net.apply(params, np.zeros((1, 337), np.float32)))
    )[0]
    far_square = 55  # more than two conv layers away from square 20
    assert near[far_square] == pytest.approx(near[54], abs=1e-6)  # both see only the context


def test_the_planes_observations_equal_their_numpy_twins() -> None:
    """``spec+clock+fields(+battles)``: the JAX observation equals the numpy one the
    agent plays with along random games, and the conv network reading it equals its
    numpy forward pass."""
    env = make(DARK)
    name = "spec+clock+fields+battles"
    config = dataclasses.replace(TINY, network="conv", channels=8, conv_layers=2, observation=name)
    assert config.observation_size == 337 + 12 * 56
    observe = jax.jit(lambda s: dqn.observe(env, config, s))
    rng = np.random.default_rng(3)
    fields_seen = battles_seen = 0
    for game in range(3):
        state = new_game(DARK, seed=game)
        while outcome(state) is None and state.ply < 120:
            extra = extra_inputs(state, name)
            expected = np.concatenate([observation(state).reshape(-1), extra])
            got = np.asarray(observe(env.from_state(state)))
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
            planes = extra[1:].reshape(56, 12)
            fields_seen += int(np.count_nonzero(planes[:, :8].max(axis=0)))
            battles_seen += int(np.count_nonzero(planes[:, 8:]))
            assert np.array_equal(planes[:, :8].reshape(-1), enemy_fields(state))
            actions = legal_actions(state)
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
    assert fields_seen > 500 and battles_seen > 20  # both parts carry information
    net = dqn.make_network(config)
    x = np.random.default_rng(2).random((2, config.observation_size)).astype(np.float32)
    params = net.init(jax.random.key(0), jnp.asarray(x))
    got = np.stack(
        [conv_numpy(jax.device_get(params["params"]), row, square_planes=12) for row in x]
    )
    np.testing.assert_allclose(got, np.asarray(net.apply(params, x)), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------- rewards


def _reward(config: dqn.Config, before: str, after: str, learner: int) -> float:
    env = make(DARK)
    return float(
        dqn._ply_reward(
            config,
            env.from_state(from_fen(before)),
            env.from_state(from_fen(after)),
            jnp.int32(learner),
        )
    )


def test_rewards_count_material_from_the_learners_side() -> None:
    spec = dqn.SPEC_CONFIG
    # player 0's Elephant takes player 1's Wolf on b1
    before, after = "8/8/8/8/8/8/Ew4Rr 0 0 0 - -", "8/8/8/8/8/8/1E4Rr 1 0 1 - -"
    assert _reward(spec, before, after, 0) == pytest.approx(0.2 * 4)
    assert _reward(spec, before, after, 1) == pytest.approx(-0.3)
    cpu = dqn.CPU_CONFIG
    assert _reward(cpu, before, after, 1) == pytest.approx(-0.2 * 4)
    # equal ranks: both removed
    before, after = "8/8/8/8/8/8/Ww4Rr 0 5 5 - -", "8/8/8/8/8/8/6Rr 1 0 6 - -"
    assert _reward(spec, before, after, 0) == pytest.approx(0.2 * 4 - 0.3)


def test_games_restart_with_the_learner_to_move_in_alternating_seats() -> None:
    """Between iterations every game has the learner's seat to move; finished games
    restart with the other seat (the opponent's first action already played when the
    learner is second); every stored action is legal where it was taken."""
    config = dataclasses.replace(
        LIGHT, total_steps=8 * 2 * 100, updates_per_rollout=0, buffer_size=256
    )
    parts = dqn._Parts(config)
    runner = parts.init(jax.random.key(4))
    seats = [np.asarray(runner.seat)]
    episodes = 0
    step = jax.jit(parts.round)
    for _ in range(config.num_rounds):
        runner, metrics = step(runner)
        episodes += int(metrics["episodes"])
        assert np.array_equal(np.asarray(runner.env.current_player), np.asarray(runner.seat))
        assert not np.asarray(runner.env.terminated).any()
        seats.append(np.asarray(runner.seat))
    assert episodes > 0
    changed = np.any(np.stack(seats) != seats[0], axis=0)
    assert changed.any()
    exp = runner.buffer.experience
    legal = np.asarray(exp.position.legal)
    action = np.asarray(exp.action)
    assert np.take_along_axis(legal, action[..., None], axis=-1).all()


def test_random_endgames_are_legal_positions_the_pure_core_agrees_on() -> None:
    """Every drawn endgame: all pieces face up, each code at most once, 1..max pieces a
    side (every count drawn), the given player to move; its legal mask and game end
    equal the pure core's."""
    env = make(DARK)
    words = jnp.arange(300, dtype=jnp.uint32) * jnp.uint32(2654435761)
    players = jnp.arange(300, dtype=jnp.int32) % 2
    states = jax.jit(jax.vmap(lambda w, p: random_endgame(env, w, p, 4)))(words, players)
    counts = set()
    for i in range(300):
        one = jax.tree.map(lambda a, i=i: a[i], states)
        board = np.asarray(one.board)
        pieces = board[board != 0]
        assert (pieces <= 16).all() and len(set(pieces.tolist())) == len(pieces)
        mine, theirs = int((pieces <= 8).sum()), int((pieces > 8).sum())
        assert 1 <= mine <= 4 and 1 <= theirs <= 4
        counts.add((mine, theirs))
        pure = env.to_state(one)
        assert pure.face_down_mask == 0 and pure.to_move == int(players[i])
        assert np.flatnonzero(np.asarray(one.legal_action_mask)).tolist() == list(
            legal_actions(pure)
        )
        assert bool(one.terminated) == (outcome(pure) is not None)
    assert len(counts) == 16
    with pytest.raises(ValueError, match="max_pieces"):
        random_endgame(env, jnp.uint32(0), jnp.int32(0), 9)
    # the mover's and the other side's most pieces apart: 2..5 against 1
    uneven = jax.jit(jax.vmap(lambda w, p: random_endgame(env, w, p, 5, 1)))(words, players)
    boards, movers = np.asarray(uneven.board), np.asarray(uneven.current_player)
    own = np.where(movers[:, None] == 0, (boards > 0) & (boards <= 8), boards > 8).sum(axis=1)
    other = (boards > 0).sum(axis=1) - own
    assert (other == 1).all() and set(own.tolist()) == {1, 2, 3, 4, 5}


def test_endgame_starts_are_played_and_counted_apart() -> None:
    """With ``endgame_starts`` some games start from a random endgame (learner to
    move, nothing face down); their results go to the ``endgame`` metrics, so the
    per-opponent scores count only games from the start position."""
    config = dataclasses.replace(
        LIGHT,
        total_steps=8 * 2 * 150,
        updates_per_rollout=0,
        buffer_size=256,
        endgame_starts=0.5,
        endgame_pieces=2,
    )
    parts = dqn._Parts(config)
    runner = parts.init(jax.random.key(5))
    step = jax.jit(parts.round)
    games = {name: 0 for name in ("random", "self", "endgame", "all")}
    seen_endgame = False
    for _ in range(config.num_rounds):
        runner, metrics = step(runner)
        for name in ("random", "self", "endgame"):
            games[name] += int(metrics[f"games_{name}"])
        games["all"] += int(metrics["episodes"])
        assert np.array_equal(np.asarray(runner.env.current_player), np.asarray(runner.seat))
        flagged = np.asarray(runner.endgame)
        if flagged.any():
            seen_endgame = True
            # an endgame start has every piece face up (none was ever face down)
            assert (np.asarray(runner.env.face_down_mask)[flagged] == 0).all()
    assert seen_endgame and games["endgame"] > 0 and games["random"] > 0
    assert games["random"] + games["self"] + games["endgame"] == games["all"]
    line = dqn.summarize_rounds([{k: float(v) for k, v in metrics.items()}])
    assert "score_endgame" in line or int(metrics["games_endgame"]) == 0
    with pytest.raises(ValueError, match="endgame_starts"):
        dataclasses.replace(LIGHT, endgame_starts=1.5)


def test_shaping_potential_equals_the_pure_one() -> None:
    """SPEC §7's Opp − Threat potential on the JAX core equals the Q-learners' pure one
    on every position of a few random games, for both players."""
    env = make(DARK)
    rng = np.random.default_rng(0)
    f = jax.jit(dqn.potential)  # type: ignore[attr-defined]  # the name dqn imported
    checked = 0
    for _ in range(4):
        state = new_game()
        while outcome(state) is None and state.ply < 200:
            js = env.from_state(state)
            for player in (0, 1):
                assert float(f(js, player)) == pytest.approx(
                    pure_potential(state, player), abs=1e-5
                )
                checked += 1
            actions = legal_actions(state)
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
    assert checked > 400
    before, after = "8/8/8/8/8/8/E2w4 0 0 0 - -", "8/8/8/8/8/8/1E1w4 1 1 1 - -"
    shaped = dataclasses.replace(dqn.SPEC_CONFIG, shaping=0.5)
    # E a1 -> b1 approaches w d1: Opp 3/(1+3) -> 3/(1+2)
    assert _reward(shaped, before, after, 0) - _reward(dqn.SPEC_CONFIG, before, after, 0) == (
        pytest.approx(0.5 * (1.0 - 0.75))
    )


# ------------------------------------------------------------------- determinism


def _flat(params: Any) -> np.ndarray:
    return np.concatenate([np.asarray(a).ravel() for a in jax.tree.leaves(params)])


def test_same_seed_same_network_other_seed_another(
    tiny_train: Any, tiny_run: tuple[Any, dict[str, Any]]
) -> None:
    runner, _ = tiny_run
    again, _ = tiny_train(jax.random.key(0))
    other, _ = tiny_train(jax.random.key(1))
    assert np.array_equal(_flat(runner.params), _flat(again.params))
    assert not np.allclose(_flat(runner.params), _flat(other.params))


def test_chunked_trainer_equals_one_jitted_train(tiny_run: tuple[Any, dict[str, Any]]) -> None:
    runner, _ = tiny_run
    trainer = dqn.DQNTrainer(TINY)
    state = trainer.init(0)
    state, _ = trainer.advance(state, 48)
    state, _ = trainer.advance(state, 80)
    assert trainer.steps_done(state) == 128
    np.testing.assert_allclose(_flat(state.params), _flat(runner.params), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------- checkpoints


def test_run_checkpoint_round_trips_bit_exactly(
    tmp_path: Path, tiny_run: tuple[Any, dict[str, Any]]
) -> None:
    runner, _ = tiny_run
    trainer = dqn.DQNTrainer(TINY)
    trainer.save(runner, str(tmp_path / "run.npz"))
    loaded = trainer.load(str(tmp_path / "run.npz"))
    for a, b in zip(jax.tree.leaves(runner), jax.tree.leaves(loaded), strict=True):
        if jnp.issubdtype(a.dtype, jax.dtypes.prng_key):
            assert np.array_equal(jax.random.key_data(a), jax.random.key_data(b))
        else:
            assert np.array_equal(np.asarray(a), np.asarray(b))
    other = dqn.DQNTrainer(dataclasses.replace(TINY, learning_rate=0.5))
    with pytest.raises(CheckpointError, match="another config"):
        other.load(str(tmp_path / "run.npz"))


def test_corrupt_and_truncated_checkpoints_raise_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.npz"
    save_checkpoint(path, {"w": np.arange(1000.0)}, kind="dqn", config={"a": 1}, step=3)
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"cut\.npz"):
        load_checkpoint(tmp_path / "cut.npz")
    edited = bytearray(data)
    edited[len(data) // 2] ^= 0xFF  # inside the array's bytes
    (tmp_path / "edited.npz").write_bytes(bytes(edited))
    with pytest.raises(CheckpointError, match=r"edited\.npz"):
        load_checkpoint(tmp_path / "edited.npz")
    with pytest.raises(CheckpointError, match="not of 'qlearn'"):
        load_checkpoint(path, kind="qlearn")
    with pytest.raises(CheckpointError, match="another config"):
        load_checkpoint(path, config={"a": 2})
    assert (path.stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_config_files_and_names(tmp_path: Path) -> None:
    assert resolve_config("dqn", "spec", None) == dqn.SPEC_CONFIG
    assert resolve_config("dqn", None, 1000).total_steps == 1000
    (tmp_path / "c.toml").write_text("hidden = [32, 32]\nn_step = 2\n")
    assert resolve_config("dqn", str(tmp_path / "c.toml"), None).hidden == (32, 32)
    (tmp_path / "bad.json").write_text('{"hiden": [3]}')
    with pytest.raises(ConfigError, match=r"bad\.json.*unknown field 'hiden'"):
        resolve_config("dqn", str(tmp_path / "bad.json"), None)
    (tmp_path / "bad2.json").write_text('{"gamma": 2.0}')
    with pytest.raises(ConfigError, match="gamma"):
        resolve_config("dqn", str(tmp_path / "bad2.json"), None)


def test_spec_config_is_spec_section_7() -> None:
    c = dqn.SPEC_CONFIG
    assert (c.observation_size, c.hidden, c.dropout, c.learning_rate, c.gamma, c.batch_size) == (
        336,
        (512, 512, 512),
        0.2,
        1e-4,
        0.99,
        64,
    )
    assert (c.grad_clip, c.n_step, c.beta_start, c.beta_end, c.num_envs) == (1.0, 1, 0.4, 1.0, 1024)
    assert (
        c.reveal_reward,
        c.move_reward,
        c.capture_reward,
        c.lost_piece_reward,
        c.win_reward,
        c.draw_reward,
    ) == (
        0.1,
        0.05,
        0.2,
        -0.3,
        10.0,
        0.0,
    )
    assert (c.phase1_fraction, c.phase1_epsilon, c.phase2_epsilon, c.opponents) == (
        0.4,
        (0.9, 0.02),
        (0.5, 0.02),
        "random",
    )


# ------------------------------------------------------------ agent and training


def test_trained_checkpoint_plays_through_the_registry(tmp_path: Path) -> None:
    trainer = dqn.DQNTrainer(LIGHT)
    run_training(trainer, tmp_path / "run", steps=32, chunk_steps=16, eval_games=2)
    lines = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [m["step"] for m in lines] == [16, 32] and set(lines[-1]["eval"]) == {"random", "greedy"}
    agent = make_agent(f"dqn:path={tmp_path / 'run' / 'agent.npz'}", DARK)
    assert isinstance(agent, DQNAgent)
    state = new_game()
    assert agent.act(state, np.random.default_rng(0)) in legal_actions(state)
    with pytest.raises(CheckpointError, match="already there"):
        run_training(trainer, tmp_path / "run", steps=64)
    ckpt = load_checkpoint(tmp_path / "run" / "agent.npz", kind="dqn")
    bogus = {**ckpt.config, "observation": "spec+smell"}
    save_checkpoint(tmp_path / "bogus.npz", ckpt.arrays, kind="dqn", config=bogus, step=ckpt.step)
    with pytest.raises(CheckpointError, match=r"bogus\.npz: unknown observation 'spec\+smell'"):
        DQNAgent(DARK, str(tmp_path / "bogus.npz"))


def test_the_shipped_checkpoint_was_made_by_the_cpu_config() -> None:
    """The shipped ``dqn.npz`` says which named config made it, and its recorded fields
    are that config's (so the README's one command makes it again)."""
    ckpt = load_checkpoint(Path(dqn.__file__).parent / "checkpoints" / "dqn.npz", kind="dqn")
    assert ckpt.meta["config_name"] == "cpu" and ckpt.meta["seed"] == 0
    want = json.loads(json.dumps(dataclasses.asdict(dqn.CPU_CONFIG)))
    assert dict(ckpt.config) == want
    assert ckpt.step >= dqn.CPU_CONFIG.total_steps


_SCRIPT = textwrap.dedent(
    """
    import json, sys, jax, numpy as np
    from jungle_train import dqn
    config = dqn.Config(**json.loads(sys.argv[1]))
    runner, _ = dqn.make_train(config)(jax.random.key(0))
    leaves = jax.tree.leaves(runner.params)
    np.savez(sys.argv[2], *[np.asarray(a) for a in leaves])
    print(len(jax.devices()))
    """
)


def test_two_devices_give_the_one_device_result(tmp_path: Path) -> None:
    fields = {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(LIGHT).items()
    }
    results = []
    for devices in (1, 2):
        env = _subprocess_env(
            tmp_path, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}"
        )
        out = tmp_path / f"{devices}.npz"
        run = subprocess.run(
            [sys.executable, "-c", _SCRIPT, json.dumps(fields), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.strip().splitlines()[-1] == str(devices)
        with np.load(out) as data:
            results.append([data[k] for k in data.files])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_a_run_killed_at_any_moment_resumes_to_the_same_network(tmp_path: Path) -> None:
    """SIGKILL `jungle train dqn` mid-run (twice), resume it; it ends at the same step
    count as an uninterrupted run, with the same network and a parseable metrics file."""
    config = tmp_path / "tiny.json"
    fields = {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(LIGHT).items()
    }
    config.write_text(json.dumps(fields))
    jungle = [str(Path(sys.executable).parent / "jungle")]

    def train(out: Path, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [
                *jungle,
                "train",
                "dqn",
                "--config",
                str(config),
                "--steps",
                "256",
                "--chunk",
                "16",
                "--eval-games",
                "0",
                "--eval-against",
                "",
                "--out",
                str(out),
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=_subprocess_env(tmp_path),
        )

    whole = train(tmp_path / "whole")
    assert whole.wait(timeout=300) == 0, whole.stderr.read() if whole.stderr else ""
    killed = tmp_path / "killed"
    rng = np.random.default_rng(0)
    for attempt in range(2):
        proc = train(killed, *(["--resume"] if attempt else []))
        deadline = time.monotonic() + 240
        while not (killed / "run.npz").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(float(rng.uniform(0.0, 1.5)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    final = train(killed, "--resume")
    assert final.wait(timeout=300) == 0, final.stderr.read() if final.stderr else ""
    a = load_checkpoint(tmp_path / "whole" / "agent.npz")
    b = load_checkpoint(killed / "agent.npz")
    assert a.step == b.step == 256
    for name in a.arrays:
        assert np.array_equal(a.arrays[name], b.arrays[name]), name
    lines = read_metrics(killed / "metrics.jsonl")
    assert [m["step"] for m in lines] == [
        m["step"] for m in read_metrics(tmp_path / "whole" / "metrics.jsonl")
    ]


def test_the_gpu_config_is_the_cpu_config_with_sixteen_times_the_games() -> None:
    """Only the batch of games grows: the replay ratio, the replay's age in updates and
    every schedule per decision (target syncs, self-play refreshes in updates, ε by
    decisions) stay the shipped ``cpu`` config's."""
    cpu, gpu = dqn.CPU_CONFIG, dqn.GPU_CONFIG
    assert resolve_config("dqn", "gpu", 1 << 20) == dataclasses.replace(gpu, total_steps=1 << 20)
    changed = {
        f.name
        for f in dataclasses.fields(dqn.Config)
        if getattr(cpu, f.name) != getattr(gpu, f.name)
    }
    assert changed == {"total_steps", "num_envs", "updates_per_rollout"}
    assert gpu.num_envs == 16 * cpu.num_envs

    def replay_ratio(c: dqn.Config) -> float:
        return c.updates_per_rollout * c.batch_size / c.steps_per_round

    def replay_age_in_updates(c: dqn.Config) -> float:
        return c.buffer_size / c.steps_per_round * c.updates_per_rollout

    assert replay_ratio(gpu) == replay_ratio(cpu) == 0.5
    assert replay_age_in_updates(gpu) == replay_age_in_updates(cpu) == 512
    assert gpu.updates_per_rollout / gpu.steps_per_round == (
        cpu.updates_per_rollout / cpu.steps_per_round
    )
