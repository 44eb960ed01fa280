"""The arena: games, matches and round-robin tournaments between agents (SPEC §8).

- :func:`play_game` plays one seeded game and returns a :class:`GameRecord` (actions,
  chance outcomes, result, decision times); :func:`replay` rebuilds every state of it
  exactly; :func:`save_record` / :func:`load_record` store one record as JSON.
- :func:`play_match` (A against B, half the games each first) and :func:`round_robin`
  (every pair of a list of agent specs) run games in parallel worker processes, append
  each finished game to a JSON Lines file with an ``fsync``, and resume from that file:
  an interrupted run (crash, Ctrl-C) loses no finished game and repeats none.
- :func:`summarize` turns games into per-pair results (W/D/L, score as first and second
  player, mean length, decision latency mean and 95th percentile) and Elo ratings fitted
  by maximum likelihood (:func:`fit_elo`); :func:`format_report`, :func:`write_csv`,
  :func:`write_markdown` and :func:`plot_heatmap` present them.
- A match or tournament builds that summary as the games finish (:class:`Tally`: counts,
  sums and a log-binned histogram of decision times, so the p95 is within 0.1 %), and
  reads a games file it resumes one line at a time: its memory does not grow with the
  number of games. ``round_robin(..., keep_games=False)`` returns no games at all (the
  command line's choice); the default keeps them, as before.

Every game of a match or tournament is seeded from ``(seed, agent A, agent B, game
index)``, so a run replays exactly (timed searches aside) and a resumed run plays the very
games the interrupted one would have played.

>>> from jungle_core import DARK
>>> from jungle_agents import make_agent
>>> record = play_game(DARK, make_agent("random", DARK), make_agent("greedy", DARK), seed=3)
>>> record.winner in (0, 1, None), len(record.actions) == len(record.times)
(True, True)
>>> replay(record)[-1].ply == len(record.actions)
True
"""

from __future__ import annotations

import json
import math
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from jungle_agents._base import Agent, make_agent
from jungle_agents._game_loop import (
    check_run_arguments,
    moves_text,
    play_game,
    play_game_as,
    replay,
)
from jungle_agents._latency import LatencySketch
from jungle_agents._records import (
    GameRecord,
    GameResult,
    RecordError,
    atomic_write,
    check_header,
    decode_json,
    load_record,
    rules_from_json,
    rules_to_json,
    save_record,
)
from jungle_core import JungleError, Rules

__all__ = [
    "EloRating",
    "GameRecord",
    "GameResult",
    "PairResult",
    "RecordError",
    "Tally",
    "TournamentResult",
    "decode_json",
    "fit_elo",
    "format_report",
    "iter_resumable_games",
    "load_games",
    "load_record",
    "moves_text",
    "play_game",
    "play_match",
    "plot_heatmap",
    "replay",
    "resumable_games",
    "round_robin",
    "rules_from_json",
    "rules_to_json",
    "save_record",
    "summarize",
    "write_csv",
    "write_markdown",
]

# -------------------------------------------------------- matches and tournaments


def game_seed(seed: int, a: str, b: str, index: int) -> int:
    """The seed of game ``index`` between specs ``a`` and ``b`` in a run seeded ``seed``.

    >>> game_seed(0, "random", "greedy", 0) == game_seed(0, "random", "greedy", 0)
    True
    """
    pair = zlib.crc32(f"{a}\x00{b}".encode())
    return int(np.random.SeedSequence([seed, pair, index]).generate_state(1)[0])


@attrs.frozen
class _Task:
    rules: Rules
    pair: tuple[str, str]
    index: int
    seed: int
    max_plies: int | None


_AGENTS: dict[tuple[Rules, str], Agent] = {}


def _agent(rules: Rules, spec: str) -> Agent:
    key = (rules, spec)
    found = _AGENTS.get(key)
    if found is None:
        found = _AGENTS[key] = make_agent(spec, rules)
    return found


def _run_task(task: _Task) -> dict[str, Any]:
    a, b = task.pair
    first, second = (a, b) if task.index % 2 == 0 else (b, a)
    try:
        record = play_game_as(
            (first, second),
            task.rules,
            _agent(task.rules, first),
            _agent(task.rules, second),
            task.seed,
            max_plies=task.max_plies,
        )
    except Exception as error:
        raise RuntimeError(
            f"game {task.index} of {a} vs {b} ({first} first, seed {task.seed}) failed: "
            f"{type(error).__name__}: {error}"
        ) from error
    return GameResult(task.pair, task.index, record).to_json()


def _init_worker(plugins: Sequence[str]) -> None:
    import importlib
    import signal

    # Ctrl-C is the parent's to handle: it stops the pool and keeps the finished games.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module in plugins:
        importlib.import_module(module)


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


def _run_header(rules: Rules, seed: int, max_plies: int | None) -> dict[str, Any]:
    return {"type": "header", "rules": rules_to_json(rules), "seed": seed, "max_plies": max_plies}


def _open_run(
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
    for key in ("rules", "seed", "max_plies"):
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
) -> Iterator[GameResult]:
    """:func:`resumable_games` one game at a time: the file is read as the games are asked
    for, so a file of any size takes the memory of one game. A file of another run raises
    :class:`RecordError` at once (when this is called, not when it is first iterated)."""
    _, games = _open_run(path, _run_header(rules, seed, max_plies))
    wanted = set(pairs)
    return (g for g in games if g.pair in wanted and g.index < games_per_pair)


def resumable_games(
    path: str | os.PathLike[str],
    rules: Rules,
    pairs: Sequence[tuple[str, str]],
    games_per_pair: int,
    seed: int = 0,
    max_plies: int | None = None,
) -> list[GameResult]:
    """The games of ``path`` that a run with these arguments keeps instead of playing
    (the ones of its pairs and game indices); a file of another run raises
    :class:`RecordError`, as the run itself would. Nothing is written.

    >>> from jungle_core import DARK
    >>> resumable_games("no-such-file.jsonl", DARK, [("random", "greedy")], 2)
    []
    """
    return list(iter_resumable_games(path, rules, pairs, games_per_pair, seed, max_plies))


def _cut_torn_line(path: Path) -> None:
    """Cut a last line torn by a crash (no newline), so the next entry starts on a line of
    its own; the file is read from its end, a block at a time."""
    with open(path, "r+b") as f:
        end = f.seek(0, os.SEEK_END)
        position = end
        while position > 0:
            start = max(0, position - 65536)
            f.seek(start)
            block = f.read(position - start)
            if position == end and block.endswith(b"\n"):
                return
            newline = block.rfind(b"\n")
            if newline >= 0:
                f.truncate(start + newline + 1)
                return
            position = start
        if end:
            f.truncate(0)


class _GamesFile:
    """An append-only JSON Lines file of games; each line is flushed and fsynced.

    ``has_header``: the file already starts with this run's header (:func:`_open_run`
    checked it); otherwise the header is written first.
    """

    def __init__(
        self, path: str | os.PathLike[str], header: dict[str, Any], has_header: bool
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            _cut_torn_line(self.path)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        if not has_header:
            self.append(header)

    def append(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


Progress = Callable[[int, int, GameResult], None]
"""``progress(games done, games in all, the game just finished)``."""


def _pairs_of(specs: Sequence[str]) -> list[tuple[str, str]]:
    return [(specs[i], specs[j]) for i in range(len(specs)) for j in range(i + 1, len(specs))]


def import_plugins(plugins: Sequence[str]) -> None:
    """Import each plugin module (it registers agent kinds); one that cannot be imported
    raises :class:`jungle_core.JungleError` naming it."""
    import importlib

    for module in plugins:
        try:
            importlib.import_module(module)
        except Exception as error:  # a plugin's own code may raise anything on import
            raise JungleError(
                f"plugin {module!r} cannot be imported: {type(error).__name__}: {error}"
            ) from None


def _run(
    rules: Rules,
    specs: Sequence[str],
    games_per_pair: int,
    seed: int,
    workers: int | None,
    out: str | os.PathLike[str] | None,
    progress: Progress | None,
    max_plies: int | None,
    backend: str,
    plugins: Sequence[str],
    keep_games: bool,
) -> TournamentResult:
    """Play (or find in ``out``) every game of every pair of ``specs``; the summary is
    tallied as each game is found or finishes, and the games are kept only when asked."""
    check_run_arguments(games_per_pair, seed, workers, max_plies)
    import_plugins(plugins)  # they register agent kinds, here and in workers
    pairs = _pairs_of(specs)
    for a, b in pairs:
        if a == b:
            raise JungleError(f"agent spec {a!r} is listed twice")
        make_agent(a, rules), make_agent(b, rules)  # bad specs fail here, not in a worker
    header = _run_header(rules, seed, max_plies)
    tally = Tally(specs)
    kept: list[GameResult] = []
    # the games found in the file, as indices per pair: about 60 bytes a game, not the game
    done: dict[tuple[str, str], set[int]] = {pair: set() for pair in pairs}
    games_file = None
    if out is not None:
        has_header, previous = _open_run(out, header)
        for game in previous:
            indices = done.get(game.pair)
            if indices is None or game.index >= games_per_pair or game.index in indices:
                continue  # another run's pair or index, or a repeat: the first one counts
            indices.add(game.index)
            tally.add(game)
            if keep_games:
                kept.append(game)
        games_file = _GamesFile(out, header, has_header)
    total = len(pairs) * games_per_pair
    count = total - tally.games
    tasks = (
        _Task(rules, (a, b), i, game_seed(seed, a, b, i), max_plies)
        for a, b in pairs
        for i in range(games_per_pair)
        if i not in done[(a, b)]
    )

    def finished(entry: dict[str, Any]) -> None:
        game = GameResult.from_json(entry)
        if games_file is not None:
            games_file.append(entry)
        tally.add(game)
        if keep_games:
            kept.append(game)
        if progress is not None:
            progress(tally.games, total, game)

    try:
        if backend == "ray":
            from jungle_agents._ray import run_ray

            run_ray(tasks, finished, workers, plugins)
        elif backend != "process":
            raise JungleError(f"backend must be 'process' or 'ray', not {backend!r}")
        elif (workers or os.cpu_count() or 1) <= 1 or count <= 1:
            for task in tasks:
                finished(_run_task(task))
        else:
            _run_pool(tasks, count, finished, workers or os.cpu_count() or 1, plugins)
    finally:
        if games_file is not None:
            games_file.close()
    kept.sort(key=lambda g: (pairs.index(g.pair), g.index))
    return tally.result(kept)


def _run_pool(
    tasks: Iterable[_Task],
    count: int,
    finished: Callable[[dict[str, Any]], None],
    workers: int,
    plugins: Sequence[str],
) -> None:
    import multiprocessing
    import sys

    # fork starts workers at once and needs no `if __name__ == "__main__"` guard in the
    # calling script; but forking a process that has started JAX's threads can deadlock,
    # so then workers are spawned fresh (and the calling script needs the guard)
    context = multiprocessing.get_context("spawn" if "jax" in sys.modules else "fork")
    pool = ProcessPoolExecutor(
        max_workers=min(workers, count),
        mp_context=context,
        initializer=_init_worker,
        initargs=(tuple(plugins),),
    )
    pending: set[Future[dict[str, Any]]] = set()
    queue: Iterator[_Task] = iter(tasks)
    try:
        # keep a few tasks per worker queued, so Ctrl-C has little to cancel
        for task in queue:
            pending.add(pool.submit(_run_task, task))
            if len(pending) >= 2 * workers:
                break
        while pending:
            complete, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in complete:
                finished(future.result())
                nxt = next(queue, None)
                if nxt is not None:
                    pending.add(pool.submit(_run_task, nxt))
    except BaseException:
        # interrupted (Ctrl-C) or a game failed: stop the workers now; the games already
        # written stay, the ones in flight are played again on resume
        for future in pending:
            future.cancel()
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    pool.shutdown()


def play_match(
    rules: Rules,
    a: str,
    b: str,
    games: int,
    seed: int = 0,
    workers: int | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    max_plies: int | None = None,
    backend: str = "process",
    plugins: Sequence[str] = (),
) -> PairResult:
    """Play ``games`` games between agent specs ``a`` and ``b``, A first in the even-numbered
    games (half of them), and return A's results.

    ``workers`` processes play in parallel (default: all cores; 1 plays in this process).
    With ``out``, each finished game is appended to that JSON Lines file (fsynced), and a
    rerun resumes: games already in the file are not played again (and count in the
    result). ``plugins`` are module names each worker imports first (to register more
    agent kinds). The result is tallied as the games finish, in memory that does not grow
    with their number (:class:`Tally`: the latency p95 within 0.1 %); no game is kept.

    >>> from jungle_core import DARK
    >>> r = play_match(DARK, "greedy", "random", 2, seed=1, workers=1)
    >>> r.games, r.wins + r.draws + r.losses
    (2, 2)
    """
    result = _run(
        rules, [a, b], games, seed, workers, out, progress, max_plies, backend, plugins, False
    )
    return result.pairs[(a, b)]


def round_robin(
    rules: Rules,
    specs: Sequence[str],
    games_per_pair: int = 200,
    seed: int = 0,
    workers: int | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    max_plies: int | None = None,
    backend: str = "process",
    plugins: Sequence[str] = (),
    keep_games: bool = True,
) -> TournamentResult:
    """Play every pair of ``specs`` ``games_per_pair`` times (half with each first).

    As :func:`play_match` for ``workers``, ``out`` (resume), ``plugins``; ``backend="ray"``
    runs the games as Ray tasks (the ``ray`` extra; ``workers`` then caps the tasks in
    flight).

    The result is tallied game by game as each finishes (or is found in ``out`` on a
    resume), by a :class:`Tally`: its memory does not grow with the number of games, and
    its latency p95 is within 0.1 % of the exact one (:func:`summarize` of the same games
    is exact). ``keep_games`` decides only whether the games themselves are also returned
    (``result.games``, by pair and index): ``False`` keeps none (``result.games == ()``),
    so a run of millions of games holds no more memory at its end than at its start; the
    games stay in ``out``.

    >>> from jungle_core import DARK
    >>> t = round_robin(DARK, ["random", "greedy"], 2, workers=1)
    >>> sorted(t.ratings)
    ['greedy', 'random']
    """
    specs = list(specs)
    if len(specs) < 2:
        raise JungleError("a round robin needs at least two agents")
    if len(set(specs)) != len(specs):
        raise JungleError(f"an agent spec is listed twice in {specs}")
    return _run(
        rules,
        specs,
        games_per_pair,
        seed,
        workers,
        out,
        progress,
        max_plies,
        backend,
        plugins,
        keep_games,
    )


# -------------------------------------------------------------------- results


def _p95(values: Sequence[float]) -> float:
    return float(np.percentile(values, 95)) if len(values) else math.nan


@attrs.frozen
class PairResult:
    """Agent A's results against agent B.

    - ``wins``, ``draws``, ``losses``: A's, over ``games``; ``score``: (wins + draws/2)/games.
    - ``score_first`` / ``score_second``: A's score in the games A moved first / second.
    - ``mean_plies``: mean game length in plies.
    - ``latency_a`` / ``latency_b``: (mean, 95th percentile) decision seconds of A / B
      (the percentile exact from :func:`summarize`, within 0.1 % from a :class:`Tally`,
      as :func:`round_robin` and :func:`play_match` give it).
    """

    a: str
    b: str
    games: int
    wins: int
    draws: int
    losses: int
    score_first: float
    score_second: float
    mean_plies: float
    latency_a: tuple[float, float]
    latency_b: tuple[float, float]
    games_first: int = 0
    games_second: int = 0

    @property
    def score(self) -> float:
        """A's score: (wins + draws / 2) / games."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else math.nan

    def flipped(self) -> PairResult:
        """The same results from B's side."""
        return PairResult(
            self.b,
            self.a,
            self.games,
            self.losses,
            self.draws,
            self.wins,
            1.0 - self.score_second if self.games_second else math.nan,
            1.0 - self.score_first if self.games_first else math.nan,
            self.mean_plies,
            self.latency_b,
            self.latency_a,
            self.games_second,
            self.games_first,
        )


def _pair_result(a: str, b: str, games: Sequence[GameResult]) -> PairResult:
    wins = draws = losses = 0
    first: list[float] = []
    second: list[float] = []
    times_a: list[float] = []
    times_b: list[float] = []
    plies = []
    for g in games:
        s = g.score_a()
        wins += s == 1.0
        draws += s == 0.5
        losses += s == 0.0
        (first if g.a_first else second).append(s)
        side_a = 0 if g.a_first else 1
        times = g.record.times
        times_a.extend(times[side_a::2])
        times_b.extend(times[1 - side_a :: 2])
        plies.append(g.record.plies)
    return PairResult(
        a,
        b,
        len(games),
        wins,
        draws,
        losses,
        float(np.mean(first)) if first else math.nan,
        float(np.mean(second)) if second else math.nan,
        float(np.mean(plies)) if plies else math.nan,
        (float(np.mean(times_a)) if times_a else math.nan, _p95(times_a)),
        (float(np.mean(times_b)) if times_b else math.nan, _p95(times_b)),
        len(first),
        len(second),
    )


@attrs.frozen
class EloRating:
    """An Elo rating with its 95 % confidence interval half-width (``rating ± ci``)."""

    rating: float
    ci: float


@attrs.frozen
class TournamentResult:
    """Results of a round robin: per pair (both orders) and Elo ratings.

    ``pairs[(a, b)]`` is a :class:`PairResult` for every ordered pair that met;
    ``latency[spec]`` is an agent's (mean, p95) decision seconds over all its games.
    ``games``: the games, when they were kept (:func:`summarize`; :func:`round_robin`
    unless ``keep_games=False``), else ``()``; ``rules``: the games' rule set (None
    without games).
    """

    specs: tuple[str, ...]
    pairs: dict[tuple[str, str], PairResult]
    ratings: dict[str, EloRating]
    latency: dict[str, tuple[float, float]]
    games: tuple[GameResult, ...]
    rules: Rules | None = None


def summarize(games: Iterable[GameResult], specs: Sequence[str] | None = None) -> TournamentResult:
    """Per-pair results and Elo ratings of a set of games, computed from all of them at once
    (every decision time is held: the latency percentiles are exact). :class:`Tally` gives
    the same summary one game at a time in bounded memory.

    >>> summarize([], ["a", "b"]).pairs
    {}
    """
    games = list(games)
    if specs is None:
        seen: dict[str, None] = {}
        for g in games:
            seen.setdefault(g.pair[0])
            seen.setdefault(g.pair[1])
        specs = list(seen)
    by_pair: dict[tuple[str, str], list[GameResult]] = {}
    for g in games:
        by_pair.setdefault(g.pair, []).append(g)
    pairs: dict[tuple[str, str], PairResult] = {}
    for (a, b), gs in by_pair.items():
        result = _pair_result(a, b, gs)
        pairs[(a, b)] = result
        pairs[(b, a)] = result.flipped()
    times: dict[str, list[float]] = {s: [] for s in specs}
    for g in games:
        for player, spec in enumerate(g.record.players):
            times.setdefault(spec, []).extend(g.record.times[player::2])
    latency = {s: (float(np.mean(t)) if t else math.nan, _p95(t)) for s, t in times.items()}
    scores = [(g.record.players[0], g.record.players[1], g.record.score(0)) for g in games]
    ratings = fit_elo(scores, list(specs)) if games else {}
    rules = games[0].record.rules if games else None
    return TournamentResult(tuple(specs), pairs, ratings, latency, tuple(games), rules=rules)


class _PairTally:
    """The running totals of one pair (A, B): counts and sums, and A's and B's times."""

    __slots__ = (
        "draws",
        "first_games",
        "first_score",
        "games",
        "losses",
        "plies",
        "second_score",
        "times_a",
        "times_b",
        "wins",
    )

    def __init__(self) -> None:
        self.games = self.wins = self.draws = self.losses = self.plies = 0
        self.first_games = 0
        self.first_score = self.second_score = 0.0
        self.times_a = LatencySketch()
        self.times_b = LatencySketch()

    def add(self, game: GameResult) -> None:
        s = game.score_a()
        self.games += 1
        self.wins += s == 1.0
        self.draws += s == 0.5
        self.losses += s == 0.0
        if game.a_first:
            self.first_games += 1
            self.first_score += s
        else:
            self.second_score += s
        side_a = 0 if game.a_first else 1
        times = game.record.times
        self.times_a.add(times[side_a::2])
        self.times_b.add(times[1 - side_a :: 2])
        self.plies += game.record.plies

    def result(self, a: str, b: str) -> PairResult:
        second_games = self.games - self.first_games
        return PairResult(
            a,
            b,
            self.games,
            self.wins,
            self.draws,
            self.losses,
            self.first_score / self.first_games if self.first_games else math.nan,
            self.second_score / second_games if second_games else math.nan,
            self.plies / self.games if self.games else math.nan,
            (self.times_a.mean(), self.times_a.quantile(0.95)),
            (self.times_b.mean(), self.times_b.quantile(0.95)),
            self.first_games,
            second_games,
        )


class Tally:
    """A tournament's summary built one game at a time, in memory that does not grow with
    the number of games: what :func:`round_robin` and :func:`play_match` use, so that a run
    of millions of games need not keep them.

    Per pair it keeps counts and sums (W/D/L, scores as first and second player, plies)
    and a :class:`jungle_agents._latency.LatencySketch` of each side's decision times.
    :meth:`result` equals :func:`summarize` of the same games, except that each latency
    p95 is within 0.1 % of the exact one (``_latency.RELATIVE_ERROR``) and a mean may
    differ in its last bits (the sums are added in another order). An agent's overall
    latency merges its pairs' sketches; Elo is fitted to the per-pair scores, which are the
    same counts :func:`fit_elo` builds from the games.

    Memory: a few hundred bytes a pair plus the sketches' bins (at most one per 0.2 %
    step of decision time: about 7,000 from 1 µs to 1 s, a few kB each in practice).

    >>> from jungle_core import DARK
    >>> from jungle_agents import make_agent
    >>> tally = Tally(["random", "greedy"])
    >>> for i in range(2):
    ...     first, second = ("random", "greedy") if i % 2 == 0 else ("greedy", "random")
    ...     record = play_game(DARK, make_agent(first, DARK), make_agent(second, DARK), i)
    ...     tally.add(GameResult(("random", "greedy"), i, record))
    >>> tally.games, tally.result().pairs[("random", "greedy")].games
    (2, 2)
    """

    def __init__(self, specs: Sequence[str] | None = None) -> None:
        self._specs = None if specs is None else list(specs)
        self._names: dict[str, None] = dict.fromkeys(specs or ())
        self._pairs: dict[tuple[str, str], _PairTally] = {}
        self.games = 0
        """The number of games added."""
        self.rules: Rules | None = None
        """The rules of the first game added."""

    def add(self, game: GameResult) -> None:
        """Count one game."""
        pair = self._pairs.get(game.pair)
        if pair is None:
            pair = self._pairs[game.pair] = _PairTally()
            self._names.setdefault(game.pair[0])
            self._names.setdefault(game.pair[1])
        pair.add(game)
        if self.rules is None:
            self.rules = game.record.rules
        self.games += 1

    def result(self, games: Sequence[GameResult] = ()) -> TournamentResult:
        """The summary of the games added so far; ``games`` become ``result.games`` (the
        tally does not keep them: pass them when you kept them yourself)."""
        specs = self._specs if self._specs is not None else list(self._names)
        names = list(self._names)
        order = {name: i for i, name in enumerate(names)}
        pairs: dict[tuple[str, str], PairResult] = {}
        for a, b in sorted(self._pairs, key=lambda p: (order[p[0]], order[p[1]])):
            result = self._pairs[(a, b)].result(a, b)
            pairs[(a, b)] = result
            pairs[(b, a)] = result.flipped()
        sketches: dict[str, list[LatencySketch]] = {name: [] for name in names}
        for (a, b), pair in self._pairs.items():
            sketches[a].append(pair.times_a)
            sketches[b].append(pair.times_b)
        latency: dict[str, tuple[float, float]] = {}
        for name in names:
            merged = LatencySketch.merged(sketches[name])
            latency[name] = (merged.mean(), merged.quantile(0.95))
        k = len(names)
        n = np.zeros((k, k))
        s = np.zeros((k, k))
        for (a, b), pair in self._pairs.items():
            i, j = order[a], order[b]
            n[i, j] += pair.games
            n[j, i] += pair.games
            s[i, j] += pair.wins + 0.5 * pair.draws
            s[j, i] += pair.losses + 0.5 * pair.draws
        ratings = _fit_elo(names, n, s, 2000.0) if self.games else {}
        return TournamentResult(
            tuple(specs), pairs, ratings, latency, tuple(games), rules=self.rules
        )


def fit_elo(
    results: Iterable[tuple[str, str, float]],
    players: Sequence[str] | None = None,
    *,
    prior_sd: float = 2000.0,
) -> dict[str, EloRating]:
    """Elo ratings fitted by maximum likelihood to game scores, with 95 % intervals.

    ``results`` are ``(player, opponent, player's score)`` triples (1, 0.5 or 0; a draw
    counts as half a win in the logistic model ``P(win) = 1 / (1 + 10 ** (-diff / 400))``).
    Ratings have mean 0. A very weak Gaussian prior (``prior_sd`` Elo) keeps ratings finite
    when an agent wins or loses every game; it moves ordinary ratings by well under one
    Elo point. Intervals come from the inverse Hessian of the log likelihood, centred.

    >>> r = fit_elo([("a", "b", 1.0)] * 3 + [("a", "b", 0.0)])
    >>> round(r["a"].rating - r["b"].rating)   # 3:1 means 10 ** (d / 400) = 3, d = 190.8
    190
    """
    results = list(results)
    names: list[str] = list(players) if players is not None else []
    for a, b, _ in results:
        for name in (a, b):
            if name not in names:
                names.append(name)
    k = len(names)
    index = {name: i for i, name in enumerate(names)}
    n = np.zeros((k, k))
    s = np.zeros((k, k))
    for a, b, score in results:
        i, j = index[a], index[b]
        n[i, j] += 1
        n[j, i] += 1
        s[i, j] += score
        s[j, i] += 1.0 - score
    return _fit_elo(names, n, s, prior_sd)


def _fit_elo(
    names: Sequence[str],
    n: npt.NDArray[np.float64],
    s: npt.NDArray[np.float64],
    prior_sd: float,
) -> dict[str, EloRating]:
    """:func:`fit_elo` of the game counts ``n: float64[k, k]`` (symmetric) and the scores
    ``s: float64[k, k]`` (``s[i, j]``: the points ``names[i]`` took from ``names[j]``)."""
    k = len(names)
    c = math.log(10) / 400.0
    r = np.zeros(k)
    prior = 1.0 / prior_sd**2
    hess = np.eye(k)
    for _ in range(100):
        diff = r[:, None] - r[None, :]
        p = 1.0 / (1.0 + np.exp(-c * diff))
        grad = c * (s - n * p).sum(axis=1) - prior * r
        w = c * c * n * p * (1.0 - p)
        hess = -np.diag(w.sum(axis=1)) + w - prior * np.eye(k)
        step = np.linalg.solve(hess, grad)
        r = r - step
        if np.max(np.abs(step)) < 1e-9:
            break
    r -= r.mean()
    centre = np.eye(k) - np.ones((k, k)) / k
    cov = centre @ np.linalg.inv(-hess) @ centre
    ci = 1.96 * np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return {name: EloRating(float(r[i]), float(ci[i])) for i, name in enumerate(names)}


# ----------------------------------------------------------------- presenting


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.0f}"


def _ms(x: float) -> str:
    return "-" if math.isnan(x) else f"{1000 * x:.1f}"


def pair_rows(result: TournamentResult) -> list[dict[str, Any]]:
    """One row per pair (A before B in the tournament's order): the CSV columns.

    >>> from jungle_core import DARK
    >>> t = round_robin(DARK, ["greedy", "random"], 2, workers=1)
    >>> [(r["a"], r["b"], r["games"]) for r in pair_rows(t)]
    [('greedy', 'random', 2)]
    """
    rows = []
    specs = result.specs
    for i, a in enumerate(specs):
        for b in specs[i + 1 :]:
            pr = result.pairs.get((a, b))
            if pr is None:
                continue
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "games": pr.games,
                    "wins": pr.wins,
                    "draws": pr.draws,
                    "losses": pr.losses,
                    "score": round(pr.score, 4),
                    "score_first": round(pr.score_first, 4),
                    "score_second": round(pr.score_second, 4),
                    "mean_plies": round(pr.mean_plies, 1),
                    "latency_a_mean_s": round(pr.latency_a[0], 5),
                    "latency_a_p95_s": round(pr.latency_a[1], 5),
                    "latency_b_mean_s": round(pr.latency_b[0], 5),
                    "latency_b_p95_s": round(pr.latency_b[1], 5),
                }
            )
    return rows


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(
        [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
        + [fmt.format(*r) for r in rows]
    )


def format_report(result: TournamentResult, *, markdown: bool = False) -> str:
    """The tables of a tournament: per pair, the score matrix, and Elo ratings.

    The matrix reads "row agent's score vs column agent, first/second (%)".

    >>> from jungle_core import DARK
    >>> t = round_robin(DARK, ["greedy", "random"], 2, workers=1)
    >>> print(format_report(t))  # doctest: +ELLIPSIS
    Pairs (A's results)
    A       B       games  W-D-L (A) ...
    """
    specs = result.specs
    pair_header = [
        "A",
        "B",
        "games",
        "W-D-L (A)",
        "score A",
        "A first",
        "A second",
        "plies",
        "A ms mean/p95",
        "B ms mean/p95",
    ]
    pair_table = []
    for row in pair_rows(result):
        pair_table.append(
            [
                row["a"],
                row["b"],
                str(row["games"]),
                f"{row['wins']}-{row['draws']}-{row['losses']}",
                f"{row['score']:.3f}",
                _pct(row["score_first"]),
                _pct(row["score_second"]),
                f"{row['mean_plies']:.0f}",
                f"{_ms(row['latency_a_mean_s'])}/{_ms(row['latency_a_p95_s'])}",
                f"{_ms(row['latency_b_mean_s'])}/{_ms(row['latency_b_p95_s'])}",
            ]
        )
    matrix = []
    for a in specs:
        cells = [a]
        for b in specs:
            pr = result.pairs.get((a, b))
            cells.append("" if pr is None else f"{_pct(pr.score_first)}/{_pct(pr.score_second)}")
        matrix.append(cells)
    elo = sorted(result.ratings.items(), key=lambda kv: -kv[1].rating)
    elo_rows = [
        [
            spec,
            f"{r.rating:+.0f}",
            f"±{r.ci:.0f}",
            _ms(result.latency.get(spec, (math.nan, math.nan))[0]),
            _ms(result.latency.get(spec, (math.nan, math.nan))[1]),
        ]
        for spec, r in elo
    ]
    title = "#### " if markdown else ""
    parts = [
        f"{title}Pairs (A's results)",
        _table(pair_header, pair_table, markdown),
        "",
        f"{title}Row agent's score vs column agent, first/second (%)",
        _table(["", *specs], matrix, markdown),
        "",
        f"{title}Elo (maximum likelihood, 95 % interval)",
        _table(["agent", "Elo", "95 %", "ms mean", "ms p95"], elo_rows, markdown),
    ]
    return "\n".join(parts)


def write_csv(result: TournamentResult, path: str | os.PathLike[str]) -> None:
    """Write the per-pair rows (:func:`pair_rows`) as CSV, atomically.

    >>> import tempfile, os
    >>> from jungle_core import DARK
    >>> t = round_robin(DARK, ["greedy", "random"], 2, workers=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_csv(t, os.path.join(d, "r.csv"))
    ...     write_markdown(t, os.path.join(d, "r.md"))
    ...     plot_heatmap(t, os.path.join(d, "h.png"))
    ...     open(os.path.join(d, "r.csv")).readline().split(",")[:3]
    ['a', 'b', 'games']
    """
    import csv
    import io

    rows = pair_rows(result)
    buf = io.StringIO()
    columns = list(rows[0]) if rows else ["a", "b", "games"]
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, buf.getvalue().encode())


def write_markdown(result: TournamentResult, path: str | os.PathLike[str]) -> None:
    """Write :func:`format_report` as Markdown, atomically."""
    atomic_write(path, (format_report(result, markdown=True) + "\n").encode())


def plot_heatmap(result: TournamentResult, path: str | os.PathLike[str]) -> None:
    """A PNG heat map of the pairwise scores (row agent vs column agent), atomically."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = result.specs
    k = len(specs)
    grid = np.full((k, k), np.nan)
    for i, a in enumerate(specs):
        for j, b in enumerate(specs):
            pr = result.pairs.get((a, b))
            if pr is not None:
                grid[i, j] = pr.score
    fig, ax = plt.subplots(figsize=(2.0 + 1.1 * k, 1.5 + 0.9 * k))
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(k), specs, rotation=30, ha="right")
    ax.set_yticks(range(k), specs)
    for i in range(k):
        for j in range(k):
            if not math.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=9)
    ax.set_title(f"score of row vs column ({result.rules.name if result.rules else ''})")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
