"""The game state: a small frozen value, and how a game ends.

The board is a tuple of square codes (see :mod:`jungle_core._codes`, re-exported here),
square ``row * cols + col``.
"""

from __future__ import annotations

import enum
from itertools import compress

import attrs

from jungle_core._codes import (
    EMPTY,
    HIDDEN,
    HIDDEN_OWNED,
    RANK_LETTERS,
    RANK_NAMES,
    piece_code,
    piece_owner,
    piece_rank,
)
from jungle_core._position_text import to_fen
from jungle_core._rules import CLASSIC, DARK, DARK_STRICT, Rules

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

_PRESET_NAMES = {DARK: "DARK", DARK_STRICT: "DARK_STRICT", CLASSIC: "CLASSIC"}


def _in_play_of(state: State) -> int:
    """The ``in_play`` mask of a state built by its constructor (face-down set + board)."""
    mask = state.face_down_mask
    for code in state.board:
        if 0 < code < HIDDEN:
            mask |= 1 << (code - 1)
    return mask


LAYER_BITS = (0,) + (1,) * 8 + (1 << 64,) * 8 + (1 << 128,) * 3
"""``LAYER_BITS[code]``: the bit of ``State.bitboards`` that a square holding ``code``
sets, shifted by the square: layer 0 (bit ``sq``) for player 0's face-up pieces, layer 1
(bit ``64 + sq``) for player 1's, layer 2 (bit ``128 + sq``) for face-down pieces. A
square that changes from ``old`` to ``new`` changes the bitboards by
``(LAYER_BITS[old] ^ LAYER_BITS[new]) << sq``."""

_SQUARES = range(256)

LAYER_MASK = (1 << 64) - 1
"""One layer of ``State.bitboards``: ``(bitboards >> 64 * layer) & LAYER_MASK``."""


def board_bitboards(board: tuple[int, ...]) -> int:
    """``State.bitboards`` of a board: its pieces as three bitboards in one int (a scan
    of the board; the transition updates a successor's by XOR instead).

    >>> from jungle_core import CLASSIC, new_game
    >>> s = new_game(CLASSIC)
    >>> board_bitboards(s.board) == s.bitboards
    True
    """
    bits = 0
    for sq in compress(_SQUARES, board):  # compress() skips the empty squares at C speed
        bits |= LAYER_BITS[board[sq]] << sq
    return bits


def _bitboards_of(state: State) -> int:
    """The ``bitboards`` of a state built by its constructor."""
    return board_bitboards(state.board)


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


@attrs.frozen(cache_hash=True, repr=False, weakref_slot=False)
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
    - ``in_play`` (derived, not a constructor argument, not compared): bit
      ``owner * 8 + rank - 1`` is set for each piece still in the game, face up or face
      down; the end-of-game test reads it instead of scanning the board.
    - ``bitboards`` (derived like ``in_play``): the board as three bitboards in one
      int, bit ``64 * layer + sq`` set where player 0's face-up piece (layer 0), player
      1's (layer 1) or a face-down piece (layer 2) stands (:data:`LAYER_BITS`). The
      transition updates it with one XOR per changed square, and the DARK move
      generator reads it instead of testing every neighbour of every piece.

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
    in_play: int = attrs.field(
        init=False, eq=False, default=attrs.Factory(_in_play_of, takes_self=True)
    )
    bitboards: int = attrs.field(
        init=False, eq=False, default=attrs.Factory(_bitboards_of, takes_self=True)
    )

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
        rules = _PRESET_NAMES.get(self.rules, repr(self.rules))
        return f"from_fen({to_fen(self)!r}, rules={rules})"


class _Unfrozen:
    """A State under construction: the same slots, without the frozen ``__setattr__``.

    :func:`next_state` fills one with plain attribute stores (which CPython specializes
    for slots) and then makes it a :class:`State` by assigning ``__class__``, allowed
    because the two classes lay out the same slots. ``State`` has no ``__weakref__``
    slot for this reason: CPython's layout check rejects two otherwise identical classes
    that have one.
    """

    __slots__ = State.__slots__  # type: ignore[attr-defined]  # attrs made them
    rules: Rules
    board: tuple[int, ...]
    to_move: int
    face_down_mask: int
    plies_since_removal: int
    ply: int
    history: tuple[int, ...]
    in_play: int
    bitboards: int
    _attrs_cached_hash: int | None


def next_state(
    rules: Rules,
    board: tuple[int, ...],
    to_move: int,
    face_down_mask: int,
    plies_since_removal: int,
    ply: int,
    history: tuple[int, ...],
    in_play: int,
    bitboards: int,
) -> State:
    """The core's own constructor, for a successor it has computed (derived fields included).

    The transition function builds one state per ply, so this is the hot path: it fills
    the slots of an :class:`_Unfrozen` and turns it into a :class:`State` (one
    ``__class__`` assignment), skipping the generated ``__init__`` and its frozen
    ``object.__setattr__`` calls (about 2.5× cheaper than setting each slot through its
    descriptor; the constructor, which also scans the board for ``in_play``, cost 5-10×
    as much in one measurement). The value is the same as the constructor's, frozen and
    hashable like it:

    >>> from jungle_core import new_game
    >>> s = new_game()
    >>> t = next_state(s.rules, s.board, 0, s.face_down_mask, 0, 0, (), s.in_play, s.bitboards)
    >>> type(t) is State, t == s, hash(t) == hash(s), t.in_play == s.in_play
    (True, True, True, True)
    """
    state = _Unfrozen()
    state.rules = rules
    state.board = board
    state.to_move = to_move
    state.face_down_mask = face_down_mask
    state.plies_since_removal = plies_since_removal
    state.ply = ply
    state.history = history
    state.in_play = in_play
    state.bitboards = bitboards
    state._attrs_cached_hash = None
    state.__class__ = State  # type: ignore[assignment]
    return state  # type: ignore[return-value]
