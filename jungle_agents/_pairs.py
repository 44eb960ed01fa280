"""The adjacent-pair table that the DARK evaluation and Greedy's safety term share.

Both score every pair of face-up pieces of opposite sides on adjacent squares, from one
player's view: a weight ``take`` when that player's piece can take the other, less a
weight ``taken`` when the other can take it. "Can take" is the rule set's battle table
(:class:`jungle_core.lowlevel.BattleResult` ``TAKE``: an equal-rank trade does not count).
"""

from __future__ import annotations

import functools

from jungle_core import Rules
from jungle_core.lowlevel import HIDDEN, NUM_CODES, BattleResult, tables

__all__ = ["pair_table"]


@functools.cache
def pair_table(
    rules: Rules, player: int, take: float, taken: float, scale: float = 1.0
) -> tuple[float, ...]:
    """``table[p * NUM_CODES + q]``: ``scale * (take * [mine takes theirs] - taken * [theirs
    takes mine])`` for face-up codes ``p`` and ``q`` of opposite owners, ``mine`` being
    the one of ``player``'s; 0 for every other pair of codes (0 .. NUM_CODES - 1 each).

    >>> from jungle_core import DARK
    >>> table = pair_table(DARK, 0, 20.0, 15.0)
    >>> table[8 * 20 + 12], table[12 * 20 + 8]   # E (player 0) next to w: E can take it
    (20.0, 20.0)
    >>> table[1 * 20 + 16], table[1 * 20 + 9]   # R next to e (R takes E), R next to r
    (20.0, 0.0)
    """
    battle = tables(rules).battle
    table = [0.0] * (NUM_CODES * NUM_CODES)
    for p in range(1, HIDDEN):  # the face-up codes
        for q in range(1, HIDDEN):
            if (p - 1) >> 3 == (q - 1) >> 3:
                continue
            mine, theirs = (p, q) if (p - 1) >> 3 == player else (q, p)
            value = 0.0
            if battle[mine * NUM_CODES + theirs] == BattleResult.TAKE:
                value += take
            if battle[theirs * NUM_CODES + mine] == BattleResult.TAKE:
                value -= taken
            table[p * NUM_CODES + q] = scale * value
    return tuple(table)
