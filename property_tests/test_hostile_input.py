"""Hostile input: every parser and loader gives a typed error, never a traceback or a hang.

Hypothesis mutates valid input (and makes up junk) for each of them: position strings,
action notation and integer actions, agent specs, game records, games files, the
``jungle`` command's arguments and ``jungle play``'s commands. The only errors allowed
out are :class:`jungle_core.JungleError` subclasses (and ``TypeError`` where a value of
the wrong Python type is passed); each input gets a time bound (:func:`bounded`), so a
hang fails the test instead of stopping it. What does parse must make sense: a parsed
position round-trips, a parsed action is legal, a loaded record replays or says why not.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import signal
import tempfile
import unittest.mock
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, event, given, settings
from hypothesis import strategies as st

import jungle_cli
import jungle_core as jc
from jungle_agents import make_agent
from jungle_agents.arena import (
    RecordError,
    load_games,
    load_record,
    play_game,
    replay,
    resumable_games,
)
from jungle_cli import main
from jungle_cli._play import PlaySession, load_any_record, parse_clock

RULE_SETS = [jc.DARK, jc.DARK_STRICT, jc.CLASSIC]
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
assert settings.default is not None
BASE = settings.default.max_examples
"""The profile's example count (40 in CI, 2000 under ``HYPOTHESIS_PROFILE=long``): the
cheap parsers get five times that, the command line and ``play`` about twice."""
SECONDS = 30.0
"""The time bound per input: far above what any of them needs (milliseconds), far below
"for ever"."""


class Hang(BaseException):
    """Raised by the alarm of :func:`bounded` (a BaseException: no library ``except``
    clause can swallow it)."""


@contextlib.contextmanager
def bounded(seconds: float = SECONDS) -> Iterator[None]:
    """Fail with :class:`Hang` when the block runs longer than ``seconds``."""

    def alarm(signum: int, frame: object) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------- material


def _positions() -> list[jc.State]:
    """Start, middlegame and end positions of each rule set (seeded random play)."""
    out = []
    for rules in RULE_SETS:
        rng = np.random.default_rng(7)
        state = jc.new_game(rules)
        out.append(state)
        for ply in range(400):
            if jc.outcome(state) is not None:
                break
            actions = jc.legal_actions(state)
            state = jc.step(state, actions[int(rng.integers(len(actions)))], rng)
            if ply in (30, 120):
                out.append(state)
        out.append(state)
    return out


POSITIONS = _positions()

HOSTILE_TEXT = [
    "",
    " ",
    "-",
    "0",
    "-1",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "9" * 5000,
    "1" * 30,
    "2.5",
    "\x00",
    "\u00b2",
    "\u0663",
    "\ufeff",
    "é",
    "?",
    "/",
    "x",
    "X",
    "\n",
    "a1",
    "%s",
    "{}",
]
"""Values that have broken parsers before: empty, signs, nan/inf, thousands of digits,
NUL, superscript and Arabic-Indic digits (``str.isdigit`` accepts them), a BOM."""


@st.composite
def mutated(draw: st.DrawFn, seeds: list[str]) -> str:
    """A valid string with a few edits: characters replaced, inserted or deleted, and
    hostile fragments spliced in."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(0, 4))):
        if not text:
            text = draw(st.sampled_from(HOSTILE_TEXT))
            continue
        i = draw(st.integers(0, len(text) - 1))
        kind = draw(st.integers(0, 3))
        if kind == 0:
            text = text[:i] + text[i + 1 :]
        elif kind == 1:
            text = text[:i] + draw(st.characters(max_codepoint=0x2FF)) + text[i + 1 :]
        elif kind == 2:
            text = text[:i] + draw(st.sampled_from(HOSTILE_TEXT)) + text[i:]
        else:
            text = text[:i] + draw(st.text(max_size=5)) + text[i:]
    return text


def strings(seeds: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(mutated(seeds), st.text(max_size=40), st.sampled_from(HOSTILE_TEXT))


# ------------------------------------------------------- positions and actions

FENS = [jc.to_fen(s) for s in POSITIONS]


@settings(max_examples=5 * BASE)
@given(text=strings(FENS), rules=st.sampled_from(RULE_SETS))
def test_position_strings_parse_or_raise_a_notation_error(text: str, rules: jc.Rules) -> None:
    with bounded():
        try:
            state = jc.from_fen(text, rules)
        except (jc.NotationError, jc.InvalidPositionError):
            return
    assert jc.from_fen(jc.to_fen(state), rules) == state


ACTION_TEXTS = [jc.action_to_str(s, a) for s in POSITIONS for a in jc.legal_actions(s)[:6]] + [
    "?a1",
    "a1-a2",
    "a1xa2",
    "a3-a7",
    "h7:h6",
]


@settings(max_examples=5 * BASE)
@given(text=strings(ACTION_TEXTS), state=st.sampled_from(POSITIONS))
def test_action_strings_parse_to_a_legal_action_or_raise(text: str, state: jc.State) -> None:
    with bounded():
        try:
            action = jc.parse_action(state, text)
        except (jc.NotationError, jc.IllegalActionError):
            return
    assert action in jc.legal_actions(state)


ODD_ACTIONS: st.SearchStrategy[Any] = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(-5, 320),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, "3", b"3", True, False, np.int64(3), np.int8(-1), np.uint64(2**63)]),
)


def _is_int(value: object) -> bool:
    """An integer action or outcome: a Python or NumPy integer, not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


@settings(max_examples=5 * BASE)
@given(data=st.data(), state=st.sampled_from(POSITIONS))
def test_integer_actions_are_checked_at_the_boundary(data: st.DataObject, state: jc.State) -> None:
    """Each function answers exactly where it should and raises a typed error (or
    ``TypeError`` for a value that is not an integer) everywhere else: an action of
    ``legal_actions`` is played unless the game is over, ``step_outcome`` takes exactly
    the outcomes ``chance_outcomes`` lists, and ``is_chance_action`` and ``action_to_str``
    may also read an unlisted action of the action space."""
    listed = jc.legal_actions(state)
    over = jc.outcome(state) is not None
    pick_listed = bool(listed) and data.draw(st.booleans())  # about half the examples
    action = data.draw(st.sampled_from(listed) if pick_listed else ODD_ACTIONS)
    in_list = _is_int(action) and int(action) in listed
    in_space = _is_int(action) and 0 <= int(action) < state.rules.num_actions
    outcomes = [o for o, _ in jc.chance_outcomes(state, int(action))] if in_list else []
    pick_outcome = bool(outcomes) and data.draw(st.booleans())
    o = data.draw(st.sampled_from(outcomes) if pick_outcome else ODD_ACTIONS)
    plays = in_list and not over
    event("listed" if in_list else "an integer" if _is_int(action) else "not an integer")
    event(f"game over: {over}")
    calls: dict[str, tuple[Callable[[], object], bool, bool]] = {  # call, must, may answer
        "chance_outcomes": (lambda: jc.chance_outcomes(state, action), in_list, in_list),
        "transitions": (lambda: jc.transitions(state, action), plays, plays),
        "step": (lambda: jc.step(state, action, np.random.default_rng(0)), plays, plays),
        "step_outcome": (
            lambda: jc.step_outcome(state, action, o),
            plays and _is_int(o) and int(o) in outcomes,
            plays and _is_int(o) and int(o) in outcomes,
        ),
        "is_chance_action": (lambda: jc.is_chance_action(state, action), in_list, in_space),
        "action_to_str": (lambda: jc.action_to_str(state, action), in_list, in_space),
    }
    for name, (call, must, may) in calls.items():
        with bounded():
            try:
                result = call()
            except (jc.JungleError, TypeError) as error:
                assert not must, f"{name} refused {action!r} (outcome {o!r}): {error}"
                continue
        assert may, f"{name} accepted {action!r} (outcome {o!r}): {result!r}"
        if name == "is_chance_action":
            assert isinstance(result, bool)
        elif name == "action_to_str":
            assert isinstance(result, str) and result


@settings(max_examples=5 * BASE // 2)
@given(
    depth=st.one_of(st.integers(-(2**70), 1), st.floats(), st.sampled_from([None, "1", 2.5])),
    player=ODD_ACTIONS,
    state=st.sampled_from(POSITIONS),
)
def test_perft_depths_and_score_players_are_checked(
    depth: Any, player: Any, state: jc.State
) -> None:
    with bounded():
        with contextlib.suppress(jc.JungleError, TypeError):
            jc.perft(state, depth)
        with contextlib.suppress(jc.JungleError, TypeError):
            assert jc.score(state, player) in (0.0, 0.5, 1.0)


# ----------------------------------------------------------------- agent specs

SPECS = [
    "random",
    "greedy",
    "greedy:mobility=2,safety=10",
    "minimax:depth=1",
    "minimax:depth=2,tt=0,margin=1.5,time=0.5",
    "minimax:depth=1,quiescence=1,qdepth=4,contempt=50,tiebreak=random",
]
SPEC_VALUES = ["nan", "inf", "-inf", "1e400", "-1", "0", "65", "1e3", "", "9" * 5000, "2.5"]


@st.composite
def agent_specs(draw: st.DrawFn) -> str:
    spec = draw(strings(SPECS))
    if draw(st.booleans()):
        key = draw(
            st.sampled_from(["depth", "qdepth", "time", "margin", "contempt", "mobility", "tt"])
        )
        spec += f"{',' if ':' in spec else ':'}{key}={draw(st.sampled_from(SPEC_VALUES))}"
    return spec


def _depth_of(agent: Any) -> int:
    config = getattr(agent, "config", None)
    return int(getattr(config, "depth", 1))


@settings(max_examples=5 * BASE)
@given(spec=agent_specs(), rules=st.sampled_from(RULE_SETS))
def test_agent_specs_build_a_working_agent_or_raise(spec: str, rules: jc.Rules) -> None:
    with bounded():
        try:
            agent = make_agent(spec, rules)
        except jc.JungleError:
            return
    if _depth_of(agent) > 2:
        return  # a legal but deep search: its time is the user's choice, not a hang
    state = next(s for s in POSITIONS if s.rules == rules and jc.outcome(s) is None)
    with bounded():
        assert agent.act(state, np.random.default_rng(0)) in jc.legal_actions(state)


# ------------------------------------------------------ records and games files


def _record_json() -> dict[str, Any]:
    record = play_game(
        jc.DARK, make_agent("random", jc.DARK), make_agent("greedy", jc.DARK), 5, max_plies=12
    )
    return record.to_json()


RECORD = _record_json()
JSON_VALUES: st.SearchStrategy[Any] = st.deferred(lambda: _JSON_VALUES.map(copy.deepcopy))
"""JSON values for a field: each drawn value a fresh object (the mutations below change
them in place, and a shared one would turn up inside itself)."""
_JSON_VALUES: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from([[], {}, "NOPE", "ab", [0, 1], [None], {"name": "NOPE"}, -1, 2**64]),
    st.builds(lambda n: json.loads("[" * n + "]" * n), st.integers(1, 200)),
)


@st.composite
def record_values(draw: st.DrawFn) -> Any:
    """A record with one field (maybe nested) replaced, removed or added."""
    data: Any = json.loads(json.dumps(RECORD))
    for _ in range(draw(st.integers(1, 3))):
        node = data
        path = []
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(
                st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node)))
            )
            path.append(key)
            node = node[key]
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        if not path:
            data = draw(JSON_VALUES) if draw(st.integers(0, 9)) == 0 else data
            if isinstance(data, dict) and draw(st.booleans()):
                data[draw(st.text(max_size=6))] = draw(JSON_VALUES)
            continue
        last = path[-1]
        if isinstance(target, dict) and draw(st.booleans()):
            del target[last]
        else:
            target[last] = draw(JSON_VALUES)
    return data


def _bytes_of(value: Any, draw: st.DrawFn) -> bytes:
    text = json.dumps(value, allow_nan=True).encode()
    if draw(st.integers(0, 4)) == 0 and text:
        i = draw(st.integers(0, len(text) - 1))
        text = text[:i] + draw(st.binary(max_size=6)) + text[i + 1 :]
    return text


@st.composite
def record_files(draw: st.DrawFn) -> bytes:
    return _bytes_of(draw(record_values()), draw)


@st.composite
def games_files(draw: st.DrawFn) -> bytes:
    header = {"type": "header", "rules": RECORD["rules"], "seed": 0, "max_plies": 12}
    lines: list[Any] = [header] if draw(st.booleans()) else []
    for i in range(draw(st.integers(0, 3))):
        entry: Any = {"pair": ["random", "greedy"], "game": i, "record": RECORD}
        if draw(st.booleans()):
            entry = draw(st.sampled_from([entry, header]))
            entry = {**entry, draw(st.sampled_from(sorted(entry))): draw(JSON_VALUES)}
        elif draw(st.integers(0, 3)) == 0:
            entry = {**entry, "record": draw(record_values())}
        lines.append(entry)
    body = b"\n".join(_bytes_of(line, draw) for line in lines)
    if draw(st.booleans()):
        body += b"\n"
    return body + (draw(st.binary(max_size=20)) if draw(st.integers(0, 5)) == 0 else b"")


def _check_record_file(path: Path) -> None:
    for load in (load_record, load_any_record):
        with bounded():
            try:
                record = load(str(path))
            except RecordError:
                continue
        with bounded(), contextlib.suppress(RecordError):
            replay(record)


@settings(max_examples=5 * BASE)
@given(data=record_files())
def test_record_files_load_or_raise_a_record_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.json"
        path.write_bytes(data)
        _check_record_file(path)
        assert _cli(["replay", str(path), "--all"]) in (0, 2)


@settings(max_examples=5 * BASE)
@given(data=games_files())
def test_games_files_load_or_raise_a_record_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "games.jsonl"
        path.write_bytes(data)
        with bounded():
            with contextlib.suppress(RecordError):
                load_games(path)
            with contextlib.suppress(RecordError):
                resumable_games(path, jc.DARK, [("random", "greedy")], 4, 0, 12)
        _check_record_file(path)
        assert _cli(["replay", str(path), "--all", "--game", "1"]) in (0, 2)


# -------------------------------------------------------------- the command


TYPED_ERRORS = (jc.JungleError, OSError)
"""What a command may fail with (``main`` prints it as one line, status 2): a library
error (agent spec errors included) or a file's ``OSError``."""


def _cli(argv: list[str]) -> int:
    """``main(argv)`` with its output captured: its exit status (argparse's included).

    ``main`` also answers status 2 for a bare ``ValueError``, which may be an internal
    error (``int("x")`` on an unchecked field): so the error the command raised is
    watched, and one outside :data:`TYPED_ERRORS` fails the test whatever the status."""
    raised: list[BaseException] = []
    build = jungle_cli.build_parser

    def watched_parser() -> argparse.ArgumentParser:
        parser = build()
        parse = parser.parse_args

        def parse_args(*args: Any, **kwargs: Any) -> argparse.Namespace:
            namespace: argparse.Namespace = parse(*args, **kwargs)
            command = namespace.func

            def watched(parsed: argparse.Namespace) -> int:
                try:
                    return int(command(parsed))
                except BaseException as error:
                    raised.append(error)
                    raise

            namespace.func = watched
            return namespace

        setattr(parser, "parse_args", parse_args)  # noqa: B010  # a method, replaced
        return parser

    out = io.StringIO()
    with (
        bounded(),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(out),
        unittest.mock.patch.object(jungle_cli, "build_parser", watched_parser),
    ):
        try:
            status = main(argv)
        except SystemExit as exit:
            status = int(exit.code or 0)
    for error in raised:
        if not isinstance(error, TYPED_ERRORS):
            raise AssertionError(f"jungle {argv} ended in {error!r} (status {status})")
    return status


CHEAP_SPECS = ["random", "greedy", "minimax:depth=1", "minmax", "greedy:mobility=nan", ""]
CHEAP_SPECS += CHEAP_SPECS[:3]
NUMBERS = ["1", "2", "0", "-1", "2.5", "x", "", "9" * 5000, "1e3", "\u0663"]


@st.composite
def command_lines(draw: st.DrawFn, folder: str) -> list[str]:
    command = draw(st.sampled_from(["perft", "show", "match", "tournament", "replay", "agents"]))
    argv = [command]
    junk = Path(folder) / "junk.json"
    options: dict[str, st.SearchStrategy[str]] = {
        "--rules": strings(["dark", "classic", "dark_strict", "DARK-STRICT"]),
        "--seed": st.sampled_from([*NUMBERS, "-5", str(2**64)]),
    }
    if command == "perft":
        options["--depth"] = st.sampled_from(["0", "1", "-1", "2.5", "x", "9" * 30])
        options["--fen"] = strings(FENS)
    elif command == "show":
        options["--fen"] = strings(FENS)
    elif command in ("match", "tournament"):
        options["--games"] = st.sampled_from(NUMBERS)
        options["--workers"] = st.sampled_from(["1", "0", "-2", "x"])
        options["--max-plies"] = st.sampled_from(["5", "0", "-1", "x", "9" * 5000])
        options["--plugin"] = st.sampled_from(["no_such_module", "json", "", "."])
        options["--out"] = st.sampled_from([str(junk), str(Path(folder) / "out"), folder])
        if command == "match":
            argv += [draw(st.sampled_from(CHEAP_SPECS)), draw(st.sampled_from(CHEAP_SPECS))]
        else:
            argv += ["--agents", ",".join(draw(st.lists(st.sampled_from(CHEAP_SPECS))))]
        argv += ["--games", "1", "--workers", "1", "--max-plies", "6"]
    elif command == "replay":
        argv += [draw(st.sampled_from([str(junk), folder, str(Path(folder) / "none")]))]
        options["--game"] = st.sampled_from(NUMBERS)
    for option, values in options.items():
        if draw(st.integers(0, 3)) == 0:  # one option in four: valid runs happen too
            argv += [option, draw(values)]
    return argv


# each example runs the command: no shrinking (minutes), the failing argv is reported whole
@settings(max_examples=2 * BASE, phases=NO_SHRINK)
@given(data=st.data(), junk=record_files())
def test_command_lines_exit_cleanly(data: st.DataObject, junk: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "junk.json").write_bytes(junk)
        argv = data.draw(command_lines(folder))
        status = _cli(argv)
        event(f"{argv[0]} exits {status}")
        assert status in (0, 2), argv


@settings(max_examples=5 * BASE)
@given(text=strings(["5+3", "1.5", "10", "0.5+0"]))
def test_clocks_parse_or_raise(text: str) -> None:
    with bounded():
        try:
            clock = parse_clock(text)
        except jc.JungleError:
            return
        assert clock.text().startswith("player 0")


PLAY_WORDS = ["moves", "hint", "undo", "board", "help", "save", "load", "?a1", "a1-a2"]


@settings(max_examples=3 * BASE // 2, phases=NO_SHRINK)
@given(lines=st.lists(strings(PLAY_WORDS + ACTION_TEXTS[:20]), max_size=8), junk=record_files())
def test_play_commands_never_end_the_game_with_a_traceback(lines: list[str], junk: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "junk.json").write_bytes(junk)
        script = []
        for line in lines:
            if line.startswith(("save", "load")) and len(line) <= 5:
                name = "junk.json" if line.startswith("load") else "a/b.json"
                script.append(f"{line} {folder}/{name}")
            else:
                script.append(line)
        feed = iter(script)

        def read(prompt: str) -> str:
            try:
                return next(feed)
            except StopIteration:
                raise EOFError from None

        session = PlaySession(
            jc.DARK, "random", 0, hint="greedy", input_fn=read, output=lambda text: None
        )
        with bounded():
            assert isinstance(session.run(), str)


@pytest.mark.parametrize("size", [10, 10_000])
def test_long_numbers_in_positions_and_moves_are_notation_errors(size: int) -> None:
    digits = "9" * size
    with pytest.raises(jc.NotationError, match="at most 9 digits"):
        jc.from_fen(f"8/8/8/8/8/8/E7 1 0 {digits} - -")
    with pytest.raises(jc.NotationError):
        jc.parse_action(jc.new_game(), f"a1-a{digits}")
