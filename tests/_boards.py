"""Test helpers: build positions from ASCII pictures, and mirror/rotate positions."""

from __future__ import annotations

from jungle_core import DARK, Rules, State, from_fen


def position(
    picture: str,
    rules: Rules = DARK,
    *,
    to_move: int = 0,
    since: int = 0,
    ply: int | None = None,
    face_down: str = "- -",
) -> State:
    """A position from an ASCII picture (rank ``rows`` first, one token per square).

    Tokens: ``.`` (also ``~ # *``: terrain drawn for readability) empty; a piece letter
    (upper case player 0); ``?`` face-down of unknown owner; ``X``/``x`` face-down of a
    known owner.
    """
    rows = []
    for line in picture.strip().splitlines():
        out, empty = [], 0
        for token in line.split():
            if token in ".~#*":
                empty += 1
                continue
            if empty:
                out.append(str(empty))
                empty = 0
            out.append(token)
        if empty:
            out.append(str(empty))
        rows.append("".join(out))
    fields = ["/".join(rows), str(to_move), str(since), str(since if ply is None else ply)]
    if rules.variant == "dark":
        fields.append(face_down)
    return from_fen(" ".join(fields), rules)
