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

import os
from collections.abc import Callable, Sequence
from typing import Any

from jungle_agents._base import make_agent
from jungle_agents._game_loop import check_run_arguments, moves_text, play_game, replay
from jungle_agents._ray import run_ray
from jungle_agents._records import (
    GameRecord,
    GameResult,
    RecordError,
    decode_json,
    load_record,
    rules_from_json,
    rules_to_json,
    save_record,
)
from jungle_agents._reports import format_report, pair_rows, plot_heatmap, write_csv, write_markdown
from jungle_agents._schedule import (
    ProcessPool,
    Task,
    game_seed,
    import_plugins,
    run_bounded,
    run_task,
)
from jungle_agents._stats import EloRating, PairResult, Tally, TournamentResult, fit_elo, summarize
from jungle_agents._store import (
    GamesFile,
    iter_resumable_games,
    load_games,
    open_run,
    resumable_games,
    run_header,
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
    "game_seed",
    "import_plugins",
    "iter_resumable_games",
    "load_games",
    "load_record",
    "moves_text",
    "pair_rows",
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


Progress = Callable[[int, int, GameResult], None]
"""``progress(games done, games in all, the game just finished)``."""


def _pairs_of(specs: Sequence[str]) -> list[tuple[str, str]]:
    return [(specs[i], specs[j]) for i in range(len(specs)) for j in range(i + 1, len(specs))]


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
    header = run_header(rules, seed, max_plies)
    tally = Tally(specs)
    kept: list[GameResult] = []
    # the games found in the file, as indices per pair: about 60 bytes a game, not the game
    done: dict[tuple[str, str], set[int]] = {pair: set() for pair in pairs}
    games_file = None
    if out is not None:
        has_header, previous = open_run(out, header)
        for game in previous:
            indices = done.get(game.pair)
            if indices is None or game.index >= games_per_pair or game.index in indices:
                continue  # another run's pair or index, or a repeat: the first one counts
            indices.add(game.index)
            tally.add(game)
            if keep_games:
                kept.append(game)
        games_file = GamesFile(out, header, has_header)
    total = len(pairs) * games_per_pair
    count = total - tally.games
    tasks = (
        Task(rules, (a, b), i, game_seed(seed, a, b, i), max_plies)
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
            run_ray(tasks, finished, workers, plugins)
        elif backend != "process":
            raise JungleError(f"backend must be 'process' or 'ray', not {backend!r}")
        elif (workers or os.cpu_count() or 1) <= 1 or count <= 1:
            for task in tasks:
                finished(run_task(task))
        else:
            size = min(workers or os.cpu_count() or 1, count)
            with ProcessPool(size, plugins) as pool:
                run_bounded(tasks, pool, size, finished)
    finally:
        if games_file is not None:
            games_file.close()
    kept.sort(key=lambda g: (pairs.index(g.pair), g.index))
    return tally.result(kept)


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
