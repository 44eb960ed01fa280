"""Smoke test of ``benchmarks/endgames.py``: the endgames it collects from game files are
the drawn, fully face-up, unequal ones, and an endgame is played to its end."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from jungle_agents.arena import load_games, play_match, replay
from jungle_core import DARK, from_fen
from tests._scripts import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("endgames")


def test_endgames_are_the_drawn_face_up_unequal_final_positions(
    bench: ModuleType, tmp_path: Path
) -> None:
    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 20, 3, 1, out=path)
    found = bench.drawn_endgames([path])
    _, games = load_games(path)
    want = set()
    for game in games:
        last = replay(game.record)[-1]
        counts = bench.piece_counts(last)
        if game.record.winner is None and not last.face_down_mask and counts[0] != counts[1]:
            want.add((bench.to_fen(last), int(counts[1] > counts[0])))
    assert found == sorted(want) and found, "the seed should give some drawn endgames"
    for fen, side in found:
        counts = bench.piece_counts(from_fen(fen, DARK))
        assert counts[side] > counts[1 - side]
    won, drawn, lost = bench.conversion("minimax:depth=1", found[:2], "greedy", 1)
    assert won + drawn + lost == len(found[:2])


def test_an_endgame_is_played_to_its_end(bench: ModuleType) -> None:
    # player 0's Elephant next to player 1's last piece: won at once
    assert bench.play_endgame("8/8/8/8/8/8/Ew6 0 0 9 - -", 0, "minimax:depth=1", "greedy", 0) == 1
    # player 1's Rat next to player 0's lone Elephant, the Rat to move: it takes at once
    rat = "8/8/8/8/8/8/Er6 1 0 9 - -"
    assert bench.play_endgame(rat, 1, "minimax:depth=1", "random", 0) == 1
    assert bench.play_endgame(rat, 0, "random", "minimax:depth=1", 0) == 0  # the E's side
    # the no-removal count is reset: at 99, the Elephant's first move (it cannot take the
    # Wolf two squares away at once) would end the game drawn; reset, it hunts it down
    hunt = "8/8/8/8/8/8/E1w5 0 99 120 - -"
    assert [
        bench.play_endgame(hunt, 0, "minimax:depth=1", "random", seed) for seed in range(3)
    ] == [1, 1, 1]
    # an Elephant each: neither can take the other, so every game is drawn (a trade or the
    # no-removal limit), whoever plays
    for seed in range(3):
        elephants = "e7/8/8/8/8/8/E7 0 0 9 - -"
        assert bench.play_endgame(elephants, seed % 2, "random", "random", seed) == 0.5
    assert bench.main(["--games", "/nonexistent/*.jsonl", "random"]) == 0
