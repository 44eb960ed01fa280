"""Argument types of the ``jungle`` command: numbers with their allowed range, so that a
bad value is refused by the parser (usage and exit status 2), never deep in a run."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["int_in"]


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse ``type``: a decimal int in ``lo..hi``.

    >>> int_in(1, 10)("3")
    3
    >>> int_in(1, 10)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 0 is not in 1..10
    """

    def parse(text: str) -> int:
        digits = text.strip().removeprefix("-").removeprefix("+")
        if not (digits.isascii() and digits.isdigit() and len(digits) <= 20):
            shown = text if len(text) <= 30 else f"{text[:30]}..."
            raise argparse.ArgumentTypeError(f"{shown!r} is not a whole number in {lo}..{hi}")
        value = int(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{value} is not in {lo}..{hi}")
        return value

    parse.__name__ = f"int in {lo}..{hi}"
    return parse
