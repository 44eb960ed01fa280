"""The DQN trainer (``jungle_train.dqn``), its runs: seeds, chunked training,
checkpoints, configs, the trained agent in the registry, the two-device run, and resume
after a kill."""

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

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_agents import make_agent
from jungle_core import DARK, legal_actions, new_game
from jungle_train import dqn
from jungle_train._trainers import resolve_config
from jungle_train.common._checkpoint import load_checkpoint, save_checkpoint
from jungle_train.common._errors import CheckpointError, ConfigError
from jungle_train.common._metrics import read_metrics
from jungle_train.common._run import run_training
from jungle_train.players._numpy import SHIPPED, DQNAgent
from tests._dqn import LEAGUE, LIGHT, TINY


def _subprocess_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a child Python: JAX's compilation cache shared between the
    children of one test, so only the first compiles."""
    return dict(
        os.environ,
        JAX_COMPILATION_CACHE_DIR=str(tmp_path / "jax-cache"),
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        **extra,
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


EXPERIMENT_CONFIGS = Path(__file__).resolve().parents[2] / "experiments" / "configs"


@pytest.mark.parametrize(
    "name", sorted(p.name for p in EXPERIMENT_CONFIGS.glob("dqn-*.toml")), ids=str
)
def test_the_experiments_dqn_configs_load(name: str) -> None:
    """Each DQN run the experiments log cites is still a valid config of this version."""
    config = resolve_config("dqn", str(EXPERIMENT_CONFIGS / name), None)
    assert isinstance(config, dqn.Config)


def test_the_league_config_is_its_last_runs_file() -> None:
    """``league`` is the config of the last league run the log measured
    (``experiments/configs/dqn-league-lookahead.toml``), field for field."""
    path = EXPERIMENT_CONFIGS / "dqn-league-lookahead.toml"
    assert resolve_config("dqn", str(path), None) == dqn.LEAGUE_CONFIG


def test_spec_config_is_the_reference_dqn() -> None:
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
    assert [m["step"] for m in lines] == [16, 32]
    assert {"score/random", "score/greedy"} <= set(lines[-1])
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
    are that config's (so the README's one command makes it again; the league's fields,
    added since, at their defaults)."""
    ckpt = load_checkpoint(SHIPPED / "dqn.npz", kind="dqn")
    assert ckpt.meta["config_name"] == "cpu" and ckpt.meta["seed"] == 0
    want = json.loads(json.dumps(dataclasses.asdict(dqn.CPU_CONFIG)))
    recorded = dict(ckpt.config)
    added = {name: want[name] for name in ("pool_size", "pfsp_exponent", "frozen_opponent")}
    assert {**added, **recorded} == want
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
        devices_flag = f"--xla_force_host_platform_device_count={devices}"
        flags = f"{os.environ.get('XLA_FLAGS', '')} {devices_flag}".strip()
        env = _subprocess_env(tmp_path, XLA_FLAGS=flags)
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


@pytest.mark.parametrize("run", [LIGHT, LEAGUE], ids=["scripted", "league"])
def test_a_run_killed_at_any_moment_resumes_to_the_same_network(
    tmp_path: Path, run: dqn.Config
) -> None:
    """SIGKILL `jungle train dqn` mid-run (twice), resume it; it ends at the same step
    count as an uninterrupted run, with the same network and a parseable metrics file
    (for the league: the pool, its counts and each game's member resume too)."""
    config = tmp_path / "tiny.json"
    fields = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(run).items()}
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
