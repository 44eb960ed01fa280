"""Where a DARK match is decided: an agent's results by its piece lead at two moments.

For each game of an arena games file in which the agent under test played, the lead is
its piece count minus the opponent's (face up or down, :func:`endgames.piece_counts`)

- when the last face-down piece turns face up (the end of the chance phase; a game that
  ends first counts under ``-``), and
- when six or fewer pieces remain (``-`` if never),

and the script prints the agent's W-D-L for each lead, plus who made the last move of
each game drawn by elimination (the last pieces removed together). If the draws sit at
leads of zero and below, they were saved, not missed wins: the points were lost while
pieces were still face down.

    .venv/bin/python benchmarks/anatomy.py results/azero-vs-mm3.jsonl --agent azero:simulations=1024

``--agent`` defaults to the first player of the file's first pair.
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Iterable
from pathlib import Path

from jungle_agents.arena import GameResult, load_games, replay

sys.path.insert(0, str(Path(__file__).resolve().parent))
from endgames import piece_counts  # a sibling script (benchmarks/ is not a package)

Tallies = dict[str, collections.Counter[tuple[int | None, str]]]


def anatomy(games: Iterable[GameResult], agent: str) -> Tallies:
    """Per moment (``"face_up"``, ``"six"``, ``"elimination_draws"``), counts keyed by
    ``(lead, result)`` (result ``W``/``D``/``L`` from ``agent``'s side; lead None where
    the moment never came), and for the elimination draws ``(None, "agent"|"opponent")``:
    who moved last.

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import play_match, load_games
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.jsonl")
    >>> _ = play_match(DARK, "greedy", "random", 2, seed=1, workers=1, out=path)
    >>> t = anatomy(load_games(path)[1], "greedy")
    >>> sum(t["face_up"].values()), sum(t["six"].values())
    (2, 2)
    """
    tallies: Tallies = {
        "face_up": collections.Counter(),
        "six": collections.Counter(),
        "elimination_draws": collections.Counter(),
    }
    for game in games:
        players = game.record.players
        if agent not in players:
            continue
        seat = players.index(agent)
        winner = game.record.winner
        result = "D" if winner is None else "W" if winner == seat else "L"
        states = replay(game.record)
        face_up: int | None = None
        six: int | None = None
        for state in states:
            counts = piece_counts(state)
            lead = counts[seat] - counts[1 - seat]
            if face_up is None and not state.face_down_mask:
                face_up = lead
            if six is None and counts[0] + counts[1] <= 6:
                six = lead
        tallies["face_up"][(face_up, result)] += 1
        tallies["six"][(six, result)] += 1
        if result == "D" and game.record.reason == "elimination" and len(states) > 1:
            mover = states[-2].to_move
            tallies["elimination_draws"][(None, "agent" if mover == seat else "opponent")] += 1
    return tallies


def format_tallies(tallies: Tallies) -> str:
    """The two lead tables (W-D-L per lead) and the last movers of elimination draws."""
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
    movers = tallies["elimination_draws"]
    lines.append(
        f"draws by elimination, last move by the agent {movers[(None, 'agent')]}, "
        f"by the opponent {movers[(None, 'opponent')]}"
    )
    return "\n".join(lines)


def main() -> None:
    """Read the games file and print the tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("games", help="arena games file (JSON Lines)")
    parser.add_argument("--agent", default="", help="the agent spec (default: the first)")
    args = parser.parse_args()
    _, games = load_games(args.games)
    if not games:
        raise SystemExit(f"{args.games}: no games")
    agent = args.agent or games[0].pair[0]
    print(f"{agent}, {sum(agent in g.record.players for g in games)} games")
    print(format_tallies(anatomy(games, agent)))


if __name__ == "__main__":
    main()
