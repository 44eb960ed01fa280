"""The arena's worker processes: a run that is stopped (Ctrl-C, a failed game) ends its
workers at once, without waiting for the games in flight; a worker that dies fails the
run instead of hanging it; the games finished before either stay in the games file."""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest

from jungle_agents._base import _REGISTRY
from jungle_agents.arena import GameResult, load_games, round_robin
from jungle_agents.arena._schedule import RemoteTraceback
from jungle_core import DARK

PLUGIN = "tests._pool_agents"


@pytest.fixture
def pool_agents() -> Iterator[str]:
    """The plugin's name; its agents are unregistered afterwards."""
    yield PLUGIN
    for name in ("sleepy", "crash", "fail"):
        _REGISTRY.pop(name, None)
    sys.modules.pop(PLUGIN, None)


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """A run that hangs (or waits for a game of an hour) fails the test, not the suite."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _pairs(path: Path) -> list[tuple[tuple[str, str], int]]:
    return sorted((g.pair, g.index) for g in load_games(path)[1])


def test_ctrl_c_ends_the_workers_without_waiting_for_their_games(
    tmp_path: Path, pool_agents: str
) -> None:
    out = tmp_path / "games.jsonl"
    before = set(multiprocessing.active_children())

    def interrupt(done: int, total: int, game: GameResult) -> None:
        if done == 2:  # both workers have started a game of sleepy's by now
            raise KeyboardInterrupt

    with deadline(120), pytest.raises(KeyboardInterrupt):
        round_robin(
            DARK,
            ["random", "greedy", "sleepy"],
            2,
            workers=2,
            out=out,
            progress=interrupt,
            plugins=[pool_agents],
        )
    assert set(multiprocessing.active_children()) <= before
    assert _pairs(out) == [(("random", "greedy"), 0), (("random", "greedy"), 1)]


def test_a_failed_game_ends_the_other_workers_and_names_itself(
    tmp_path: Path, pool_agents: str
) -> None:
    out = tmp_path / "games.jsonl"
    before = set(multiprocessing.active_children())
    # two workers wait on sleepy; the third plays random vs fail, which raises
    with deadline(120), pytest.raises(RuntimeError, match=r"game 0 of random vs fail") as info:
        round_robin(
            DARK, ["random", "sleepy", "fail"], 2, workers=3, out=out, plugins=[pool_agents]
        )
    assert isinstance(info.value.__cause__, RemoteTraceback)
    assert "ZeroDivisionError: no move today" in str(info.value.__cause__)
    assert set(multiprocessing.active_children()) <= before
    assert _pairs(out) == []


def test_a_worker_that_dies_fails_the_run_instead_of_hanging(
    tmp_path: Path, pool_agents: str
) -> None:
    out = tmp_path / "games.jsonl"
    before = set(multiprocessing.active_children())
    # random vs greedy first; then each game of crash's kills its worker
    with deadline(120), pytest.raises(BrokenProcessPool, match=r"exit code -9"):
        round_robin(
            DARK, ["random", "greedy", "crash"], 2, workers=2, out=out, plugins=[pool_agents]
        )
    assert set(multiprocessing.active_children()) <= before
    kept = _pairs(out)
    assert 1 <= len(kept) <= 2 and all(pair == ("random", "greedy") for pair, _ in kept)
    # the run resumes from what was kept, once the dying agent is out of it
    done = round_robin(DARK, ["random", "greedy"], 2, workers=2, out=out)
    assert len(done.games) == 2 and _pairs(out) == [
        (("random", "greedy"), 0),
        (("random", "greedy"), 1),
    ]
    assert set(multiprocessing.active_children()) <= before
