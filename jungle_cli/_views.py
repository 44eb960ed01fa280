"""What ``jungle serve`` shows and accepts, apart from the games themselves: positions
and boards as JSON for the page, the agent registry's kinds with their parameters, uploaded
records checked by the arena's own ``replay``, and the typed errors a request can meet.

>>> from jungle_core import new_game
>>> position_view(new_game())["squares"][0]["down"]
True
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

import jungle_core as jc
from jungle_agents import agent_kinds, kind_help, kind_params
from jungle_agents.arena import GameRecord, replay
from jungle_core.lowlevel import tables

__all__ = [
    "MAX_NAME",
    "MAX_RECORD_PLIES",
    "SERVED_RULES",
    "BadRequestError",
    "ConflictError",
    "ServeError",
    "agents_view",
    "board_view",
    "field",
    "json_loads",
    "move_target",
    "parse_record_text",
    "position_view",
]

MAX_RECORD_PLIES = 2000
"""Plies of an uploaded record: more than any game under the server's rule sets reaches
(CLASSIC stops at 300; DARK's no-removal limit of 100 plies, 16 pieces to remove), and each
kept position costs the server about a kilobyte."""

MAX_NAME = 100
"""Characters of a player's name in an uploaded record (the page shows it in every view)."""

SERVED_RULES = ("dark", "classic", "dark_strict")
"""The rule sets the server plays (an upload under other rules is refused)."""


class ServeError(ValueError):
    """A request the server refuses; ``status`` is its HTTP status code."""

    status = 400


class BadRequestError(ServeError):
    """A malformed request: a bad field, move, record or agent spec (HTTP 400)."""

    status = 400


class ConflictError(ServeError):
    """A request that does not fit the game's moment: not your turn, game over (HTTP 409)."""

    status = 409


def _probabilities(state: jc.State, code: int) -> list[dict[str, Any]]:
    """What a face-down piece may be: uniform over the face-down pairs it can be."""
    owner = None if code == jc.HIDDEN else code - jc.HIDDEN_OWNED[0]
    pairs = sorted(p for p in state.face_down if owner is None or p[0] == owner)
    share = 1.0 / len(pairs) if pairs else 0.0
    return [
        {
            "owner": o,
            "rank": r,
            "letter": jc.RANK_LETTERS[r] if o == 0 else jc.RANK_LETTERS[r].lower(),
            "name": jc.RANK_NAMES[r],
            "p": share,
        }
        for o, r in pairs
    ]


def move_target(state: jc.State, action: int, text: str) -> int:
    """The square an action lands on (a jump's landing square), read from its notation.

    >>> from jungle_core import CLASSIC, new_game, parse_action
    >>> state = new_game(CLASSIC)
    >>> move_target(state, parse_action(state, "a3-a4"), "a3-a4")  # a4 = row 3 * 7 + col 0
    21
    """
    if action < state.rules.num_squares:
        return action
    return jc.parse_square(state.rules, re.split(r"[-x]", text)[-1])


def position_view(state: jc.State, last: tuple[int, int] | None = None) -> dict[str, Any]:
    """A position as JSON for the page: squares, face-down probabilities, last move.

    >>> from jungle_core import new_game
    >>> view = position_view(new_game())
    >>> view["squares"][0]["down"], round(view["squares"][0]["probs"][0]["p"], 4)
    (True, 0.0625)
    """
    squares: list[dict[str, Any] | None] = []
    for code in state.board:
        if code == jc.EMPTY:
            squares.append(None)
        elif code == jc.HIDDEN or code in jc.HIDDEN_OWNED:
            owner = None if code == jc.HIDDEN else code - jc.HIDDEN_OWNED[0]
            squares.append({"down": True, "owner": owner, "probs": _probabilities(state, code)})
        else:
            owner, rank = jc.piece_owner(code), jc.piece_rank(code)
            letter = jc.RANK_LETTERS[rank]
            squares.append(
                {
                    "down": False,
                    "owner": owner,
                    "rank": rank,
                    "letter": letter if owner == 0 else letter.lower(),
                    "name": jc.RANK_NAMES[rank],
                }
            )
    result = jc.outcome(state)
    return {
        "ply": state.ply,
        "to_move": state.to_move,
        "fen": jc.to_fen(state),
        "squares": squares,
        "last": None if last is None else {"from": last[0], "to": last[1]},
        "outcome": None
        if result is None
        else {"winner": result.winner, "reason": result.reason.value},
    }


def board_view(rules: jc.Rules) -> dict[str, Any]:
    """The board's geometry and terrain (CLASSIC water, traps, dens) for drawing.

    >>> from jungle_core import CLASSIC
    >>> board_view(CLASSIC)["dens"]
    [3, 59]
    """
    t = tables(rules)
    n = rules.num_squares
    return {
        "name": rules.name,
        "variant": rules.variant,
        "rows": rules.rows,
        "cols": rules.cols,
        "files": [jc.square_name(rules, c)[0] for c in range(rules.cols)],
        "water": [sq for sq in range(n) if t.water[sq]],
        "traps": [sq for sq in range(n) if t.trap_of[sq] >= 0],
        "dens": [sq for sq in range(n) if t.den_of[sq] >= 0],
    }


def agents_view() -> list[dict[str, Any]]:
    """Every registered agent kind with its help and parameter lines, read from the
    registry (the server's agent list). Presets are not listed: the server checks a
    spec's parameters against its kind (:mod:`jungle_cli._serve_specs`), and refuses a
    preset's name.

    >>> {"greedy", "minimax", "random"} <= {kind["name"] for kind in agents_view()}
    True
    """
    out: list[dict[str, Any]] = []
    for name in agent_kinds():
        lines = []
        for pname, p in kind_params(name).items():
            choices = f" (one of {list(p.choices)})" if p.choices else ""
            lines.append(f"{pname}={p.default!r}: {p.help}{choices}")
        out.append({"name": name, "help": kind_help(name), "params": lines})
    return out


def parse_record_text(text: str, index: int = 0) -> tuple[GameRecord, int]:
    """A game record from uploaded text, and how many games the text holds.

    Accepts a record (``GameRecord.to_json``), one games-file entry (``{"pair", "game",
    "record"}``), or a whole JSON Lines games file of ``jungle match``/``tournament``
    (header lines skipped; ``index`` picks the game, 0-based). The record must replay
    (:func:`jungle_agents.arena.replay`); anything else raises :class:`BadRequestError`.

    >>> parse_record_text('{"format": "nope"}')
    Traceback (most recent call last):
    ...
    jungle_cli._views.BadRequestError: not a game record: game record: a game record lacks ...
    """
    entries: list[Any] = []
    try:
        entries = [json_loads(text)]
    except ValueError:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json_loads(line)
            except ValueError:
                raise BadRequestError(
                    f"not a game record: line {number} is not JSON (upload a record saved "
                    f"by this page or `jungle play`, or a games.jsonl of `jungle tournament`)"
                ) from None
            if not (isinstance(data, dict) and data.get("type") == "header"):
                entries.append(data)
    if not entries:
        raise BadRequestError("not a game record: the file holds no game")
    if not 0 <= index < len(entries):
        raise BadRequestError(f"game {index} asked for, but the file holds {len(entries)} games")
    data = entries[index]
    if isinstance(data, dict) and "record" in data:
        data = data["record"]
    try:
        record = GameRecord.from_json(data)
    except (ValueError, TypeError, AttributeError) as error:
        raise BadRequestError(f"not a game record: {error}") from None
    if record.plies > MAX_RECORD_PLIES:
        raise BadRequestError(f"the record has {record.plies} plies; at most {MAX_RECORD_PLIES}")
    if max(len(name) for name in record.players) > MAX_NAME:
        raise BadRequestError(f"a player's name in the record is over {MAX_NAME} characters")
    record = _served_rules(record)
    try:
        replay(record)
    except (ValueError, TypeError, IndexError) as error:
        raise BadRequestError(f"bad game record: {error}") from None
    return record, len(entries)


def _served_rules(record: GameRecord) -> GameRecord:
    """The record under the server's own rule set object, whatever name it gave its rules:
    each distinct rule set costs a cache of tables that is never freed, so the server keeps
    to :data:`SERVED_RULES`."""
    for name in SERVED_RULES:
        rules = jc.rules_by_name(name)
        if attrs.evolve(record.rules, name=rules.name) == rules:
            return attrs.evolve(record, rules=rules)
    raise BadRequestError(
        f"the record's rules are none of the rule sets this server plays ({list(SERVED_RULES)})"
    )


def field(data: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    """The request field ``name`` of type ``kind`` (an int counts as a float, a bool as no
    int), ``default`` when absent; anything else raises :class:`BadRequestError`.

    >>> field({"side": 1}, "side", int, 0), field({}, "delay", float, 0.5)
    (1, 0.5)
    >>> field({"side": True}, "side", int, 0)
    Traceback (most recent call last):
    ...
    jungle_cli._views.BadRequestError: side must be a int, not True
    """
    value = data.get(name, default)
    if value is None and default is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:
            raise BadRequestError(f"{name} is out of range: {str(value)[:20]}...") from None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BadRequestError(f"{name} must be a {kind.__name__}, not {value!r}")
    return value


def json_loads(text: str) -> Any:
    """``json.loads`` whose every failure is a ``ValueError`` (deep nesting included).

    >>> json_loads('{"a": [1]}')
    {'a': [1]}
    >>> json_loads("[" * 100_000)
    Traceback (most recent call last):
    ...
    ValueError: JSON nested too deeply
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
