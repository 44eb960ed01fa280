"""Random openings (``openings=K``, ``--openings K``): the first K plies of a game drawn
uniformly from a seed of their own, games 2k and 2k + 1 of a pair from the same opening
with the colours swapped, the opening recorded (``record.opening``), replayed, written to
the games file and its header, left out of the decision times, and refused when out of
range or when a resume's differs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import numpy as np
import pytest

from jungle_agents import Agent, make_agent
from jungle_agents.arena import (
    GameRecord,
    GameResult,
    RecordError,
    Tally,
    chance_actions,
    game_seed,
    load_games,
    load_record,
    play_game,
    play_match,
    replay,
    resumable_games,
    round_robin,
    save_record,
    summarize,
)
from jungle_cli import main
from jungle_core import CLASSIC, DARK, JungleError, legal_actions, new_game

SPECS = ["random", "greedy"]


def _classic_agents() -> tuple[Agent, Agent]:
    return make_agent("random", CLASSIC), make_agent("greedy", CLASSIC)


def test_games_2k_and_2k_plus_1_share_their_opening_with_the_colours_swapped() -> None:
    """A CLASSIC run with ``openings=2``: each pair of games 2k, 2k + 1 starts with the same
    two plies, the players swapped; the openings of different k mostly differ; the
    opening is seeded as the run says (game_seed of game 2k)."""
    result = round_robin(CLASSIC, SPECS, 12, seed=5, workers=1, max_plies=30, openings=2)
    games = result.games
    assert [g.index for g in games] == list(range(12))
    openings = []
    for even, odd in zip(games[::2], games[1::2], strict=True):
        assert even.record.opening == odd.record.opening == 2
        assert even.record.actions[:2] == odd.record.actions[:2]
        assert even.record.players == ("random", "greedy")
        assert odd.record.players == ("greedy", "random")
        assert even.record.seed != odd.record.seed  # the rest of the game is its own
        openings.append(even.record.actions[:2])
        # the run's opening seed: game_seed of the pair's even game
        again = play_game(
            CLASSIC,
            *_classic_agents(),
            odd.record.seed,
            max_plies=2,
            openings=2,
            opening_seed=game_seed(5, "random", "greedy", even.index),
        )
        assert again.actions == even.record.actions[:2]
    assert len(set(openings)) >= 4  # 6 openings of about 24 x 24 possible


def test_no_openings_plays_the_game_it_played_before() -> None:
    """``openings=0`` (and no ``opening_seed``) is the record ``play_game`` gave without
    the arguments (times aside: they are wall times), and its JSON has no ``opening``."""
    for rules in (CLASSIC, DARK):
        a, b = make_agent("random", rules), make_agent("greedy", rules)
        before = play_game(rules, a, b, 7, max_plies=60)
        now = play_game(rules, a, b, 7, max_plies=60, openings=0)
        assert attrs.evolve(now, times=before.times) == before
        assert now.opening == 0 and "opening" not in now.to_json()
        # an opening seed without openings changes nothing either
        seeded = play_game(rules, a, b, 7, max_plies=60, opening_seed=3)
        assert seeded.actions == before.actions and seeded.outcomes == before.outcomes


def test_a_record_with_an_opening_round_trips_and_its_plies_are_not_decisions(
    tmp_path: Path,
) -> None:
    """The opening is written (only when non-zero), read back, replays; its plies have
    time 0.0, ``on_ply`` is not called for them, and the latency summaries (exact and
    tallied) count only the decisions."""
    a, b = make_agent("greedy", DARK), make_agent("greedy", DARK)
    seen: list[int] = []
    record = play_game(
        DARK, a, b, 11, max_plies=40, openings=5, on_ply=lambda s, *_: seen.append(s.ply)
    )
    assert record.opening == 5 and record.times[:5] == (0.0,) * 5
    assert seen == list(range(5, record.plies))  # decisions only
    data = record.to_json()
    assert data["opening"] == 5
    back = GameRecord.from_json(json.loads(json.dumps(data)))
    assert back.opening == 5 and back.actions == record.actions
    replay(back)
    save_record(record, tmp_path / "game.json")
    assert load_record(tmp_path / "game.json").opening == 5
    out = tmp_path / "games.jsonl"
    play_match(DARK, "greedy", "random", 2, workers=1, out=out, max_plies=40, openings=5)
    header, games = load_games(out)
    assert header is not None and header["openings"] == 5
    assert [g.record.opening for g in games] == [5, 5]
    for g in games:
        replay(g.record)
    # the decision times: player 0's (even plies) and 1's (odd plies) after the opening,
    # never the opening's zeros
    assert record.decision_times(0) == record.times[6::2]
    assert record.decision_times(1) == record.times[5::2]
    game = GameResult(("x", "y"), 0, attrs.evolve(record, players=("x", "y")))
    exact = summarize([game])
    assert exact.latency["x"][0] == pytest.approx(float(np.mean(record.times[6::2])))
    assert exact.latency["y"][0] == pytest.approx(float(np.mean(record.times[5::2])))
    assert exact.pairs[("x", "y")].latency_a[0] == exact.latency["x"][0]
    tally = Tally(["x", "y"])
    tally.add(game)
    tallied = tally.result(())
    assert tallied.latency["x"][0] == pytest.approx(exact.latency["x"][0])
    assert tallied.pairs[("x", "y")].latency_b[0] == pytest.approx(exact.latency["y"][0])
    # the zeros would have pulled the mean down
    assert exact.latency["x"][0] > float(np.mean(record.times[0::2]))
    # nor are they decisions for the anatomy of chance
    with_opening = chance_actions([game], "x")
    without = chance_actions([attrs.evolve(game, record=attrs.evolve(game.record, opening=0))], "x")
    total = with_opening["agent"]["decisions"] + with_opening["opponent"]["decisions"]
    assert total == without["agent"]["decisions"] + without["opponent"]["decisions"] - 5


def test_a_bad_opening_in_a_record_is_refused() -> None:
    """``opening`` must be an int in 0..len(actions); an old record without it reads 0."""
    a, b = make_agent("random", CLASSIC), make_agent("random", CLASSIC)
    record = play_game(CLASSIC, a, b, 1, max_plies=6, openings=2)
    data = record.to_json()
    for bad in (-1, 7, 2.0, "2", True, None):
        with pytest.raises(RecordError, match=r"opening must be an int in 0\.\.6"):
            GameRecord.from_json({**data, "opening": bad}, "g.json")
    old = {k: v for k, v in data.items() if k != "opening"}
    assert GameRecord.from_json(old).opening == 0
    assert GameRecord.from_json({**data, "opening": 0}).opening == 0


def test_a_resume_with_other_openings_is_refused(tmp_path: Path) -> None:
    """A games file records its run's openings (only when not 0); a run with other
    openings refuses it, as it refuses another ``deals``; the same openings resume."""
    out = tmp_path / "games.jsonl"
    kw = {"workers": 1, "max_plies": 20, "out": out}
    round_robin(CLASSIC, SPECS, 2, openings=2, **kw)  # type: ignore[arg-type]
    for other in (0, 3):
        with pytest.raises(RecordError, match=f"openings 2, not {other or None}"):
            round_robin(CLASSIC, SPECS, 4, openings=other, **kw)  # type: ignore[arg-type]
        with pytest.raises(RecordError, match="openings"):
            resumable_games(out, CLASSIC, [("random", "greedy")], 4, 0, 20, openings=other)
    assert len(resumable_games(out, CLASSIC, [("random", "greedy")], 4, 0, 20, openings=2)) == 2
    result = round_robin(CLASSIC, SPECS, 4, openings=2, **kw)  # type: ignore[arg-type]
    assert [g.record.opening for g in result.games] == [2, 2, 2, 2]
    # a file without openings refuses a run with some; its header has no openings key
    plain = tmp_path / "plain.jsonl"
    round_robin(CLASSIC, SPECS, 2, workers=1, max_plies=20, out=plain)
    header, _ = load_games(plain)
    assert header is not None and "openings" not in header
    with pytest.raises(RecordError, match="openings None, not 2"):
        round_robin(CLASSIC, SPECS, 2, workers=1, max_plies=20, out=plain, openings=2)
    # a header naming bad openings is refused when read
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text().replace('"openings":2', '"openings":0', 1))
    with pytest.raises(RecordError, match=r"openings must be an int in 1\.\.64"):
        load_games(bad)


def test_a_dark_opening_depends_only_on_its_seed() -> None:
    """DARK openings reveal pieces: the actions and the pieces turned up are drawn from the
    opening seed alone, whatever the game's seed, the agents and the dealing."""
    openings = []
    for seed, specs, deals in (
        (1, ("random", "greedy"), "independent"),
        (2, ("greedy", "random"), "independent"),
        (3, ("greedy", "greedy"), "duplicate"),
    ):
        a, b = (make_agent(s, DARK) for s in specs)
        record = play_game(DARK, a, b, seed, max_plies=30, openings=2, opening_seed=42, deals=deals)
        assert record.opening == 2
        assert all(o >= 0 for o in record.outcomes[:2])  # this opening turns two pieces up
        replay(record)
        openings.append((record.actions[:2], record.outcomes[:2]))
    assert openings[0] == openings[1] == openings[2]
    other = play_game(DARK, a, b, 1, max_plies=2, openings=2, opening_seed=43)
    assert (other.actions, other.outcomes) != openings[0]
    # the opening draws uniformly among the legal actions
    first = [
        play_game(DARK, a, b, 0, max_plies=1, openings=1, opening_seed=s).actions[0]
        for s in range(320)
    ]
    legal = legal_actions(new_game(DARK))
    assert set(first) <= set(legal)
    counts = [first.count(a) for a in legal]
    expected = len(first) / len(legal)
    chi2 = sum((c - expected) ** 2 / expected for c in counts)
    assert chi2 < 40.8  # 15 degrees of freedom, beyond the 0.1 % point (37.7) with room


def test_a_game_that_ends_inside_its_opening_ends_there() -> None:
    """``max_plies`` below the opening stops the game inside it (``"unfinished"``), and
    the record says how many plies of the opening were played."""
    a, b = make_agent("random", CLASSIC), make_agent("random", CLASSIC)
    record = play_game(CLASSIC, a, b, 4, max_plies=3, openings=10)
    assert record.plies == 3 and record.opening == 3 and record.reason == "unfinished"
    assert record.decision_times(0) == record.decision_times(1) == ()
    assert math.isnan(summarize([GameResult(("x", "y"), 0, record)]).latency["x"][0])
    replay(GameRecord.from_json(record.to_json()))


@pytest.mark.parametrize(
    ("value", "error"),
    [(-1, JungleError), (65, JungleError), (True, TypeError), ("2", TypeError), (2.0, TypeError)],
)
def test_bad_openings_are_refused(value: object, error: type[Exception]) -> None:
    """``openings`` is an int in 0..64, for a game and for a run."""
    a, b = _classic_agents()
    with pytest.raises(error, match="openings"):
        play_game(CLASSIC, a, b, 0, openings=value)  # type: ignore[arg-type]
    with pytest.raises(error, match="openings"):
        run = {"workers": 1, "openings": value}
        play_match(CLASSIC, "random", "greedy", 2, **run)  # type: ignore[arg-type]
    with pytest.raises(JungleError, match="opening_seed"):
        play_game(CLASSIC, a, b, 0, openings=2, opening_seed=-1)
    assert play_game(CLASSIC, a, b, 0, max_plies=1, openings=64).opening == 1


def test_the_cli_flag_writes_records_with_their_opening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``jungle match ... --openings 2`` plays every game from a 2-ply opening, games 2k
    and 2k + 1 from the same one; the header says so; a bad value is a usage error."""
    out = tmp_path / "m.jsonl"

    def command(openings: str) -> list[str]:
        return [
            *("match", "random", "greedy", "--rules", "classic", "--games", "4"),
            *("--openings", openings, "--workers", "1", "--out", str(out)),
        ]

    argv = command("2")
    assert main(argv) == 0
    header, games = load_games(out)
    assert header is not None and header["openings"] == 2
    assert [g.record.opening for g in games] == [2, 2, 2, 2]
    by_index = {g.index: g for g in games}
    assert by_index[0].record.actions[:2] == by_index[1].record.actions[:2]
    assert by_index[2].record.actions[:2] == by_index[3].record.actions[:2]
    # the same command resumes; another --openings is refused with the file's reason
    assert main(argv) == 0
    assert "resuming: 4 games already" in capsys.readouterr().err
    assert main(command("3")) == 2
    assert "openings" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(command("65"))
    assert "65 is not in 0..64" in capsys.readouterr().err
