"""The arena's game anatomy (:func:`jungle_agents.arena.game_anatomy` and its parts):
an agent's results by its piece lead, its draws and its means to win, against direct
counts over the replayed games; and ``experiments/anatomy.py``, which prints them."""

from __future__ import annotations

import collections
import itertools
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest

from jungle_agents.arena import (
    ACTION_KINDS,
    action_kind,
    can_still_win,
    chance_actions,
    draw_end,
    game_anatomy,
    kept_draws,
    load_games,
    mean_lead,
    piece_counts,
    play_match,
    replay,
)
from jungle_core import DARK, State, from_fen
from tests._requires import needs_jax
from tests._scripts import load_experiment


def test_anatomy_counts_each_game_once_at_its_leads(tmp_path: Path) -> None:
    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 6, seed=2, workers=1, out=path)
    _, games = load_games(path)
    tallies = game_anatomy(games, "greedy")
    want_face_up: dict[tuple[int | None, str], int] = {}
    draws_by_elimination = 0
    draw_ends: dict[tuple[None, str], int] = {}
    leads_face_up: list[int] = []  # one a game that turned every piece up
    for game in games:
        seat = game.record.players.index("greedy")
        winner = game.record.winner
        result = "D" if winner is None else "W" if winner == seat else "L"
        lead = None
        for state in replay(game.record):
            if not state.face_down_mask:
                counts = piece_counts(state)
                lead = counts[seat] - counts[1 - seat]
                leads_face_up.append(lead)
                break
        want_face_up[(lead, result)] = want_face_up.get((lead, result), 0) + 1
        draws_by_elimination += result == "D" and game.record.reason == "elimination"
        if result == "D":
            end = draw_end(replay(game.record)[-1], seat, game.record.reason)
            draw_ends[(None, end)] = draw_ends.get((None, end), 0) + 1
    assert dict(tallies["face_up"]) == want_face_up
    assert any(lead is not None for lead, _ in want_face_up), "no game turned every piece up"
    assert sum(tallies["six"].values()) == len(games)
    assert sum(tallies["elimination_draws"].values()) == draws_by_elimination
    assert draw_ends, "no drawn game to sort"
    assert dict(tallies["draw_ends"]) == draw_ends
    assert sum(draw_ends.values()) == sum(g.record.winner is None for g in games)
    script = load_experiment("anatomy")  # prints the tables
    text = script.format_tallies(tallies)
    assert text.startswith("lead when the last piece turns face up: W-D-L")
    assert "lead at six pieces" in text
    games_reached = len(leads_face_up)
    mean = statistics.fmean(leads_face_up)
    assert mean_lead(tallies["face_up"]) == pytest.approx((mean, games_reached))
    assert f"  mean lead {mean:+.2f} over the {games_reached} games" in text
    assert mean_lead(collections.Counter()) == (None, 0)
    assert "draws ending in: removed together" in text
    assert game_anatomy(games, "minimax:depth=9")["face_up"] == {}  # not a player here
    # every game once, under the move that ended the agent's means to win or as kept
    assert sum(tallies["means"].values()) == len(games)
    assert sum(tallies["means_trades"].values()) == len(games)
    assert "the agent's means to win (can_still_win)" in text
    assert "the agent's means to win (counting the trades)" in text


def _takes(r: int, x: int) -> bool:
    """Whether rank ``r`` takes rank ``x`` and survives (equal ranks trade instead)."""
    return (r == 1 and x == 8) or (r > x and not (r == 8 and x == 1))


def _covers(ranks: list[int], enemy: list[int]) -> bool:
    """Whether every enemy piece can be removed by one of ``ranks``: taken or traded."""
    return all(any(x == r or _takes(r, x) for r in ranks) for x in enemy)


def _can_win_by_rank(ranks: list[int], enemy: list[int]) -> bool:
    """DARK's battles by rank, written here: higher takes lower, equal ranks trade,
    the Rat (1) takes the Elephant (8), which cannot take it."""
    if not ranks or not enemy:
        return bool(ranks)
    return _covers(ranks, enemy) and (
        len(ranks) > len(enemy) or any(_takes(r, x) for r in ranks for x in enemy)
    )


def _can_win_counting_trades(ranks: list[int], enemy: list[int]) -> bool:
    """The same with the trades counted: an enemy piece that none of ``ranks`` takes is
    removed only by a trade, which costs one piece each; one must be left after them."""
    if not ranks or not enemy:
        return bool(ranks)
    if not _covers(ranks, enemy):
        return False
    return len(ranks) > sum(not any(_takes(r, x) for r in ranks) for x in enemy)


def _row(ranks: list[int], letter: Callable[[str], str]) -> str:
    """A position string's row: ``letter(rank)`` on column ``rank`` (a..h), empty runs
    counted."""
    out, empty = "", 0
    for rank in range(1, 9):
        if rank in ranks:
            out += (str(empty) if empty else "") + letter("RCDWPTLE"[rank - 1])
            empty = 0
        else:
            empty += 1
    return out + (str(empty) if empty else "")


def test_can_still_win_over_every_two_sets_of_ranks() -> None:
    """Over every two sets of DARK ranks (each side holds one piece of each rank at most;
    the enemy's face up or, every other pair, face down), ``can_still_win`` equals the rule
    written by rank here, with the trades counted or not. And counting the trades changes
    the answer only for a side down to one piece: an enemy piece none of a side's takes
    must equal its highest rank (or be the Rat, where the side holds only its Rat and
    Elephant), so two pieces or more always hold more than such enemies. Hence
    ``azero:count_trades`` moves the search's bounds only where one side has a lone
    piece."""
    sets = [[r for r in range(1, 9) if mask >> (r - 1) & 1] for mask in range(256)]
    differ = face_down = 0
    for i, ranks in enumerate(sets):
        for j, enemy in enumerate(sets):
            own = _row(ranks, str.upper)
            if (i + j) % 2:
                hidden = "".join("RCDWPTLE"[r - 1].lower() for r in enemy) or "-"
                state = from_fen(f"{_row(enemy, lambda _: '?')}/8/8/8/8/8/{own} 0 0 0 - {hidden}")
                face_down += bool(enemy)
            else:
                state = from_fen(f"{_row(enemy, str.lower)}/8/8/8/8/8/{own} 0 0 0 - -")
            plain = can_still_win(state, 0)
            sharp = can_still_win(state, 0, trades=True)
            want = (_can_win_by_rank(ranks, enemy), _can_win_counting_trades(ranks, enemy))
            assert (plain, sharp) == want, (ranks, enemy)
            assert plain or not sharp
            if sharp != plain:
                differ += 1
                assert len(ranks) == 1, (ranks, enemy)
    assert differ and face_down


@needs_jax
def test_can_still_win_agrees_with_ranks_and_with_the_jax_test(tmp_path: Path) -> None:
    """``can_still_win`` (pure, by the battle table) equals the same rule written by rank
    here and ``jungle_train.azero._hand_value.winning_material`` on the JAX core (what
    ``azero:dead_draw`` reads), on every position of random games, for both seats; and
    so does each with the trades counted."""
    import jax

    from jungle_core.jax_env import make
    from jungle_train.azero._hand_value import winning_material

    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 4, seed=3, workers=1, out=path)
    env = make(DARK)
    jax_test = jax.jit(winning_material, static_argnums=(0, 3))
    seen = {True: 0, False: 0}
    differ = 0
    for game in load_games(path)[1]:
        for state in replay(game.record)[::3]:
            jax_state = env.from_state(state)
            for seat in (0, 1):
                ranks = [[i % 8 + 1 for i in range(16) if state.in_play >> i & 1 and i // 8 == s]
                         for s in (seat, 1 - seat)]  # fmt: skip
                want = _can_win_by_rank(ranks[0], ranks[1])
                assert can_still_win(state, seat) == want, (state, seat)
                assert bool(jax_test(DARK, jax_state, seat, False)) == want, (state, seat)
                sharp = _can_win_counting_trades(ranks[0], ranks[1])
                assert can_still_win(state, seat, trades=True) == sharp, (state, seat)
                assert bool(jax_test(DARK, jax_state, seat, True)) == sharp, (state, seat)
                assert want or not sharp  # the sharper test never finds a win the other does not
                seen[want] += 1
                differ += want != sharp
    assert seen[True] and seen[False], seen
    assert differ, "no position where counting the trades changes the answer"
    lone_elephant = from_fen("8/8/8/8/8/8/E3et2 0 0 0 - -")  # takes t, then must trade
    assert can_still_win(lone_elephant, 0)
    assert not can_still_win(lone_elephant, 0, trades=True)


def test_draw_end_sorts_the_last_position() -> None:
    tiger_rat_v_lion = from_fen("8/8/8/8/8/8/TR3l2 0 0 0 - -")
    assert draw_end(tiger_rat_v_lion, 0, "no_removal_limit") == "no remover"
    # the Lion's side can take both: for it, one against two with a remover each
    assert draw_end(tiger_rat_v_lion, 1, "no_removal_limit") == "other"
    elephants = from_fen("8/8/8/8/8/8/E4e2 0 0 0 - -")  # equal ranks trade: a remover
    assert draw_end(elephants, 0, "no_removal_limit") == "one against one"
    assert draw_end(elephants, 0, "elimination") == "removed together"
    rat_v_elephant = from_fen("8/8/8/8/8/8/R4e2 0 0 0 - -")  # the Rat takes the Elephant
    assert draw_end(rat_v_elephant, 0, "no_removal_limit") == "one against one"
    assert draw_end(rat_v_elephant, 1, "no_removal_limit") == "no remover"


def test_chance_actions_sort_each_side_s_decisions_while_pieces_are_face_down(
    tmp_path: Path,
) -> None:
    """Each decision taken while some piece is face down is counted once, for the side
    that took it, by the square its action lands on; the lead changes are the piece
    counts three plies on, a bump counts as available where one was legal, and the
    mover's face-up pieces and those beside a face-down one match a walk of the board."""
    from jungle_core import legal_actions
    from jungle_core.lowlevel import tables

    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 4, seed=5, workers=1, out=path)
    _, games = load_games(path)
    sides = chance_actions(games, "greedy")
    step, n = tables(DARK).step, DARK.num_squares

    def kind(state: State, action: int) -> str:  # written here from the action encoding
        if action < n:
            return "reveal"
        code = state.board[step[action - n]]
        return "quiet" if code == 0 else "bump" if code in (17, 18, 19) else "attack"

    want = {side: {"decisions": 0, "bump": 0, "bump lead": 0, "available": 0, "taken": 0,
                   "up": 0, "beside": 0}
            for side in ("agent", "opponent")}  # fmt: skip
    cols = DARK.cols
    for game in games:
        seat = game.record.players.index("greedy")
        states = replay(game.record)
        for ply, state in enumerate(states[:-1]):
            if not state.face_down_mask:
                break
            side = want["agent" if state.to_move == seat else "opponent"]
            k = kind(state, game.record.actions[ply])
            assert action_kind(state, game.record.actions[ply]) == k
            side["decisions"] += 1
            if k == "bump":
                side["bump"] += 1
                me = state.to_move
                later = states[min(ply + 3, len(states) - 1)]
                a, b = piece_counts(state), piece_counts(later)
                side["bump lead"] += (b[me] - b[1 - me]) - (a[me] - a[1 - me])
            if any(kind(state, x) == "bump" for x in legal_actions(state)):
                side["available"] += 1
                side["taken"] += k == "bump"
            for sq, code in enumerate(state.board):  # the mover's face-up pieces (1..16)
                if 1 <= code <= 16 and (code - 1) // 8 == state.to_move:
                    side["up"] += 1
                    r, c = divmod(sq, cols)
                    near = [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))]
                    side["beside"] += any(
                        0 <= rr < DARK.rows and 0 <= cc < cols and state.board[rr * cols + cc] >= 17
                        for rr, cc in near
                    )
    for name, side in want.items():
        got = sides[name]
        assert got["games"] == len(games)
        assert got["decisions"] == side["decisions"] > 0
        assert sum(got[k] for k in ACTION_KINDS) == side["decisions"]
        assert (got["bump"], got["bump lead"]) == (side["bump"], side["bump lead"])
        assert (got["bump available"], got["bump taken"]) == (side["available"], side["taken"])
        assert (got["face up"], got["beside face down"]) == (side["up"], side["beside"])
    assert want["agent"]["bump"] + want["opponent"]["bump"] > 0, "no bump to count"
    text = load_experiment("anatomy").format_chance_actions(sides)
    assert text.startswith("while pieces are face down")
    assert "a bump available at" in text
    assert "face-up pieces a decision" in text
    assert want["agent"]["beside"] + want["opponent"]["beside"] > 0, "nobody beside a face-down"


def test_kept_draws_read_the_tables_where_the_quiet_run_enters_them(tmp_path: Path) -> None:
    """Every no-removal draw in which the agent's means to win were never ended is sorted
    once: beyond the tables where the position before the last move has more than four
    pieces or one face down, else by the tables' value for the agent at the later of the
    last removal and the last piece turning face up (the run's material is fixed, so that
    is where it enters them)."""
    from jungle_agents.endgame import EndgameTables

    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 20, seed=2, workers=1, out=path)
    _, games = load_games(path)
    tables = EndgameTables(4)
    want: dict[str, int] = {}
    for game in games:
        if game.record.reason != "no_removal_limit":
            continue
        seat = game.record.players.index("greedy")
        states = replay(game.record)
        if any(
            can_still_win(a, seat) and not can_still_win(b, seat)
            for a, b in itertools.pairwise(states)
        ):
            continue
        before = states[-2]
        if before.face_down_mask or sum(piece_counts(before)) > 4:
            kind = "beyond the tables"
        else:
            removal = len(states) - 1 - states[-1].plies_since_removal
            face_up = next(i for i, s in enumerate(states) if not s.face_down_mask)
            enter = states[max(removal, face_up)]
            probe = tables.probe(enter)
            assert probe is not None
            value = probe.result if enter.to_move == seat else -probe.result
            kind = {1: "win", 0: "draw", -1: "loss"}[value]
        want[kind] = want.get(kind, 0) + 1
    assert want.get("beyond the tables") and sum(want.values()) > want["beyond the tables"], want
    assert dict(kept_draws(games, "greedy", tables)) == want
    assert kept_draws(games, "minimax:depth=9", tables) == {}
    script = load_experiment("anatomy")
    text = script.format_kept_draws(kept_draws(games, "greedy", tables))
    assert text.splitlines()[1].startswith("  draw ")


def test_the_anatomy_script_prints_every_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``experiments/anatomy.py GAMES``: the agent (the first of the first pair by
    default), then the lead tables, the chance phase and the kept draws."""
    import sys

    script = load_experiment("anatomy")
    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 2, seed=1, workers=1, out=path)
    monkeypatch.setattr(sys, "argv", ["anatomy.py", path, "--tables", "3"])
    script.main()
    out = capsys.readouterr().out
    assert out.startswith("greedy, 2 games\nlead when the last piece turns face up: W-D-L")
    assert "while pieces are face down, per game" in out
    assert "by the 3-piece tables' value for the agent" in out
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    monkeypatch.setattr(sys, "argv", ["anatomy.py", str(empty)])
    with pytest.raises(SystemExit, match="no games"):
        script.main()
