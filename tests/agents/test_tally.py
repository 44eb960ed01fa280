"""Tests of the bounded-memory summary of a tournament: the latency sketch, the tally
against :func:`summarize` (the obviously-right version over all the games), and runs that
keep no games, resumed ones included."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jungle_agents.arena import (
    GameRecord,
    GameResult,
    RecordError,
    Tally,
    TournamentResult,
    iter_resumable_games,
    load_games,
    play_match,
    resumable_games,
    round_robin,
    summarize,
)
from jungle_agents.arena._latency import RELATIVE_ERROR, LatencySketch
from jungle_core import DARK

TIMES = st.lists(
    st.one_of(
        st.just(0.0),
        st.floats(1e-7, 100.0, allow_nan=False),
        st.sampled_from([1e-6, 2e-6, 1e-3, 0.5]),  # repeated values, as rounded times are
    ),
    min_size=1,
    max_size=200,
)


def _within(estimate: float, exact: float) -> bool:
    """The sketch's promise: within RELATIVE_ERROR of the exact value (and float rounding)."""
    return abs(estimate - exact) <= RELATIVE_ERROR * (1 + 1e-9) * abs(exact) + 1e-15


@given(TIMES, st.sampled_from([0.0, 0.05, 0.5, 0.95, 0.99, 1.0]))
def test_sketch_quantiles_are_within_the_relative_error(times: list[float], q: float) -> None:
    sketch = LatencySketch()
    sketch.add(times)
    exact = float(np.percentile(times, 100 * q))
    assert _within(sketch.quantile(q), exact), (sketch.quantile(q), exact)
    assert sketch.count == len(times)
    assert (sketch.low, sketch.high) == (min(times), max(times))
    assert sketch.mean() == pytest.approx(float(np.mean(times)), rel=1e-12, abs=1e-300)


@given(st.lists(TIMES, min_size=1, max_size=6))
def test_merged_sketches_equal_one_sketch_of_all_the_times(groups: list[list[float]]) -> None:
    parts = []
    for times in groups:
        part = LatencySketch()
        part.add(times)
        parts.append(part)
    whole = LatencySketch()
    for times in groups:
        whole.add(times)
    merged = LatencySketch.merged(parts)
    assert merged.count == whole.count and (merged.low, merged.high) == (whole.low, whole.high)
    assert merged.quantile(0.95) == whole.quantile(0.95)
    assert merged.mean() == pytest.approx(whole.mean(), rel=1e-12)


def test_an_empty_sketch_has_no_mean_or_quantile() -> None:
    sketch = LatencySketch()
    sketch.add([])
    assert sketch.count == 0 and math.isnan(sketch.mean()) and math.isnan(sketch.quantile(0.95))
    with pytest.raises(ValueError, match=r"a quantile is in 0\.\.1"):
        sketch.quantile(95)


def test_sketch_bins_are_bounded_by_the_range_not_the_count() -> None:
    rng = np.random.default_rng(0)
    sketch = LatencySketch()
    for _ in range(100):
        sketch.add(rng.uniform(1e-5, 1e-2, size=10_000).tolist())
    # one bin per factor (1 + a) / (1 - a) of time: 1e-5..1e-2 is ln(1000) / 0.002 of them
    bound = math.log(1e3) / math.log((1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR)) + 2
    assert sketch.count == 1_000_000 and len(sketch._bins) <= bound


# ------------------------------------------------------------- the tally


def _synthetic_games(count: int, seed: int, narrow: bool = False) -> list[GameResult]:
    """Games of three agents with made-up results and times in microseconds, as a games
    file holds them: zeros and a long tail, or (``narrow``) 100 to 200 µs."""
    rng = np.random.default_rng(seed)
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    games = []
    for n in range(count):
        pair = pairs[n % 3]
        index = n // 3
        players = pair if index % 2 == 0 else (pair[1], pair[0])
        plies = int(rng.integers(1, 60))
        if narrow:
            times = np.round(rng.uniform(1e-4, 2e-4, size=plies), 6)
        else:
            times = np.round(rng.lognormal(-6, 1.5, size=plies), 6)
            times[rng.random(plies) < 0.05] = 0.0
        winner = [0, 1, None][int(rng.integers(3))]
        reason = ["x", "elimination", "no_removal_limit", "unfinished"][int(rng.integers(4))]
        record = GameRecord(
            DARK, players, n, (0,) * plies, (-1,) * plies, tuple(times.tolist()), winner, reason
        )
        games.append(GameResult(pair, index, record))
    return games


def _assert_same_summary(tallied: TournamentResult, exact: TournamentResult) -> None:
    """Counts, scores, lengths and Elo equal; latency means to rounding, p95 within the
    sketch's relative error."""
    assert tallied.specs == exact.specs
    assert tallied.pairs.keys() == exact.pairs.keys()
    for key, e in exact.pairs.items():
        t = tallied.pairs[key]
        assert (t.a, t.b, t.games, t.wins, t.draws, t.losses) == (
            e.a, e.b, e.games, e.wins, e.draws, e.losses
        )  # fmt: skip
        assert (t.games_first, t.games_second) == (e.games_first, e.games_second)
        assert t.ends == e.ends
        for x, y in [(t.score_first, e.score_first), (t.score_second, e.score_second),
                     (t.mean_plies, e.mean_plies)]:  # fmt: skip
            assert x == y or (math.isnan(x) and math.isnan(y))
        for (t_mean, t_p95), (e_mean, e_p95) in [
            (t.latency_a, e.latency_a),
            (t.latency_b, e.latency_b),
        ]:
            assert t_mean == pytest.approx(e_mean, rel=1e-9, nan_ok=True)
            assert _within(t_p95, e_p95) or (math.isnan(t_p95) and math.isnan(e_p95))
    assert tallied.ratings == exact.ratings  # the same counts: the same fit, bit for bit
    assert tallied.latency.keys() == exact.latency.keys()
    for spec, (e_mean, e_p95) in exact.latency.items():
        t_mean, t_p95 = tallied.latency[spec]
        assert t_mean == pytest.approx(e_mean, rel=1e-9, nan_ok=True)
        assert _within(t_p95, e_p95) or (math.isnan(t_p95) and math.isnan(e_p95))
    assert tallied.rules == exact.rules


@pytest.mark.parametrize("specs", [None, ["c", "a", "b", "d"]])
def test_the_tally_equals_summarize_of_the_same_games(specs: list[str] | None) -> None:
    games = _synthetic_games(300, seed=1)
    tally = Tally(specs)
    for game in games:
        tally.add(game)
    assert tally.games == 300
    _assert_same_summary(tally.result(games), summarize(games, specs))
    assert tally.result(games).games == tuple(games) and tally.result().games == ()


def test_an_empty_tally_is_an_empty_summary() -> None:
    tallied, exact = Tally(["a", "b"]).result(), summarize([], ["a", "b"])
    assert (tallied.pairs, tallied.ratings, tallied.rules) == ({}, {}, None) == (
        exact.pairs, exact.ratings, exact.rules
    )  # fmt: skip
    assert tallied.specs == exact.specs and tallied.latency.keys() == exact.latency.keys()


def test_the_tally_does_not_grow_with_the_games() -> None:
    # PyPy has no tracemalloc (the module is there, its C half `_tracemalloc` is not)
    tracemalloc = pytest.importorskip("tracemalloc", exc_type=ImportError)
    games = _synthetic_games(3000, seed=2, narrow=True)
    tally = Tally(["a", "b", "c"])
    tracemalloc.start()
    try:
        for game in games[:300]:
            tally.add(game)
        early = tracemalloc.get_traced_memory()[0]
        for game in games[300:]:
            tally.add(game)
        late = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # 2,700 more games (about 80,000 times, all in bins the first 300 games opened) add
    # nothing; keeping the games' times alone would take megabytes
    assert late - early < 100_000, (early, late)


def test_a_tournament_tallies_what_summarize_computes_from_its_games(tmp_path: Path) -> None:
    specs = ["random", "greedy", "minimax:depth=1"]
    out = tmp_path / "games.jsonl"
    kept = round_robin(DARK, specs, 4, seed=3, workers=1, out=out, max_plies=60)
    assert len(kept.games) == 12
    _assert_same_summary(kept, summarize(kept.games, specs))
    # the same games read back (times rounded to microseconds, as the tally saw them)
    _assert_same_summary(kept, summarize(load_games(out)[1], specs))


def test_a_tournament_can_keep_no_games_and_resume(tmp_path: Path) -> None:
    specs = ["random", "greedy", "minimax:depth=1"]
    out = tmp_path / "games.jsonl"

    def stop_after_five(done: int, total: int, game: GameResult) -> None:
        if done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        round_robin(
            DARK, specs, 4, seed=2, workers=1, out=out, progress=stop_after_five,
            max_plies=40, keep_games=False,
        )  # fmt: skip
    assert len(load_games(out)[1]) == 5
    with open(out, "a") as f:
        f.write('{"pair": ["random", "gre')  # torn by a crash
    seen: list[int] = []
    result = round_robin(
        DARK, specs, 4, seed=2, workers=2, out=out, progress=lambda d, t, g: seen.append(d),
        max_plies=40, keep_games=False,
    )  # fmt: skip
    assert result.games == () and result.rules == DARK
    assert sorted(seen) == list(range(6, 13))  # the five in the file count, and are not replayed
    _, games = load_games(out)
    assert len({(g.pair, g.index) for g in games}) == len(games) == 12
    _assert_same_summary(result, summarize(games, specs))
    # play_match keeps no games either; its result counts the file's games
    pair = play_match(DARK, "random", "greedy", 4, seed=2, workers=1, out=out, max_plies=40)
    assert pair == result.pairs[("random", "greedy")]


def test_resumable_games_are_read_one_at_a_time(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    round_robin(DARK, ["random", "greedy"], 3, seed=5, workers=1, out=out, max_plies=10)
    pairs = [("random", "greedy")]
    lazy = iter_resumable_games(out, DARK, pairs, 2, 5, 10)
    assert [g.index for g in lazy] == [g.index for g in resumable_games(out, DARK, pairs, 2, 5, 10)]
    assert sorted(g.index for g in resumable_games(out, DARK, pairs, 2, 5, 10)) == [0, 1]
    # a file of another run is refused when asked, before a game is read
    with pytest.raises(RecordError, match="holds games of a different run"):
        iter_resumable_games(out, DARK, pairs, 2, 6, 10)


@pytest.mark.parametrize("tail", [b"", b"x" * 200_000])
def test_a_long_torn_line_is_cut_on_resume(tmp_path: Path, tail: bytes) -> None:
    out = tmp_path / "games.jsonl"
    round_robin(DARK, ["random", "greedy"], 2, seed=5, workers=1, out=out, max_plies=10)
    whole = out.read_bytes()
    out.write_bytes(whole + b'{"pair": ["random", "gre' + tail)
    result = round_robin(DARK, ["random", "greedy"], 2, seed=5, workers=1, out=out, max_plies=10)
    assert out.read_bytes() == whole and result.pairs[("random", "greedy")].games == 2
    # a file that is all one torn line (the header's write was cut) starts again
    out.write_bytes(b'{"type": "hea' + tail)
    round_robin(DARK, ["random", "greedy"], 2, seed=5, workers=1, out=out, max_plies=10)
    header, games = load_games(out)
    assert header is not None and sorted(g.index for g in games) == [0, 1]
    assert out.read_bytes().count(b"\n") == 3
