"""Matches and round robins: every game of a run, played once, written once, tallied.

:func:`play_match` (A against B) and :func:`round_robin` (every pair of a list of specs)
take the same keywords (:class:`RunKeywords`) and run through one function with one
:class:`RunOptions` value. A run checks its arguments and its agents here, in the parent;
keeps the games its ``out`` file already holds (:mod:`jungle_agents.arena._store`); plays the
others in this process, on worker processes or on Ray (:mod:`jungle_agents.arena._schedule`,
:mod:`jungle_agents.arena._ray`); appends each to the file as it finishes; and tallies the
summary as it goes (:class:`jungle_agents.arena._stats.Tally`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypedDict, Unpack

import attrs

from jungle_agents._base import make_agent
from jungle_agents.arena._game_loop import DEALS, check_run_arguments
from jungle_agents.arena._ray import run_ray
from jungle_agents.arena._records import GameResult
from jungle_agents.arena._schedule import (
    ProcessPool,
    Task,
    agent,
    game_seed,
    import_plugins,
    run_bounded,
    run_task,
)
from jungle_agents.arena._stats import PairResult, Tally, TournamentResult
from jungle_agents.arena._store import GamesFile, open_run, run_header
from jungle_core import JungleError, Rules

__all__ = ["Progress", "RunKeywords", "RunOptions", "play_match", "round_robin"]

Progress = Callable[[int, int, GameResult], None]
"""``progress(games done, games in all, the game just finished)``."""


class RunKeywords(TypedDict, total=False):
    """The keywords :func:`play_match` and :func:`round_robin` share, each optional; what
    each means and its default: the field of the same name of :class:`RunOptions`."""

    out: str | os.PathLike[str] | None
    progress: Progress | None
    max_plies: int | None
    backend: str
    ray_address: str | None
    plugins: Sequence[str]
    deals: str
    openings: int


def _names(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(names)


@attrs.frozen(kw_only=True)
class RunOptions:
    """How a run plays its games: everything but the rules, the agents and the number of
    games.

    >>> RunOptions(seed=3).backend
    'process'
    >>> set(RunKeywords.__annotations__) <= set(attrs.fields_dict(RunOptions))
    True
    """

    seed: int = 0
    """The run's seed: game ``i`` of ``(A, B)`` is seeded ``game_seed(seed, A, B, i)``."""
    workers: int | None = None
    """Processes playing in parallel (default: all cores; 1 plays in this process), or
    with ``backend="ray"`` the cap on Ray tasks (default: the cluster's CPUs)."""
    out: str | os.PathLike[str] | None = None
    """A JSON Lines games file: each finished game is appended (fsynced), and a rerun
    resumes: the games already in it are not played again (and count in the result)."""
    progress: Progress | None = None
    """Called as each game finishes: ``progress(games done, games in all, the game)`` (the
    games found in ``out`` count as done)."""
    max_plies: int | None = None
    """Stop a game after this many plies (recorded ``"unfinished"``, a draw)."""
    backend: str = "process"
    """``"process"`` (worker processes of this machine) or ``"ray"`` (the ``ray`` extra)."""
    ray_address: str | None = None
    """With ``backend="ray"``, the cluster to run on (``HOST:PORT``, ``ray://HOST:PORT``
    or ``auto``); default: the one ``RAY_ADDRESS`` names, else a local instance."""
    plugins: tuple[str, ...] = attrs.field(default=(), converter=_names)
    """Modules each worker (and this process) imports first: they register agent kinds."""
    keep_games: bool = True
    """Return the games too (``result.games``), not only the summary."""
    deals: str = "independent"
    """How chance is dealt (:data:`jungle_agents.arena._game_loop.DEALS`): ``"duplicate"`` deals
    each game's hidden pieces at its start from a seed shared by every pair, so that runs
    of one seed with different agents play game ``i`` from the same hidden layout (a
    paired comparison: :func:`jungle_agents.arena.compare_runs`). Written in the games
    file's header; a run resumes only a file of the same ``deals``."""
    openings: int = 0
    """Start each game after this many uniformly random plies (0..64; 0: from the start),
    so that deterministic agents do not play one game over and over. Games ``2k`` and
    ``2k + 1`` of a pair, the same agents with the colours swapped, start from the same
    opening (seeded ``game_seed(seed, A, B, 2k, deals)``): each opening is played once
    with each colour. Written in the games file's header when not 0; a run resumes only a
    file of the same ``openings``."""


def _pairs_of(specs: Sequence[str]) -> list[tuple[str, str]]:
    return [(specs[i], specs[j]) for i in range(len(specs)) for j in range(i + 1, len(specs))]


def _run(
    rules: Rules, specs: Sequence[str], games_per_pair: int, options: RunOptions
) -> TournamentResult:
    """Play (or find in ``options.out``) every game of every pair of ``specs``; the summary
    is tallied as each game is found or finishes, and the games are kept only when asked."""
    seed, workers, max_plies = options.seed, options.workers, options.max_plies
    openings = options.openings
    check_run_arguments(games_per_pair, seed, workers, max_plies, openings)
    if options.deals not in DEALS:
        raise JungleError(f"deals must be one of {DEALS}, not {options.deals!r}")
    import_plugins(options.plugins)  # they register agent kinds, here and in workers
    pairs = _pairs_of(specs)
    for a, b in pairs:
        if a == b:
            raise JungleError(f"agent spec {a!r} is listed twice")
    header = run_header(rules, seed, max_plies, options.deals, openings)
    tally = Tally(specs)
    kept: list[GameResult] = []
    # the games found in the file, as indices per pair: about 60 bytes a game, not the game
    done: dict[tuple[str, str], set[int]] = {pair: set() for pair in pairs}
    games_file = None
    if options.out is not None:
        has_header, previous = open_run(options.out, header)
        for game in previous:
            indices = done.get(game.pair)
            if indices is None or game.index >= games_per_pair or game.index in indices:
                continue  # another run's pair or index, or a repeat: the first one counts
            indices.add(game.index)
            tally.add(game)
            if options.keep_games:
                kept.append(game)
    total = len(pairs) * games_per_pair
    count = total - tally.games
    in_process = options.backend == "process" and (
        (workers or os.cpu_count() or 1) <= 1 or count <= 1
    )
    if count:
        # bad specs fail here, before the games file is written and not in a worker; the
        # games played here reuse these agents (the process's cache), workers make their own
        for spec in specs:
            agent(rules, spec) if in_process else make_agent(spec, rules)
    # else: every game is in the file (so were the specs): report without building agents
    if options.out is not None:
        games_file = GamesFile(options.out, header, has_header)
    tasks = (
        Task(
            rules,
            (a, b),
            i,
            game_seed(seed, a, b, i, options.deals),
            max_plies,
            options.deals,
            openings,
            # games 2k and 2k + 1 (colours swapped) share their opening
            game_seed(seed, a, b, i - i % 2, options.deals) if openings else None,
        )
        for a, b in pairs
        for i in range(games_per_pair)
        if i not in done[(a, b)]
    )

    def finished(entry: dict[str, Any]) -> None:
        game = GameResult.from_json(entry)
        if games_file is not None:
            games_file.append(entry)
        tally.add(game)
        if options.keep_games:
            kept.append(game)
        if options.progress is not None:
            options.progress(tally.games, total, game)

    try:
        if options.backend == "ray":
            run_ray(tasks, finished, workers, options.plugins, options.ray_address)
        elif options.backend != "process":
            raise JungleError(f"backend must be 'process' or 'ray', not {options.backend!r}")
        elif in_process:
            for task in tasks:
                finished(run_task(task))
        else:
            size = min(workers or os.cpu_count() or 1, count)
            with ProcessPool(size, options.plugins) as pool:
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
    **options: Unpack[RunKeywords],
) -> PairResult:
    """Play ``games`` games between agent specs ``a`` and ``b``, A first in the even-numbered
    games (half of them), and return A's results.

    ``workers`` processes play in parallel (default: all cores; 1 plays in this process).
    The keywords (:class:`RunKeywords`): with ``out``, each finished game is appended to
    that JSON Lines file (fsynced), and a rerun resumes: games already in the file are not
    played again (and count in the result). ``progress(done, total, game)`` follows the
    run; ``max_plies`` stops long games; ``backend="ray"`` runs the games as Ray tasks;
    ``plugins`` are module names each worker imports first (to register more agent
    kinds); ``deals="duplicate"`` deals every pair's game ``i`` from the same hidden
    layout (:attr:`RunOptions.deals`); ``openings=K`` starts each game after ``K`` random
    plies, each opening played once with each colour (:attr:`RunOptions.openings`). The
    result is tallied as the games finish, in memory that does not grow with their number
    (:class:`Tally`: the latency p95 within 0.1 %); no game is kept.

    >>> from jungle_core import CLASSIC
    >>> r = play_match(CLASSIC, "greedy", "random", 2, workers=1, max_plies=8, openings=2)
    >>> r.games
    2

    >>> from jungle_core import DARK
    >>> r = play_match(DARK, "greedy", "random", 2, seed=1, workers=1)
    >>> r.games, r.wins + r.draws + r.losses
    (2, 2)
    """
    run = RunOptions(seed=seed, workers=workers, keep_games=False, **options)
    return _run(rules, [a, b], games, run).pairs[(a, b)]


def round_robin(
    rules: Rules,
    specs: Sequence[str],
    games_per_pair: int = 200,
    seed: int = 0,
    workers: int | None = None,
    *,
    keep_games: bool = True,
    **options: Unpack[RunKeywords],
) -> TournamentResult:
    """Play every pair of ``specs`` ``games_per_pair`` times (half with each first).

    As :func:`play_match` for ``workers`` and the keywords (``out`` resumes);
    ``backend="ray"`` runs the games as Ray tasks (the ``ray`` extra; ``workers`` then
    caps the tasks in flight).

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
    run = RunOptions(seed=seed, workers=workers, keep_games=keep_games, **options)
    return _run(rules, specs, games_per_pair, run)
