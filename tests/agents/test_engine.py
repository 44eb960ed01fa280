"""The engine protocol both ways: ``jungle engine`` served, ``engine:`` driven.

A jungle agent served by ``jungle engine`` and played back through the ``engine:`` kind
plays exactly the game it plays in process; an engine that crashes, hangs, never starts
or answers an illegal move ends its game as a recorded forfeit, the games file intact,
and its process reaped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from jungle_agents import make_agent
from jungle_agents.arena import load_games, play_game, replay, round_robin
from jungle_agents.engine import EngineAgent, EngineError, EngineServer
from jungle_core import CLASSIC, DARK, Rules, legal_actions, new_game

ENGINE = f"{sys.executable} -m jungle_cli engine"


def _served(spec: str, rules: Rules) -> str:
    return f"engine:cmd={ENGINE} {spec} --rules {rules.variant}"


@pytest.mark.parametrize(
    ("rules", "spec", "seed"),
    [(CLASSIC, "minimax:depth=2", 3), (DARK, "greedy", 5), (DARK, "random", 1)],
)
def test_an_agent_served_and_driven_back_plays_the_game_it_plays_in_process(
    rules: Rules, spec: str, seed: int
) -> None:
    local = play_game(
        rules, make_agent(spec, rules), make_agent("random", rules), seed, max_plies=30
    )
    engine = make_agent(_served(spec, rules), rules)
    assert isinstance(engine, EngineAgent)
    try:
        remote = play_game(rules, engine, make_agent("random", rules), seed, max_plies=30)
    finally:
        engine.close()
    assert remote.actions == local.actions and remote.outcomes == local.outcomes
    assert (remote.winner, remote.reason) == (local.winner, local.reason)


def _fake(tmp_path: Path, name: str, on_go: str, handshake: bool = True) -> str:
    """A tiny engine: it shakes hands (or not), then does ``on_go`` for every ``go``."""
    script = tmp_path / f"{name}.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, time
            for line in sys.stdin:
                word = line.split()[0] if line.split() else ""
                if word == "jcei" and {handshake}:
                    print("id name fake", flush=True); print("jceiok", flush=True)
                elif word == "isready":
                    print("readyok", flush=True)
                elif word == "go":
                    {on_go}
                elif word == "quit":
                    break
            """
        )
    )
    return f"{sys.executable} {script}"


FAULTS = {
    "crashes": ("sys.exit(3)", "exited with code 3"),
    "hangs": ("time.sleep(60)", "did not answer 'go'"),
    "illegal": ('print("bestmove a1a1", flush=True)', "answered 'bestmove a1a1'"),
    "malformed": ('print("bestmove zz", flush=True)', "answered 'bestmove zz'"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failing_engine_raises_its_typed_error_naming_engine_move_and_position(
    tmp_path: Path, fault: str
) -> None:
    on_go, message = FAULTS[fault]
    command = _fake(tmp_path, fault, on_go)
    agent = EngineAgent(CLASSIC, command, movetime=100, margin=0.5)
    with pytest.raises(EngineError, match=message) as error:
        agent.act(new_game(CLASSIC), np.random.default_rng(0))
    assert command in str(error.value) and "l5t/1d3c1" in str(error.value)
    agent.close()


def test_an_engine_that_never_shakes_hands_is_refused_in_time(tmp_path: Path) -> None:
    command = _fake(tmp_path, "mute", "pass", handshake=False)
    start = time.monotonic()
    with pytest.raises(EngineError, match="did not answer the 'jcei' handshake"):
        EngineAgent(CLASSIC, command, start_timeout=0.5)
    assert time.monotonic() - start < 30  # bounded, not a hang


def test_a_tournament_records_a_failing_engine_as_forfeits_and_goes_on(tmp_path: Path) -> None:
    command = _fake(tmp_path, "crashes", "sys.exit(3)")
    spec = f"engine:cmd={command},movetime=100"
    out = tmp_path / "games.jsonl"
    result = round_robin(CLASSIC, ["random", spec], 2, seed=1, workers=1, out=out, max_plies=20)
    pair = result.pairs[("random", spec)]
    assert pair.games == 2 and pair.wins == 2  # random wins both: the engine forfeits
    _, games = load_games(out)
    assert len(games) == 2
    for game in games:
        assert game.record.reason == "forfeit" and "exited with code 3" in game.record.note
        replay(game.record)  # the record replays up to the forfeit
    # the file resumes as it is: nothing to play again
    again = round_robin(CLASSIC, ["random", spec], 2, seed=1, workers=1, out=out, max_plies=20)
    assert again.pairs[("random", spec)].games == 2 and len(load_games(out)[1]) == 2


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_engine_is_reaped_when_closed_and_dies_with_a_killed_arena(tmp_path: Path) -> None:
    command = _fake(tmp_path, "slow", "time.sleep(60)")
    agent = EngineAgent(CLASSIC, command)
    process = agent._process
    assert process is not None and _alive(process.pid)
    agent.close()
    assert process.returncode is not None and not _alive(process.pid)
    # an arena killed with SIGKILL takes its engine with it (no orphan)
    arena = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from jungle_agents.engine import EngineAgent; from jungle_core import "
            f"CLASSIC; a = EngineAgent(CLASSIC, {command!r}); print(a._process.pid, flush=True);"
            " sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert arena.stdout is not None
    engine_pid = int(arena.stdout.readline())
    assert _alive(engine_pid)
    os.kill(arena.pid, signal.SIGKILL)
    arena.wait()
    deadline = time.monotonic() + 10
    while _alive(engine_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(engine_pid)


def test_go_infinite_answers_after_stop_and_the_clock_gives_a_movetime() -> None:
    lines: list[str] = []
    server = EngineServer("minimax:depth=1", CLASSIC, lines.append)
    server.handle("position startpos")
    server.handle("go infinite")
    time.sleep(0.2)
    assert not any(line.startswith("bestmove") for line in lines)
    server.handle("stop")
    assert lines[-1].startswith("bestmove ")
    moves = lines[-1].split()[1]
    state = new_game(CLASSIC)
    from jungle_core import parse_move

    assert parse_move(state, moves)[0] in legal_actions(state)


def test_an_engine_killed_mid_game_forfeits_the_game(tmp_path: Path) -> None:
    rules = CLASSIC
    engine = make_agent(_served("greedy", rules), rules)
    assert isinstance(engine, EngineAgent)
    killed: list[int] = []

    def kill_after_two_moves(state: object, action: int, outcome: int, seconds: float) -> None:
        process = engine._process
        if len(killed) == 0 and process is not None and getattr(state, "ply", 0) >= 3:
            os.kill(process.pid, signal.SIGKILL)
            killed.append(process.pid)

    try:
        record = play_game(
            rules, engine, make_agent("random", rules), 2, max_plies=40, on_ply=kill_after_two_moves
        )
    finally:
        engine.close()
    assert killed and not _alive(killed[0])
    assert record.reason == "forfeit" and record.winner == 1
    assert "exited with code -9" in record.note and 4 <= record.plies <= 6
    replay(record)
