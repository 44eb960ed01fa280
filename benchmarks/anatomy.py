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

It also sorts the drawn games by what their last position holds (:func:`draw_end`): the
last two pieces removed together; an enemy piece that none of the agent's pieces can
take or trade with (the agent could no longer win, whatever the count said); one piece
against one; pieces still face down; anything else. In the first two the agent could no
longer win, so their points were lost earlier, when the pieces that could remove the
enemy's were traded away.

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
from jungle_core import State
from jungle_core.lowlevel import NUM_CODES, BattleResult, tables

sys.path.insert(0, str(Path(__file__).resolve().parent))
from endgames import piece_counts  # a sibling script (benchmarks/ is not a package)

Tallies = dict[str, collections.Counter[tuple[int | None, str]]]

DRAW_ENDS = ("removed together", "no remover", "one against one", "face down", "other")
""":func:`draw_end`'s kinds, in the order it tests them."""


def draw_end(state: State, seat: int, reason: str) -> str:
    """What a drawn DARK game's last position ``state`` holds, for the player in ``seat``:
    ``"removed together"`` (drawn by elimination: the last pieces traded off),
    ``"no remover"`` (an enemy piece in the game, face up or down, that none of
    ``seat``'s can take or trade with by the battle table), ``"one against one"``,
    ``"face down"`` (pieces still face down), else ``"other"``.

    >>> from jungle_core import from_fen
    >>> draw_end(from_fen("8/8/8/8/8/8/TR3l2 0 0 0 - -"), 0, "no_removal_limit")  # T, R / L
    'no remover'
    >>> draw_end(from_fen("8/8/8/8/8/8/T4w2 0 0 0 - -"), 0, "no_removal_limit")
    'one against one'
    """
    if reason == "elimination":
        return "removed together"
    battle = tables(state.rules).battle
    held = [i for i in range(16) if state.in_play >> i & 1]
    mine = [i for i in held if i >> 3 == seat]
    theirs = [i for i in held if i >> 3 != seat]
    removes = (BattleResult.TAKE, BattleResult.BOTH)
    if any(all(battle[(i + 1) * NUM_CODES + j + 1] not in removes for i in mine) for j in theirs):
        return "no remover"
    if len(mine) == len(theirs) == 1:
        return "one against one"
    if state.face_down_mask:
        return "face down"
    return "other"


def anatomy(games: Iterable[GameResult], agent: str) -> Tallies:
    """Per moment (``"face_up"``, ``"six"``, ``"elimination_draws"``, ``"draw_ends"``),
    counts keyed by ``(lead, result)`` (result ``W``/``D``/``L`` from ``agent``'s side;
    lead None where the moment never came), for the elimination draws
    ``(None, "agent"|"opponent")``: who moved last, and for every draw
    ``(None, draw_end(...))``.

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
        "draw_ends": collections.Counter(),
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
        if result == "D":
            tallies["draw_ends"][(None, draw_end(states[-1], seat, game.record.reason))] += 1
    return tallies


def format_tallies(tallies: Tallies) -> str:
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
    movers = tallies["elimination_draws"]
    lines.append(
        f"draws by elimination, last move by the agent {movers[(None, 'agent')]}, "
        f"by the opponent {movers[(None, 'opponent')]}"
    )
    ends = tallies["draw_ends"]
    lines.append("draws ending in: " + ", ".join(f"{k} {ends[(None, k)]}" for k in DRAW_ENDS))
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
