"""Writing a position as text: square names and the position string (docs/rules.md).

Kept apart from :mod:`jungle_core._notation` (which also parses, and so needs the rules of
movement) so that :class:`~jungle_core.State`'s ``repr`` can use it without an import
circle: this module needs only the square codes and the rule set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jungle_core._codes import HIDDEN, HIDDEN_P0, HIDDEN_P1, RANK_LETTERS
from jungle_core._rules import Rules

if TYPE_CHECKING:
    from jungle_core._state import State

__all__ = ["face_down_field", "piece_char", "square_name", "to_fen"]


def square_name(rules: Rules, sq: int) -> str:
    """The text name of a square: file letter then rank number.

    >>> from jungle_core import DARK
    >>> square_name(DARK, 0), square_name(DARK, 7), square_name(DARK, 48)
    ('a1', 'h1', 'a7')
    """
    row, col = divmod(sq, rules.cols)
    return f"{chr(97 + col)}{row + 1}"


def piece_char(code: int) -> str:
    """The position-string letter of a square code (not empty).

    >>> piece_char(8), piece_char(9), piece_char(17)
    ('E', 'r', '?')
    """
    if code == HIDDEN:
        return "?"
    if code == HIDDEN_P0:
        return "X"
    if code == HIDDEN_P1:
        return "x"
    letter = RANK_LETTERS[((code - 1) & 7) + 1]
    return letter if code <= 8 else letter.lower()


def face_down_field(mask: int, owner: int) -> str:
    """The face-down field of one player in a position string (``-`` for none).

    >>> face_down_field(0xFFFF, 0), face_down_field(0x00FF, 1)
    ('ELTPWDCR', '-')
    """
    letters = "".join(RANK_LETTERS[r] for r in range(8, 0, -1) if mask >> (owner * 8 + r - 1) & 1)
    if not letters:
        return "-"
    return letters if owner == 0 else letters.lower()


def to_fen(state: State) -> str:
    """The position string of ``state`` (FEN-like; the format is in docs/rules.md).

    >>> from jungle_core import new_game, CLASSIC
    >>> to_fen(new_game())
    '????????/8/8/8/8/8/???????? 0 0 0 ELTPWDCR eltpwdcr'
    >>> to_fen(new_game(CLASSIC))
    'l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/1C3D1/T5L 0 0 0'
    """
    rules = state.rules
    cols = rules.cols
    rows_text = []
    for row in range(rules.rows - 1, -1, -1):
        out = []
        empty = 0
        for code in state.board[row * cols : (row + 1) * cols]:
            if code == 0:
                empty += 1
                continue
            if empty:
                out.append(str(empty))
                empty = 0
            out.append(piece_char(code))
        if empty:
            out.append(str(empty))
        rows_text.append("".join(out))
    fields = [
        "/".join(rows_text),
        str(state.to_move),
        str(state.plies_since_removal),
        str(state.ply),
    ]
    if rules.variant == "dark":
        fields += [
            face_down_field(state.face_down_mask, 0),
            face_down_field(state.face_down_mask, 1),
        ]
    return " ".join(fields)
