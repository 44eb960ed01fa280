"""The square codes of a board: one small int per square, named here once.

===========  ==========================================================
code         meaning
===========  ==========================================================
0            :data:`EMPTY`
1 .. 8       player 0's face-up piece of rank 1 (Rat) .. 8 (Elephant)
9 .. 16      player 1's face-up piece: ``8 + rank``
17           :data:`HIDDEN`: face-down piece, owner unknown (``?``)
18, 19       :data:`HIDDEN_P0` / :data:`HIDDEN_P1`: face-down piece of known owner
             (``X`` / ``x``, set-up ``home_rows``)
===========  ==========================================================

So a face-up code is ``owner * 8 + rank``, and the *outcome index* of a chance event that
turns up ``(owner, rank)`` is ``code - 1 = owner * 8 + rank - 1`` (0..15), the index the
JAX core's ``chance_probs`` uses too. Tables indexed by a pair of codes use
``p * NUM_CODES + q``.
"""

from __future__ import annotations

__all__ = [
    "EMPTY",
    "HIDDEN",
    "HIDDEN_OWNED",
    "HIDDEN_P0",
    "HIDDEN_P1",
    "NUM_CODES",
    "RANK_LETTERS",
    "RANK_NAMES",
    "piece_code",
    "piece_owner",
    "piece_rank",
]

EMPTY = 0
"""An empty square."""
HIDDEN = 17
"""A face-down piece whose owner nobody knows (``?``)."""
HIDDEN_P0 = 18
"""A face-down piece known to be player 0's (``X``)."""
HIDDEN_P1 = 19
"""A face-down piece known to be player 1's (``x``)."""
HIDDEN_OWNED = (HIDDEN_P0, HIDDEN_P1)
"""``HIDDEN_OWNED[owner]``: the code of a face-down piece of a known owner."""
NUM_CODES = 20
"""Codes run 0..19: the stride of tables indexed by two codes (``p * NUM_CODES + q``)."""

RANK_NAMES = ("", "Rat", "Cat", "Dog", "Wolf", "Leopard", "Tiger", "Lion", "Elephant")
"""``RANK_NAMES[rank]`` for rank 1..8."""
RANK_LETTERS = ".RCDWPTLE"
"""``RANK_LETTERS[rank]``: the English letter of a rank (P = panther/leopard)."""


def piece_code(owner: int, rank: int) -> int:
    """The board code of a face-up piece.

    >>> piece_code(0, 8), piece_code(1, 1)
    (8, 9)
    """
    return owner * 8 + rank


def piece_owner(code: int) -> int:
    """The owner (0 or 1) of a face-up piece code.

    >>> piece_owner(8), piece_owner(9)
    (0, 1)
    """
    return (code - 1) >> 3


def piece_rank(code: int) -> int:
    """The rank (1..8) of a face-up piece code.

    >>> piece_rank(8), piece_rank(9)
    (8, 1)
    """
    return ((code - 1) & 7) + 1
