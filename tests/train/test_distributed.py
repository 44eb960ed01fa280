"""The DQN on JAX's multi-controller runtime: two processes of one CPU device each, on
loopback with gloo collectives, train the same network as one process with two devices
(the same global batch and seed), process 0 alone writes the run folder, and a run one
of whose processes is killed stops and resumes to the same end."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from jungle_train import dqn
from jungle_train.common._checkpoint import load_checkpoint
from jungle_train.common._distributed import wanted
from jungle_train.common._errors import ConfigError
from jungle_train.common._metrics import read_metrics

MICRO = dqn.Config(
    total_steps=128,
    num_envs=8,
    rollout_length=1,
    updates_per_rollout=1,
    hidden=(16,),
    dropout=0.0,
    observation="spec",
    batch_size=8,
    n_step=1,
    buffer_size=64,
    min_buffer=16,
    opponents="random",
)
"""The smallest DQN that learns from the first rounds (quick to compile): 8 games, so 4
per device on two devices."""

STEPS, CHUNK = 480, 16
"""30 chunks of 2 rounds: a metrics line with a loss and a checkpoint after each."""

TIMEOUT = 420
"""Seconds a launch may take (compiling on a loaded 2-core machine included)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the config file; its JAX compilation cache serves every launch."""
    path = tmp_path_factory.mktemp("distributed")
    fields = {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(MICRO).items()
    }
    (path / "micro.json").write_text(json.dumps(fields))
    return path


class Launch:
    """``jungle train dqn`` in child processes, always killed on the way out."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.procs: list[subprocess.Popen[str]] = []

    def start(
        self,
        out: Path,
        *extra: str,
        devices: int = 1,
        resume: bool = False,
        learner: Sequence[str] = (),
    ) -> subprocess.Popen[str]:
        """``learner``: the kind and its options (default: the micro DQN's)."""
        flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count="
        env = dict(
            os.environ,
            XLA_FLAGS=f"{flags}{devices}".strip(),
            JAX_COMPILATION_CACHE_DIR=str(self.workdir / "jax-cache"),
            JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
            JAX_PLATFORMS="cpu",
        )
        args = [
            str(Path(sys.executable).parent / "jungle"),
            "train",
            *(learner or self.dqn()),
            "--eval-games",
            "0",
            "--eval-against=",
            "--out",
            str(out),
            *(["--resume"] if resume else []),
            *extra,
        ]
        proc = subprocess.Popen(
            args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.procs.append(proc)
        return proc

    def dqn(self) -> list[str]:
        config = str(self.workdir / "micro.json")
        return ["dqn", "--config", config, "--steps", str(STEPS), "--chunk", str(CHUNK)]

    def pair(
        self, outs: Sequence[Path], *, resume: bool = False, learner: Sequence[str] = ()
    ) -> list[subprocess.Popen[str]]:
        """Two processes of one device each, joined on a free loopback port; process
        ``i`` is given folder ``outs[i]``."""
        where = f"127.0.0.1:{_free_port()}"
        return [
            self.start(
                out,
                "--coordinator",
                where,
                "--num-processes",
                "2",
                "--process-id",
                str(i),
                "--heartbeat",
                "10",
                resume=resume,
                learner=learner,
            )
            for i, out in enumerate(outs)
        ]

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()


@pytest.fixture
def launch(workdir: Path) -> Iterator[Launch]:
    runs = Launch(workdir)
    try:
        yield runs
    finally:
        runs.close()


def _finish(proc: subprocess.Popen[str]) -> None:
    try:
        code = proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert code == 0, proc.stderr.read()[-3000:] if proc.stderr else code


@pytest.fixture(scope="module")
def reference(workdir: Path) -> Path:
    """The run in one process with two devices (the same global batch)."""
    runs = Launch(workdir)
    try:
        out = workdir / "one-process"
        _finish(runs.start(out, devices=2))
    finally:
        runs.close()
    return out


def _losses(out: Path) -> np.ndarray:
    lines = read_metrics(out / "metrics.jsonl")
    assert [m["step"] for m in lines] == list(range(CHUNK, STEPS + 1, CHUNK))
    return np.array([m["loss"] for m in lines], np.float64)


def _assert_same_network(a: Path, b: Path) -> None:
    left, right = load_checkpoint(a / "agent.npz"), load_checkpoint(b / "agent.npz")
    assert left.step == right.step == STEPS
    assert sorted(left.arrays) == sorted(right.arrays)
    for name in left.arrays:
        np.testing.assert_allclose(left.arrays[name], right.arrays[name], rtol=1e-5, atol=1e-6)


def test_two_processes_give_the_one_process_losses(
    reference: Path, workdir: Path, launch: Launch
) -> None:
    """Each process holds 4 of the 8 games; the gradients cross processes through
    gloo. The losses match to 1e-6 (measured equal to the last bit: the same program
    over the same two-device mesh), and only process 0 wrote anything."""
    outs = [workdir / "two-processes", workdir / "process-1-folder"]
    for proc in launch.pair(outs):
        _finish(proc)
    losses, expected = _losses(outs[0]), _losses(reference)
    assert np.isfinite(expected).all() and np.ptp(expected) > 0
    np.testing.assert_allclose(losses, expected, rtol=0, atol=1e-6)
    _assert_same_network(outs[0], reference)
    assert not outs[1].exists()


def test_a_killed_process_stops_the_other_and_both_resume(
    reference: Path, workdir: Path, launch: Launch
) -> None:
    """SIGKILL process 1 mid-run: process 0 stops with an error within the heartbeat
    timeout (10 s) instead of waiting for ever; both resume. Then the same with process
    0 (the coordinator) killed. The last resume ends at the reference's step count, with
    its losses and network."""
    out = workdir / "killed"
    rng = np.random.default_rng(0)
    for attempt, victim in enumerate((1, 0)):
        procs = launch.pair([out, out], resume=attempt > 0)
        deadline = time.monotonic() + TIMEOUT
        before = read_metrics(out / "metrics.jsonl")[-1]["step"] if attempt else 0
        while time.monotonic() < deadline:
            lines = read_metrics(out / "metrics.jsonl") if (out / "run.npz").exists() else []
            if lines and lines[-1]["step"] > before:
                break
            assert all(p.poll() is None for p in procs), "a process stopped early"
            time.sleep(0.05)
        time.sleep(float(rng.uniform(0.0, 1.0)))
        assert procs[victim].poll() is None, "the run ended before the kill"
        procs[victim].send_signal(signal.SIGKILL)
        survivor = procs[1 - victim]
        killed_at = time.monotonic()
        code = survivor.wait(timeout=120)
        print(f"process {1 - victim} stopped {time.monotonic() - killed_at:.1f} s after")
        assert code != 0
        assert read_metrics(out / "metrics.jsonl")[-1]["step"] < STEPS
    for proc in launch.pair([out, out], resume=True):
        _finish(proc)
    np.testing.assert_allclose(_losses(out), _losses(reference), rtol=0, atol=1e-6)
    _assert_same_network(out, reference)


def test_the_environment_decides_whether_to_join() -> None:
    """``jungle train dqn`` joins other processes when a flag, the coordinator's
    variable or a SLURM step of several tasks says so, and not under a one-task SLURM
    job (a plain ``sbatch`` script)."""
    slurm = {
        "SLURM_JOB_ID": "7",
        "SLURM_STEP_NODELIST": "node[01-02]",
        "SLURM_NTASKS": "2",
        "SLURM_PROCID": "1",
        "SLURM_LOCALID": "0",
    }
    assert wanted(environ=slurm)
    assert not wanted(environ={**slurm, "SLURM_NTASKS": "1"})
    assert not wanted(environ={k: v for k, v in slurm.items() if k != "SLURM_STEP_NODELIST"})
    assert wanted(environ={"JAX_COORDINATOR_ADDRESS": "10.0.0.1:1234"})
    assert not wanted(environ={})
    assert wanted(process_id=0, environ={})


def test_alphazero_self_play_runs_across_processes_the_same(workdir: Path, launch: Launch) -> None:
    """AlphaZero's self-play shards its games as the DQN does: its tiny config's 4
    games, 2 on each of two processes, learn what one process with two devices learns."""
    azero = ["azero", "--config", "tiny", "--steps", "64", "--chunk", "16"]
    one, two = workdir / "azero-one", workdir / "azero-two"
    _finish(launch.start(one, devices=2, learner=azero))
    for proc in launch.pair([two, workdir / "azero-process-1"], learner=azero):
        _finish(proc)

    def losses(out: Path) -> np.ndarray:  # the first round learns nothing: no loss (null)
        lines = read_metrics(out / "metrics.jsonl")
        return np.array([np.nan if m["loss"] is None else m["loss"] for m in lines])

    expected, got = losses(one), losses(two)
    assert len(got) == len(expected) == 4 and np.isfinite(expected[1:]).all()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert not (workdir / "azero-process-1").exists()


def test_learners_that_do_not_shard_refuse_several_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The value network keeps its batch on one device; across processes each would
    play the whole batch and gather every process's copy into the checkpoint, so it
    refuses; the DQN and AlphaZero accept."""
    from jungle_train import azero, value
    from jungle_train.jitted import _trainer as _jax_trainer

    monkeypatch.setattr(_jax_trainer, "process_count", lambda: 2)
    with pytest.raises(ConfigError, match="ValueTrainer does not shard"):
        value.ValueTrainer(value.Config())
    assert dqn.DQNTrainer(MICRO).config is MICRO
    assert azero.AZeroTrainer(azero.TINY_CONFIG).config is azero.TINY_CONFIG
