"""Faults: a tournament killed with SIGKILL at random moments resumes to exactly the games
of an uninterrupted run, and the files the library writes get the user's normal mode."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jungle_agents import make_agent
from jungle_agents.arena import load_games, play_game, round_robin, save_record
from jungle_cli import main
from jungle_core import DARK

SPECS = ["random", "greedy", "minimax:depth=1"]
GAMES, SEED, MAX_PLIES = 6, 3, 60


def _tournament(out: Path) -> subprocess.Popen[bytes]:
    """``jungle tournament`` in a process group of its own (its workers included)."""
    argv = [sys.executable, "-c", "import sys, jungle_cli; sys.exit(jungle_cli.main())"]
    argv += ["tournament", "--agents", ",".join(SPECS), "--games", str(GAMES)]
    argv += ["--seed", str(SEED), "--max-plies", str(MAX_PLIES), "--workers", "2"]
    argv += ["--out", str(out)]
    return subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _key(path: Path) -> list[tuple[object, ...]]:
    return sorted(
        (g.pair, g.index, g.record.players, g.record.seed, g.record.actions, g.record.outcomes,
         g.record.winner, g.record.reason)
        for g in load_games(path)[1]
    )  # fmt: skip


def test_a_tournament_killed_at_random_moments_resumes_to_the_same_games(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    games = out / "games.jsonl"
    pick = random.Random(int.from_bytes(os.urandom(4), "little"))
    kills = []
    # each kill lands after a random number of finished games (0: during start-up or the
    # header), a random fraction of a game later: mid-game, mid-write or between games
    for target in sorted(pick.sample(range(3 * GAMES), 4)):
        process = _tournament(out)
        while process.poll() is None and _lines(games) < 1 + target:
            time.sleep(0.005)
        time.sleep(pick.uniform(0.0, 0.15))
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            kills.append((target, len(load_games(games)[1])))
    assert len(kills) >= 2, f"the runs ended before they could be killed: {kills}"
    process = _tournament(out)
    assert process.wait(timeout=300) == 0, f"the resumed run failed (kills: {kills})"
    entries = load_games(games)[1]
    keys = [(g.pair, g.index) for g in entries]
    assert len(keys) == len(set(keys)) == 3 * GAMES, f"lost or repeated games (kills: {kills})"
    fresh = round_robin(
        DARK, SPECS, GAMES, SEED, workers=1, out=tmp_path / "fresh.jsonl", max_plies=MAX_PLIES
    )
    assert len(fresh.games) == 3 * GAMES
    assert _key(games) == _key(tmp_path / "fresh.jsonl"), f"kills: {kills}"
    for name in ("results.csv", "results.md", "heatmap.png"):
        assert (out / name).stat().st_size > 0


@pytest.fixture
def umask_027() -> object:
    previous = os.umask(0o027)
    yield
    os.umask(previous)


def test_written_files_get_the_mode_of_the_umask(tmp_path: Path, umask_027: object) -> None:
    round_robin(DARK, ["random", "greedy"], 2, workers=1, out=tmp_path / "games.jsonl")

    assert main(["tournament", "--agents", "random,greedy", "--games", "2", "--workers", "1",
                 "--out", str(tmp_path / "t")]) == 0  # fmt: skip
    record = play_game(DARK, make_agent("random", DARK), make_agent("random", DARK), 0)
    save_record(record, tmp_path / "game.json")
    paths = [tmp_path / "games.jsonl", tmp_path / "game.json"]
    paths += [tmp_path / "t" / name for name in ("games.jsonl", "results.csv", "results.md")]
    paths += [tmp_path / "t" / "heatmap.png"]
    for path in paths:
        assert path.stat().st_mode & 0o777 == 0o640, path
