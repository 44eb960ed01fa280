"""Game records: the value, its JSON, strict reading, and the record files.

- :class:`GameRecord` is one game (enough to replay it exactly), built from a played
  game by :meth:`GameRecord.of_play` (the arena's game loop, ``jungle play`` and
  ``jungle serve`` alike) or from JSON by :meth:`GameRecord.from_json`;
  :class:`GameResult` is one game of a match, as a games file holds it.
- :func:`save_record` / :func:`load_record` write and read one record as JSON;
  :func:`atomic_write` (temp file, fsync, rename, the mode of any new file) writes every
  file the arena writes whole.

Every bad input is a :class:`RecordError`. The arena's files are read back by ``jungle
replay``, ``jungle play``'s ``load`` and a resumed tournament, and they may have been
edited, truncated or replaced by something else. What is accepted, exactly (docs/arena.md
gives the same formats for users):

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
  ``"unfinished"``. Two keys are present only when they say something: ``note`` (why,
  1..2000 characters) with a ``"forfeit"`` and only then, and ``opening``, an int in
  ``0 .. len(actions)`` (how many first plies were a random opening; absent: 0). Whether
  the actions replay is :func:`jungle_agents.arena.replay`'s business.
- a games file entry is ``{"pair": [A, B], "game": index >= 0, "record": record}``, and
  its header ``{"type": "header", "rules": ..., "seed": ..., "max_plies": null or >= 1}``
  (plus ``"deals": "duplicate"`` and ``"openings": 1..64`` where the run had them).

Every message names the file (and the line, for a games file) and the field.
"""

from __future__ import annotations

import functools
import json
import math
import os
import reprlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from jungle_core import JungleError, Reason, Rules, State, atomic_write, outcome

__all__ = [
    "MAX_OPENINGS",
    "GameRecord",
    "GameResult",
    "RecordError",
    "check_entry",
    "check_header",
    "check_record",
    "decode_json",
    "load_record",
    "result_fields",
    "rules_from_json",
    "rules_to_json",
    "save_record",
]

FORMAT = "jungle-game/1"
_RECORD_KEYS: tuple[str, ...] = ("format", "rules", "players", "seed", "actions", "outcomes")
_RECORD_KEYS += ("times", "winner", "reason")
_RULES_KEYS = tuple(field.name for field in attrs.fields(Rules))
_REASONS = frozenset(r.value for r in Reason) | {"unfinished", "forfeit"}
_NOTE_LIMIT = 2000
"""The longest ``note`` (why a game was forfeited) a record keeps, in characters."""
_SEED_LIMIT = 2**64
MAX_OPENINGS = 64
"""The most random opening plies a game may start with (``openings=`` of
:func:`jungle_agents.arena.play_game`, a run's header)."""


_ACTIONS = tuple(range(5 * 9 * 7))


@functools.lru_cache(maxsize=1 << 16)
def _shared_float(x: float) -> float:
    """One object per value (times are rounded to microseconds, so most repeat), for a
    bounded number of values (the most recently read ones)."""
    return x


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
    jungle_agents.arena._records.RecordError: x.json is not JSON: Infinity is not a number ...
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
    jungle_agents.arena._records.RecordError: rules: the rule set lacks variant, rows, ...
    """
    fields = _object(data, "the rule set", where, _RULES_KEYS)
    try:
        return Rules(**fields)
    except JungleError as error:
        raise RecordError(f"{where}: {error}") from None


def check_record(data: Any, where: str) -> dict[str, Any]:
    """The fields of a :class:`GameRecord` from a record's JSON object, checked (see the
    module docstring); :class:`RecordError` names ``where`` and the field."""
    optional = ("note", "opening")
    given = tuple(k for k in optional if isinstance(data, dict) and k in data)
    fields = _object(data, "a game record", where, (*_RECORD_KEYS, *given))
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
    note = fields.get("note", "")
    if (reason == "forfeit") != ("note" in fields):
        raise RecordError(f"{where}: a note (why) is given with a forfeit, and only then")
    if type(note) is not str or len(note) > _NOTE_LIMIT or (reason == "forfeit" and not note):
        raise RecordError(f"{where}: note must be a text of 1..{_NOTE_LIMIT} characters")
    if reason == "forfeit" and winner is None:
        raise RecordError(f"{where}: a forfeited game has a winner (0 or 1)")
    opening = _int(fields.get("opening", 0), 0, len(actions), "opening", where)
    return {
        "rules": rules,
        "players": (players[0], players[1]),
        "seed": seed,
        "actions": actions,
        "outcomes": outcomes,
        "times": tuple(times),
        "winner": winner,
        "reason": reason,
        "note": note,
        "opening": opening,
    }


def check_entry(data: Any, where: str) -> tuple[tuple[str, str], int, Any]:
    """``(pair, game index, the record's JSON)`` of a games file entry, the pair and the
    index checked; :meth:`GameRecord.from_json` checks the record."""
    fields = _object(data, "a game entry", where, ("pair", "game", "record"))
    pair = _list(fields["pair"], "pair", where)
    if len(pair) != 2 or any(type(p) is not str or not p for p in pair):
        raise RecordError(f"{where}: pair must be two agent specs, not {_shown(pair)}")
    index = _int(fields["game"], 0, 2**31 - 1, "game", where)
    return (pair[0], pair[1]), index, fields["record"]


def check_header(data: Any, where: str) -> dict[str, Any]:
    """A games file's header, checked: its rules, seed and ``max_plies``, how its chance
    was dealt (``deals``, present only when it is ``"duplicate"``) and its random opening
    plies (``openings``, present only when there are some)."""
    keys = ("type", "rules", "seed", "max_plies")
    given = tuple(k for k in ("deals", "openings") if isinstance(data, dict) and k in data)
    fields = _object(data, "the header", where, (*keys, *given))
    if "deals" in fields and fields["deals"] != "duplicate":
        raise RecordError(f"{where}: deals must be 'duplicate', not {_shown(fields['deals'])}")
    if "openings" in fields:
        _int(fields["openings"], 1, MAX_OPENINGS, "openings", where)
    rules_from_json(fields["rules"], f"{where}: rules")
    _int(fields["seed"], 0, _SEED_LIMIT - 1, "seed", where)
    if fields["max_plies"] is not None:
        _int(fields["max_plies"], 1, 2**31 - 1, "max_plies", where)
    return fields


def rules_to_json(rules: Rules) -> dict[str, Any]:
    """A rule set as a JSON object (every field, so custom rule sets round-trip).

    >>> from jungle_core import CLASSIC
    >>> rules_from_json(rules_to_json(CLASSIC)) == CLASSIC
    True
    """
    return attrs.asdict(rules)


# ------------------------------------------------------------------- records


def result_fields(state: State) -> tuple[int | None, str]:
    """A record's ``(winner, reason)`` for a game that stands at ``state``: the core's
    outcome, or ``(None, "unfinished")`` while the game goes on."""
    result = outcome(state)
    if result is None:
        return None, "unfinished"
    return result.winner, result.reason.value


@attrs.frozen
class GameRecord:
    """One finished (or abandoned) game: enough to replay it exactly.

    - ``rules``: the rule set; ``seed``: the game's seed (``new_game``'s and the agents').
    - ``players``: the two agents' names, player 0 (who moved first) first.
    - ``actions``: int per ply; ``outcomes``: the chance outcome of each ply
      (``owner * 8 + rank - 1``, -1 for an action without chance); ``times``: each
      decision's wall time in seconds.
    - ``winner``: 0, 1 or None (a draw, or an unfinished game); ``reason``: the
      :class:`jungle_core.Reason` value, ``"unfinished"``, or ``"forfeit"`` when a
      player's agent failed to give a move (:class:`jungle_agents.AgentFailure`: an
      external engine that crashed, hung or answered an illegal move); ``note``: why,
      for a forfeit (empty otherwise).
    - ``opening``: how many of the first plies were a random opening (``openings=`` of
      :func:`jungle_agents.arena.play_game`), not decisions: their times are 0.0 and
      :meth:`decision_times` leaves them out.
    """

    rules: Rules
    players: tuple[str, str]
    seed: int
    actions: tuple[int, ...]
    outcomes: tuple[int, ...]
    times: tuple[float, ...]
    winner: int | None
    reason: str
    note: str = ""
    opening: int = 0

    @classmethod
    def of_play(
        cls,
        final: State,
        players: tuple[str, str],
        seed: int,
        actions: Sequence[int],
        outcomes: Sequence[int],
        times: Sequence[float],
        forfeit: tuple[int, str] | None = None,
        opening: int = 0,
    ) -> GameRecord:
        """The record of a game played from ``new_game(final.rules, seed=seed)`` to
        ``final`` by ``actions`` and chance ``outcomes`` (``times``: each decision's
        seconds); the result is ``final``'s (``"unfinished"`` while the game goes on).

        The one place a played game becomes a record: the arena's game loop, ``jungle
        play`` and ``jungle serve`` all build theirs here. ``forfeit``: ``(player, why)``
        when that player's agent failed to move at ``final``; the other player wins.
        ``opening``: how many of the first plies were a random opening, not decisions.

        >>> from jungle_core import DARK, new_game
        >>> GameRecord.of_play(new_game(DARK), ("a", "b"), 0, [], [], []).reason
        'unfinished'
        """
        winner, reason = result_fields(final)
        note = ""
        if forfeit is not None:
            loser, why = forfeit
            winner, reason, note = 1 - loser, "forfeit", why[:_NOTE_LIMIT] or "no reason given"
        return cls(
            rules=final.rules,
            players=players,
            seed=seed,
            actions=tuple(actions),
            outcomes=tuple(outcomes),
            times=tuple(times),
            winner=winner,
            reason=reason,
            note=note,
            opening=opening,
        )

    @property
    def plies(self) -> int:
        """The number of plies played."""
        return len(self.actions)

    def decision_times(self, player: int) -> tuple[float, ...]:
        """The seconds of each of ``player``'s decisions (0 moved first): its plies'
        times after the random opening, whose plies no agent decided.

        >>> from jungle_core import DARK
        >>> r = GameRecord(DARK, ("a", "b"), 0, (1, 2, 3, 4, 5), (-1,) * 5,
        ...                (0.0, 0.0, 0.0, 0.2, 0.3), None, "unfinished", opening=3)
        >>> r.decision_times(0), r.decision_times(1)
        ((0.3,), (0.2,))
        """
        first = self.opening + (player - self.opening) % 2  # the players alternate
        return self.times[first::2]

    def score(self, player: int) -> float:
        """``player``'s score: 1 a win, 0.5 a draw, 0 a loss."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == player else 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON object (plain lists and numbers; times rounded to microseconds)."""
        return {
            "format": FORMAT,
            "rules": rules_to_json(self.rules),
            "players": list(self.players),
            "seed": self.seed,
            "actions": list(self.actions),
            "outcomes": list(self.outcomes),
            "times": [round(t, 6) for t in self.times],
            "winner": self.winner,
            "reason": self.reason,
            **({"note": self.note} if self.reason == "forfeit" else {}),
            **({"opening": self.opening} if self.opening else {}),
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "game record") -> GameRecord:
        """The record :meth:`to_json` wrote; anything else raises :class:`RecordError`
        naming ``where`` and the field (what is accepted: this module's docstring)."""
        return cls(**check_record(data, where))


@attrs.frozen
class GameResult:
    """One game of a match or tournament: which pair, which game, and its record.

    ``pair`` is ``(A, B)`` as the tournament lists them; game ``index`` has A first when
    even. ``record.players`` are the specs in playing order.
    """

    pair: tuple[str, str]
    index: int
    record: GameRecord

    @property
    def a_first(self) -> bool:
        """True when A moved first in this game."""
        return self.index % 2 == 0

    def score_a(self) -> float:
        """A's score in this game."""
        return self.record.score(0 if self.a_first else 1)

    def column_a(self) -> int:
        """Where this game counts in A's wins-draws-losses: 0 a win, 1 a draw (an
        unfinished game too), 2 a loss."""
        s = self.score_a()
        return 0 if s == 1.0 else 1 if s == 0.5 else 2

    def to_json(self) -> dict[str, Any]:
        """The JSON Lines entry of this game."""
        return {"pair": list(self.pair), "game": self.index, "record": self.record.to_json()}

    @classmethod
    def from_json(cls, data: Any, where: str = "game entry") -> GameResult:
        """The entry :meth:`to_json` wrote; anything else raises :class:`RecordError`."""
        pair, index, record = check_entry(data, where)
        return cls(pair, index, GameRecord.from_json(record, f"{where}: record"))


# --------------------------------------------------------------------- files


def save_record(record: GameRecord, path: str | os.PathLike[str]) -> None:
    """Write a record as JSON, atomically (temp file, fsync, rename).

    The folder must exist (``FileNotFoundError`` otherwise): a mistyped path should fail,
    not create folders.

    >>> import tempfile, os
    >>> from jungle_core import DARK
    >>> from jungle_agents import make_agent
    >>> from jungle_agents.arena import play_game
    >>> r = play_game(DARK, make_agent("random", DARK), make_agent("random", DARK), 0)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_record(r, os.path.join(d, "game.json"))
    ...     load_record(os.path.join(d, "game.json")).actions == r.actions
    True
    """
    atomic_write(path, (json.dumps(record.to_json(), indent=1) + "\n").encode(), make_dirs=False)


def load_record(path: str | os.PathLike[str]) -> GameRecord:
    """Read a record :func:`save_record` wrote (or one entry of a games file); a file
    that is not a record raises :class:`RecordError` naming it and the field."""
    data = decode_json(Path(path).read_bytes(), str(path))
    if type(data) is dict and set(data) == {"pair", "game", "record"}:
        return GameResult.from_json(data, str(path)).record
    return GameRecord.from_json(data, str(path))
