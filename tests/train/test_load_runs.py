"""Several games files read as one set (``load_runs``, ``jungle report``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jungle_agents.arena import RecordError, fit_elo, load_runs, play_match, summarize
from jungle_cli import main
from jungle_core import DARK, rules_by_name


def _runs(tmp_path: Path) -> list[Path]:
    """Three matches played apart: random-greedy, greedy-random (the pair reversed, other
    deals) and greedy against minimax depth 1, four games each."""
    files = [tmp_path / f"{n}.jsonl" for n in ("rg", "gr", "gm")]
    play_match(DARK, "random", "greedy", 4, seed=1, workers=1, out=files[0])
    play_match(DARK, "greedy", "random", 4, seed=2, workers=1, out=files[1])
    play_match(DARK, "greedy", "minimax:depth=1", 4, seed=3, workers=1, out=files[2])
    return files


def test_load_runs_joins_matches_into_one_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every game is read once; a reversed pair is counted under the orientation met
    first, with A's seat still the one its record names, so A's score is its own; one
    Elo list is fitted over all three matches, the same as :func:`fit_elo` of the games'
    scores; ``jungle report`` prints it."""
    files = _runs(tmp_path)
    games = load_runs(files)
    assert len(games) == 12
    assert {g.pair for g in games} == {("random", "greedy"), ("greedy", "minimax:depth=1")}
    for g in games:
        seat = 0 if g.a_first else 1
        assert g.record.players[seat] == g.pair[0], g
        assert g.score_a() == g.record.score(seat)
    summary = summarize(games)
    assert summary.pairs[("random", "greedy")].games == 8
    assert summary.pairs[("greedy", "random")].games == 8
    triples = [(g.pair[0], g.pair[1], g.score_a()) for g in games]
    want = fit_elo(triples)
    assert set(summary.ratings) == set(want) == {"random", "greedy", "minimax:depth=1"}
    for name, rating in want.items():
        assert summary.ratings[name].rating == pytest.approx(rating.rating, abs=1e-6)
        assert summary.ratings[name].ci == pytest.approx(rating.ci, abs=1e-6)
    assert main(["report", *map(str, files)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("12 games from 3 file(s)")
    assert "minimax:depth=1" in printed and "±" in printed


def test_load_runs_refuses_what_cannot_be_joined(tmp_path: Path) -> None:
    """A missing file, a file without games, one file read twice and games of two rule
    sets are each refused with the file named; ``jungle report`` says why and exits 2."""
    files = _runs(tmp_path)
    with pytest.raises(RecordError, match="no such games file"):
        load_runs([files[0], tmp_path / "missing.jsonl"])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(RecordError, match=r"empty\.jsonl: no games"):
        load_runs([empty])
    with pytest.raises(RecordError, match="read already"):
        load_runs([files[0], files[0]])
    classic = tmp_path / "classic.jsonl"
    play_match(rules_by_name("classic"), "greedy", "random", 2, workers=1, out=classic, max_plies=8)
    with pytest.raises(RecordError, match=r"classic\.jsonl: game 0 .* of CLASSIC rules"):
        load_runs([files[0], classic])
    assert main(["report", str(files[0]), str(files[0])]) == 2
