"""The error types of the rules core.

Every error is a :class:`JungleError`, itself a :class:`ValueError`, so callers that
only care that *some* input was bad can catch ``ValueError``. Each message names the
bad input and, where there is one, the position (as a position string) it was tried in.
"""

from __future__ import annotations

__all__ = [
    "GameOverError",
    "IllegalActionError",
    "InvalidPositionError",
    "JungleError",
    "NotationError",
]


class JungleError(ValueError):
    """Base class of every error raised by the library for bad input.

    >>> issubclass(NotationError, JungleError) and issubclass(JungleError, ValueError)
    True
    """


class NotationError(JungleError):
    """Malformed text: a position string or an action string that cannot be parsed.

    The message says what is wrong and where (the field, the row or the character).
    """


class InvalidPositionError(JungleError):
    """A well-formed position that cannot exist under the rules.

    For example two Elephants of one side, a rank that is both face up and face down, or
    more face-down pieces on the board than in the face-down set.
    """


class IllegalActionError(JungleError):
    """An action that is not legal in the given position (names the action and the FEN)."""


class GameOverError(JungleError):
    """An action was asked of a game that has already finished."""


def int_text(value: int) -> str:
    """An int for an error message: its digits, or its size when it has too many.

    ``str()`` of an int of more than 4,300 digits raises ``ValueError`` (Python's limit on
    integer-string conversion), so a message must never format such a number whole.

    >>> int_text(42), int_text(10**50)
    ('42', 'a number of about 51 digits')
    """
    if -(10**20) < value < 10**20:
        return str(value)
    return f"a number of about {int(abs(value).bit_length() * 0.30103) + 1} digits"
