"""``experiments/second_opinion.py`` and :meth:`Searcher.action_values`: every action's
exact value at a depth, and an agent's decisions sorted by how far they fall short."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from jungle_agents import SearchConfig, Searcher
from jungle_agents.arena import action_kind, load_games, piece_counts, play_match, replay
from jungle_core import DARK, State, legal_actions, new_game, step
from tests._scripts import load_experiment


def _positions(count: int, seed: int) -> list[State]:
    """Positions of seeded random DARK play, some with pieces face down, some without."""
    rng = np.random.default_rng(seed)
    state = new_game(DARK, seed=seed)
    found: list[State] = []
    for ply in range(120):
        actions = legal_actions(state)
        if not actions:
            break
        if ply % (120 // count) == 7:
            found.append(state)
        state = step(state, actions[int(rng.integers(len(actions)))], rng)
    return found


@pytest.mark.parametrize("depth", [1, 2])
def test_action_values_best_is_the_search_value(depth: int) -> None:
    for state in _positions(6, seed=4):
        searcher = Searcher(DARK, state.to_move, SearchConfig(depth=depth))
        values = searcher.action_values(state, depth)
        assert sorted(values) == sorted(legal_actions(state))
        best = max(values.values())
        assert best == pytest.approx(searcher.value(state, depth))
        assert best == pytest.approx(searcher.search(state).value)
        # plain expectiminimax (no pruning, no table) gives every action the same value
        plain = Searcher(
            DARK,
            state.to_move,
            SearchConfig(depth=depth, alphabeta=False, tt=False, star1=False),
            incremental=False,
        ).action_values(state, depth)
        assert plain == pytest.approx(values)


def test_action_values_wants_the_searchers_player_to_move() -> None:
    with pytest.raises(ValueError, match="player 0 is to move"):
        Searcher(DARK, 1, SearchConfig(depth=1)).action_values(new_game(DARK), 1)


def test_decisions_measure_the_gap_and_the_lead_change(tmp_path: Path) -> None:
    script = load_experiment("second_opinion")
    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "random", "greedy", 2, seed=5, workers=1, out=path)
    _, games = load_games(path)
    results = []
    for game in games:
        rows = script.decisions(game, "random", depth=1, plies=3)
        seat = game.record.players.index("random")
        states = replay(game.record)
        mine = [p for p, s in enumerate(states[:-1]) if s.to_move == seat]
        assert [row[0] for row in rows] == [p for p in mine if len(legal_actions(states[p])) > 1]
        for ply, down, gap, change, played, best in rows:
            state = states[ply]
            assert down == bool(state.face_down_mask)
            values = Searcher(DARK, seat, SearchConfig(depth=1)).action_values(state, 1)
            assert gap == pytest.approx(max(values.values()) - values[game.record.actions[ply]])
            assert played == action_kind(state, game.record.actions[ply])
            assert best in {
                action_kind(state, a) for a, v in values.items() if v == max(values.values())
            }
            later = states[min(ply + 3, len(states) - 1)]
            (a0, b0), (a1, b1) = (piece_counts(s) for s in (state, later))
            lead = (a1 - b1) - (a0 - b0)
            assert change == (lead if seat == 0 else -lead)
        assert any(row[2] > 0 for row in rows), "random always chose minimax's best"
        winner = game.record.winner
        results.append(("D" if winner is None else "W" if winner == seat else "L", rows))
    assert script.decisions(games[0], "minimax:depth=9") == []  # not a player
    text = script.format_opinion(results)
    counted = 0
    for line in text.splitlines():
        parts = line.split()
        if line.startswith("gap >= "):
            break  # the kinds' table
        if line.startswith("  ") and not line.startswith("  gap >="):
            counted += int(parts[-4])
    assert counted == sum(len(rows) for _, rows in results)
    assert "games with a decision this far from minimax's best" in text


def test_second_opinion_script_prints_its_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_experiment("second_opinion")
    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 2, seed=6, workers=1, out=path)
    monkeypatch.setattr(sys, "argv", ["second_opinion.py", path, "--depth", "1", "--first", "1"])
    script.main()
    out = capsys.readouterr().out
    assert out.startswith("greedy: 1 games, ")
    assert "minimax depth 1" in out
    assert "while some piece is face down:\n  0 (agreed)" in out
    monkeypatch.setattr(sys, "argv", ["second_opinion.py", path, "--agent", "minimax:depth=9"])
    with pytest.raises(SystemExit, match="no games of minimax:depth=9"):
        script.main()
