"""``benchmarks/anatomy.py``: an agent's results by its piece lead, against a direct
count over the replayed games."""

from __future__ import annotations

from pathlib import Path

from jungle_agents.arena import load_games, play_match, replay
from jungle_core import DARK
from tests._scripts import load_benchmark


def test_anatomy_counts_each_game_once_at_its_leads(tmp_path: Path) -> None:
    bench = load_benchmark("anatomy")
    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 6, seed=2, workers=1, out=path)
    _, games = load_games(path)
    tallies = bench.anatomy(games, "greedy")
    want_face_up: dict[tuple[int | None, str], int] = {}
    draws_by_elimination = 0
    for game in games:
        seat = game.record.players.index("greedy")
        winner = game.record.winner
        result = "D" if winner is None else "W" if winner == seat else "L"
        lead = None
        for state in replay(game.record):
            if not state.face_down_mask:
                counts = bench.piece_counts(state)
                lead = counts[seat] - counts[1 - seat]
                break
        want_face_up[(lead, result)] = want_face_up.get((lead, result), 0) + 1
        draws_by_elimination += result == "D" and game.record.reason == "elimination"
    assert dict(tallies["face_up"]) == want_face_up
    assert any(lead is not None for lead, _ in want_face_up), "no game turned every piece up"
    assert sum(tallies["six"].values()) == len(games)
    assert sum(tallies["elimination_draws"].values()) == draws_by_elimination
    text = bench.format_tallies(tallies)
    assert text.startswith("lead when the last piece turns face up: W-D-L")
    assert "lead at six pieces" in text
    assert bench.anatomy(games, "minimax:depth=9")["face_up"] == {}  # not a player here
