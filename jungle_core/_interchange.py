"""The text other Jungle engines speak: the interchange FEN and 4-character moves.

The interchange FEN describes a CLASSIC position the way chess-style engines and GUIs for
this game write it: six space-separated fields,

``l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/1C3D1/T5L w - - 0 1``

- the board, ranks 9 to 1, files a to g, digits for runs of empty squares; the letters
  ``R C D W P T L E`` (rat, cat, dog, wolf, leopard, tiger, lion, elephant) upper case for
  the side that starts at the bottom (player 0, who moves first), lower case for the other;
- the side to move, ``w`` (player 0) or ``b`` (player 1);
- two fields kept from chess, always ``-`` here;
- the plies since the last capture, and the move number (starting at 1, counting a move of
  each side as one).

The library's own position string (:func:`jungle_core.to_fen`) has the same board field;
the two differ only after it. Moves are four characters, from-square then to-square
(``a3a4``). DARK, the flip game, extends the notation: a flip is the square alone (``d1``),
and a chance event's outcome, where it is known, follows as ``=`` and the letter of the
piece turned up (``d1=E``: the flip showed player 0's elephant; ``d1=e``: player 1's;
``e1f1=c``: a move onto a face-down piece, which turned out to be player 1's cat).

>>> from jungle_core import CLASSIC, new_game
>>> fen = to_interchange_fen(new_game(CLASSIC))
>>> fen
'l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/1C3D1/T5L w - - 0 1'
>>> from_interchange_fen(fen) == new_game(CLASSIC)
True
>>> move_text(new_game(CLASSIC), parse_move(new_game(CLASSIC), "a3a4")[0])
'a3a4'
"""

from __future__ import annotations

import re

from jungle_core._codes import RANK_LETTERS
from jungle_core._errors import InvalidPositionError, NotationError
from jungle_core._game import chance_outcomes, is_chance_action, step_outcome
from jungle_core._notation import action_to_str, from_fen, parse_action
from jungle_core._position_text import to_fen
from jungle_core._rules import CLASSIC, Rules
from jungle_core._state import State

__all__ = [
    "apply_move",
    "from_interchange_fen",
    "move_text",
    "outcome_letter",
    "parse_move",
    "to_interchange_fen",
]

_MAX_DIGITS = 9


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def to_interchange_fen(state: State) -> str:
    """The interchange FEN of a CLASSIC position (see the module docstring).

    DARK positions have face-down pieces the interchange FEN cannot write: they raise
    :class:`InvalidPositionError`; use :func:`jungle_core.to_fen` for them.

    >>> from jungle_core import CLASSIC, new_game, legal_actions, step
    >>> import numpy as np
    >>> s = step(new_game(CLASSIC), legal_actions(new_game(CLASSIC))[0], np.random.default_rng())
    >>> to_interchange_fen(s)
    'l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/TC3D1/6L b - - 1 1'
    """
    if state.rules.variant != "classic":
        raise InvalidPositionError(
            f"the interchange FEN writes CLASSIC positions, not {state.rules.name} ones "
            "(face-down pieces have no letter there): use jungle_core.to_fen"
        )
    board = to_fen(state).split(" ", 1)[0]
    side = "wb"[state.to_move]
    return f"{board} {side} - - {state.plies_since_removal} {state.ply // 2 + 1}"


def from_interchange_fen(text: str, rules: Rules = CLASSIC) -> State:
    """The position an interchange FEN describes, under ``rules`` (a CLASSIC variant).

    The last four fields may be left out (python-chess reads FENs the same way): ``- -``,
    ``0`` and ``1`` are assumed. Every malformed field raises :class:`NotationError` naming
    the field; a board that is no legal position raises :class:`InvalidPositionError`.
    The position's repetition history starts empty, as a FEN does not record it.

    >>> from_interchange_fen("7/7/7/7/7/7/7/7/E5e w").to_move
    0
    >>> from_interchange_fen("7/7/7/7/7/7/7/7/E5e x - - 0 1")
    Traceback (most recent call last):
    ...
    jungle_core._errors.NotationError: the side to move must be 'w' or 'b', not 'x', in ...
    """
    if not isinstance(text, str):
        raise TypeError(f"an interchange FEN is a str, not {type(text).__name__}")
    if rules.variant != "classic":
        raise InvalidPositionError(
            f"the interchange FEN describes CLASSIC positions, not {rules.name} ones: "
            "use jungle_core.from_fen"
        )
    fields = text.split()
    shown = _clip(text)
    if not 2 <= len(fields) <= 6:
        raise NotationError(
            f"an interchange FEN has 6 fields (board, side, '-', '-', plies since a "
            f"capture, move number), not {len(fields)}: {shown!r}"
        )
    fields += ["-", "-", "0", "1"][len(fields) - 2 :]
    board, side, castling, passant, clock, number = fields
    if side not in ("w", "b"):
        raise NotationError(
            f"the side to move must be 'w' or 'b', not {_clip(side)!r}, in {shown!r}"
        )
    for name, value in (("third", castling), ("fourth", passant)):
        if value != "-":
            raise NotationError(
                f"the {name} field (kept from chess) must be '-', not {_clip(value)!r}, "
                f"in {shown!r}"
            )
    since = _count(clock, "the plies since a capture", shown)
    move_number = _count(number, "the move number", shown)
    if move_number < 1:
        raise NotationError(f"the move number starts at 1, not {number!r}, in {shown!r}")
    to_move = "wb".index(side)
    ply = 2 * (move_number - 1) + to_move
    return from_fen(f"{board} {to_move} {since} {ply}", rules)


def _count(text: str, what: str, fen: str) -> int:
    if not (0 < len(text) <= _MAX_DIGITS and text.isascii() and text.isdigit()):
        raise NotationError(
            f"{what} must be a non-negative integer of at most {_MAX_DIGITS} digits, "
            f"not {_clip(text)!r}, in {fen!r}"
        )
    return int(text)


def outcome_letter(outcome_index: int) -> str:
    """The letter of the piece a flip showed: its rank's letter, upper case for player 0.

    ``outcome_index`` is ``owner * 8 + rank - 1``, as :func:`jungle_core.chance_outcomes`
    numbers them.

    >>> outcome_letter(7), outcome_letter(15), outcome_letter(0)
    ('E', 'e', 'R')
    """
    owner, rank = divmod(outcome_index, 8)
    letter = RANK_LETTERS[rank + 1]
    return letter if owner == 0 else letter.lower()


def move_text(state: State, action: int, outcome_index: int | None = None) -> str:
    """The 4-character text of a legal ``action`` (``a3a4``; a flip is its square,
    ``d1``), followed by ``=`` and the letter of the piece turned up when a chance
    ``outcome_index`` is given (not -1).

    >>> from jungle_core import new_game
    >>> move_text(new_game(), 3), move_text(new_game(), 3, 15)
    ('d1', 'd1=e')
    """
    text = action_to_str(state, action)
    text = text[1:] if text.startswith("?") else text.replace("-", "").replace("x", "")
    if outcome_index is None or outcome_index < 0:
        return text
    return f"{text}={outcome_letter(outcome_index)}"


_MOVE = re.compile(r"([a-z][1-9][0-9]?)([a-z][1-9][0-9]?)?(?:=([A-Za-z?]))?")


def parse_move(state: State, text: str) -> tuple[int, int | None]:
    """The action a 4-character move names in ``state`` and, for a chance event written
    with its outcome (``d1=E``, ``e1f1=c``), that outcome's index; ``None`` where no
    outcome is given.

    Malformed text raises :class:`NotationError`; a move that is not legal here raises
    :class:`jungle_core.IllegalActionError`, as does an outcome no face-down piece can have.

    >>> from jungle_core import new_game
    >>> parse_move(new_game(), "d1=e")
    (3, 15)
    >>> parse_move(new_game(), "d1d2")
    Traceback (most recent call last):
    ...
    jungle_core._errors.IllegalActionError: d1-d2 is not legal in '????????/8/8/8/8/8/...'
    """
    if not isinstance(text, str):
        raise TypeError(f"a move is a str, not {type(text).__name__}")
    m = _MOVE.fullmatch(text.strip())
    if m is None:
        raise NotationError(
            f"{_clip(text)!r} is not a move: write a move as 'a3a4', a flip as 'd1' or, "
            "with the piece it showed, 'd1=E'"
        )
    source, target, letter = m.groups()
    action = parse_action(state, f"?{source}" if target is None else f"{source}-{target}")
    if letter is None or letter == "?":
        return action, None
    if not is_chance_action(state, action):
        raise NotationError(f"{text!r}: only a move that turns a piece up takes '=' and a letter")
    outcomes = dict(chance_outcomes(state, action))
    for index, probability in outcomes.items():
        if index >= 0 and probability > 0 and outcome_letter(index) == letter:
            return action, index
    from jungle_core._errors import IllegalActionError

    raise IllegalActionError(
        f"{text!r}: no face-down piece can show {letter!r} in {to_fen(state)!r}"
    )


def apply_move(state: State, text: str) -> State:
    """The state after a 4-character move; a chance event must carry its outcome
    (``d1=E``).

    >>> from jungle_core import new_game
    >>> apply_move(new_game(), "d1=E").board[3]
    8
    """
    action, outcome_index = parse_move(state, text)
    if is_chance_action(state, action):
        if outcome_index is None:
            raise NotationError(f"{text!r} turns a piece up: write which, as in '{text.strip()}=E'")
        return step_outcome(state, action, outcome_index)
    return step_outcome(state, action, -1)
