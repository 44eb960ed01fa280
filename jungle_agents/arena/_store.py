"""The arena's games file: JSON Lines, one game a line, appended with an fsync per game.

The first line is the run's header (``{"type": "header", "rules", "seed", "max_plies"}``,
and ``"deals"`` and ``"openings"`` where they are not the default),
every other line one game (:meth:`GameResult.to_json`). A crash can tear only the last
line. A last line that is not yet whole JSON is torn: readers ignore it and
:class:`GamesFile` cuts it off before it appends, so that game is played again. A last line
that is whole JSON whose newline was not written (a crash between the two) is a finished
game: readers count it and :class:`GamesFile` writes its newline, so it is neither lost nor
played twice. A run resumes from the file: the games in it are
not played again (:func:`open_run` checks that the file belongs to the run, then yields
them one at a time, so a file of any size takes the memory of one game).

What a line must hold, exactly: :mod:`jungle_agents.arena._records`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from jungle_agents.arena._records import (
    GameResult,
    RecordError,
    check_header,
    decode_json,
    rules_to_json,
)
from jungle_core import Rules

__all__ = [
    "GamesFile",
    "iter_resumable_games",
    "load_games",
    "load_runs",
    "open_run",
    "resumable_games",
    "run_header",
]


def _scan(path: str | os.PathLike[str]) -> Iterator[dict[str, Any] | GameResult]:
    """The header (a dict) and the games of a games file, in file order, read one line at
    a time; checked as :func:`load_games` checks them. Nothing when the file does not exist."""
    p = Path(path)
    if not p.exists():
        return
    seen_entry = False
    with open(p, "rb") as f:
        for number, raw in enumerate(f, 1):
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                data = decode_json(line, where)
            except RecordError:
                if not raw.endswith(b"\n"):
                    return  # torn by a crash mid-write (no newline yet): played again on resume
                raise
            if type(data) is dict and data.get("type") == "header":
                if seen_entry:
                    raise RecordError(f"{where}: a header line must be the file's first line")
                yield check_header(data, where)
            else:
                yield GameResult.from_json(data, where)
            seen_entry = True


def load_games(path: str | os.PathLike[str]) -> tuple[dict[str, Any] | None, list[GameResult]]:
    """The header and the games of a JSON Lines games file (a torn last line is ignored).

    Returns ``(None, [])`` when the file does not exist. This holds every game in memory;
    :func:`iter_resumable_games` reads a run's games one at a time.

    >>> import tempfile, os
    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import play_match
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = play_match(DARK, "random", "greedy", 2, workers=1, out=os.path.join(d, "g.jsonl"))
    ...     header, games = load_games(os.path.join(d, "g.jsonl"))
    >>> header["seed"], [g.index for g in games]
    (0, [0, 1])
    """
    header: dict[str, Any] | None = None
    games: list[GameResult] = []
    for item in _scan(path):
        if isinstance(item, GameResult):
            games.append(item)
        else:
            header = item
    return header, games


def load_runs(paths: Sequence[str | os.PathLike[str]]) -> list[GameResult]:
    """The games of several games files as one set, for one report over all of them
    (``jungle report``; :func:`summarize` then fits one Elo list to every pair met).

    Each pair keeps the orientation it is first met in: a game of ``(B, A)`` read after
    ``(A, B)``'s is counted as ``(A, B)``'s, its index's parity flipped so that A's
    seat still matches its record (``record.players`` is untouched). Raises
    :class:`RecordError`, naming the file, when a file is missing or holds no games,
    when the games are of two rule sets, or when one game is read twice (the same pair,
    index and game seed: the same file given twice, or the same run copied).

    >>> import tempfile, os
    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import play_match
    >>> with tempfile.TemporaryDirectory() as d:
    ...     one, two = os.path.join(d, "1.jsonl"), os.path.join(d, "2.jsonl")
    ...     _ = play_match(DARK, "random", "greedy", 2, workers=1, out=one)
    ...     _ = play_match(DARK, "greedy", "random", 2, workers=1, out=two)
    ...     games = load_runs([one, two])
    >>> sorted({g.pair for g in games}), len(games)
    ([('random', 'greedy')], 4)
    """
    games: list[GameResult] = []
    pairs: set[tuple[str, str]] = set()
    seen: set[tuple[tuple[str, str], int, int]] = set()
    rules: Rules | None = None
    for path in paths:
        if not Path(path).is_file():
            raise RecordError(f"{path}: no such games file")
        _, run = load_games(path)
        if not run:
            raise RecordError(f"{path}: no games")
        for read in run:
            game = read
            if rules is None:
                rules = game.record.rules
            elif game.record.rules != rules:
                raise RecordError(
                    f"{path}: game {game.index} of {game.pair} is of {game.record.rules.name}"
                    f" rules, the games before it of {rules.name}"
                )
            a, b = game.pair
            if (a, b) not in pairs and (b, a) in pairs:
                game = GameResult((b, a), read.index ^ 1, read.record)
            pairs.add(game.pair)
            key = (game.pair, game.index, game.record.seed)
            if key in seen:
                raise RecordError(
                    f"{path}: game {game.index} of {game.pair} (game seed {game.record.seed})"
                    " was read already"
                )
            seen.add(key)
            games.append(game)
    return games


def run_header(
    rules: Rules,
    seed: int,
    max_plies: int | None,
    deals: str = "independent",
    openings: int = 0,
) -> dict[str, Any]:
    """The header line of a run's games file: what makes its games the ones it plays
    (``deals`` and ``openings`` only when they are not the default, so older files stay
    resumable).

    >>> from jungle_core import CLASSIC
    >>> sorted(run_header(CLASSIC, 0, None, openings=2))
    ['max_plies', 'openings', 'rules', 'seed', 'type']
    """
    header = {"type": "header", "rules": rules_to_json(rules), "seed": seed, "max_plies": max_plies}
    if deals != "independent":
        header["deals"] = deals
    if openings:
        header["openings"] = openings
    return header


def open_run(
    path: str | os.PathLike[str], header: dict[str, Any]
) -> tuple[bool, Iterator[GameResult]]:
    """Whether ``path`` starts with a header, and its games, read one at a time as they
    are asked for. :class:`RecordError`, before any game is read, unless the file belongs
    to the run that ``header`` describes (a file of games without a header belongs to no
    run); a malformed line raises it when reached."""
    entries = _scan(path)
    first = next(entries, None)
    if first is None:
        return False, iter(())
    if isinstance(first, GameResult):
        count = 1 + sum(1 for _ in entries)
        raise RecordError(
            f"{path} holds {count} games but no header line, so nothing says "
            f"which run (rules, seed, max_plies) played them; use another output file"
        )
    for key in ("rules", "seed", "max_plies", "deals", "openings"):
        if first.get(key) != header.get(key):
            raise RecordError(
                f"{path} holds games of a different run ({key} "
                f"{first.get(key)!r}, not {header.get(key)!r}); "
                f"use another output file"
            )
    # after the first line _scan yields games only (a later header raises)
    return True, (g for g in entries if isinstance(g, GameResult))


def iter_resumable_games(
    path: str | os.PathLike[str],
    rules: Rules,
    pairs: Sequence[tuple[str, str]],
    games_per_pair: int,
    seed: int = 0,
    max_plies: int | None = None,
    deals: str = "independent",
    openings: int = 0,
) -> Iterator[GameResult]:
    """:func:`resumable_games` one game at a time: the file is read as the games are asked
    for, so a file of any size takes the memory of one game. A file of another run raises
    :class:`RecordError` at once (when this is called, not when it is first iterated)."""
    _, games = open_run(path, run_header(rules, seed, max_plies, deals, openings))
    wanted = set(pairs)
    return (g for g in games if g.pair in wanted and g.index < games_per_pair)


def resumable_games(
    path: str | os.PathLike[str],
    rules: Rules,
    pairs: Sequence[tuple[str, str]],
    games_per_pair: int,
    seed: int = 0,
    max_plies: int | None = None,
    deals: str = "independent",
    openings: int = 0,
) -> list[GameResult]:
    """The games of ``path`` that a run with these arguments keeps instead of playing
    (the ones of its pairs and game indices); a file of another run raises
    :class:`RecordError`, as the run itself would. Nothing is written.

    >>> from jungle_core import DARK
    >>> resumable_games("no-such-file.jsonl", DARK, [("random", "greedy")], 2)
    []
    """
    return list(
        iter_resumable_games(path, rules, pairs, games_per_pair, seed, max_plies, deals, openings)
    )


def _seal_last_line(path: Path) -> None:
    """End the file on a whole line before an append: a last line without its newline is
    completed when it is whole JSON (its game was finished, so readers counted it) and
    cut off otherwise (torn mid-write); the file is read from its end, a block at a time."""
    with open(path, "r+b") as f:
        end = f.seek(0, os.SEEK_END)
        position = end
        tail = b""
        while position > 0:
            start = max(0, position - 65536)
            f.seek(start)
            block = f.read(position - start)
            if position == end and block.endswith(b"\n"):
                return
            newline = block.rfind(b"\n")
            if newline >= 0:
                tail = block[newline + 1 :] + tail
                start += newline + 1
                break
            tail = block + tail
            position = start
        else:
            start = 0
        if _is_whole_json(tail):
            f.seek(end)
            f.write(b"\n")
        else:
            f.truncate(start)


def _is_whole_json(line: bytes) -> bool:
    """Whether ``line`` (without a newline) decodes as JSON: what the readers test to tell
    a finished entry from a torn one."""
    try:
        decode_json(line, "the last line")
    except RecordError:
        return False
    return True


class GamesFile:
    """An append-only JSON Lines file of games; each line is flushed and fsynced.

    ``has_header``: the file already starts with this run's header (:func:`open_run`
    checked it); otherwise the header is written first.
    """

    def __init__(
        self, path: str | os.PathLike[str], header: dict[str, Any], has_header: bool
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            _seal_last_line(self.path)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        if not has_header:
            self.append(header)

    def append(self, entry: dict[str, Any]) -> None:
        """Write one line and wait until it is on the disk (flush, fsync)."""
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file."""
        self._file.close()
