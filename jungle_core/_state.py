"""The game state: a small frozen value, and how a game ends.

The board is a tuple of square codes (see :mod:`jungle_core._codes`, re-exported here),
square ``row * cols + col``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

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
    - ``in_play`` (derived, not a constructor argument, not compared): bit
      ``owner * 8 + rank - 1`` is set for each piece still in the game, face up or face
      down; the end-of-game test reads it instead of scanning the board.

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


_new = object.__new__
_SET_FIELDS = tuple(
    State.__dict__[name].__set__
    for name in (
        "rules",
        "board",
        "to_move",
        "face_down_mask",
        "plies_since_removal",
        "ply",
        "history",
        "in_play",
        "_attrs_cached_hash",
    )
)


def next_state(
    rules: Rules,
    board: tuple[int, ...],
    to_move: int,
    face_down_mask: int,
    plies_since_removal: int,
    ply: int,
    history: tuple[int, ...],
    in_play: int,
    *,
    _set: tuple[Callable[[object, object], None], ...] = _SET_FIELDS,
) -> State:
    """The core's own constructor, for a successor it has computed (``in_play`` included).

    It fills the slots of a new frozen :class:`State` directly, skipping the generated
    ``__init__`` (about 40 % of its cost): the transition function builds one state per
    ply, so this is the hot path. The value is the same as the constructor's:

    >>> from jungle_core import new_game
    >>> s = new_game()
    >>> t = next_state(s.rules, s.board, 0, s.face_down_mask, 0, 0, (), s.in_play)
    >>> t == s, hash(t) == hash(s), t.in_play == s.in_play
    (True, True, True)
    """
    state = _new(State)
    _set[0](state, rules)
    _set[1](state, board)
    _set[2](state, to_move)
    _set[3](state, face_down_mask)
    _set[4](state, plies_since_removal)
    _set[5](state, ply)
    _set[6](state, history)
    _set[7](state, in_play)
    _set[8](state, None)
    return state
