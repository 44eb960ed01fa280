"""Tests of the ``jungle`` command: sub-commands called directly, ``play`` and ``replay``
fed scripted input."""

from __future__ import annotations

import argparse
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

import jungle_core as jc
from jungle_agents.arena import load_games, load_record
from jungle_cli import build_parser, main, split_agent_specs
from jungle_cli._play import PlaySession, _cmd_play, _cmd_replay, parse_clock
from jungle_cli._progress import ProgressBar


def scripted(lines: list[str]) -> tuple[object, list[str]]:
    """An input function that answers with ``lines`` then raises EOFError, and the list
    that collects the prompts."""
    prompts: list[str] = []
    it: Iterator[str] = iter(lines)

    def read(prompt: str) -> str:
        prompts.append(prompt)
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return read, prompts


def test_perft_keeps_its_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", "--depth", "1"]) == 0
    assert capsys.readouterr().out.startswith("perft(1) = 256  (")


def test_endgame_prints_the_value_and_every_move(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["endgame", "8/8/8/3e4/8/2E1R3/8 0 0 0 - -"]) == 0
    out = capsys.readouterr().out
    assert "player 0 to move: win in 15 plies to the removal" in out
    assert out.splitlines()[-8].split() == ["e2-e3", "win", "(15", "plies)"]  # fastest first
    assert main(["endgame", "?7/8/8/8/8/8/E6r 0 0 0 - T"]) == 2  # a face-down piece
    assert "cover DARK positions with every piece face up" in capsys.readouterr().err


def test_agents_lists_kinds_and_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents"]) == 0
    out = capsys.readouterr().out
    assert "minimax:" in out and "depth=3" in out and "greedy:" in out
    # the presets, with their spec, measured score, opponent and time a decision
    assert "minimax-strong = minimax:time=0.25,depth=30,quiescence=1 (CLASSIC: 0.645" in out
    assert "against azero:simulations=8192 over 200 games, 279 ms a decision" in out


def test_split_agent_specs_keeps_parameters_together() -> None:
    assert split_agent_specs("minimax:depth=2,tt=0,random") == ["minimax:depth=2,tt=0", "random"]


def test_match_prints_the_table_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "m.jsonl"
    argv = ["match", "greedy", "random", "--games", "2", "--workers", "1", "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr()
    assert "greedy  random  2" in text.out
    assert "2/2 games" in text.err  # the progress bar
    assert len(load_games(out)[1]) == 2
    assert main([*argv[:3], "--games", "4", *argv[5:]]) == 0
    assert "resuming: 2 games already" in capsys.readouterr().err
    assert len(load_games(out)[1]) == 4
    # the run is finished: the same command reports again and builds no agent
    import jungle_agents.arena._matches

    def refuse(*args: object) -> None:
        raise AssertionError(f"an agent was built: {args}")

    monkeypatch.setattr(jungle_agents.arena._matches, "agent", refuse)
    monkeypatch.setattr(jungle_agents.arena._matches, "make_agent", refuse)
    assert main([*argv[:3], "--games", "4", *argv[5:]]) == 0
    text = capsys.readouterr()
    assert "resuming: 4 games already" in text.err
    assert "How the games ended" in text.out and "greedy  random  4" in text.out


def test_tournament_writes_every_result_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tournament", "--agents", "random,greedy,minimax:depth=1,tt=0", "--games", "2"]
    assert main([*argv, "--workers", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "minimax:depth=1,tt=0" in out and "Elo" in out
    for name in ("games.jsonl", "results.csv", "results.md", "heatmap.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_bad_input_gives_a_clear_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["match", "minmax", "random", "--games", "2", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'minmax'" in err and "valid agents:" in err
    # a value the agent itself refuses: refused by the run, before its games file exists
    out = tmp_path / "m.jsonl"
    argv = ["match", "minimax:depth=-1", "random", "--games", "2", "--out", str(out)]
    assert main([*argv, "--workers", "1"]) == 2
    assert "depth must be 1..64" in capsys.readouterr().err and not out.exists()
    assert main(["tournament", "--agents", "random", "--games", "2"]) == 2
    assert "at least two agents" in capsys.readouterr().err
    assert main(["play", "--clock", "fast"]) == 2
    assert "is not MIN+INC" in capsys.readouterr().err


def _play_args(**kw: object) -> argparse.Namespace:
    args = build_parser().parse_args(["play"])
    for k, v in kw.items():
        setattr(args, k, v)
    return args


def test_play_session_moves_undo_hint_save_load_resign(tmp_path: Path) -> None:
    out: list[str] = []
    save = tmp_path / "game.json"
    read, _ = scripted(
        [
            "help",
            "e4-e5",  # no piece there
            "hello",  # not a move
            "?a1",
            "moves",
            "hint",
            "undo",
            "?b1",
            f"save {save}",
            "undo",
            "undo",
            f"load {save}",
            "board",
            "resign",
        ]
    )
    args = _play_args(opponent="greedy", seed=3)
    assert _cmd_play(args, read, out.append) == 0  # type: ignore[arg-type]
    text = "\n".join(out)
    assert "commands:" in text
    assert "e4-e5 is not legal" in text
    assert "'hello' is not an action" in text
    assert "you play ?a1 (turns up" in text
    assert "legal moves: " in text
    assert "hint (minimax:depth=2): " in text
    assert "took back your last move; back at ply 0" in text
    assert "nothing to undo: you have not moved yet" in text
    assert "saved 2 plies to" in text
    assert "loaded " in text and ": 2 plies of DARK" in text
    assert "game over: resigned: the agent wins" in text
    record = load_record(save)
    assert record.players == ("human", "greedy") and record.reason == "unfinished"
    assert jc.action_to_str(jc.new_game(), record.actions[0]) == "?b1"


def test_play_as_second_player_until_the_end_of_input() -> None:
    out: list[str] = []
    read, prompts = scripted([])
    session = PlaySession(jc.DARK, "random", 1, input_fn=read, output=out.append)  # type: ignore[arg-type]
    assert session.run() == "quit (end of input)"
    assert any(line.startswith("random plays ?") for line in out)
    assert prompts == ["your move> "]


@pytest.mark.parametrize(
    ("ticks", "result"),
    [
        # human: ?a1 in no time, agent replies in no time, the human then thinks 100 s
        ([0.0] * 5, "the agent wins on time"),
        # the agent thinks 100 s over its 60
        ([0.0] * 3, "you win on time"),
    ],
)
def test_play_clock_flags_the_slow_side(ticks: list[float], result: str) -> None:
    times = iter(ticks)
    out: list[str] = []
    read, _ = scripted(["?a1", "?b1"])
    session = PlaySession(
        jc.DARK,
        "random",
        0,
        clock=parse_clock("1+2"),
        input_fn=read,  # type: ignore[arg-type]
        output=out.append,
        clock_fn=lambda: next(times, 100.0),
    )
    assert session.run() == result
    text = "\n".join(out)
    assert "clock: player 0 1:00  player 1 1:00" in text
    assert "clock: player 0 1:02" in text or result == "the agent wins on time"


def test_play_a_whole_game_against_random() -> None:
    # the human always plays the first legal move (via 'moves' output) until the end
    out: list[str] = []
    state_holder: list[PlaySession] = []

    def read(prompt: str) -> str:
        s = state_holder[0].state
        return jc.action_to_str(s, jc.legal_actions(s)[0])

    session = PlaySession(jc.DARK, "random", 0, seed=2, input_fn=read, output=out.append)
    state_holder.append(session)
    result = session.run()
    assert result.startswith(("you win", "the agent wins", "draw"))
    assert jc.outcome(session.state) is not None


def test_replay_prints_every_ply_or_steps(tmp_path: Path) -> None:
    games = tmp_path / "g.jsonl"
    assert (
        main(["match", "random", "greedy", "--games", "2", "--workers", "1", "--out", str(games)])
        == 0
    )
    record = load_games(games)[1][1].record
    args = build_parser().parse_args(["replay", str(games), "--game", "1", "--all"])
    out: list[str] = []
    assert _cmd_replay(args, output=out.append) == 0
    assert out[0].startswith("greedy (player 0) vs random (player 1)")
    assert sum(line.startswith("ply ") for line in out) == record.plies
    # interactive: next, previous, go to, end, bad command, quit
    args = build_parser().parse_args(["replay", str(games), "--game", "1", "--interactive"])
    read, _ = scripted(["", "n", "p", "g 3", "g 99999", "x", "e", "n", "q"])
    out.clear()
    assert _cmd_replay(args, read, out.append) == 0  # type: ignore[arg-type]
    plies = [line.split(":")[0] for line in out if line.startswith("ply ")]
    assert plies == ["ply 1", "ply 2", "ply 1", "ply 3", f"ply {record.plies}"]
    assert "unknown command 'x'" in out
    assert "at the end of the game" in out
    assert main(["replay", str(tmp_path / "missing.json")]) == 2


def test_progress_bar_redraws_in_place_on_a_terminal() -> None:
    from jungle_agents.arena import GameRecord, GameResult

    stream = io.StringIO()
    bar = ProgressBar(stream, clock=iter([0.0, 1.0, 2.0]).__next__, tty=True)
    bar.start(2)
    rec = GameRecord(jc.DARK, ("a", "b"), 0, (), (), (), None, "no_removal_limit")
    bar(1, 2, GameResult(("a", "b"), 0, rec))
    bar(2, 2, GameResult(("a", "b"), 1, rec))
    text = stream.getvalue()
    # A's wins-draws-losses, the form of the results table's "W-D-L (A)"
    assert text.startswith("\r[##########..........] 1/2 games  a vs b W-D-L 0-1-0  ETA 1s")
    # the line is redrawn in place, then the bar ends its line
    assert text.endswith("\r[####################] 2/2 games  a vs b W-D-L 0-2-0  ETA 0s\n")


@pytest.mark.parametrize(
    ("move", "why"),
    [
        ("e4-e5", "e4-e5 is not legal in this position"),  # well formed, no piece there
        ("a1-c1", "a1-c1 is not legal in this position"),  # two squares at once
        ("a1-b2", "'a1-b2' does not move along a row or a column"),
        ("hello", "'hello' is not an action"),
    ],
)
def test_a_refused_move_shows_the_board_and_the_legal_moves(move: str, why: str) -> None:
    out: list[str] = []
    read, _ = scripted([move])
    session = PlaySession(jc.DARK, "random", 0, input_fn=read, output=out.append)  # type: ignore[arg-type]
    board = jc.render(session.state)
    session.run()
    at = next(i for i, line in enumerate(out) if line.startswith(why))
    assert out[at + 1] == board  # the board, not a position string
    assert jc.to_fen(session.state).split()[0] not in "\n".join(out)
    legal = " ".join(jc.action_to_str(session.state, a) for a in jc.legal_actions(session.state))
    assert out[at + 2] == f"your legal moves: {legal}\n(type 'help' for the commands)"


def test_a_loaded_games_opening_survives_play_and_serve(tmp_path: Path) -> None:
    """A record that began with a random opening keeps its ``opening`` when ``jungle
    play`` or the served page continues it and saves it again (less what was taken back)."""
    from jungle_agents import make_agent
    from jungle_agents.arena import play_game, save_record
    from jungle_cli._games import ServedGame

    agents = make_agent("random", jc.DARK), make_agent("random", jc.DARK)
    record = play_game(jc.DARK, *agents, seed=5, max_plies=6, openings=2)
    assert record.opening == 2
    path = tmp_path / "opened.json"
    save_record(record, path)
    again = tmp_path / "again.json"
    out: list[str] = []
    read, _ = scripted([f"load {path}", f"save {again}"])
    session = PlaySession(jc.DARK, "random", 0, input_fn=read, output=out.append)  # type: ignore[arg-type]
    session.run()
    assert load_record(again).opening == 2, out
    served = ServedGame.from_record(record, ("human", "human"))
    assert served.record().opening == 2
    while served.ply > 1:  # taken back into the opening: no more opening plies than plies
        served.undo()
    assert served.record().opening == 1
