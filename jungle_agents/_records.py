"""Strict reading of game records and games files: every bad input a :class:`RecordError`.

The arena's files are read back by ``jungle replay``, ``jungle play``'s ``load`` and a
resumed tournament, and they may have been edited, truncated or replaced by something
else. What is accepted, exactly (the README repeats it):

- JSON text in UTF-8 without ``NaN`` / ``Infinity`` (nesting too deep for Python's JSON
  decoder is refused as well);
- a record is an object with exactly the keys ``format`` (``"jungle-game/1"``), ``rules``,
  ``players``, ``seed``, ``actions``, ``outcomes``, ``times``, ``winner``, ``reason``:
  ``rules`` an object with every field of :class:`jungle_core.Rules` and no other
  (``name`` is a free label; the other fields are the rules and are checked as
  ``Rules(...)`` checks them); ``players`` a list of two non-empty strings; ``seed`` an
  int in ``0 .. 2**64 - 1``; ``actions`` ints of the rule set's action space; ``outcomes``
  ints in ``-1 .. 15``; ``times`` finite numbers >= 0, the three lists of one length;
  ``winner`` 0, 1 or null; ``reason`` a :class:`jungle_core.Reason` value or
  ``"unfinished"``. Whether the actions replay is :func:`jungle_agents.arena.replay`'s
  business.
- a games file entry is ``{"pair": [A, B], "game": index >= 0, "record": record}``, and
  its header ``{"type": "header", "rules": ..., "seed": ..., "max_plies": null or >= 1}``.

Every message names the file (and the line, for a games file) and the field.
"""

from __future__ import annotations

import json
import math
import reprlib
from typing import Any

import attrs

from jungle_core import JungleError, Reason, Rules

__all__ = [
    "RecordError",
    "check_entry",
    "check_header",
    "check_record",
    "decode_json",
    "rules_from_json",
]

FORMAT = "jungle-game/1"
_RECORD_KEYS: tuple[str, ...] = ("format", "rules", "players", "seed", "actions", "outcomes")
_RECORD_KEYS += ("times", "winner", "reason")
_RULES_KEYS = tuple(field.name for field in attrs.fields(Rules))
_REASONS = frozenset(r.value for r in Reason) | {"unfinished"}
_SEED_LIMIT = 2**64


_ACTIONS = tuple(range(5 * 9 * 7))
_FLOATS: dict[float, float] = {}


def _shared_float(x: float) -> float:
    """One object per value (times are rounded to microseconds, so most repeat), up to a
    bounded number of values."""
    found = _FLOATS.get(x)
    if found is None:
        found = x
        if len(_FLOATS) < 1 << 16:
            _FLOATS[x] = x
    return found


class RecordError(JungleError):
    """A game record or games file that cannot be read: the message names the file, the
    line (games files) and what is wrong."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def decode_json(data: bytes | str, where: str) -> Any:
    """The JSON value of ``data``, or :class:`RecordError` naming ``where``.

    >>> decode_json(b'{"a": [1, 2]}', "x.json")
    {'a': [1, 2]}
    >>> decode_json(b'{"seed": Infinity}', "x.json")
    Traceback (most recent call last):
    ...
    jungle_agents._records.RecordError: x.json is not JSON: Infinity is not a number JSON allows
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            bad = data[error.start : error.start + 1]
            raise RecordError(f"{where} is not UTF-8 text (byte {error.start}: {bad!r})") from None
    else:
        text = data
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise RecordError(f"{where} is not JSON: {error}") from None
    except RecursionError:
        raise RecordError(f"{where} is nested too deeply to be a game record") from None
    except ValueError as error:
        raise RecordError(f"{where} is not JSON: {error}") from None


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 40, 40


def _shown(value: Any) -> str:
    """A short repr for a message (a hostile value may be huge or deeply nested)."""
    return _REPR.repr(value)


def _int(value: Any, lo: int, hi: int, what: str, where: str) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise RecordError(f"{where}: {what} must be an int in {lo}..{hi}, not {_shown(value)}")
    return value


def _list(value: Any, what: str, where: str) -> list[Any]:
    if type(value) is not list:
        raise RecordError(f"{where}: {what} must be a list, not {_shown(value)}")
    return value


def _object(value: Any, what: str, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if type(value) is not dict:
        raise RecordError(f"{where}: {what} must be a JSON object, not {_shown(value)}")
    missing = [k for k in keys if k not in value]
    extra = [k for k in value if k not in keys]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"lacks {', '.join(missing)}")
        if extra:
            parts.append(f"has unknown keys {', '.join(_shown(k) for k in extra[:5])}")
        raise RecordError(f"{where}: {what} {' and '.join(parts)}")
    return value


def rules_from_json(data: Any, where: str = "rules") -> Rules:
    """The rule set of a record: an object with every :class:`Rules` field and no other.

    >>> from jungle_core import CLASSIC
    >>> rules_from_json(attrs.asdict(CLASSIC)) == CLASSIC
    True
    >>> rules_from_json({"name": "NOPE"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    jungle_agents._records.RecordError: rules: the rule set lacks variant, rows, ...
    """
    fields = _object(data, "the rule set", where, _RULES_KEYS)
    try:
        return Rules(**fields)
    except JungleError as error:
        raise RecordError(f"{where}: {error}") from None


def check_record(data: Any, where: str) -> dict[str, Any]:
    """The fields of a :class:`GameRecord` from a record's JSON object, checked (see the
    module docstring); :class:`RecordError` names ``where`` and the field."""
    fields = _object(data, "a game record", where, _RECORD_KEYS)
    if fields["format"] != FORMAT:
        raise RecordError(f"{where}: format must be {FORMAT!r}, not {_shown(fields['format'])}")
    rules = rules_from_json(fields["rules"], f"{where}: rules")
    players = _list(fields["players"], "players", where)
    if len(players) != 2 or any(type(p) is not str or not p for p in players):
        raise RecordError(f"{where}: players must be two non-empty names, not {_shown(players)}")
    seed = _int(fields["seed"], 0, _SEED_LIMIT - 1, "seed", where)
    n = rules.num_actions
    # actions and times are shared objects (ints above 256 and floats are not interned by
    # Python): a tournament keeps every record, and this halves what a game costs it
    actions = tuple(
        _ACTIONS[_int(a, 0, n - 1, f"action {i + 1}", where)]
        for i, a in enumerate(_list(fields["actions"], "actions", where))
    )
    outcomes = tuple(
        _int(o, -1, 15, f"outcome {i + 1}", where)
        for i, o in enumerate(_list(fields["outcomes"], "outcomes", where))
    )
    times = []
    for i, t in enumerate(_list(fields["times"], "times", where)):
        if type(t) not in (int, float) or not (math.isfinite(t) and t >= 0):
            raise RecordError(f"{where}: time {i + 1} must be seconds >= 0, not {_shown(t)}")
        times.append(_shared_float(float(t)))
    if not len(actions) == len(outcomes) == len(times):
        raise RecordError(
            f"{where}: actions, outcomes and times differ in length "
            f"({len(actions)}, {len(outcomes)}, {len(times)})"
        )
    winner = fields["winner"]
    if winner is not None and (type(winner) is not int or winner not in (0, 1)):
        raise RecordError(f"{where}: winner must be 0, 1 or null, not {_shown(winner)}")
    reason = fields["reason"]
    if type(reason) is not str or reason not in _REASONS:
        raise RecordError(
            f"{where}: reason must be one of {sorted(_REASONS)}, not {_shown(reason)}"
        )
    return {
        "rules": rules,
        "players": (players[0], players[1]),
        "seed": seed,
        "actions": actions,
        "outcomes": outcomes,
        "times": tuple(times),
        "winner": winner,
        "reason": reason,
    }


def check_entry(data: Any, where: str) -> tuple[tuple[str, str], int, dict[str, Any]]:
    """``(pair, game index, record fields)`` of a games file entry, checked."""
    fields = _object(data, "a game entry", where, ("pair", "game", "record"))
    pair = _list(fields["pair"], "pair", where)
    if len(pair) != 2 or any(type(p) is not str or not p for p in pair):
        raise RecordError(f"{where}: pair must be two agent specs, not {_shown(pair)}")
    index = _int(fields["game"], 0, 2**31 - 1, "game", where)
    return (pair[0], pair[1]), index, check_record(fields["record"], f"{where}: record")


def check_header(data: Any, where: str) -> dict[str, Any]:
    """A games file's header, checked: its rules, seed and ``max_plies``."""
    fields = _object(data, "the header", where, ("type", "rules", "seed", "max_plies"))
    rules_from_json(fields["rules"], f"{where}: rules")
    _int(fields["seed"], 0, _SEED_LIMIT - 1, "seed", where)
    if fields["max_plies"] is not None:
        _int(fields["max_plies"], 1, 2**31 - 1, "max_plies", where)
    return fields
