"""A training run cut at any byte resumes to the uninterrupted run.

The run loop appends a chunk's metrics line (fsynced), then writes the run checkpoint
``run.npz`` atomically. A kill can stop the metrics file on any byte, with the checkpoint
of the chunk before (the line was being written, or was written and its checkpoint was
not yet); resuming must keep every finished chunk's line exactly once, play the rest
again and end equal to a run that was never stopped. A whole last line that lost only its
newline (damage from outside) is a finished chunk's and is kept. A checkpoint cut at any
byte is refused, naming the file, and a temporary file left by a write killed midway is
never read and is removed by the next write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jungle_train.common._checkpoint import load_checkpoint
from jungle_train.common._errors import CheckpointError
from jungle_train.common._metrics import MetricsLog, read_metrics
from jungle_train.common._run import run_training
from jungle_train.tabular.qlearn import Config, QLearner

CONFIG = Config(self_sync_steps=25, opponents="random=1,greedy=1,self=1")
STEPS = 40
CHUNK = 10
TIMINGS = {"time", "decisions_per_s", "compile_s"}
"""The metrics that measure the machine, not the learner: they differ between runs."""


def _train(out: Path, *, resume: bool = False, snapshots: dict[int, bytes] | None = None) -> None:
    def keep(done: int, total: int, line: dict[str, Any]) -> None:
        if snapshots is not None:
            snapshots[done] = (out / "run.npz").read_bytes()

    run_training(
        QLearner(CONFIG),
        out,
        steps=STEPS,
        seed=5,
        chunk_steps=CHUNK,
        eval_games=0,
        resume=resume,
        progress=keep,
    )


def _learned(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The metrics lines without the timings."""
    return [{k: v for k, v in line.items() if k not in TIMINGS} for line in lines]


def _checkpoint(path: Path) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    ckpt = load_checkpoint(path)
    return dict(ckpt.meta), {name: a.tolist() for name, a in sorted(ckpt.arrays.items())}


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, bytes]]:
    """An uninterrupted run, and its run checkpoint after each chunk (by step)."""
    out = tmp_path_factory.mktemp("whole")
    snapshots: dict[int, bytes] = {}
    _train(out, snapshots=snapshots)
    return out, snapshots


def _crash_states(data: bytes, steps: list[int]) -> list[tuple[int, int]]:
    """Every (cut, checkpoint step) to resume from, for the cuts in the last two lines.

    Line ``i`` (step ``steps[i]``) is appended before its checkpoint is written, so while
    any of its bytes is being written the checkpoint is the chunk before's; once its
    newline is on the disk, the checkpoint is either. A line whole but for its newline
    also meets its own checkpoint (damage from outside, after the run wrote both).
    """
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    before = [0, 0, *steps]  # before[i + 2]: the step of line i - 1; 0: no checkpoint
    states = []
    for cut in range(ends[-3], len(data) + 1):
        line = next((i for i, end in enumerate(ends) if cut < end), len(ends))
        states.append((cut, before[line + 1]))
        if cut in ends:
            states.append((cut, before[line]))
        if line < len(ends) and cut == ends[line] - 1:
            states.append((cut, steps[line]))
    return states


def test_a_metrics_file_cut_at_every_byte_of_its_last_two_lines_resumes_to_the_same_run(
    whole: tuple[Path, dict[int, bytes]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what is on the disk is what the cut leaves: waiting for the disk adds nothing here
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    folder, snapshots = whole
    data = (folder / "metrics.jsonl").read_bytes()
    lines = read_metrics(folder / "metrics.jsonl")
    steps = [line["step"] for line in lines]
    assert steps == list(range(CHUNK, STEPS + 1, CHUNK))
    run = _checkpoint(folder / "run.npz")
    agent = _checkpoint(folder / "agent.npz")
    ends = [0] + [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    states = _crash_states(data, steps)
    assert len(states) > len(data) - ends[-3]  # every byte, and the boundaries twice
    for cut, at in states:
        where = f"cut at byte {cut}, checkpoint of step {at}"
        out = tmp_path / f"cut{cut}-{at}"
        out.mkdir()
        (out / "metrics.jsonl").write_bytes(data[:cut])
        if at:
            (out / "run.npz").write_bytes(snapshots[at])
        if at == STEPS:  # the last chunk wrote its playing checkpoint before its line
            (out / "agent.npz").write_bytes((folder / "agent.npz").read_bytes())
        # the reader and the writer agree on the lines a cut file holds
        seen = read_metrics(out / "metrics.jsonl")
        MetricsLog(out / "metrics.jsonl").close()
        assert read_metrics(out / "metrics.jsonl") == seen, where
        assert (out / "metrics.jsonl").read_bytes()[-1:] in (b"", b"\n"), where
        _train(out, resume=True)
        final = read_metrics(out / "metrics.jsonl")
        # one line per chunk, equal to the uninterrupted run's (timings aside)
        assert [line["step"] for line in final] == steps, where
        assert _learned(final) == _learned(lines), where
        # the lines of the chunks the checkpoint holds are kept byte for byte
        kept = ends[steps.index(at) + 1] if at else 0
        assert (out / "metrics.jsonl").read_bytes()[:kept] == data[:kept], where
        assert _checkpoint(out / "run.npz") == run, where
        assert _checkpoint(out / "agent.npz") == agent, where


def test_a_whole_last_line_without_its_newline_is_kept_not_played_again(
    whole: tuple[Path, dict[int, bytes]], tmp_path: Path
) -> None:
    folder, snapshots = whole
    data = (folder / "metrics.jsonl").read_bytes()
    (tmp_path / "metrics.jsonl").write_bytes(data[:-1])
    (tmp_path / "run.npz").write_bytes(snapshots[STEPS])
    assert len(read_metrics(tmp_path / "metrics.jsonl")) == STEPS // CHUNK  # read as whole
    _train(tmp_path, resume=True)
    assert (tmp_path / "metrics.jsonl").read_bytes() == data  # completed, not cut


def test_a_torn_line_of_a_chunk_the_checkpoint_holds_is_named(
    whole: tuple[Path, dict[int, bytes]], tmp_path: Path
) -> None:
    folder, snapshots = whole
    data = (folder / "metrics.jsonl").read_bytes()
    (tmp_path / "metrics.jsonl").write_bytes(data[: data.rfind(b"\n", 0, -1) + 5])
    (tmp_path / "run.npz").write_bytes(snapshots[STEPS])
    with pytest.warns(UserWarning, match=rf"metrics\.jsonl: no line for step {STEPS}\b"):
        _train(tmp_path, resume=True)
    steps = [line["step"] for line in read_metrics(tmp_path / "metrics.jsonl")]
    assert steps == list(range(CHUNK, STEPS, CHUNK))
    assert (tmp_path / "metrics.jsonl").read_bytes().endswith(b"\n")


def _offsets(size: int) -> list[int]:
    """Every offset of a checkpoint's last 600 bytes (the zip's directory and end record,
    where a cut is hardest to see) and 200 spread over the rest."""
    tail = max(0, size - 600)
    return sorted({*np.linspace(0, tail, 200, dtype=int).tolist(), *range(tail, size)})


@pytest.mark.parametrize("name", ["run.npz", "agent.npz"])
def test_a_checkpoint_cut_at_any_byte_is_refused_naming_it(
    whole: tuple[Path, dict[int, bytes]], tmp_path: Path, name: str
) -> None:
    folder, _ = whole
    data = (folder / name).read_bytes()
    path = tmp_path / f"cut-{name}"
    for cut in _offsets(len(data)):
        path.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match=rf"^{path}: "):
            load_checkpoint(path)
    path.write_bytes(data)
    load_checkpoint(path)  # whole, it loads


def test_resuming_from_a_cut_checkpoint_is_refused(
    whole: tuple[Path, dict[int, bytes]], tmp_path: Path
) -> None:
    folder, snapshots = whole
    (tmp_path / "metrics.jsonl").write_bytes((folder / "metrics.jsonl").read_bytes())
    (tmp_path / "run.npz").write_bytes(snapshots[CHUNK * 2][:-100])
    with pytest.raises(CheckpointError, match=r"run\.npz: not a readable checkpoint"):
        _train(tmp_path, resume=True)


_KILLED_WRITE = """
import os, sys
import numpy as np
from jungle_train.common._checkpoint import save_checkpoint

def die(source, target):  # killed after the data is written, before the rename
    os._exit(9)

os.replace = die
save_checkpoint(sys.argv[1], {"w": np.ones(1000)}, kind="qlearn", config={}, step=999)
"""


def test_a_write_killed_midway_leaves_the_old_checkpoint_and_its_leftover_is_removed(
    whole: tuple[Path, dict[int, bytes]], tmp_path: Path
) -> None:
    folder, snapshots = whole
    out = tmp_path / "run"
    out.mkdir()
    data = (folder / "metrics.jsonl").read_bytes()
    (out / "metrics.jsonl").write_bytes(data[: data.index(b"\n") + 1])
    (out / "run.npz").write_bytes(snapshots[CHUNK])
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITE, str(out / "run.npz")], check=False
    )
    assert killed.returncode == 9
    leftovers = list(out.glob(".run.npz.*.tmp"))
    assert len(leftovers) == 1  # the killed write's temporary file, whole but not renamed
    assert load_checkpoint(out / "run.npz").step == CHUNK  # never read: the old one loads
    leftovers[0].write_bytes(leftovers[0].read_bytes()[:-50])  # and torn, it changes nothing
    _train(out, resume=True)
    assert not list(out.glob(".*.tmp"))  # the next write removed it
    assert _checkpoint(out / "run.npz") == _checkpoint(folder / "run.npz")
    steps = [line["step"] for line in read_metrics(out / "metrics.jsonl")]
    assert steps == list(range(CHUNK, STEPS + 1, CHUNK))
    assert json.loads((out / "config.json").read_text())["seed"] == 5
