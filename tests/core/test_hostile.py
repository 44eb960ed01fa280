"""Bad inputs found by fuzzing, one by one: each now a typed error with a message that
names the input (``property_tests/test_hostile_input.py`` fuzzes the same doors)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import numpy as np
import pytest

import jungle_core as jc
from jungle_agents import AgentSpecError, make_agent
from jungle_agents.arena import RecordError, load_games, load_record, play_game, round_robin
from jungle_cli import main
from jungle_cli._play import PlaySession


def _record(tmp_path: Path) -> dict[str, object]:
    record = play_game(
        jc.DARK, make_agent("random", jc.DARK), make_agent("random", jc.DARK), 1, max_plies=10
    )
    return record.to_json()


def test_library_errors_are_one_family() -> None:
    assert issubclass(AgentSpecError, jc.JungleError)
    assert issubclass(RecordError, jc.JungleError)
    with pytest.raises(jc.JungleError):
        jc.rules_by_name("nope")
    with pytest.raises(jc.JungleError, match="no_removal_limit"):
        jc.Rules(no_removal_limit=-1)


@pytest.mark.parametrize(
    "spec",
    [
        "greedy:mobility=nan",
        "greedy:safety=inf",
        "minimax:margin=nan",
        "minimax:time=nan",
        "minimax:contempt=nan",
        "minimax:rank=-inf",
        "minimax:take=1e400",
    ],
)
def test_every_float_parameter_must_be_finite(spec: str) -> None:
    with pytest.raises(AgentSpecError, match="a finite number"):
        make_agent(spec, jc.DARK)


def test_search_depth_has_an_upper_bound() -> None:
    with pytest.raises(AgentSpecError, match=r"depth must be 1\.\.64"):
        make_agent("minimax:depth=100000", jc.DARK)
    with pytest.raises(AgentSpecError, match="not a valid int"):
        make_agent("minimax:depth=" + "9" * 5000, jc.DARK)


def test_actions_are_checked_at_the_boundary() -> None:
    s = jc.new_game()
    with pytest.raises(jc.IllegalActionError, match="action -1 is outside the action space"):
        jc.is_chance_action(s, -1)
    with pytest.raises(jc.IllegalActionError, match="outside the action space"):
        jc.is_chance_action(s, 280)
    with pytest.raises(jc.IllegalActionError, match="about 31 digits"):
        jc.chance_outcomes(s, 10**30)
    for call in (jc.step, jc.is_chance_action, jc.transitions, jc.chance_outcomes):
        args = (s, 0.0, np.random.default_rng(0)) if call is jc.step else (s, 0.0)
        with pytest.raises(TypeError, match="must be an int, not float"):
            call(*args)
    assert jc.is_chance_action(s, np.int64(3))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="perft depth must be an int"):
        jc.perft(s, 2.5)  # type: ignore[arg-type]


def test_score_agrees_with_returns_on_an_unfinished_game() -> None:
    s = jc.new_game()
    assert jc.returns(s) == (0.0, 0.0) and jc.score(s, 0) == jc.score(s, 1) == 0.5
    with pytest.raises(jc.JungleError, match="player must be 0 or 1"):
        jc.score(s, 2)


def test_records_are_read_strictly(tmp_path: Path) -> None:
    data = _record(tmp_path)
    actions = cast(list[int], data["actions"])
    cases = {
        "rule set lacks variant": {**data, "rules": {"name": "NOPE"}},
        "the rule set lacks name": {**data, "rules": {}},
        "players must be a list, not .ab.": {**data, "players": "ab"},
        "seed must be an int": {**data, "seed": 1.5},
        "action 1 must be an int in 0..279": {**data, "actions": [999, *actions[1:]]},
        "reason must be one of": {**data, "reason": "bored"},
        "has unknown keys 'extra'": {**data, "extra": 1},
    }
    for message, bad in cases.items():
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(RecordError, match=message):
            load_record(path)
        assert str(path) in _replay_error(path)


def _replay_error(path: Path, *extra: str) -> str:
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["replay", str(path), "--all", *extra]) == 2
    return err.getvalue()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[1, 2]\n", "a game record must be a JSON object"),
        (b'{"seed": Infinity}', "Infinity is not a number JSON allows"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"\xca\xfe\xba\xbe junk", "is not UTF-8 text"),
    ],
)
def test_replay_and_load_name_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    assert message in _replay_error(path) and str(path) in _replay_error(path)
    lines: list[str] = []
    session = PlaySession(
        jc.DARK, "random", 0, hint="random", input_fn=_script([f"load {path}"]), output=lines.append
    )
    session.run()
    assert any(f"cannot load {path}" in line and message in line for line in lines)


def _script(lines: list[str]):  # type: ignore[no-untyped-def]
    feed = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return read


def test_games_file_errors_name_file_and_line(tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    round_robin(jc.DARK, ["random", "greedy"], 2, workers=1, out=out, max_plies=8)
    good = out.read_bytes()
    for line, message in [
        (b"[1]", "g.jsonl:4: a game entry must be a JSON object"),
        (b'{"pair": ["a", "b"], "game": 0, "record": {"seed": Infinity}}', "g.jsonl:4 is not JSON"),
        (b"[" * 5000 + b"]" * 5000, "g.jsonl:4"),
        (b"\xff\xfe", "g.jsonl:4 is not UTF-8"),
    ]:
        out.write_bytes(good + line + b"\n")
        with pytest.raises(RecordError, match=message):
            load_games(out)
        assert message in _replay_error(out)


def test_a_single_record_reports_its_own_field(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({**_record(tmp_path), "winner": 7}))
    err = _replay_error(path)
    assert "winner must be 0, 1 or null, not 7" in err and "pair" not in err


def test_long_numbers_in_moves_do_not_end_the_game(tmp_path: Path) -> None:
    lines: list[str] = []
    moves = ["a1-a" + "1" * 5000, "?a" + "9" * 5000, f"save {tmp_path}/no/such/g.json"]
    session = PlaySession(
        jc.DARK, "random", 0, hint="random", input_fn=_script(moves), output=lines.append
    )
    assert session.run() == "quit (end of input)"
    assert sum("is not a square name" in line for line in lines) == 2
    assert any("cannot save" in line and "no folder" in line for line in lines)
    assert not (tmp_path / "no").exists()


def test_command_line_numbers_and_plugins_are_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["match", "random", "greedy", "--games", "2", "--workers", "1"]
    for extra in (["--max-plies", "0"], ["--max-plies", "-5"], ["--workers", "0"]):
        with pytest.raises(SystemExit) as exit:
            main([*base, *extra])
        assert exit.value.code == 2
        assert "is not in" in capsys.readouterr().err
    assert main([*base, "--plugin", "no_such_plugin_module"]) == 2
    err = capsys.readouterr().err
    assert "plugin 'no_such_plugin_module' cannot be imported" in err
    assert "Traceback" not in err


def test_resume_refuses_a_file_without_its_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tournament", "--agents", "random,greedy", "--games", "2", "--workers", "1"]
    assert main([*argv, "--out", str(tmp_path), "--max-plies", "8"]) == 0
    games = tmp_path / "games.jsonl"
    games.write_bytes(games.read_bytes().split(b"\n", 1)[1])  # the header line removed
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path), "--max-plies", "8", "--seed", "5"]) == 2
    err = capsys.readouterr().err
    assert "no header line" in err and "resuming:" not in err


def test_resuming_counts_only_the_games_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tournament", "--games", "2", "--workers", "1", "--out", str(tmp_path)]
    assert main([*argv, "--agents", "random,greedy,minimax:depth=1", "--max-plies", "8"]) == 0
    capsys.readouterr()
    assert main([*argv, "--agents", "random,greedy", "--max-plies", "8"]) == 0
    assert "resuming: 2 games already" in capsys.readouterr().err
    # another run's file: refused before anything says "resuming"
    assert main([*argv, "--agents", "random,greedy", "--max-plies", "9"]) == 2
    err = capsys.readouterr().err
    assert "different run" in err and "resuming:" not in err


def test_seeds_are_checked() -> None:
    with pytest.raises(jc.JungleError, match="seed must be None or an int >= 0"):
        jc.new_game(seed=-1)
    with pytest.raises(TypeError, match="seed must be an int"):
        jc.new_game(seed=1.5)  # type: ignore[arg-type]
    agent = make_agent("random", jc.DARK)
    with pytest.raises(jc.JungleError, match="seed must be in"):
        play_game(jc.DARK, agent, agent, -1)
