"""What the search remembers between nodes: the transposition table and move ordering.

- :class:`TranspositionTable`: ``state -> (depth, value, flag, best action)``, keyed on
  the state itself (reveal orders commute on DARK, so transpositions are everywhere). A
  stored value is reused only at the same remaining depth (see ``Searcher._value``); a
  stored best action orders the node at every depth.
- :class:`MoveOrder`: the transposition table's best action first, then captures by most
  valuable victim / least valuable attacker, then the history heuristic (quiet actions
  that caused cut-offs before, weighted by depth squared).
"""

from __future__ import annotations

from collections.abc import Sequence

from jungle_core import Rules, State
from jungle_core.lowlevel import HIDDEN, landing, tables

__all__ = ["EXACT", "LOWER", "UPPER", "MoveOrder", "TranspositionTable"]

EXACT, LOWER, UPPER = 0, 1, 2
"""What a stored value is: the exact value, or a lower or upper bound of it."""
TT_LIMIT = 3_000_000
"""Entries at which the table is emptied (a bound on its memory)."""

TTEntry = tuple[int, float, int, int]
"""``(depth, value, flag, best action)``."""


class TranspositionTable(dict[State, TTEntry]):
    """``state -> (depth, value, flag, best action)`` (a plain dict: the search probes it
    with ``get`` on its hot path).

    >>> from jungle_core import new_game
    >>> tt = TranspositionTable()
    >>> tt.store(new_game(), 2, 5.0, EXACT, 7)
    >>> tt.store(new_game(), 1, 6.0, EXACT, 3)   # a shallower entry never replaces it
    >>> tt.best_action(new_game()), tt[new_game()]
    (7, (2, 5.0, 0, 7))
    """

    def best_action(self, state: State) -> int:
        """The stored best action of ``state``, or -1."""
        entry = self.get(state)
        return entry[3] if entry is not None else -1

    def store(self, state: State, depth: int, value: float, flag: int, action: int) -> None:
        """Store a node's result, unless a deeper entry for ``state`` is there."""
        if len(self) >= TT_LIMIT:
            self.clear()
        old = self.get(state)
        if old is not None and old[0] > depth:
            return  # keep the deeper entry's move
        self[state] = (depth, value, flag, action)


class MoveOrder:
    """Move ordering for one rule set, with the history heuristic's scores.

    >>> from jungle_core import DARK, from_fen, legal_actions
    >>> s = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")
    >>> MoveOrder(DARK).order(s, legal_actions(s), -1)[0] == 56 + 3   # a1xb1 first
    True
    """

    def __init__(self, rules: Rules) -> None:
        t = tables(rules)
        self._tables = t
        self._step = t.step
        self._num_squares = rules.num_squares
        self._rules_are_dark = rules.is_dark
        self.history: dict[int, int] = {}
        """``action -> score``: the sum of ``depth ** 2`` over the cut-offs it caused."""

    def reward_cutoff(self, action: int, depth: int) -> None:
        """``action`` caused a cut-off ``depth`` plies above the horizon."""
        self.history[action] = self.history.get(action, 0) + depth * depth

    def order(self, state: State, actions: Sequence[int], first: int) -> list[int]:
        """``first`` (the transposition table's action), then captures (MVV/LVA), then by
        the history heuristic."""
        board = state.board
        n = self._num_squares
        step = self._step
        history = self.history
        dark = self._rules_are_dark
        keyed: list[tuple[int, int]] = []
        for action in actions:
            if action == first:
                key = -1_000_000
            elif action < n:
                key = -history.get(action, 0)
            else:
                sq, d = divmod(action - n, 4)
                t = step[sq * 4 + d] if dark else landing(self._tables, board, sq, d)
                q = board[t]
                if 0 < q < HIDDEN:
                    key = -100_000 - ((q - 1) & 7) * 100 + ((board[sq] - 1) & 7)
                else:
                    key = -history.get(action, 0)
            keyed.append((key, action))
        keyed.sort(key=_first)
        return [a for _, a in keyed]


def _first(pair: tuple[int, int]) -> int:
    return pair[0]
