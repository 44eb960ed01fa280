"""A second opinion on an agent's decisions: how far each falls short of minimax's
best, by minimax's own values, and what the next plies brought.

For each decision of the agent under test in a DARK arena games file (two or more legal
actions), the Minimax agent's searcher for the agent's seat (its defaults, at ``--depth``
3) values every legal action with a full window
(:meth:`jungle_agents.Searcher.action_values`); the decision's *gap* is the best value
minus the value of the action played (0 where the agent chose one of minimax's best, in
the evaluation's points: a rank point is 10, a Rat 11, an Elephant 81). The script sorts
the decisions by gap, apart while some piece is face down and after, and prints for
each bucket how many there were and the agent's piece lead change over the next
``--plies`` plies (its move, the reply, its next move;
:func:`jungle_agents.arena.piece_counts`): the mean, and the shares of decisions after
which it lost, or gained, a piece or more. Then, by the game's result, how many games
held a decision with a gap of at least 15, 30 and 60; last, the decisions with a gap of
15 or more by the kind of the action played and of
minimax's best (:func:`jungle_agents.arena.action_kind`: reveal, bump, attack, quiet).

If the decisions minimax rates far below its best were blunders that a three-ply search
sees, the lead would fall after them. On the 200 seed-11 games of
``azero:endgame=4,dead_draw=0.1,draw_bounds=1`` against minimax depth 3 (16,925
decisions, 13 min on two processes) it falls less often after them than after the
agreed ones: while a piece is face down, a piece or more lost within three plies after
5.5 % of the agreed decisions and after 5.9 %, 3.1 % and 2.1 % of those 15 to 30, 30 to
60 and 60 or more points below minimax's best (most of those a quiet move where minimax
would reveal). A veto by minimax depth 3 would not have saved the points lost there
(experiments/azero-dark-log.md, section 6, "A second opinion by minimax depth 3").

    .venv/bin/python experiments/second_opinion.py --workers 2 \
        docs/games/azero-2048-vs-minimax3.jsonl

``--agent`` defaults to the first player of the file's first pair; ``--first N`` reads
the first N games only.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
from collections.abc import Iterable, Sequence

from jungle_agents import SearchConfig, Searcher
from jungle_agents.arena import (
    ACTION_KINDS,
    GameResult,
    action_kind,
    load_games,
    piece_counts,
    replay,
)
from jungle_core import DARK, legal_actions

Decision = tuple[int, bool, float, int, str, str]
"""One decision: ``(ply, some piece face down, gap, lead change over the next plies,
the kind of the action played, the kind of minimax's best)`` (kinds:
:func:`jungle_agents.arena.action_kind`)."""

GAPS = (0.0, 1e-6, 5.0, 15.0, 30.0, 60.0)
"""The lower ends of the gap buckets (the first holds only the agreed decisions)."""


def decisions(game: GameResult, agent: str, depth: int = 3, plies: int = 3) -> list[Decision]:
    """The agent's decisions in ``game`` with two or more legal actions (none if it did
    not play): ply, whether some piece was face down, the gap to minimax's best value at
    ``depth``, the agent's piece lead change over the next ``plies`` plies (to the
    game's end where it ends sooner), and the kinds (reveal, bump, attack, quiet) of the
    action played and of minimax's best (the first found of its best).

    >>> from jungle_agents.arena import load_games, play_match
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "g.jsonl")
    >>> _ = play_match(DARK, "minimax:depth=1", "random", 1, seed=3, workers=1, out=path)
    >>> rows = decisions(load_games(path)[1][0], "minimax:depth=1", depth=1)
    >>> all(row[2] <= 2 for row in rows)  # minimax agrees with itself, to its margin
    True
    """
    players = game.record.players
    if agent not in players:
        return []
    seat = players.index(agent)
    searcher = Searcher(DARK, seat, SearchConfig(depth=depth))
    states = replay(game.record)
    rows: list[Decision] = []
    for ply, state in enumerate(states[:-1]):
        if state.to_move != seat or len(legal_actions(state)) < 2:
            continue
        values = searcher.action_values(state, depth)
        played = game.record.actions[ply]
        best = max(values, key=values.__getitem__)
        gap = values[best] - values[played]
        before = piece_counts(state)
        after = piece_counts(states[min(ply + plies, len(states) - 1)])
        change = (after[seat] - after[1 - seat]) - (before[seat] - before[1 - seat])
        kinds = action_kind(state, played), action_kind(state, best)
        rows.append((ply, bool(state.face_down_mask), gap, change, *kinds))
    return rows


def _bucket(gap: float) -> int:
    """The index in :data:`GAPS` of the bucket that holds ``gap``."""
    return max(i for i, low in enumerate(GAPS) if gap >= low)


def _label(i: int) -> str:
    if i == 0:
        return "0 (agreed)"
    high = f"{GAPS[i + 1]:g}" if i + 1 < len(GAPS) else "..."
    return f"{GAPS[i]:g} to {high}" if i > 1 else f"0 to {high}"


def format_opinion(games: Iterable[tuple[str, Sequence[Decision]]], differ: float = 15.0) -> str:
    """The tables of the script from ``(result W/D/L, the game's decisions)`` pairs; the
    last sorts the decisions with a gap of ``differ`` or more by the kind of the action
    played and of minimax's best.

    >>> rows = [(0, True, 0.0, 1, "bump", "bump"), (2, False, 40.0, -1, "quiet", "attack")]
    >>> print(format_opinion([("W", rows)]))
    gap, decisions, the lead change over the next plies: mean, share <= -1, share >= +1
    while some piece is face down:
      0 (agreed)        1  +1.000  0.000  1.000
    after:
      30 to 60          1  -1.000  1.000  0.000
    games with a decision this far from minimax's best, by result: W-D-L with, W-D-L without
      gap >= 15   1-0-0 with, 0-0-0 without
      gap >= 30   1-0-0 with, 0-0-0 without
      gap >= 60   0-0-0 with, 1-0-0 without
    gap >= 15: the kind played, the kind of minimax's best, decisions, mean lead change
    while some piece is face down:
    after:
      quiet  attack       1  -1.000
    """
    games = list(games)
    lines = ["gap, decisions, the lead change over the next plies: mean, share <= -1, share >= +1"]
    phases = ((True, "while some piece is face down"), (False, "after"))
    for face_down, title in phases:
        tally: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
        for _, rows in games:
            for _, down, gap, change, _, _ in rows:
                if down == face_down:
                    t = tally[_bucket(gap)]
                    t[0] += 1
                    t[1] += change
                    t[2] += change <= -1
                    t[3] += change >= 1
        lines.append(f"{title}:")
        for i in sorted(tally):
            n, total, lost, gained = tally[i]
            lines.append(
                f"  {_label(i):<12} {n:>6}  {total / n:+.3f}  {lost / n:.3f}  {gained / n:.3f}"
            )
    lines.append(
        "games with a decision this far from minimax's best, by result: W-D-L with, W-D-L without"
    )
    for low in (15, 30, 60):
        count = collections.Counter((r, any(row[2] >= low for row in rows)) for r, rows in games)
        with_, without = ("-".join(str(count[(r, flag)]) for r in "WDL") for flag in (True, False))
        lines.append(f"  gap >= {low:<4} {with_} with, {without} without")
    lines.append(
        f"gap >= {differ:g}: the kind played, the kind of minimax's best, decisions, "
        "mean lead change"
    )
    order = {kind: i for i, kind in enumerate(ACTION_KINDS)}
    for face_down, title in phases:
        kinds: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
        for _, rows in games:
            for _, down, gap, change, played, best in rows:
                if down == face_down and gap >= differ:
                    kinds[(played, best)][0] += 1
                    kinds[(played, best)][1] += change
        lines.append(f"{title}:")
        for (played, best), (n, total) in sorted(
            kinds.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]])
        ):
            lines.append(f"  {played:<6} {best:<7} {n:>5}  {total / n:+.3f}")
    return "\n".join(lines)


def _result(game: GameResult, agent: str) -> str:
    """``W``, ``D`` or ``L``: ``agent``'s result in ``game``."""
    return "LDW"[int(2 * game.record.score(game.record.players.index(agent)))]


def _one(job: tuple[GameResult, str, int, int]) -> tuple[str, list[Decision]]:
    game, agent, depth, plies = job
    return _result(game, agent), decisions(game, agent, depth, plies)


def main() -> None:
    """Read the games files and print the tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("games", nargs="+", help="DARK arena games files (JSON Lines)")
    parser.add_argument("--agent", default="", help="the agent spec (default: the first)")
    parser.add_argument("--depth", type=int, default=3, help="minimax's depth (3)")
    parser.add_argument("--plies", type=int, default=3, help="plies the lead change spans (3)")
    parser.add_argument("--first", type=int, default=0, help="read the first N games (0: all)")
    parser.add_argument("--workers", type=int, default=1, help="processes (1)")
    args = parser.parse_args()
    games = [game for path in args.games for game in load_games(path)[1]]
    agent = args.agent or (games[0].pair[0] if games else "")
    games = [g for g in games if agent in g.record.players]
    if args.first:
        games = games[: args.first]
    if not games:
        raise SystemExit(f"{' '.join(args.games)}: no games of {agent or 'any agent'}")
    jobs = [(g, agent, args.depth, args.plies) for g in games]
    if args.workers > 1:
        with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
            results = pool.map(_one, jobs, chunksize=1)
    else:
        results = [_one(job) for job in jobs]
    n = sum(len(rows) for _, rows in results)
    print(f"{agent}: {len(games)} games, {n} decisions, minimax depth {args.depth}")
    print(format_opinion(results))


if __name__ == "__main__":
    main()
