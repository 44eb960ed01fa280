"""Where a DARK match is decided: an agent's results by its piece lead at two moments.

For each game of an arena games file in which the agent under test played, the lead is
its piece count minus the opponent's (face up or down, :func:`piece_counts`)

- when the last face-down piece turns face up (the end of the chance phase; a game that
  ends first counts under ``-``), and
- when six or fewer pieces remain (``-`` if never),

and the script prints the agent's W-D-L for each lead and the mean lead over the games
that reached the moment (:func:`mean_lead`), plus who made the last move of each game
drawn by elimination (the last pieces removed together). If the draws sit at leads of
zero and below, they were saved, not missed wins: the points were lost while pieces
were still face down.

It also sorts the drawn games by what their last position holds (:func:`draw_end`): the
last two pieces removed together; an enemy piece that none of the agent's pieces can
take or trade with (the agent could no longer win, whatever the count said); one piece
against one; pieces still face down; anything else. In the first two the agent could no
longer win, so their points were lost earlier, when the pieces that could remove the
enemy's were traded away.

Then who ended the agent's means to win (:func:`can_still_win`: every enemy piece
removable, and more pieces or one that takes and survives), by its own move or by the
opponent's, with the lead before that move, or whether it kept them to the end: on the
default ``azero``'s 1,000 games against minimax depth 3, 65 of its 235 draws were ended
by its own move (40 of them from one piece behind) and 104 by the opponent's (61 from
a level count), and 66 kept the means to the end. A second table does the same by a
sharper test that counts the trades (``can_still_win(..., trades=True)``: each enemy
piece none of the agent's takes can only be traded with, which costs a piece): on
``azero:endgame=4,dead_draw=0.1,draw_bounds=1``'s 200 seed-11 games, 1 of its 23 draws
was ended by its own move, 15 by the opponent's, and 7 kept the means to the end (the
first test: 6, 8 and 9).

Of the draws in which the agent kept its means to the end, the no-removal draws are
then sorted by the exact four-piece tables (:func:`kept_draws`; ``--tables 0`` skips
them): the tables' value for the agent where the last quiet run enters them, or beyond
the tables (more pieces, or one face down). On that agent's 400 fresh deals (seeds 11
and 12) it kept its means in 19 no-removal draws: 12 table draws, 4 table losses the
opponent did not convert, no table win, and 3 beyond the tables, the only ones a knob
that presses the side ahead could still have won. Against Greedy (100 games) all 36 of
its draws were beyond the tables.

Last, what each side did while pieces were face down (:func:`chance_actions`): per game,
its reveals, bumps (a move onto a face-down piece), attacks on face-up pieces and quiet
moves, each with the change of the mover's piece lead over the next three plies (its
move, the reply, its next move), and how often it had a bump to play and took one. On
the default ``azero``'s 600 games against minimax depth 3 (seeds 7, 8, 9): the agent
bumps 1.80 times a game (+0.28 pieces over three plies), minimax 3.40 (+0.30); the
agent had a bump to play at 42 % of its decisions and took one at 12 % of those,
minimax 64 % and 14 %; reveals cost either side −0.02. The last figures of each line: the
side's face-up pieces a decision and the share of them beside a face-down piece (the
agent 2.72 and 23 %, minimax 3.29 and 30 %).

    .venv/bin/python experiments/anatomy.py results/azero-vs-mm3.jsonl \\
        --agent azero:simulations=1024

``--agent`` defaults to the first player of the file's first pair.

The functions named here are :mod:`jungle_agents.arena`'s (the computations, for any
games file); this script prints their tables.
"""

from __future__ import annotations

import argparse
import collections

from jungle_agents.arena import (
    ACTION_KINDS,
    DRAW_ENDS,
    KEPT_DRAWS,
    Anatomy,
    ChanceActions,
    chance_actions,
    game_anatomy,
    kept_draws,
    load_games,
    mean_lead,
)
from jungle_agents.endgame import EndgameTables


def format_kept_draws(kinds: collections.Counter[str], pieces: int = 4) -> str:
    """:func:`jungle_agents.arena.kept_draws` as two lines: a title, then the count of
    each kind.

    >>> import collections
    >>> print(format_kept_draws(collections.Counter({"draw": 3, "beyond the tables": 1})))
    no-removal draws with the means to win kept, by the 4-piece tables' value for the agent:
      draw 3, loss 0, win 0, beyond the tables 1
    """
    shown = ", ".join(f"{k} {kinds[k]}" for k in KEPT_DRAWS)
    title = f"no-removal draws with the means to win kept, by the {pieces}-piece tables'"
    return f"{title} value for the agent:\n  {shown}"


def format_chance_actions(sides: ChanceActions) -> str:
    """:func:`jungle_agents.arena.chance_actions` per game and per decision, one line per side."""
    lines = ["while pieces are face down, per game (lead change over three plies):"]
    for name, side in sides.items():
        games, available = max(side["games"], 1), max(side["bump available"], 1)
        kinds = ", ".join(
            f"{k} {side[k] / games:.2f} ({side[f'{k} lead'] / max(side[k], 1):+.3f})"
            for k in ACTION_KINDS
        )
        decisions = max(side["decisions"], 1)
        lines.append(
            f"  {name:<8} {kinds}; a bump available at "
            f"{side['bump available'] / decisions:.0%} of its decisions, "
            f"taken at {side['bump taken'] / available:.0%} of those; "
            f"{side['face up'] / decisions:.2f} face-up pieces a decision, "
            f"{side['beside face down'] / max(side['face up'], 1):.0%} of them beside a "
            "face-down piece"
        )
    return "\n".join(lines)


def format_tallies(tallies: Anatomy) -> str:
    """The two lead tables (W-D-L per lead), the last movers of elimination draws and
    what the draws end in."""
    lines = []
    for moment, title in (
        ("face_up", "when the last piece turns face up"),
        ("six", "at six pieces"),
    ):
        counts = tallies[moment]
        lines.append(f"lead {title}: W-D-L")
        leads = sorted({lead for lead, _ in counts}, key=lambda x: (x is None, x or 0))
        for lead in leads:
            w, d, lost = (counts[(lead, r)] for r in "WDL")
            shown = "-" if lead is None else f"{lead:+d}"
            lines.append(f"  {shown:>3}  {w}-{d}-{lost}")
        mean, reached = mean_lead(counts)
        lines.append(
            f"  mean lead {'-' if mean is None else f'{mean:+.2f}'} over the {reached} games "
            "that reached it"
        )
    movers = tallies["elimination_draws"]
    lines.append(
        f"draws by elimination, last move by the agent {movers[(None, 'agent')]}, "
        f"by the opponent {movers[(None, 'opponent')]}"
    )
    ends = tallies["draw_ends"]
    lines.append("draws ending in: " + ", ".join(f"{k} {ends[(None, k)]}" for k in DRAW_ENDS))
    for key, test in (("means", "can_still_win"), ("means_trades", "counting the trades")):
        lines.append(f"the agent's means to win ({test}): W-D-L, and the lead before the move")
        lines.extend(_means_lines(tallies[key]))
    return "\n".join(lines)


def _means_lines(means: collections.Counter[tuple[int | None, str]]) -> list[str]:
    """One "means to win" table of :func:`format_tallies`: by whose move they ended, with
    the lead before it, or kept to the end."""
    lines = []
    for who, title in (("agent", "ended by its move"), ("opponent", "ended by the opponent's")):
        w, d, lost = (sum(n for (_, k), n in means.items() if k == f"{who} {r}") for r in "WDL")
        before: collections.Counter[int] = collections.Counter()
        for (lead, k), n in means.items():
            if k.startswith(who) and lead is not None:
                before[max(-2, min(2, lead))] += n
        bound = {-2: "<=", 2: ">="}
        shown = ", ".join(f"{bound.get(x, '')}{x:+d}: {before[x]}" for x in sorted(before))
        lines.append(f"  {title:<26} {w}-{d}-{lost} (lead {shown or '-'})")
    w, d, lost = (means[(None, f"kept {r}")] for r in "WDL")
    lines.append(f"  {'kept to the end':<26} {w}-{d}-{lost}")
    return lines


def main() -> None:
    """Read the games file and print the tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("games", nargs="+", help="arena games files (JSON Lines)")
    parser.add_argument("--agent", default="", help="the agent spec (default: the first)")
    parser.add_argument(
        "--tables", type=int, default=4, help="endgame tables' pieces for kept_draws (0: skip)"
    )
    args = parser.parse_args()
    games = [game for path in args.games for game in load_games(path)[1]]
    if not games:
        raise SystemExit(f"{' '.join(args.games)}: no games")
    agent = args.agent or games[0].pair[0]
    print(f"{agent}, {sum(agent in g.record.players for g in games)} games")
    print(format_tallies(game_anatomy(games, agent)))
    print(format_chance_actions(chance_actions(games, agent)))
    if args.tables:
        print(format_kept_draws(kept_draws(games, agent, EndgameTables(args.tables)), args.tables))


if __name__ == "__main__":
    main()
