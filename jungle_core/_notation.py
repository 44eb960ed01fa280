"""Text: position strings, action strings and an ASCII board (formats in docs/rules.md)."""

from __future__ import annotations

import re

import numpy as np

from jungle_core._codes import HIDDEN, HIDDEN_P0, HIDDEN_P1, NUM_CODES, RANK_LETTERS, RANK_NAMES
from jungle_core._errors import IllegalActionError, InvalidPositionError, NotationError, int_text
from jungle_core._moves import is_legal, landing
from jungle_core._position_text import face_down_field, piece_char, square_name, to_fen
from jungle_core._rules import DARK, Rules
from jungle_core._state import State
from jungle_core._tables import tables

__all__ = [
    "action_to_str",
    "describe_action",
    "from_fen",
    "parse_action",
    "parse_square",
    "render",
    "square_name",
    "to_fen",
]


def parse_square(rules: Rules, text: str) -> int:
    """The index of a square named like ``c1``; raises :class:`NotationError`.

    >>> from jungle_core import DARK
    >>> parse_square(DARK, "h1"), parse_square(DARK, "a7")
    (7, 48)
    """
    if not isinstance(text, str):
        raise TypeError(f"a square name is a str, not {type(text).__name__}")
    # at most 9 digits: longer ranks are off every board, and int() of thousands of digits
    # would hit Python's digit limit
    m = re.fullmatch(r"([a-z])([1-9][0-9]{0,8})", text.strip().lower())
    if m is None:
        raise NotationError(f"{_clip(text)!r} is not a square name (a file letter then a rank)")
    col, row = ord(m.group(1)) - 97, int(m.group(2)) - 1
    if not (0 <= col < rules.cols and 0 <= row < rules.rows):
        raise NotationError(
            f"square {text!r} is off the {rules.rows}x{rules.cols} board of {rules.name}"
        )
    return row * rules.cols + col


# ------------------------------------------------------------------ position strings


_LETTER_RANK = {letter: rank for rank, letter in enumerate(RANK_LETTERS) if rank}

_MAX_DIGITS = 9
"""Counts in a position string have at most 9 digits: they fit the JAX core's int32
fields, and ``int()`` never meets Python's limit on the digits of a long number."""


def _clip(text: str, limit: int = 120) -> str:
    """``text`` cut for an error message (a hostile string may be megabytes long)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _parse_int(text: str, what: str, fen: str) -> int:
    if not (0 < len(text) <= _MAX_DIGITS and text.isascii() and text.isdigit()):
        raise NotationError(
            f"{what} must be a non-negative integer of at most {_MAX_DIGITS} digits, "
            f"not {_clip(text)!r}, in {_clip(fen)!r}"
        )
    return int(text)


def _parse_face_down(text: str, owner: int, fen: str) -> int:
    if text == "-":
        return 0
    mask = 0
    for ch in text:
        rank = _LETTER_RANK.get(ch.upper())
        if rank is None:
            raise NotationError(
                f"{ch!r} is not a rank letter in player {owner}'s face-down field "
                f"{_clip(text)!r} of {fen!r} (use E L T P W D C R, or '-')"
            )
        bit = 1 << (owner * 8 + rank - 1)
        if mask & bit:
            raise InvalidPositionError(
                f"player {owner}'s {RANK_NAMES[rank]} is listed face down twice in {fen!r}"
            )
        mask |= bit
    return mask


def from_fen(text: str, rules: Rules = DARK) -> State:
    """Parse a position string (the format of :func:`to_fen`) under ``rules``, validating it.

    Raises :class:`NotationError` for malformed text and :class:`InvalidPositionError`
    for a position that cannot exist. Under ``repetition="ban_third"`` the parsed state's
    repetition history starts at this position.

    >>> s = from_fen("????????/8/8/8/8/8/???????? 0 0 0 ELTPWDCR eltpwdcr")
    >>> from_fen(to_fen(s)) == s
    True
    >>> from_fen("8/8/8 0 0 0 - -")
    Traceback (most recent call last):
    ...
    jungle_core._errors.NotationError: the board has 3 rows, DARK needs 7, in '8/8/8 0 0 0 - -'
    """
    if not isinstance(text, str):
        raise TypeError(f"a position string is a str, not {type(text).__name__}")
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a Rules value, not {type(rules).__name__}")
    fen = _clip(text.strip(), 400)
    fields = text.split()
    dark = rules.variant == "dark"
    want = 6 if dark else 4
    if len(fields) != want:
        layout = "<board> <side> <plies since removal> <ply>" + (
            " <p0 face down> <p1 face down>" if dark else ""
        )
        raise NotationError(
            f"{rules.name} position strings have {want} fields ({layout}), "
            f"got {len(fields)} in {fen!r}"
        )
    rows_text = fields[0].split("/")
    if len(rows_text) != rules.rows:
        raise NotationError(
            f"the board has {len(rows_text)} rows, {rules.name} needs {rules.rows}, in {fen!r}"
        )
    board = [0] * (rules.rows * rules.cols)
    for i, row_text in enumerate(rows_text):
        row = rules.rows - 1 - i
        col = 0
        for ch in row_text:
            if ch in "123456789":
                col += int(ch)
                continue
            if col >= rules.cols:
                raise NotationError(
                    f"rank {row + 1} ({_clip(row_text)!r}) describes more than {rules.cols} "
                    f"squares in {fen!r}"
                )
            if ch == "?":
                code = HIDDEN
            elif ch in "Xx":
                code = HIDDEN_P0 if ch == "X" else HIDDEN_P1
            elif ch.upper() in _LETTER_RANK:
                code = _LETTER_RANK[ch.upper()] + (0 if ch.isupper() else 8)
            else:
                raise NotationError(
                    f"{ch!r} is not a piece letter (board row {i + 1} from the top, "
                    f"rank {row + 1}) in {fen!r}"
                )
            board[row * rules.cols + col] = code
            col += 1
        if col != rules.cols:
            raise NotationError(
                f"rank {row + 1} ({_clip(row_text)!r}) describes {col} squares, not {rules.cols}, "
                f"in {fen!r}"
            )
    if fields[1] not in ("0", "1"):
        raise NotationError(
            f"the side to move must be 0 or 1, not {_clip(fields[1])!r}, in {fen!r}"
        )
    to_move = int(fields[1])
    since = _parse_int(fields[2], "plies since a removal", fen)
    ply = _parse_int(fields[3], "the ply", fen)
    mask = 0
    if dark:
        mask = _parse_face_down(fields[4], 0, fen) | _parse_face_down(fields[5], 1, fen)
    b = tuple(board)
    history: tuple[int, ...] = ()
    if rules.repetition == "ban_third":
        history = (hash((b, to_move)),)
    state = State(rules, b, to_move, mask, since, ply, history)
    validate(state, fen)
    return state


def validate(state: State, fen: str | None = None) -> None:
    """Raise :class:`InvalidPositionError` unless ``state`` can exist under its rules.

    >>> from jungle_core import new_game
    >>> validate(new_game())
    """
    rules = state.rules
    where = fen if fen is not None else to_fen(state)
    board = state.board
    mask = state.face_down_mask
    if len(board) != rules.num_squares:
        raise InvalidPositionError(f"the board has {len(board)} squares, not {rules.num_squares}")
    seen: dict[int, int] = {}
    for sq, code in enumerate(board):
        if not 0 <= code < NUM_CODES:
            raise InvalidPositionError(f"square code {code} at {square_name(rules, sq)} is unknown")
        if 1 <= code <= 16:
            owner, rank = (code - 1) >> 3, ((code - 1) & 7) + 1
            name = f"player {owner}'s {RANK_NAMES[rank]}"
            if code in seen:
                raise InvalidPositionError(
                    f"{name} stands twice, on {square_name(rules, seen[code])} and "
                    f"{square_name(rules, sq)}, in {where!r}"
                )
            if mask >> (code - 1) & 1:
                raise InvalidPositionError(
                    f"{name} is face up on {square_name(rules, sq)} and listed face down "
                    f"in {where!r}"
                )
            seen[code] = sq
    unknown = board.count(HIDDEN)
    known = (board.count(HIDDEN_P0), board.count(HIDDEN_P1))
    if rules.variant == "classic":
        if unknown or any(known) or mask:
            raise InvalidPositionError(f"CLASSIC has no face-down pieces, in {where!r}")
        t = tables(rules)
        for sq, code in enumerate(board):
            if not code:
                continue
            owner, rank = (code - 1) >> 3, ((code - 1) & 7) + 1
            if t.water[sq] and rank != 1:
                raise InvalidPositionError(
                    f"player {owner}'s {RANK_NAMES[rank]} stands in water on "
                    f"{square_name(rules, sq)}; only a Rat may, in {where!r}"
                )
            if t.den_of[sq] == owner:
                raise InvalidPositionError(
                    f"player {owner}'s {RANK_NAMES[rank]} stands in its own den on "
                    f"{square_name(rules, sq)}, in {where!r}"
                )
    else:
        if unknown and any(known):
            raise InvalidPositionError(
                f"face-down pieces of unknown owner ('?') and of known owner ('X'/'x') "
                f"cannot stand together, in {where!r}"
            )
        counts = (bin(mask & 0xFF).count("1"), bin(mask >> 8).count("1"))
        if unknown or not any(known):
            if unknown != sum(counts):
                raise InvalidPositionError(
                    f"{unknown} face-down pieces stand on the board but the face-down set "
                    f"lists {sum(counts)}, in {where!r}"
                )
        else:
            for owner in (0, 1):
                if known[owner] != counts[owner]:
                    raise InvalidPositionError(
                        f"{known[owner]} face-down pieces of player {owner} stand on the "
                        f"board but the face-down set lists {counts[owner]}, in {where!r}"
                    )
    if state.plies_since_removal > state.ply:
        raise InvalidPositionError(
            f"{state.plies_since_removal} plies since a removal is more than the "
            f"{state.ply} plies played, in {where!r}"
        )
    if state.to_move not in (0, 1):
        raise InvalidPositionError(f"the side to move must be 0 or 1, not {state.to_move}")


# ------------------------------------------------------------------- action strings


def _destination(state: State, action: int) -> int:
    """Where a move action lands (jumps included), or -1 if it leaves the board."""
    sq, d = divmod(action - state.rules.num_squares, 4)
    return landing(tables(state.rules), state.board, sq, d)


def action_to_str(state: State, action: int) -> str:
    """The notation of an action: ``?c1``, ``c1-c2``, ``c1xc2``, a jump ``a3-a7``.

    ``x`` marks a move onto an occupied square (a capture, a battle, or a bump into a
    face-down piece). The action need not be legal, but must exist on the board.

    >>> from jungle_core import new_game, CLASSIC
    >>> action_to_str(new_game(), 3)
    '?d1'
    >>> action_to_str(new_game(CLASSIC), 63 + 0 * 4 + 1)
    'a1-a2'
    """
    rules = state.rules
    n = rules.num_squares
    if type(action) is not int:
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            raise TypeError(f"an action is an int, not {type(action).__name__}")
        action = int(action)
    if not 0 <= action < 5 * n:
        raise IllegalActionError(
            f"action {int_text(action)} is outside the action space 0..{5 * n - 1} of {rules.name}"
        )
    if action < n:
        return "?" + square_name(rules, action)
    sq = (action - n) // 4
    target = _destination(state, action)
    if target < 0:
        raise IllegalActionError(
            f"action {action} moves off the board from {square_name(rules, sq)}"
        )
    sep = "x" if state.board[target] else "-"
    return f"{square_name(rules, sq)}{sep}{square_name(rules, target)}"


def describe_action(state: State, action: int) -> str:
    """Text for an action in an error message: its notation if it has one, else its number.

    >>> from jungle_core import new_game
    >>> describe_action(new_game(), 3), describe_action(new_game(), 999)
    ('?d1 (action 3)', 'action 999')
    """
    try:
        return f"{action_to_str(state, action)} (action {action})"
    except IllegalActionError:
        return f"action {int_text(action)}"


def parse_action(state: State, text: str) -> int:
    """The action a notation string names in ``state``; ``-`` and ``x`` are interchangeable.

    Raises :class:`NotationError` for malformed text and :class:`IllegalActionError`
    for a well-formed action that is not legal here.

    >>> from jungle_core import new_game
    >>> parse_action(new_game(), "?d1")
    3
    >>> parse_action(new_game(), "d1-d2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    jungle_core._errors.IllegalActionError: d1-d2 is not legal in '????????/8/8/8/8/8/...'
    """
    if not isinstance(text, str):
        raise TypeError(f"an action string is a str, not {type(text).__name__}")
    rules = state.rules
    raw = _clip(text.strip())
    m = re.fullmatch(
        r"\?([a-zA-Z][0-9]+)|([a-zA-Z][0-9]+)\s*[-xX:]\s*([a-zA-Z][0-9]+)", text.strip()
    )
    if m is None:
        raise NotationError(
            f"{raw!r} is not an action: write a reveal as '?c1' and a move as 'c1-c2' or 'c1xc2'"
        )
    if m.group(1) is not None:
        action = parse_square(rules, m.group(1))
    else:
        src, dst = parse_square(rules, m.group(2)), parse_square(rules, m.group(3))
        (r0, c0), (r1, c1) = divmod(src, rules.cols), divmod(dst, rules.cols)
        if (r0 == r1) == (c0 == c1):
            raise NotationError(f"{raw!r} does not move along a row or a column")
        d = (0 if r1 < r0 else 1) if c0 == c1 else (2 if c1 < c0 else 3)
        action = rules.num_squares + 4 * src + d
        if _destination(state, action) != dst:
            raise IllegalActionError(f"{raw} is not legal in {to_fen(state)!r}")
    if not is_legal(state, action):
        raise IllegalActionError(f"{raw} is not legal in {to_fen(state)!r}")
    return action


# ------------------------------------------------------------------------- render


def render(state: State) -> str:
    """An ASCII board, rank 1 at the bottom, with file letters and rank numbers.

    Face-down pieces are ``?`` (``X``/``x`` when the owner is known); player 0's pieces
    are upper case. CLASSIC marks empty water ``~``, traps ``#`` and dens ``*``.

    >>> from jungle_core import new_game
    >>> print(render(new_game()))  # doctest: +NORMALIZE_WHITESPACE
        a b c d e f g h
     7  ? ? ? ? ? ? ? ?  7
     6  . . . . . . . .  6
     5  . . . . . . . .  5
     4  . . . . . . . .  4
     3  . . . . . . . .  3
     2  . . . . . . . .  2
     1  ? ? ? ? ? ? ? ?  1
        a b c d e f g h
    player 0 to move, ply 0, 0 plies since a removal
    face down: player 0 ELTPWDCR, player 1 eltpwdcr
    """
    rules = state.rules
    t = tables(rules)
    files = " ".join(chr(97 + c) for c in range(rules.cols))
    lines = [f"    {files}"]
    for row in range(rules.rows - 1, -1, -1):
        cells = []
        for col in range(rules.cols):
            sq = row * rules.cols + col
            code = state.board[sq]
            if code:
                cells.append(piece_char(code))
            elif t.water[sq]:
                cells.append("~")
            elif t.den_of[sq] >= 0:
                cells.append("*")
            elif t.trap_of[sq] >= 0:
                cells.append("#")
            else:
                cells.append(".")
        lines.append(f"{row + 1:>2}  {' '.join(cells)}  {row + 1}")
    lines.append(f"    {files}")
    lines.append(
        f"player {state.to_move} to move, ply {state.ply}, "
        f"{state.plies_since_removal} plies since a removal"
    )
    if rules.variant == "dark":
        mask = state.face_down_mask
        lines.append(
            f"face down: player 0 {face_down_field(mask, 0)}, player 1 {face_down_field(mask, 1)}"
        )
    return "\n".join(lines)
