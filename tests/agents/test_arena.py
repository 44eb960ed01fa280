"""Tests of the arena: game records and replay, matches, resumable tournaments, results."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jungle_agents import AgentSpecError, make_agent
from jungle_agents.arena import (
    GameRecord,
    GameResult,
    RecordError,
    fit_elo,
    format_report,
    game_seed,
    load_games,
    load_record,
    moves_text,
    pair_rows,
    play_game,
    play_match,
    plot_heatmap,
    replay,
    round_robin,
    save_record,
    summarize,
    write_csv,
    write_markdown,
)
from jungle_core import CLASSIC, DARK, IllegalActionError, Rules, State, outcome


def test_a_game_replays_exactly_from_its_record() -> None:
    a, b = make_agent("greedy", DARK), make_agent("random", DARK)
    record = play_game(DARK, a, b, seed=5)
    assert record.players == ("greedy", "random")
    assert len(record.actions) == len(record.outcomes) == len(record.times) == record.plies
    assert all(t >= 0 for t in record.times)
    states = replay(record)
    final = outcome(states[-1])
    assert final is not None and (final.winner, final.reason.value) == (
        record.winner,
        record.reason,
    )
    # the same seed plays the same game
    again = play_game(DARK, make_agent("greedy", DARK), make_agent("random", DARK), seed=5)
    assert (again.actions, again.outcomes) == (record.actions, record.outcomes)
    assert len(moves_text(record)) == record.plies


def test_records_save_and_load_as_json(tmp_path: Path) -> None:
    record = play_game(
        CLASSIC,
        make_agent("minimax:depth=1", CLASSIC),
        make_agent("random", CLASSIC),
        2,
        max_plies=30,
    )
    path = tmp_path / "sub" / "game.json"
    with pytest.raises(FileNotFoundError, match="no folder"):
        save_record(record, path)  # a mistyped folder is not created
    path.parent.mkdir()
    save_record(record, path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["game.json"]  # no temp left
    loaded = load_record(path)
    assert loaded.rules == CLASSIC
    assert loaded.actions == record.actions and loaded.winner == record.winner
    assert loaded.times == pytest.approx(record.times, abs=1e-6)
    assert replay(loaded)[-1].ply == record.plies


def test_bad_records_are_rejected(tmp_path: Path) -> None:
    record = play_game(DARK, make_agent("random", DARK), make_agent("random", DARK), 1)
    data = record.to_json()
    with pytest.raises(RecordError, match="format must be 'jungle-game/1', not 'other'"):
        GameRecord.from_json({**data, "format": "other"})
    with pytest.raises(ValueError, match="differ in length"):
        GameRecord.from_json({**data, "times": data["times"][:-1]})
    with pytest.raises(RecordError, match="game record lacks seed"):
        GameRecord.from_json({k: v for k, v in data.items() if k != "seed"})
    bad = GameRecord.from_json({**data, "outcomes": [15, *data["outcomes"][1:]]})
    with pytest.raises(ValueError, match="does not replay at ply 1"):
        replay(bad)
    wrong = GameRecord.from_json({**data, "winner": None, "reason": "ply_limit"})
    with pytest.raises(ValueError, match="replays to"):
        replay(wrong)
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="is not JSON"):
        load_record(path)


def test_an_illegal_action_names_the_agent() -> None:
    class Cheat:
        name = "cheat"

        def act(self, state: State, rng: np.random.Generator) -> int:
            return 279

    with pytest.raises(IllegalActionError, match=r"agent 'cheat' .* illegal action 279"):
        play_game(DARK, Cheat(), make_agent("random", DARK), 0)


def test_a_match_gives_each_agent_half_the_first_moves() -> None:
    result = play_match(DARK, "greedy", "random", 4, seed=3, workers=1)
    assert result.games == 4 == result.wins + result.draws + result.losses
    assert result.games_first == result.games_second == 2
    assert result.score == pytest.approx((result.wins + result.draws / 2) / 4)
    assert result.score == pytest.approx((result.score_first + result.score_second) / 2)
    assert result.mean_plies > 0 and result.latency_a[1] >= 0


def _players(path: Path) -> list[tuple[tuple[str, str], int, tuple[str, str]]]:
    return sorted((g.pair, g.index, g.record.players) for g in load_games(path)[1])


def test_parallel_games_equal_sequential_ones(tmp_path: Path) -> None:
    specs = ["random", "greedy"]
    seq = round_robin(DARK, specs, 4, seed=9, workers=1, out=tmp_path / "seq.jsonl")
    par = round_robin(DARK, specs, 4, seed=9, workers=2, out=tmp_path / "par.jsonl")
    key = [(g.pair, g.index, g.record.actions, g.record.outcomes) for g in seq.games]
    assert key == [(g.pair, g.index, g.record.actions, g.record.outcomes) for g in par.games]
    for g in seq.games:
        assert g.record.seed == game_seed(9, *g.pair, g.index)
        assert g.record.players == (g.pair if g.a_first else g.pair[::-1])


class _Stop(Exception):
    pass


def test_an_interrupted_tournament_resumes_without_losing_or_repeating(tmp_path: Path) -> None:
    specs = ["random", "greedy", "minimax:depth=1"]
    out = tmp_path / "games.jsonl"

    def stop_after_four(done: int, total: int, game: GameResult) -> None:
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        round_robin(DARK, specs, 4, seed=1, workers=1, out=out, progress=stop_after_four)
    header, games = load_games(out)
    assert header is not None and header["seed"] == 1 and len(games) == 4
    # a crash mid-write leaves a torn line: it is ignored and cut off on resume
    with open(out, "a") as f:
        f.write('{"pair": ["random", "gre')
    assert len(load_games(out)[1]) == 4
    seen: list[int] = []
    done = round_robin(
        DARK, specs, 4, seed=1, workers=1, out=out, progress=lambda d, t, g: seen.append(d)
    )
    assert seen == list(range(5, 13))  # only the missing games were played
    assert len(done.games) == 12
    keys = [(g.pair, g.index) for g in load_games(out)[1]]
    assert len(keys) == len(set(keys)) == 12
    fresh = round_robin(DARK, specs, 4, seed=1, workers=1)
    assert [(g.pair, g.index, g.record.actions) for g in done.games] == [
        (g.pair, g.index, g.record.actions) for g in fresh.games
    ]
    # more games a pair later: only the new ones are played
    more = round_robin(DARK, specs[:2], 6, seed=1, workers=1, out=out)
    assert more.pairs[("random", "greedy")].games == 6
    with pytest.raises(ValueError, match="holds games of a different run"):
        round_robin(DARK, specs, 4, seed=2, workers=1, out=out)


def test_tournament_results_tables_and_files(tmp_path: Path) -> None:
    specs = ["random", "greedy", "minimax:depth=1"]
    result = round_robin(DARK, specs, 2, seed=0, workers=1)
    assert set(result.ratings) == set(specs)
    assert sum(r.rating for r in result.ratings.values()) == pytest.approx(0.0, abs=1e-6)
    for a in specs:
        for b in specs:
            if a != b:
                ab, ba = result.pairs[(a, b)], result.pairs[(b, a)]
                assert ab.wins == ba.losses and ab.score == pytest.approx(1 - ba.score)
                assert ab.ends == tuple((r, lo, d, w) for r, w, d, lo in ba.ends)
                assert [sum(x) for x in zip(*(e[1:] for e in ab.ends), strict=True)] == [
                    ab.wins,
                    ab.draws,
                    ab.losses,
                ]
    text = format_report(result)
    assert "How the games ended (A's W-D-L by end reason)" in text
    assert "Row agent's score vs column agent, first/second (%)" in text
    assert "Elo (maximum likelihood, 95 % interval)" in text
    write_csv(result, tmp_path / "r.csv")
    with open(tmp_path / "r.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["a"], r["b"]) for r in rows] == [
        ("random", "greedy"),
        ("random", "minimax:depth=1"),
        ("greedy", "minimax:depth=1"),
    ]
    assert all(int(r["wins"]) + int(r["draws"]) + int(r["losses"]) == 2 for r in rows)
    write_markdown(result, tmp_path / "r.md")
    assert (tmp_path / "r.md").read_text().startswith("#### Pairs")
    plot_heatmap(result, tmp_path / "heat.png")
    assert (tmp_path / "heat.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_elo_is_fitted_by_maximum_likelihood() -> None:
    even = fit_elo([("a", "b", 1.0), ("a", "b", 0.0), ("a", "b", 0.5)])
    assert even["a"].rating == pytest.approx(0.0, abs=1e-6)
    assert even["a"].ci > 0
    r = fit_elo([("a", "b", 1.0)] * 30 + [("a", "b", 0.0)] * 10)
    assert r["a"].rating - r["b"].rating == pytest.approx(400 * np.log10(3), abs=1.0)
    # a transitive chain: a > b > c
    chain = fit_elo(
        [("a", "b", 1.0)] * 3 + [("a", "b", 0.0)] + [("b", "c", 1.0)] * 3 + [("b", "c", 0.0)]
    )
    assert chain["a"].rating > chain["b"].rating > chain["c"].rating
    # the gradient of the log likelihood vanishes at the fit (up to the weak prior)
    c = np.log(10) / 400
    p = 1 / (1 + np.exp(-c * (r["a"].rating - r["b"].rating)))
    assert 40 * p == pytest.approx(30, abs=0.05)
    # winning every game still gives finite ratings
    sweep = fit_elo([("a", "b", 1.0)] * 20)
    assert np.isfinite(sweep["a"].rating) and sweep["a"].rating > 400


def test_summarize_counts_first_and_second_player_scores() -> None:
    rules: Rules = DARK
    games = []
    for index, winner in enumerate([0, 0, 1, None]):
        pair = ("a", "b")
        players = ("a", "b") if index % 2 == 0 else ("b", "a")
        record = GameRecord(rules, players, index, (), (), (), winner, "elimination")
        games.append(GameResult(pair, index, record))
    pr = summarize(games, ["a", "b"]).pairs[("a", "b")]
    # games 0, 2: a first; a won game 0 (winner 0), lost game 2 (winner 1)
    # games 1, 3: b first; b won game 1 (winner 0), draw in game 3
    assert (pr.wins, pr.draws, pr.losses) == (1, 1, 2)
    assert pr.score_first == 0.5 and pr.score_second == 0.25


def test_pair_results_count_how_the_games_ended() -> None:
    """A's W-D-L per end reason, in ``Reason``'s order, then ``unfinished``, then others."""
    ends = [(0, "unfinished"), (None, "no_removal_limit"), (1, "elimination"),
            (0, "no_removal_limit"), (None, "zzz"), (None, "elimination")]  # fmt: skip
    games = []
    for index, (winner, reason) in enumerate(ends):
        players = ("a", "b") if index % 2 == 0 else ("b", "a")
        record = GameRecord(DARK, players, index, (), (), (), winner, reason)
        games.append(GameResult(("a", "b"), index, record))
    result = summarize(games, ["a", "b"])
    # even games have a first: a wins game 0, loses game 2; b first in odd games: b wins
    # game 3 (a loses); games 1, 4 and 5 are draws
    assert result.pairs[("a", "b")].ends == (
        ("elimination", 0, 1, 1),
        ("no_removal_limit", 0, 1, 1),
        ("unfinished", 1, 0, 0),
        ("zzz", 0, 1, 0),
    )
    assert result.pairs[("b", "a")].ends[0] == ("elimination", 1, 1, 0)
    assert pair_rows(result)[0]["ends"] == (
        "elimination 0-1-1; no_removal_limit 0-1-1; unfinished 1-0-0; zzz 0-1-0"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="the ray extra is not installed"
)
def test_ray_backend_plays_the_same_games(tmp_path: Path) -> None:
    specs = ["random", "greedy"]
    local = round_robin(DARK, specs, 2, seed=4, workers=1)
    remote = round_robin(DARK, specs, 2, seed=4, workers=2, backend="ray", out=tmp_path / "g.jsonl")
    assert [(g.pair, g.index, g.record.actions) for g in remote.games] == [
        (g.pair, g.index, g.record.actions) for g in local.games
    ]
    assert len(load_games(tmp_path / "g.jsonl")[1]) == 2


def test_games_file_lines_are_json(tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    play_match(DARK, "random", "greedy", 2, workers=1, out=out)
    lines: list[dict[str, Any]] = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["type"] == "header" and len(lines) == 3
    assert {line["game"] for line in lines[1:]} == {0, 1}


def test_a_failing_agent_names_its_game() -> None:
    from jungle_agents import register_agent
    from jungle_agents._base import _REGISTRY

    class Boom:
        name = "boom"

        def __init__(self, rules: Rules) -> None:
            pass

        def act(self, state: State, rng: np.random.Generator) -> int:
            raise ZeroDivisionError("no move today")

    register_agent("boom", Boom)
    try:
        with pytest.raises(RuntimeError, match=r"game 0 of boom vs random \(boom first"):
            round_robin(DARK, ["boom", "random"], 2, workers=1)
    finally:
        _REGISTRY.pop("boom", None)


def test_a_finished_games_file_reports_without_building_the_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resuming a run whose file holds every game plays nothing and makes no agent (an
    AlphaZero agent takes minutes to build); a run with games left still checks its specs
    before it writes the file."""
    out = tmp_path / "games.jsonl"
    first = play_match(DARK, "greedy", "random", 4, seed=3, workers=1, out=out)
    import jungle_agents.arena._matches as matches

    def refuse(*args: object) -> None:
        raise AssertionError(f"an agent was built: {args}")

    monkeypatch.setattr(matches, "agent", refuse)
    monkeypatch.setattr(matches, "make_agent", refuse)
    again = play_match(DARK, "greedy", "random", 4, seed=3, workers=1, out=out)
    assert (again.wins, again.draws, again.losses, again.ends) == (
        first.wins, first.draws, first.losses, first.ends
    )  # fmt: skip
    monkeypatch.undo()
    fresh = tmp_path / "bad.jsonl"
    with pytest.raises(AgentSpecError, match="unknown agent 'minmax'"):
        play_match(DARK, "greedy", "minmax", 2, workers=1, out=fresh)
    assert not fresh.exists()
    with pytest.raises(AgentSpecError, match=r"depth must be 1\.\.64"):
        play_match(DARK, "greedy", "minimax:depth=-1", 2, workers=2, out=fresh)
    assert not fresh.exists()
