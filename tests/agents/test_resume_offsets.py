"""A games file cut at any byte of its last two entries resumes to the uninterrupted run.

A crash can stop a write anywhere: mid-line, or between a game's closing brace and its
newline. Whatever byte the file ends on, resuming must keep every finished game exactly
once and play the rest again, ending in the same file as a run that was never stopped.
"""

from __future__ import annotations

from pathlib import Path

from jungle_agents.arena import load_games, round_robin
from jungle_core import DARK

SPECS = ["random", "greedy"]


def _games(path: Path) -> list[tuple[object, ...]]:
    """Each game of the file as (pair, index, actions, chance outcomes, winner, reason),
    in a fixed order."""
    games = load_games(path)[1]
    rows = [
        (g.pair, g.index, g.record.actions, g.record.outcomes, g.record.winner, g.record.reason)
        for g in games
    ]
    return sorted(rows, key=repr)


def _run(out: Path) -> None:
    round_robin(DARK, SPECS, 3, seed=4, workers=1, out=out, max_plies=6)


def test_a_cut_at_every_byte_of_the_last_two_entries_resumes_to_the_same_file(
    tmp_path: Path,
) -> None:
    whole_path = tmp_path / "whole.jsonl"
    _run(whole_path)
    whole = whole_path.read_bytes()
    lines = whole.splitlines(keepends=True)
    assert len(lines) == 4  # the header and three games
    first_cut = len(whole) - len(lines[-1]) - len(lines[-2])
    out = tmp_path / "cut.jsonl"
    for cut in range(first_cut, len(whole)):
        out.write_bytes(whole[:cut])
        _run(out)
        # every game once, the same as the uninterrupted run's (timings aside)
        assert _games(out) == _games(whole_path), f"cut at byte {cut}"
        # what was whole before the cut is kept byte for byte, never rewritten
        kept = whole[: whole.rfind(b"\n", 0, cut) + 1]
        assert out.read_bytes().startswith(kept), f"cut at byte {cut}"


def test_a_whole_last_game_without_its_newline_is_kept_not_replayed(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    _run(out)
    whole = out.read_bytes()
    out.write_bytes(whole[:-1])  # the last game's newline was never written
    assert len(load_games(out)[1]) == 3  # the reader counts it ...
    played: list[int] = []
    round_robin(
        DARK, SPECS, 3, seed=4, workers=1, out=out, max_plies=6,
        progress=lambda done, total, game: played.append(done),
    )  # fmt: skip
    assert played == []  # ... so resuming plays nothing
    assert out.read_bytes() == whole  # and the writer completes the line instead of cutting it
