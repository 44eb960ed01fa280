"""The CLASSIC evaluation of the Minimax agent and fast CLASSIC move loops for it.

The evaluation of a state for player ``r`` is the difference (r's minus the opponent's) of

- **piece value** ``value[rank]``;
- **development**: ``develop * (12 - n)`` per piece, ``n`` the length of the piece's shortest
  path to the enemy den on an empty board (its own moves: a Rat swims, a Lion or Tiger jumps
  the rivers, nobody enters its own den), i.e. advance toward the enemy den;
- **den attack**: ``attack * 2 ** (k - n)`` per piece with ``n <= k`` (``k = attack_range``),
  so a square's attack weight doubles with every step closer to the enemy den;
- **den defence**: ``-defence[n]`` for each enemy piece within ``n = 1`` or ``2`` moves of
  one's own den;
- **capture threats**: ``threat * value[victim]`` for every legal capture the side could
  make now (traps and water rules included);
- **mobility ratio**: ``mobility * (m_r - m_o) / (m_r + m_o)`` with ``m`` the number of
  legal moves each side would have.

The first four terms depend on one piece and its square only, so they form one
piece-square table ``pst[code][sq]``; threats and mobility come from one pass of a move
loop over the core's per-piece move table (``Tables.classic_candidates``: where each
piece may go from each square on the terrain, and which codes it may land on), so the
move rule itself is the core's (checked against the core's legal moves in the tests).
"""

from __future__ import annotations

import functools
from collections import deque

import attrs

from jungle_core import Outcome, Rules, State, outcome
from jungle_core.lowlevel import (
    HIDDEN,
    classic_actions,
    leap_blocked,
    settled_outcome,
    stuck_outcome,
    tables,
)

__all__ = [
    "ClassicEvaluator",
    "ClassicWeights",
    "classic_captures",
    "classic_moves",
    "classic_ordered_moves",
    "classic_outcome",
    "stuck_outcome",
]

_CLASSIC_PIECE_VALUES = {8: 100.0, 7: 90.0, 6: 80.0, 5: 50.0, 4: 40.0, 3: 35.0, 2: 30.0, 1: 45.0}


@attrs.frozen
class ClassicWeights:
    """Weights of the CLASSIC evaluation.

    >>> ClassicWeights().value[8], ClassicWeights().attack_range
    (100.0, 5)
    """

    value: dict[int, float] = attrs.field(factory=lambda: dict(_CLASSIC_PIECE_VALUES), hash=False)
    """Piece value by rank (the Rat is worth more than its rank: it takes the Elephant)."""
    develop: float = 1.5
    """Per step of shortest-path progress toward the enemy den."""
    attack: float = 2.0
    """Den attack: ``attack * 2 ** (attack_range - n)`` for a piece ``n <= attack_range``
    moves from the enemy den."""
    attack_range: int = 5
    defence: tuple[float, float] = (40.0, 15.0)
    """Penalty per enemy piece 1 or 2 moves from one's own den."""
    threat: float = 0.1
    """Per legal capture: this times the victim's value."""
    mobility: float = 30.0
    """Factor of the mobility ratio ``(m_self - m_opp) / (m_self + m_opp)``."""


class _ClassicTables:
    """Per-rule-set tables shared by both players' evaluators.

    ``moves[code][sq]`` is the core's ``Tables.classic_candidates``: ``(action, landing,
    ok, crossed)`` for each move the piece ``code`` may make from ``sq`` on the terrain,
    ``ok[q]`` whether it may land on code ``q``, ``crossed`` the water a leap crosses (a
    Rat there blocks it). The loops below (:meth:`ClassicEvaluator.evaluate_moves`,
    :func:`classic_ordered_moves`, :func:`classic_captures`) read it with the board, as
    :func:`jungle_core.lowlevel.classic_actions` does, to count, sort or filter moves in
    the same pass.
    """

    @staticmethod
    @functools.cache
    def of(rules: Rules) -> _ClassicTables:
        """The tables of a rule set, built once (cached)."""
        return _ClassicTables(rules)

    def __init__(self, rules: Rules) -> None:
        t = tables(rules)
        n = rules.num_squares
        self.n = n
        self.tables = t
        self.dens = t.dens
        self.moves = t.classic_candidates
        # dist[code][sq]: shortest path to the enemy den on an empty board
        dist: list[tuple[int, ...]] = [()] * HIDDEN
        for code in range(1, HIDDEN):
            owner = (code - 1) >> 3
            enemy_den = t.dens[1 - owner]
            # BFS backwards from the den over the (symmetric) move graph
            d = [99] * n
            d[enemy_den] = 0
            queue = deque([enemy_den])
            while queue:
                sq = queue.popleft()
                for _, target, _, _ in self.moves[code][sq]:
                    if d[target] == 99 and t.den_of[target] != owner:
                        d[target] = d[sq] + 1
                        queue.append(target)
            dist[code] = tuple(d)
        self.dist = tuple(dist)


def classic_moves(state: State) -> list[int]:
    """The legal moves of the player to move under CLASSIC rules without repetition bans,
    ascending: :func:`jungle_core.lowlevel.classic_actions` (equal to
    :func:`jungle_core.legal_actions` there, without its one-entry cache).

    >>> from jungle_core import CLASSIC, new_game, legal_actions
    >>> sorted(classic_moves(new_game(CLASSIC))) == list(legal_actions(new_game(CLASSIC)))
    True
    """
    tables = _ClassicTables.of(state.rules).tables
    return classic_actions(state.board, state.to_move, tables, state.bitboards)


class ClassicEvaluator:
    """The CLASSIC evaluation for one rule set and player (see the module docstring).

    >>> from jungle_core import CLASSIC, new_game
    >>> ev0, ev1 = ClassicEvaluator(CLASSIC, 0), ClassicEvaluator(CLASSIC, 1)
    >>> ev0.evaluate(new_game(CLASSIC)) == -ev1.evaluate(new_game(CLASSIC))
    True
    """

    def __init__(self, rules: Rules, player: int, weights: ClassicWeights | None = None) -> None:
        w = weights or ClassicWeights()
        self.rules = rules
        self.player = player
        self.weights = w
        ct = _ClassicTables.of(rules)
        self._t = ct
        n = ct.n
        pst: list[tuple[float, ...]] = [(0.0,) * n]
        for code in range(1, HIDDEN):
            owner, rank = (code - 1) >> 3, ((code - 1) & 7) + 1
            dist = ct.dist[code]
            # distance of this piece to its enemy's den = to the den the enemy defends
            row = []
            for sq in range(n):
                k = dist[sq]
                v = w.value[rank] + w.develop * max(0, 12 - k)
                if k <= w.attack_range:
                    v += w.attack * 2.0 ** (w.attack_range - k)
                if 1 <= k <= 2:
                    v += w.defence[k - 1]
                row.append(v if owner == player else -v)
            pst.append(tuple(row))
        self.pst = tuple(pst)
        # victim[code]: the threat term of a capture of a face-up code
        self.victim = tuple(
            [0.0] + [w.value[((c - 1) & 7) + 1] * w.threat for c in range(1, HIDDEN)]
        )

    def max_ply_change(self) -> float:
        """A bound on the change of the evaluation in one ply (unused without chance)."""
        return 1e6

    def evaluate(self, state: State) -> float:
        """The evaluation of ``state`` for this evaluator's player."""
        return self.evaluate_moves(state)[0]

    def evaluate_moves(self, state: State) -> tuple[float, int]:
        """The evaluation, and the number of legal moves of the player to move (0: the
        game is over by :func:`stuck_outcome`, when nothing ended it before)."""
        ct = self._t
        board = state.board
        pst = self.pst
        moves = ct.moves
        victim = self.victim
        me = self.player
        value = 0.0
        mob = [0, 0]
        threat = 0.0
        for sq, c in enumerate(board):
            if not c:
                continue
            value += pst[c][sq]
            owner = (c - 1) >> 3
            count = 0
            for _, target, ok, crossed in moves[c][sq]:
                q = board[target]
                if not ok[q]:
                    continue
                if crossed and leap_blocked(board, crossed):
                    continue
                count += 1
                if q:
                    threat += victim[q] if owner == me else -victim[q]
            mob[owner] += count
        total = mob[0] + mob[1]
        if total:
            value += self.weights.mobility * (mob[me] - mob[1 - me]) / total
        return value + threat, mob[state.to_move]

    def evaluate_terminal_aware(self, state: State) -> float:
        """As :meth:`evaluate`, but a finished game scores ``+-1e9`` (0 for a draw)."""
        result = outcome(state)
        if result is None:
            return self.evaluate(state)
        if result.winner is None:
            return 0.0
        return 1e9 if result.winner == self.player else -1e9


def classic_outcome(state: State, *, check_moves: bool = True) -> Outcome | None:
    """:func:`jungle_core.outcome` for CLASSIC rules without repetition bans, uncached:
    the core's :func:`~jungle_core.lowlevel.settled_outcome`, then
    :func:`~jungle_core.lowlevel.stuck_outcome` when the mover has no move. With
    ``check_moves=False`` that last rule is left to the caller.

    >>> from jungle_core import CLASSIC, new_game
    >>> classic_outcome(new_game(CLASSIC)) is None
    True
    """
    result = settled_outcome(state)
    if result is None and check_moves and not classic_moves(state):
        return stuck_outcome(state)
    return result


def classic_ordered_moves(state: State, first: int, history: dict[int, int]) -> list[int]:
    """The legal moves (no repetition bans): ``first`` (if legal), then captures, most
    valuable victim first and least valuable attacker next, then quiet moves by
    ``history`` score (highest first)."""
    ct = _ClassicTables.of(state.rules)
    board = state.board
    me = state.to_move
    mover_base = me * 8
    moves = ct.moves
    captures: list[tuple[int, int]] = []
    quiet: list[tuple[int, int]] = []
    has_first = False
    for sq, c in enumerate(board):
        if mover_base < c <= mover_base + 8:
            for action, target, ok, crossed in moves[c][sq]:
                q = board[target]
                if not ok[q]:
                    continue
                if crossed and leap_blocked(board, crossed):
                    continue
                if action == first:
                    has_first = True
                elif q:
                    captures.append((-((q - 1) & 7) * 16 + ((c - 1) & 7), action))
                else:
                    quiet.append((-history.get(action, 0), action))
    captures.sort()
    quiet.sort()
    out = [first] if has_first else []
    out.extend(a for _, a in captures)
    out.extend(a for _, a in quiet)
    return out


def classic_captures(state: State) -> list[int]:
    """The legal captures of the player to move, most valuable victim first."""
    ct = _ClassicTables.of(state.rules)
    board = state.board
    me = state.to_move
    mover_base = me * 8
    moves = ct.moves
    captures: list[tuple[int, int]] = []
    for sq, c in enumerate(board):
        if mover_base < c <= mover_base + 8:
            for action, target, ok, crossed in moves[c][sq]:
                q = board[target]
                if not q or not ok[q]:
                    continue
                if crossed and leap_blocked(board, crossed):
                    continue
                captures.append((-((q - 1) & 7) * 16 + ((c - 1) & 7), action))
    captures.sort()
    return [a for _, a in captures]
