"""Where a DARK match is decided: an agent's results by its piece lead at two moments.

For each game of an arena games file in which the agent under test played, the lead is
its piece count minus the opponent's (face up or down, :func:`endgames.piece_counts`)

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

    .venv/bin/python benchmarks/anatomy.py results/azero-vs-mm3.jsonl --agent azero:simulations=1024

``--agent`` defaults to the first player of the file's first pair.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import sys
from collections.abc import Iterable
from pathlib import Path

from jungle_agents.arena import GameResult, load_games, replay
from jungle_agents.endgame import EndgameTables
from jungle_core import State, legal_actions
from jungle_core.lowlevel import EMPTY, HIDDEN, NUM_CODES, BattleResult, tables

sys.path.insert(0, str(Path(__file__).resolve().parent))
from endgames import piece_counts  # a sibling script (benchmarks/ is not a package)

Tallies = dict[str, collections.Counter[tuple[int | None, str]]]

DRAW_ENDS = ("removed together", "no remover", "one against one", "face down", "other")
""":func:`draw_end`'s kinds, in the order it tests them."""


def battles(state: State, seat: int) -> tuple[int, int, list[list[int]]]:
    """``seat``'s pieces in the game and the enemy's (face up or down), and the battle
    table's result (:class:`BattleResult`) of each of ``seat``'s pieces attacking each
    enemy piece, a row a piece of ``seat``'s.

    >>> from jungle_core import from_fen
    >>> battles(from_fen("8/8/8/8/8/8/TR3l2 0 0 0 - -"), 0)  # T, R / L: both lose to it
    (2, 1, [[3], [3]])
    """
    battle = tables(state.rules).battle
    held = [i for i in range(16) if state.in_play >> i & 1]
    mine = [i for i in held if i >> 3 == seat]
    theirs = [i for i in held if i >> 3 != seat]
    rows = [[battle[(i + 1) * NUM_CODES + j + 1] for j in theirs] for i in mine]
    return len(mine), len(theirs), rows


def _covered(rows: list[list[int]], theirs: int) -> bool:
    """Whether every enemy piece (a column of :func:`battles`' rows) has one of ours that
    takes it or trades with it."""
    removes = (BattleResult.TAKE, BattleResult.BOTH)
    return all(any(row[k] in removes for row in rows) for k in range(theirs))


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
    mine, theirs, rows = battles(state, seat)
    if not _covered(rows, theirs):
        return "no remover"
    if mine == theirs == 1:
        return "one against one"
    if state.face_down_mask:
        return "face down"
    return "other"


def can_still_win(state: State, seat: int, trades: bool = False) -> bool:
    """Whether ``seat``'s material in ``state`` can still win a DARK game: it has a piece
    left, and either no enemy piece is left or every enemy piece in the game (face up or
    down) has one of ``seat``'s that can take it or trade with it by the battle table,
    and ``seat`` holds more pieces or one that takes an enemy piece and survives (else
    every removal it can make is an equal trade, and its last one takes its own last
    piece too). A necessary condition, not a sufficient one (a lone chaser also needs
    the parity); :func:`jungle_train.azero._hand_value.winning_material` is the same test on
    the JAX core, which ``azero:dead_draw`` reads.

    With ``trades``, the sharper test that counts them: each enemy piece that none of
    ``seat``'s takes (it can only be traded with, by the one piece of its rank) costs
    ``seat`` a piece, so ``seat`` must hold more pieces than there are such enemy pieces
    (take the others first, with pieces that survive, then trade). A lone Elephant
    against an Elephant and a Tiger takes the Tiger but must then trade its last piece.

    >>> from jungle_core import from_fen
    >>> can_still_win(from_fen("8/8/8/8/8/8/E3e3 0 0 0 - -"), 0)   # one Elephant each
    False
    >>> can_still_win(from_fen("8/8/8/8/8/8/EL2el2 0 0 0 - -"), 0)  # E takes the Lion
    True
    >>> can_still_win(from_fen("8/8/8/8/8/8/TL3e2 0 0 0 - -"), 0)   # nothing removes e
    False
    >>> e_v_et = from_fen("8/8/8/8/8/8/E3et2 0 0 0 - -")  # E takes t, then trades with e
    >>> can_still_win(e_v_et, 0), can_still_win(e_v_et, 0, trades=True)
    (True, False)
    """
    mine, theirs, rows = battles(state, seat)
    if not mine or not theirs:
        return bool(mine)
    if not _covered(rows, theirs):
        return False
    if trades:
        untaken = sum(all(row[k] != BattleResult.TAKE for row in rows) for k in range(theirs))
        return mine > untaken
    return mine > theirs or any(BattleResult.TAKE in row for row in rows)


def _means_ended(
    states: list[State], seat: int, result: str, trades: bool
) -> tuple[int | None, str]:
    """The first move of a replayed game after which ``seat``'s material could no longer
    win (:func:`can_still_win`): ``(lead before it, "agent RESULT"|"opponent RESULT")``
    by who made it, or ``(None, "kept RESULT")`` if none did."""
    for state, after in itertools.pairwise(states):
        if can_still_win(state, seat, trades) and not can_still_win(after, seat, trades):
            counts = piece_counts(state)
            who = "agent" if state.to_move == seat else "opponent"
            return counts[seat] - counts[1 - seat], f"{who} {result}"
    return None, f"kept {result}"


def anatomy(games: Iterable[GameResult], agent: str) -> Tallies:
    """Per moment (``"face_up"``, ``"six"``, ``"elimination_draws"``, ``"draw_ends"``),
    counts keyed by ``(lead, result)`` (result ``W``/``D``/``L`` from ``agent``'s side;
    lead None where the moment never came), for the elimination draws
    ``(None, "agent"|"opponent")``: who moved last, for every draw
    ``(None, draw_end(...))``, and for every game (``"means"``) whose move ended the
    agent's means to win (:func:`can_still_win`): ``(lead before it, "agent RESULT"|
    "opponent RESULT")``, or ``(None, "kept RESULT")`` if none did; ``"means_trades"``
    the same by the sharper test that counts the trades (``can_still_win(...,
    trades=True)``).

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
        "means": collections.Counter(),
        "means_trades": collections.Counter(),
    }
    for game in games:
        players = game.record.players
        if agent not in players:
            continue
        seat = players.index(agent)
        result = "LDW"[int(2 * game.record.score(seat))]
        states = replay(game.record)
        face_up: int | None = None
        six: int | None = None
        for key, trades in (("means", False), ("means_trades", True)):
            tallies[key][_means_ended(states, seat, result, trades)] += 1
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


KEPT_DRAWS = ("draw", "loss", "win", "beyond the tables")
""":func:`kept_draws`' kinds: the four-piece tables' value for the agent, or none."""


def kept_draws(
    games: Iterable[GameResult], agent: str, tables: EndgameTables
) -> collections.Counter[str]:
    """The agent's no-removal draws in which it kept its means to win to the end (no
    move ended them, :func:`can_still_win`), by what ``tables`` make of their last run of
    quiet plies: where the position before the last move is one they cover, the exact
    value for the agent (``"draw"``, ``"loss"``, ``"win"``) of the first position of
    that run they cover (material does not change in it; a piece turned face up can
    bring it into the tables), else ``"beyond the tables"`` (more pieces, or one still
    face down). Draws there are the only ones a knob that presses the side ahead to
    convert could still win; a ``"win"`` would be one the agent let go.

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import load_games, play_match
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "g.jsonl")
    >>> _ = play_match(DARK, "greedy", "random", 2, seed=2, workers=1, out=path)
    >>> kept_draws(load_games(path)[1], "greedy", EndgameTables(4))
    Counter({'beyond the tables': 1})
    """
    kinds: collections.Counter[str] = collections.Counter()
    for game in games:
        players = game.record.players
        if agent not in players or game.record.reason != "no_removal_limit":
            continue
        seat = players.index(agent)
        states = replay(game.record)
        if _means_ended(states, seat, "D", False) != (None, "kept D"):
            continue
        if not tables.covers(states[-2]):
            kinds["beyond the tables"] += 1
            continue
        run = states[-1 - states[-1].plies_since_removal : -1]
        first = next(s for s in run if tables.covers(s))
        probe = tables.probe(first)
        assert probe is not None
        value = probe.result if first.to_move == seat else -probe.result
        kinds[{0: "draw", -1: "loss", 1: "win"}[value]] += 1
    return kinds


def format_kept_draws(kinds: collections.Counter[str], pieces: int = 4) -> str:
    """:func:`kept_draws` as two lines: a title, then the count of each kind.

    >>> import collections
    >>> print(format_kept_draws(collections.Counter({"draw": 3, "beyond the tables": 1})))
    no-removal draws with the means to win kept, by the 4-piece tables' value for the agent:
      draw 3, loss 0, win 0, beyond the tables 1
    """
    shown = ", ".join(f"{k} {kinds[k]}" for k in KEPT_DRAWS)
    title = f"no-removal draws with the means to win kept, by the {pieces}-piece tables'"
    return f"{title} value for the agent:\n  {shown}"


ACTION_KINDS = ("reveal", "bump", "attack", "quiet")
""":func:`action_kind`'s kinds."""


def action_kind(state: State, action: int) -> str:
    """What a legal DARK ``action`` does in ``state``: ``"reveal"``, ``"bump"`` (a move
    onto a face-down piece), ``"attack"`` (onto a face-up piece) or ``"quiet"``.

    >>> from jungle_core import from_fen, legal_actions
    >>> s = from_fen("8/8/8/8/8/8/E?w5 0 0 0 R -")
    >>> sorted({action_kind(s, a) for a in legal_actions(s)})
    ['bump', 'quiet', 'reveal']
    """
    n = state.rules.num_squares
    if action < n:
        return "reveal"
    target = tables(state.rules).step[action - n]
    code = state.board[target]
    return "quiet" if code == EMPTY else "bump" if code >= HIDDEN else "attack"


ChanceActions = dict[str, dict[str, float]]


def chance_actions(games: Iterable[GameResult], agent: str) -> ChanceActions:
    """Per side (``"agent"``, ``"opponent"``), over the decisions taken while some piece
    was face down: ``games``, ``decisions``, ``bump available`` (decisions with a legal
    bump), ``bump taken`` (of those, a bump played), and per kind of
    :data:`ACTION_KINDS` its count and ``"<kind> lead"``, the sum of the changes of the
    mover's piece lead over the next three plies (fewer where the game ends first).

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import play_match, load_games
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.jsonl")
    >>> _ = play_match(DARK, "greedy", "random", 2, seed=1, workers=1, out=path)
    >>> t = chance_actions(load_games(path)[1], "greedy")
    >>> t["agent"]["games"], sum(t["agent"][k] for k in ACTION_KINDS) == t["agent"]["decisions"]
    (2.0, True)
    """
    keys = ("games", "decisions", "bump available", "bump taken", "face up", "beside face down")
    kinds = ACTION_KINDS + tuple(f"{k} lead" for k in ACTION_KINDS)
    sides: ChanceActions = {
        side: dict.fromkeys(keys + kinds, 0.0) for side in ("agent", "opponent")
    }
    for game in games:
        players = game.record.players
        if agent not in players:
            continue
        seat = players.index(agent)
        for side in sides.values():
            side["games"] += 1
        states = replay(game.record)
        for ply, state in enumerate(states[:-1]):
            if not state.face_down_mask:
                break
            mover = state.to_move
            side = sides["agent" if mover == seat else "opponent"]
            kind = action_kind(state, game.record.actions[ply])
            later = states[min(ply + 3, len(states) - 1)]
            before, after = piece_counts(state), piece_counts(later)
            change = (after[mover] - after[1 - mover]) - (before[mover] - before[1 - mover])
            side["decisions"] += 1
            side[kind] += 1
            side[f"{kind} lead"] += change
            if any(action_kind(state, a) == "bump" for a in legal_actions(state)):
                side["bump available"] += 1
                side["bump taken"] += kind == "bump"
            up, beside = face_up_pieces(state, mover)
            side["face up"] += up
            side["beside face down"] += beside
    return sides


def face_up_pieces(state: State, player: int) -> tuple[int, int]:
    """``player``'s face-up pieces in ``state``, and how many of them stand beside (one
    step away) a face-down piece: the pieces that have a bump to play.

    >>> from jungle_core import from_fen
    >>> face_up_pieces(from_fen("8/8/8/8/8/8/E?w5 0 0 0 R -"), 0)
    (1, 1)
    >>> face_up_pieces(from_fen("8/8/8/8/8/8/E?w5 0 0 0 R -"), 1)   # w beside the ?
    (1, 1)
    """
    step = tables(state.rules).step
    board = state.board
    up = beside = 0
    for sq, code in enumerate(board):
        if 0 < code < HIDDEN and (code - 1) >> 3 == player:
            up += 1
            near = (step[sq * 4 + d] for d in range(4))
            beside += any(x >= 0 and board[x] >= HIDDEN for x in near)
    return up, beside


def format_chance_actions(sides: ChanceActions) -> str:
    """:func:`chance_actions` per game and per decision, one line per side."""
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


def mean_lead(counts: collections.Counter[tuple[int | None, str]]) -> tuple[float | None, int]:
    """The mean of a lead table's leads over the games that reached its moment, and how
    many did: ``(mean or None, games)``.

    >>> mean_lead(collections.Counter({(1, "W"): 3, (-1, "D"): 1, (None, "L"): 2}))
    (0.5, 4)
    """
    leads = [(lead, n) for (lead, _), n in counts.items() if lead is not None]
    games = sum(n for _, n in leads)
    return (sum(lead * n for lead, n in leads) / games if games else None), games


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
    print(format_tallies(anatomy(games, agent)))
    print(format_chance_actions(chance_actions(games, agent)))
    if args.tables:
        print(format_kept_draws(kept_draws(games, agent, EndgameTables(args.tables)), args.tables))


if __name__ == "__main__":
    main()
