"""Faults: a tournament killed with SIGKILL at chosen moments resumes to exactly the games
of an uninterrupted run, and the files the library writes get the user's normal mode."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from jungle_agents import make_agent
from jungle_agents.arena import load_games, play_game, round_robin, save_record
from jungle_cli import main
from jungle_core import DARK

SPECS = ["random", "greedy", "minimax:depth=1"]
GAMES, SEED, MAX_PLIES = 6, 3, 60

STAGES = ("before", "torn", "unterminated", "after")
"""Where in the writing of a game's line a kill lands: before any byte of it, after half
of it (a torn line), after all of it but its newline, after all of it (fsynced)."""

_DYING_RUN = """
import json, os, signal, sys
import jungle_cli
from jungle_agents.arena import _store

line_number, stage = int(sys.argv[1]), sys.argv[2]
append = _store.GamesFile.append
written = 0


def die():
    os.killpg(os.getpgrp(), signal.SIGKILL)  # the run and its workers, mid-game


def dying_append(self, entry):
    global written
    header = entry.get("type") == "header"
    written += not header
    if not (header if stage == "torn header" else not header and written == line_number):
        return append(self, entry)
    line = (json.dumps(entry, separators=(",", ":")) + "\\n").encode()
    part = {"before": b"", "torn": line[: len(line) // 2], "torn header": line[: len(line) // 2],
            "unterminated": line[:-1], "after": line}[stage]
    with open(self.path, "ab") as f:
        f.write(part)
        f.flush()
        os.fsync(f.fileno())
    die()


_store.GamesFile.append = dying_append
sys.exit(jungle_cli.main(sys.argv[3:]))
"""
"""A ``jungle`` run that kills its own process group (itself and its arena workers) at
game line ``argv[1]`` of this run, at stage ``argv[2]`` (:data:`STAGES`, or ``torn
header``: half of the header line): the moment is chosen, not timed."""


def _tournament(out: Path, kill: tuple[int, str] | None = None) -> subprocess.Popen[bytes]:
    """``jungle tournament`` in a process group of its own (its workers included), killed
    where ``kill`` says (see :data:`_DYING_RUN`), or run to its end."""
    argv = [sys.executable, "-c"]
    if kill is None:
        argv += ["import sys, jungle_cli; sys.exit(jungle_cli.main(sys.argv[1:]))"]
    else:
        argv += [_DYING_RUN, str(kill[0]), kill[1]]
    argv += ["tournament", "--agents", ",".join(SPECS), "--games", str(GAMES)]
    argv += ["--seed", str(SEED), "--max-plies", str(MAX_PLIES), "--workers", "2"]
    argv += ["--out", str(out)]
    return subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def _key(path: Path) -> list[tuple[object, ...]]:
    return sorted(
        (g.pair, g.index, g.record.players, g.record.seed, g.record.actions, g.record.outcomes,
         g.record.winner, g.record.reason)
        for g in load_games(path)[1]
    )  # fmt: skip


def test_a_tournament_killed_at_chosen_moments_resumes_to_the_same_games(
    tmp_path: Path,
) -> None:
    """Five runs are killed (SIGKILL to the run and its workers): the first while it
    writes the header, each other at a game line and stage drawn from a seeded generator
    (every stage once), so the schedule is the same on every run of the test. After each
    kill the file holds the games written whole before it, plus the killed line where all
    of it reached the disk (its newline or not); the sixth run ends the tournament with
    every game once, the same games as a run never interrupted."""
    out = tmp_path / "run"
    games = out / "games.jsonl"
    pick = random.Random(SEED)
    schedule = [(1, "torn header")]
    schedule += [(pick.randint(1, 3), stage) for stage in pick.sample(STAGES, len(STAGES))]
    kept = 0
    for line_number, stage in schedule:
        process = _tournament(out, (line_number, stage))
        assert process.wait(timeout=300) == -signal.SIGKILL, (line_number, stage)
        if stage != "torn header":
            kept += line_number - 1 + (stage in ("unterminated", "after"))
        header, entries = load_games(games)
        assert (header is None) == (stage == "torn header")
        assert len(entries) == kept, (line_number, stage)
    assert kept < 3 * GAMES  # every killed run had games left to play
    process = _tournament(out)
    assert process.wait(timeout=300) == 0, f"the resumed run failed (kills: {schedule})"
    entries = load_games(games)[1]
    keys = [(g.pair, g.index) for g in entries]
    assert len(keys) == len(set(keys)) == 3 * GAMES, f"lost or repeated games ({schedule})"
    fresh = round_robin(
        DARK, SPECS, GAMES, SEED, workers=1, out=tmp_path / "fresh.jsonl", max_plies=MAX_PLIES
    )
    assert len(fresh.games) == 3 * GAMES
    assert _key(games) == _key(tmp_path / "fresh.jsonl"), f"kills: {schedule}"
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
