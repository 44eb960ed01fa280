"""Duplicate deals (``deals="duplicate"``) and the comparison of two runs (``compare_runs``,
``jungle compare``): the same game seed hides the same pieces under the same squares
whoever plays, the deal is uniform, and paired games are compared game by game."""

from __future__ import annotations

import collections
from pathlib import Path

import attrs
import numpy as np
import pytest

from jungle_agents import make_agent
from jungle_agents.arena import (
    GameResult,
    RecordError,
    compare_runs,
    deal_layout,
    game_seed,
    load_games,
    play_game,
    replay,
    round_robin,
)
from jungle_cli import main
from jungle_core import DARK, JungleError, new_game, rules_by_name
from jungle_core.lowlevel import HIDDEN, tables


def revealed(game: GameResult) -> dict[int, int]:
    """The identity each square turned up in a game (a reveal's square, a bump's target)."""
    step = tables(game.record.rules).step
    out = {}
    for state, action, o in zip(
        replay(game.record), game.record.actions, game.record.outcomes, strict=False
    ):
        if o >= 0:
            n = len(state.board)
            out[action if action < n else step[action - n]] = o
    return out


def test_a_deal_is_a_uniform_permutation_of_the_face_down_set() -> None:
    """The layout maps the 16 face-down squares one to one onto the 16 identities, and
    over 1,600 deals the identity under a square is uniform (a chi-square test of each
    of three squares, 15 degrees of freedom, far below the 0.1 % point, 37.7)."""
    start = new_game(DARK)
    squares = [sq for sq, c in enumerate(start.board) if c == HIDDEN]
    rng = np.random.default_rng(0)
    counts: dict[int, collections.Counter[int]] = {sq: collections.Counter() for sq in (0, 5, 50)}
    for _ in range(1600):
        layout = deal_layout(start, rng)
        assert sorted(layout) == squares and sorted(layout.values()) == list(range(16))
        for sq, c in counts.items():
            c[layout[sq]] += 1
    for c in counts.values():
        chi2 = sum((c[i] - 100) ** 2 / 100 for i in range(16))
        assert chi2 < 37.7


def test_a_start_that_cannot_be_dealt_in_advance_is_refused() -> None:
    """A face-down set that does not match the face-down squares one to one (15 pieces
    for 16 squares) cannot be dealt: a typed error naming the position."""
    start = new_game(DARK)
    short = attrs.evolve(start, face_down_mask=start.face_down_mask & ~1)
    with pytest.raises(JungleError, match="cannot deal"):
        deal_layout(short, np.random.default_rng(0))


def test_duplicate_deals_hide_the_same_pieces_whoever_plays(tmp_path: Path) -> None:
    """Two runs of one seed with other agents: game ``i`` has the same seed in both, and
    every square both games turn up turns up the same piece; the games replay, the
    header says how they were dealt, and a resume with the other dealing is refused."""
    one = tmp_path / "one.jsonl"
    two = tmp_path / "two.jsonl"
    a = round_robin(DARK, ["greedy", "random"], 6, seed=3, workers=1, out=one, deals="duplicate")
    b = round_robin(
        DARK, ["minimax:depth=1", "random"], 6, seed=3, workers=1, out=two, deals="duplicate"
    )
    shared = 0
    for x, y in zip(a.games, b.games, strict=True):
        assert x.index == y.index and x.record.seed == y.record.seed
        assert x.record.seed == game_seed(3, "any", "pair", x.index, "duplicate")
        assert x.record.actions != y.record.actions
        rx, ry = revealed(x), revealed(y)
        common = set(rx) & set(ry)
        assert all(rx[sq] == ry[sq] for sq in common)
        shared += len(common)
    assert shared >= 30
    header, games = load_games(one)
    assert header is not None and header["deals"] == "duplicate" and len(games) == 6
    with pytest.raises(RecordError, match="deals"):
        round_robin(DARK, ["greedy", "random"], 6, seed=3, workers=1, out=one)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(one.read_text().replace('"deals":"duplicate"', '"deals":"shared"', 1))
    assert bad.read_text() != one.read_text()
    with pytest.raises(RecordError, match="deals must be 'duplicate'"):
        load_games(bad)
    independent = round_robin(DARK, ["greedy", "random"], 2, seed=3, workers=1)
    assert "deals" not in str(independent.games[0].record.to_json())
    assert independent.games[0].record.seed != a.games[0].record.seed
    with pytest.raises(JungleError, match="deals"):
        round_robin(DARK, ["greedy", "random"], 2, seed=3, workers=1, deals="shared")


def test_duplicate_deals_play_classic_as_before() -> None:
    """CLASSIC has no chance: a duplicate deal changes only the game's seed."""
    classic = rules_by_name("classic")
    agents = make_agent("greedy", classic), make_agent("random", classic)
    plain = play_game(classic, *agents, seed=5, max_plies=40)
    dealt = play_game(classic, *agents, seed=5, max_plies=40, deals="duplicate")
    assert plain.actions == dealt.actions and set(dealt.outcomes) == {-1}


def test_compare_runs_pairs_games_by_deal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two duplicate runs of one seed pair every game (by seed and A's seat) and the
    difference is the mean of the games' differences; runs without a shared deal are
    compared by their means; the deals whose results differ are listed, and a run
    compared with itself plays every deal alike to the end; a file of several pairs is
    refused; ``jungle compare`` prints the comparison."""
    one, two, three = (tmp_path / f"{n}.jsonl" for n in ("one", "two", "three"))
    round_robin(DARK, ["greedy", "random"], 8, seed=4, workers=1, out=one, deals="duplicate")
    round_robin(
        DARK, ["minimax:depth=1", "random"], 8, seed=4, workers=1, out=two, deals="duplicate"
    )
    round_robin(DARK, ["minimax:depth=1", "random"], 8, seed=4, workers=1, out=three)
    x, y, z = (load_games(p)[1] for p in (one, two, three))
    c = compare_runs(x, y)
    assert c.paired and c.games_x == c.games_y == 8
    by_seed = {g.record.seed: g.score_a() for g in y}
    diffs = [g.score_a() - by_seed[g.record.seed] for g in x]
    assert c.difference == pytest.approx(np.mean(diffs))
    assert c.interval == pytest.approx(1.959964 * np.std(diffs, ddof=1) / np.sqrt(8), rel=1e-5)
    assert c.score_x == pytest.approx(np.mean([g.score_a() for g in x]))
    sx, sy = [g.score_a() for g in x], [by_seed[g.record.seed] for g in x]
    assert c.unpaired_interval == pytest.approx(
        1.959964 * np.sqrt(np.var(sx, ddof=1) / 8 + np.var(sy, ddof=1) / 8), rel=1e-5
    )
    changed = [
        (g.index, g.score_a(), by_seed[g.record.seed])
        for g in x
        if g.score_a() != by_seed[g.record.seed]
    ]
    assert c.changed == tuple(sorted(changed))
    itself = compare_runs(y, y)
    assert itself.changed == () and itself.same_through_chance == itself.same_to_end == 8
    # one game with its last ply (no chance in it) or its first (a reveal) played otherwise
    game = next(g for g in y if g.record.outcomes[-1] == -1)
    assert game.record.outcomes[0] >= 0

    def other_ply(at: int) -> GameResult:
        actions = list(game.record.actions)
        actions[at] += 1
        return attrs.evolve(game, record=attrs.evolve(game.record, actions=tuple(actions)))

    tail, head = compare_runs([other_ply(-1)], [game]), compare_runs([other_ply(0)], [game])
    assert (tail.same_through_chance, tail.same_to_end) == (1, 0)
    assert (head.same_through_chance, head.same_to_end) == (0, 0)
    u = compare_runs(x, z)
    assert not u.paired and u.games_y == 8 and u.unpaired_interval == u.interval
    assert u.changed == () and u.same_through_chance == u.same_to_end == 0
    assert u.difference == pytest.approx(
        np.mean([g.score_a() for g in x]) - np.mean([g.score_a() for g in z])
    )
    with pytest.raises(JungleError, match="one pair"):
        compare_runs(x + z, y)
    assert main(["compare", str(one), str(two)]) == 0
    printed = capsys.readouterr().out
    assert "paired on 8 deals" in printed and "x - y = " in printed
    assert f"A's result differs on {len(changed)}: " in printed
