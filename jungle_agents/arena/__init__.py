"""The arena: games, matches and round-robin tournaments between agents (docs/arena.md).

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
  :func:`write_markdown` and :func:`plot_heatmap` present them; :func:`load_runs` reads
  several games files as one set (one Elo list over matches played apart).
- :func:`compare_runs` sets one run's A against another's (a screen against its
  baseline): game by game where the runs share their deals (``deals="duplicate"`` and
  one seed), else by the means, with a 95 % interval.
- :func:`game_anatomy`, :func:`chance_actions` and :func:`kept_draws` read where one
  agent's DARK games were decided (its piece lead at two moments, how its draws end,
  the move that ended its means to win: :func:`can_still_win`, :func:`draw_end`).
- A match or tournament builds that summary as the games finish (:class:`Tally`: counts,
  sums and a log-binned histogram of decision times, so the p95 is within 0.1 %), and
  reads a games file it resumes one line at a time: its memory does not grow with the
  number of games. ``round_robin(..., keep_games=False)`` returns no games at all (the
  command line's choice); the default keeps them, as before.

Every game of a match or tournament is seeded from ``(seed, agent A, agent B, game
index)``, so a run replays exactly (timed searches aside) and a resumed run plays the very
games the interrupted one would have played. With ``deals="duplicate"`` the seed is
``(seed, game index)`` alone and each game's hidden pieces are dealt to their squares at
its start, so runs of one seed with other agents play the same deals. With
``openings=K`` each game starts after ``K`` uniformly random plies (no agent's decision;
the record's ``opening`` counts them), games ``2k`` and ``2k + 1`` of a pair from the same
opening, one with each colour, so that deterministic agents do not play one game over and
over.

This module is the arena's public face; each job lives in a private module:

=================================  =======================================================
:mod:`jungle_agents.arena._records`      the record and the games-file entry, their JSON read
                                   strictly, saving and loading a record, atomic writes
:mod:`jungle_agents.arena._game_loop`    playing one game, replaying a record, its move texts
:mod:`jungle_agents.arena._store`        the JSON Lines games file: reading, resuming, appending
:mod:`jungle_agents.arena._schedule`     tasks, seeds, worker processes, the bounded loop
:mod:`jungle_agents.arena._ray`          the same loop on Ray tasks (the ``ray`` extra)
:mod:`jungle_agents.arena._matches`      matches and round robins, their shared keywords
:mod:`jungle_agents.arena._stats`        per-pair results, the running :class:`Tally`, Elo
:mod:`jungle_agents.arena._compare`      one run's A against another's, paired by deal
:mod:`jungle_agents.arena._reports`      tables, CSV, Markdown, the heat map
:mod:`jungle_agents.arena._anatomy`      where games were decided: leads, draws, means to win
=================================  =======================================================

>>> from jungle_core import DARK
>>> from jungle_agents import make_agent
>>> record = play_game(DARK, make_agent("random", DARK), make_agent("greedy", DARK), seed=3)
>>> record.winner in (0, 1, None), len(record.actions) == len(record.times)
(True, True)
>>> replay(record)[-1].ply == len(record.actions)
True
"""

from __future__ import annotations

from jungle_agents.arena._anatomy import (
    ACTION_KINDS,
    DRAW_ENDS,
    KEPT_DRAWS,
    Anatomy,
    ChanceActions,
    action_kind,
    can_still_win,
    chance_actions,
    draw_end,
    face_up_pieces,
    game_anatomy,
    kept_draws,
    mean_lead,
    piece_counts,
)
from jungle_agents.arena._compare import RunComparison, compare_runs, format_comparison
from jungle_agents.arena._game_loop import (
    DEALS,
    MAX_OPENINGS,
    deal_layout,
    moves_text,
    play_game,
    replay,
)
from jungle_agents.arena._matches import Progress, RunKeywords, play_match, round_robin
from jungle_agents.arena._records import (
    GameRecord,
    GameResult,
    RecordError,
    decode_json,
    load_record,
    rules_from_json,
    rules_to_json,
    save_record,
)
from jungle_agents.arena._reports import (
    format_report,
    pair_rows,
    plot_heatmap,
    write_csv,
    write_markdown,
)
from jungle_agents.arena._schedule import die_with_parent, game_seed, import_plugins
from jungle_agents.arena._stats import (
    EloRating,
    PairResult,
    Tally,
    TournamentResult,
    fit_elo,
    summarize,
)
from jungle_agents.arena._store import iter_resumable_games, load_games, load_runs, resumable_games

__all__ = [
    "ACTION_KINDS",
    "DEALS",
    "DRAW_ENDS",
    "KEPT_DRAWS",
    "MAX_OPENINGS",
    "Anatomy",
    "ChanceActions",
    "EloRating",
    "GameRecord",
    "GameResult",
    "PairResult",
    "Progress",
    "RecordError",
    "RunComparison",
    "RunKeywords",
    "Tally",
    "TournamentResult",
    "action_kind",
    "can_still_win",
    "chance_actions",
    "compare_runs",
    "deal_layout",
    "decode_json",
    "die_with_parent",
    "draw_end",
    "face_up_pieces",
    "fit_elo",
    "format_comparison",
    "format_report",
    "game_anatomy",
    "game_seed",
    "import_plugins",
    "iter_resumable_games",
    "kept_draws",
    "load_games",
    "load_record",
    "load_runs",
    "mean_lead",
    "moves_text",
    "pair_rows",
    "piece_counts",
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
