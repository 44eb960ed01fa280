"""The game state: a small frozen value, plus the piece encoding it uses.

Square contents are small ints (one tuple of them is the board):

===========  ==========================================================
code         meaning
===========  ==========================================================
0            empty
1 .. 8       player 0's face-up piece of rank 1 (Rat) .. 8 (Elephant)
9 .. 16      player 1's face-up piece: ``8 + rank``
17           face-down piece, owner unknown (``?``)
18, 19       face-down piece of known owner 0 / 1 (``X`` / ``x``, set-up ``home_rows``)
===========  ==========================================================

So a face-up code is ``owner * 8 + rank``, and the *outcome index* of a chance event that
turns up ``(owner, rank)`` is ``code - 1 = owner * 8 + rank - 1`` (0..15), the index the
JAX core's ``chance_probs`` uses too.
"""

from __future__ import annotations

import enum

import attrs

from jungle_core._rules import Rules

__all__ = [
    "EMPTY",
    "HIDDEN",
    "HIDDEN_OWNED",
    "RANK_LETTERS",
    "RANK_NAMES",
    "Outcome",
    "Reason",
    "State",
    "piece_code",
    "piece_owner",
    "piece_rank",
]

EMPTY = 0
HIDDEN = 17
HIDDEN_OWNED = (18, 19)

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


class Reason(enum.Enum):
    """Why a game ended."""

    ELIMINATION = "elimination"
    """The loser has no piece left (both at once: a draw)."""
    NO_REMOVAL_LIMIT = "no_removal_limit"
    """Too many plies in a row without a removal: a draw."""
    PLY_LIMIT = "ply_limit"
    """The game reached its ply limit: a draw."""
    NO_LEGAL_ACTIONS = "no_legal_actions"
    """The player to move has no legal action (loses, or a draw under ``no_moves='draw'``)."""
    DEN_ENTERED = "den_entered"
    """A piece entered the opponent's den (CLASSIC)."""


@attrs.frozen
class Outcome:
    """The end of a game: ``winner`` is 0, 1 or None for a draw.

    >>> Outcome(None, Reason.ELIMINATION).is_draw
    True
    """

    winner: int | None
    reason: Reason

    @property
    def is_draw(self) -> bool:
        """True when nobody won."""
        return self.winner is None


@attrs.frozen(cache_hash=True, repr=False)
class State:
    """A game position: an immutable, hashable value that holds no secret.

    Build one with :func:`jungle_core.new_game` or :func:`jungle_core.from_fen`; the
    constructor itself does not validate (it is the core's hot path), ``from_fen`` does.

    - ``rules``: the rule set.
    - ``board``: ``rows * cols`` square codes (see the module docstring), square
      ``row * cols + col``.
    - ``to_move``: the player to move, 0 or 1.
    - ``face_down_mask``: bit ``owner * 8 + rank - 1`` is set while that piece is face
      down; the state knows *which* pieces are face down, never which is where.
    - ``plies_since_removal``: plies in a row with no piece removed.
    - ``ply``: plies played since the start.
    - ``history``: under ``repetition='ban_third'``, a key of each position since the
      last capture (the current one last); empty otherwise. Not part of the position
      string.

    >>> from jungle_core import new_game
    >>> s = new_game()
    >>> s.to_move, s.ply, len(s.face_down)
    (0, 0, 16)
    """

    rules: Rules
    board: tuple[int, ...]
    to_move: int
    face_down_mask: int
    plies_since_removal: int = 0
    ply: int = 0
    history: tuple[int, ...] = ()

    @property
    def face_down(self) -> frozenset[tuple[int, int]]:
        """The (owner, rank) pairs still face down.

        >>> from jungle_core import new_game
        >>> sorted(new_game().face_down)[:2]
        [(0, 1), (0, 2)]
        """
        mask = self.face_down_mask
        return frozenset((i >> 3, (i & 7) + 1) for i in range(16) if mask >> i & 1)

    def __repr__(self) -> str:
        from jungle_core._notation import to_fen
        from jungle_core._rules import CLASSIC, DARK, DARK_STRICT

        presets = {DARK: "DARK", DARK_STRICT: "DARK_STRICT", CLASSIC: "CLASSIC"}
        rules = presets.get(self.rules, repr(self.rules))
        return f"from_fen({to_fen(self)!r}, rules={rules})"
