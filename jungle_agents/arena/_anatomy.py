"""Game anatomy: where DARK games are decided, read from arena records.

Functions of one position (:func:`piece_counts`, :func:`action_kind`,
:func:`face_up_pieces`, :func:`can_still_win`, :func:`draw_end`) and tallies over the
games of an arena games file (:func:`game_anatomy`, :func:`chance_actions`,
:func:`kept_draws`), all from one agent's side: its piece lead when the last piece turns
face up and at six pieces, how its drawn games end, which move ended its means to win,
what each side did while pieces were face down. They answer "where are the points
lost?" for any games file the arena writes, and the studies of ``experiments/`` print
them (``experiments/anatomy.py``).

>>> from jungle_core import from_fen
>>> state = from_fen("8/8/8/8/8/8/TR3l2 0 0 0 - -")  # Tiger and Rat against a Lion
>>> piece_counts(state), can_still_win(state, 0), draw_end(state, 0, "no_removal_limit")
((2, 1), False, 'no remover')
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from jungle_agents.arena._game_loop import replay
from jungle_agents.arena._records import GameResult
from jungle_core import State, legal_actions
from jungle_core.lowlevel import EMPTY, HIDDEN, NUM_CODES, BattleResult, tables

if TYPE_CHECKING:
    from jungle_agents.endgame import EndgameTables

__all__ = [
    "ACTION_KINDS",
    "DRAW_ENDS",
    "KEPT_DRAWS",
    "Anatomy",
    "ChanceActions",
    "action_kind",
    "can_still_win",
    "chance_actions",
    "draw_end",
    "face_up_pieces",
    "game_anatomy",
    "kept_draws",
    "mean_lead",
    "piece_counts",
]

Anatomy = dict[str, collections.Counter[tuple[int | None, str]]]
""":func:`game_anatomy`'s tallies: per table, counts keyed by ``(lead or None, label)``."""

ChanceActions = dict[str, dict[str, float]]
""":func:`chance_actions`' sums: per side (``"agent"``, ``"opponent"``), per quantity."""

DRAW_ENDS = ("removed together", "no remover", "one against one", "face down", "other")
""":func:`draw_end`'s kinds, in the order it tests them."""

KEPT_DRAWS = ("draw", "loss", "win", "beyond the tables")
""":func:`kept_draws`' kinds: the endgame tables' value for the agent, or none."""

ACTION_KINDS = ("reveal", "bump", "attack", "quiet")
""":func:`action_kind`'s kinds."""


def piece_counts(state: State) -> tuple[int, int]:
    """The pieces each player has, face up or down.

    >>> from jungle_core import from_fen
    >>> piece_counts(from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -"))
    (1, 1)
    """
    return (state.in_play & 0xFF).bit_count(), (state.in_play >> 8).bit_count()


def _battles(state: State, seat: int) -> tuple[int, int, list[list[int]]]:
    """``seat``'s pieces in the game and the enemy's (face up or down), and the battle
    table's result (:class:`BattleResult`) of each of ``seat``'s pieces attacking each
    enemy piece, a row a piece of ``seat``'s.

    >>> from jungle_core import from_fen
    >>> _battles(from_fen("8/8/8/8/8/8/TR3l2 0 0 0 - -"), 0)  # T, R / L: both lose to it
    (2, 1, [[3], [3]])
    """
    battle = tables(state.rules).battle
    held = [i for i in range(16) if state.in_play >> i & 1]
    mine = [i for i in held if i >> 3 == seat]
    theirs = [i for i in held if i >> 3 != seat]
    rows = [[battle[(i + 1) * NUM_CODES + j + 1] for j in theirs] for i in mine]
    return len(mine), len(theirs), rows


def _covered(rows: list[list[int]], theirs: int) -> bool:
    """Whether every enemy piece (a column of :func:`_battles`' rows) has one of ours that
    takes it or trades with it."""
    removes = (BattleResult.TAKE, BattleResult.BOTH)
    return all(any(row[k] in removes for row in rows) for k in range(theirs))


def draw_end(state: State, seat: int, reason: str) -> str:
    """What a drawn DARK game's last position ``state`` (ended for ``reason``, the
    record's) holds, for the player in ``seat``: ``"removed together"`` (drawn by
    elimination: the last pieces traded off), ``"no remover"`` (an enemy piece in the
    game, face up or down, that none of ``seat``'s can take or trade with by the battle
    table), ``"one against one"``, ``"face down"`` (pieces still face down), else
    ``"other"``. In the first two the player could no longer win: the points were lost
    earlier, when the pieces that could remove the enemy's were traded away.

    >>> from jungle_core import from_fen
    >>> draw_end(from_fen("8/8/8/8/8/8/T4w2 0 0 0 - -"), 0, "no_removal_limit")
    'one against one'
    >>> draw_end(from_fen("8/8/8/8/8/8/T4w2 0 0 0 - -"), 0, "elimination")
    'removed together'
    """
    if reason == "elimination":
        return "removed together"
    mine, theirs, rows = _battles(state, seat)
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
    the parity); the ``azero`` agent's ``dead_draw`` reads the same test on the JAX core.

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
    mine, theirs, rows = _battles(state, seat)
    if not mine or not theirs:
        return bool(mine)
    if not _covered(rows, theirs):
        return False
    if trades:
        untaken = sum(all(row[k] != BattleResult.TAKE for row in rows) for k in range(theirs))
        return mine > untaken
    return mine > theirs or any(BattleResult.TAKE in row for row in rows)


def _result(game: GameResult, seat: int) -> str:
    """``W``, ``D`` or ``L``: the result of the player in ``seat``."""
    return "LDW"[int(2 * game.record.score(seat))]


def _means_ended(
    states: list[State], seat: int, result: str, trades: bool, opening: int = 0
) -> tuple[int | None, str]:
    """The first move of a replayed game after which ``seat``'s material could no longer
    win (:func:`can_still_win`): ``(lead before it, "agent RESULT"|"opponent RESULT")``
    by who made it (``"opening RESULT"``: one of the first ``opening`` plies, a random
    opening's), or ``(None, "kept RESULT")`` if none did."""
    for ply, (state, after) in enumerate(itertools.pairwise(states)):
        if can_still_win(state, seat, trades) and not can_still_win(after, seat, trades):
            counts = piece_counts(state)
            who = "agent" if state.to_move == seat else "opponent"
            return counts[seat] - counts[
                1 - seat
            ], f"{who if ply >= opening else 'opening'} {result}"
    return None, f"kept {result}"


def game_anatomy(games: Iterable[GameResult], agent: str) -> Anatomy:
    """Where ``agent``'s games were decided (those it did not play are skipped): counts
    keyed by ``(lead, result)`` (result ``W``/``D``/``L`` from ``agent``'s side, lead its
    piece count minus the opponent's, None where the moment never came) per table:

    - ``"face_up"``: the lead when the last face-down piece turns face up;
    - ``"six"``: the lead when six or fewer pieces remain;
    - ``"elimination_draws"``: ``(None, "agent"|"opponent")``, who made the last move
      of a game drawn by elimination;
    - ``"draw_ends"``: ``(None, kind)`` of every draw, the kinds of :func:`draw_end`;
    - ``"means"``: the move that ended the agent's means to win
      (:func:`can_still_win`), ``(lead before it, "agent RESULT"|"opponent RESULT")``
      (``"opening RESULT"`` for a ply of a random opening, no one's decision), or
      ``(None, "kept RESULT")`` if none did; ``"means_trades"`` the same by the
      sharper test that counts the trades.

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import play_match, load_games
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.jsonl")
    >>> _ = play_match(DARK, "greedy", "random", 2, seed=1, workers=1, out=path)
    >>> t = game_anatomy(load_games(path)[1], "greedy")
    >>> sum(t["face_up"].values()), sum(t["six"].values())
    (2, 2)
    """
    keys = ("face_up", "six", "elimination_draws", "draw_ends", "means", "means_trades")
    tallies: Anatomy = {key: collections.Counter() for key in keys}
    for game in games:
        players = game.record.players
        if agent not in players:
            continue
        seat = players.index(agent)
        result = _result(game, seat)
        states = replay(game.record)
        face_up: int | None = None
        six: int | None = None
        for key, trades in (("means", False), ("means_trades", True)):
            ended = _means_ended(states, seat, result, trades, game.record.opening)
            tallies[key][ended] += 1
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


def mean_lead(counts: collections.Counter[tuple[int | None, str]]) -> tuple[float | None, int]:
    """The mean lead of a lead table of :func:`game_anatomy` over the games that reached
    its moment, and how many did: ``(mean or None, games)``.

    >>> mean_lead(collections.Counter({(1, "W"): 3, (-1, "D"): 1, (None, "L"): 2}))
    (0.5, 4)
    """
    leads = [(lead, n) for (lead, _), n in counts.items() if lead is not None]
    games = sum(n for _, n in leads)
    return (sum(lead * n for lead, n in leads) / games if games else None), games


def kept_draws(
    games: Iterable[GameResult], agent: str, tables: EndgameTables
) -> collections.Counter[str]:
    """The agent's no-removal draws in which it kept its means to win to the end (no
    move ended them, :func:`can_still_win`), by what ``tables``
    (:class:`jungle_agents.endgame.EndgameTables`) make of their last run of quiet plies:
    where the position before the last move is one they cover, the exact value for the
    agent (``"draw"``, ``"loss"``, ``"win"``) of the first position of that run they
    cover (material does not change in it; a piece turned face up can bring it into the
    tables), else ``"beyond the tables"`` (more pieces, or one still face down). Draws
    there are the only ones a knob that presses the side ahead could still win; a
    ``"win"`` would be one the agent let go.

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import load_games, play_match
    >>> from jungle_agents.endgame import EndgameTables
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


def chance_actions(games: Iterable[GameResult], agent: str) -> ChanceActions:
    """Per side (``"agent"``, ``"opponent"``), over the decisions taken while some piece
    was face down in ``agent``'s games (a random opening's plies are no one's decisions,
    and are left out): ``games``, ``decisions``, ``bump available``
    (decisions with a legal bump), ``bump taken`` (of those, a bump played), ``face up``
    and ``beside face down`` (sums of :func:`face_up_pieces` over the decisions), and per
    kind of :data:`ACTION_KINDS` its count and ``"<kind> lead"``, the sum of the changes
    of the mover's piece lead over the next three plies (fewer where the game ends first).

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
            if ply < game.record.opening:
                continue
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
