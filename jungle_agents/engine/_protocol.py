"""The engine protocol's shared pieces: positions and search limits as the lines say them.

The protocol (docs/engine.md) is the line protocol chess-style Jungle engines speak:
``position startpos | fen FEN [moves m1 m2 ...]`` sets the position, ``go ...`` asks for a
move. Both ends of it, :class:`jungle_agents.engine.EngineServer` (an agent served as an
engine) and :class:`jungle_agents.engine.EngineAgent` (an engine played as an agent), read
and write these lines through the functions here.
"""

from __future__ import annotations

import attrs

from jungle_core import (
    JungleError,
    NotationError,
    Rules,
    State,
    apply_move,
    from_fen,
    from_interchange_fen,
    new_game,
    to_fen,
    to_interchange_fen,
)

__all__ = ["Limits", "parse_go", "parse_position", "position_fen", "position_line"]

MAX_DEPTH = 64
"""The deepest ``go depth`` a served agent is asked for."""

MAX_MILLISECONDS = 3_600_000
"""The longest time a ``go`` command may give (an hour): longer values are cut to it."""


def position_fen(state: State) -> str:
    """The position text the protocol sends for ``state``: the interchange FEN for
    CLASSIC (what every engine reads), the library's own position text for DARK.

    >>> from jungle_core import CLASSIC, new_game
    >>> position_fen(new_game(CLASSIC))
    'l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/1C3D1/T5L w - - 0 1'
    """
    if state.rules.variant == "classic":
        return to_interchange_fen(state)
    return to_fen(state)


def position_line(start: State, moves: list[str]) -> str:
    """The ``position`` command for a game that began at ``start`` and went on by ``moves``.

    >>> from jungle_core import CLASSIC, new_game
    >>> position_line(new_game(CLASSIC), ["a3a4"])
    'position startpos moves a3a4'
    """
    head = (
        "position startpos"
        if start == new_game(start.rules)
        else f"position fen {position_fen(start)}"
    )
    return f"{head} moves {' '.join(moves)}" if moves else head


def parse_position(rules: Rules, words: list[str]) -> tuple[State, State, list[str]]:
    """The game a ``position`` command's words (after ``position``) describe: its start,
    the position after its moves, and the moves. Raises a :class:`jungle_core.JungleError`
    naming the word that is wrong; a FEN is the interchange FEN when its second field is
    ``w`` or ``b``, else the library's own position text.

    >>> from jungle_core import CLASSIC
    >>> start, now, moves = parse_position(CLASSIC, ["startpos", "moves", "a3a4"])
    >>> now.ply, moves
    (1, ['a3a4'])
    """
    positions, moves = position_states(rules, words)
    return positions[0], positions[-1], moves


def position_states(rules: Rules, words: list[str]) -> tuple[list[State], list[str]]:
    """:func:`parse_position`'s game as every position it goes through (the start first,
    the position after the last move last) and the moves.

    >>> from jungle_core import CLASSIC
    >>> positions, moves = position_states(CLASSIC, ["startpos", "moves", "a3a4", "g7g6"])
    >>> [s.ply for s in positions], moves
    ([0, 1, 2], ['a3a4', 'g7g6'])
    """
    if not words:
        raise NotationError("'position' needs 'startpos' or 'fen FEN', then 'moves ...'")
    cut = words.index("moves") if "moves" in words else len(words)
    head, moves = words[:cut], words[cut + 1 :]
    if head == ["startpos"]:
        start = new_game(rules)
    elif head[0] == "fen" and len(head) > 1:
        text = " ".join(head[1:])
        if rules.variant == "classic" and len(head) > 2 and head[2] in ("w", "b"):
            start = from_interchange_fen(text, rules)
        else:
            start = from_fen(text, rules)
    else:
        raise NotationError(
            f"'position {' '.join(head)[:80]}': write 'position startpos' or 'position fen FEN'"
        )
    positions = [start]
    for number, move in enumerate(moves, 1):
        try:
            positions.append(apply_move(positions[-1], move))
        except JungleError as error:
            raise type(error)(f"move {number} ({move[:20]!r}): {error}") from None
    return positions, moves


@attrs.frozen
class Limits:
    """What a ``go`` command asks: a depth, a time for this move (milliseconds), or
    neither (the agent's own settings); ``infinite``: answer only after ``stop``."""

    depth: int | None = None
    movetime: int | None = None
    infinite: bool = False


def parse_go(words: list[str], to_move: int) -> Limits:
    """The limits of a ``go`` command's words (after ``go``), for the side ``to_move``.

    A clock (``wtime``/``btime``, with ``winc``/``binc`` and ``movestogo``) becomes a time
    for this move: the side's remaining time over the moves to go (30 when not given),
    plus most of its increment, and never more than half the remaining time.

    >>> parse_go(["depth", "6"], 0)
    Limits(depth=6, movetime=None, infinite=False)
    >>> parse_go(["wtime", "60000", "btime", "60000", "winc", "1000"], 0).movetime
    2800
    """
    values: dict[str, int] = {}
    infinite = False
    i = 0
    while i < len(words):
        word = words[i]
        if word == "infinite":
            infinite = True
            i += 1
            continue
        if word not in ("depth", "movetime", "wtime", "btime", "winc", "binc", "movestogo"):
            raise NotationError(f"'go' does not take {word[:40]!r}")
        if i + 1 >= len(words):
            raise NotationError(f"'go {word}' needs a number")
        text = words[i + 1]
        if not (text.isascii() and text.lstrip("-").isdigit() and len(text) <= 12):
            raise NotationError(f"'go {word}' needs a whole number, not {text[:40]!r}")
        values[word] = max(0, int(text))
        i += 2
    depth = values.get("depth")
    if depth is not None:
        depth = min(max(depth, 1), MAX_DEPTH)
    movetime = values.get("movetime")
    clock = values.get("wtime" if to_move == 0 else "btime")
    if movetime is None and clock is not None:
        increment = values.get("winc" if to_move == 0 else "binc", 0)
        moves_to_go = max(values.get("movestogo", 30), 1)
        movetime = min(clock // moves_to_go + increment * 4 // 5, clock // 2)
    if movetime is not None:
        movetime = min(max(movetime, 1), MAX_MILLISECONDS)
    return Limits(depth, movetime, infinite)
