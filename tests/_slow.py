"""An independent, deliberately slow generator for both rule families.

Written from the rules (docs/rules.md) with none of the core's code or tables: positions
are dicts of ``(row, col) -> piece`` and every rule is spelled out where it applies. The
tests compare the core against it (perft counts, and whole transition sets via position
strings).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jungle_core import Rules

LETTERS = {"E": 8, "L": 7, "T": 6, "P": 5, "W": 4, "D": 3, "C": 2, "R": 1}
RANK_LETTER = {v: k for k, v in LETTERS.items()}
DIRS = ((-1, 0), (1, 0), (0, -1), (0, 1))


@dataclass
class Slow:
    rows: int
    cols: int
    cells: dict[tuple[int, int], tuple[str, int | None, int]] = field(default_factory=dict)
    # piece: ("up", owner, rank) | ("down", owner or None, 0)
    down: frozenset[tuple[int, int]] = frozenset()
    to_move: int = 0
    since: int = 0
    ply: int = 0

    def copy(self) -> Slow:
        return Slow(
            self.rows, self.cols, dict(self.cells), self.down, self.to_move, self.since, self.ply
        )


def parse(fen: str, rules: Rules) -> Slow:
    fields = fen.split()
    st = Slow(rules.rows, rules.cols)
    for i, text in enumerate(fields[0].split("/")):
        row = rules.rows - 1 - i
        col = 0
        for ch in text:
            if ch.isdigit():
                col += int(ch)
                continue
            if ch == "?":
                st.cells[row, col] = ("down", None, 0)
            elif ch in "Xx":
                st.cells[row, col] = ("down", 0 if ch == "X" else 1, 0)
            else:
                st.cells[row, col] = ("up", 0 if ch.isupper() else 1, LETTERS[ch.upper()])
            col += 1
    st.to_move, st.since, st.ply = int(fields[1]), int(fields[2]), int(fields[3])
    if len(fields) > 4:
        down = set()
        for owner, text in enumerate(fields[4:6]):
            if text != "-":
                down |= {(owner, LETTERS[ch.upper()]) for ch in text}
        st.down = frozenset(down)
    return st


def fen(st: Slow, rules: Rules) -> str:
    rows = []
    for row in range(st.rows - 1, -1, -1):
        text, empty = "", 0
        for col in range(st.cols):
            piece = st.cells.get((row, col))
            if piece is None:
                empty += 1
                continue
            if empty:
                text += str(empty)
                empty = 0
            kind, owner, rank = piece
            if kind == "down":
                text += "?" if owner is None else ("X" if owner == 0 else "x")
            else:
                letter = RANK_LETTER[rank]
                text += letter if owner == 0 else letter.lower()
        if empty:
            text += str(empty)
        rows.append(text)
    out = f"{'/'.join(rows)} {st.to_move} {st.since} {st.ply}"
    if rules.variant == "dark":
        for owner in (0, 1):
            ranks = sorted((r for o, r in st.down if o == owner), reverse=True)
            letters = "".join(RANK_LETTER[r] for r in ranks) or "-"
            out += " " + (letters if owner == 0 else letters.lower())
    return out


def beats(a: int, b: int) -> bool:
    """Base capture rule: higher rank takes; the Elephant never takes the Rat; the Rat does."""
    if a == 1 and b == 8:
        return True
    if a == 8 and b == 1:
        return False
    return a > b


def action_of(rules: Rules, row: int, col: int, d: int | None) -> int:
    sq = row * rules.cols + col
    return sq if d is None else rules.rows * rules.cols + sq * 4 + d


# --------------------------------------------------------------------------- DARK


def _dark_battle(rules: Rules, a: int, b: int) -> str | None:
    if a == b:
        return {"both_removed": "both", "attacker_wins": "take", "forbidden": None}[
            rules.equal_rank
        ]
    if beats(a, b):
        return "take"
    return "lose" if rules.weaker_attack == "attacker_removed" else None


def _pieces(st: Slow, owner: int) -> int:
    up = sum(1 for k, o, _ in st.cells.values() if k == "up" and o == owner)
    return up + sum(1 for o, _ in st.down if o == owner)


def _draws_for(st: Slow, piece: tuple[str, int | None, int]) -> list[tuple[int, int]]:
    _, owner, _ = piece
    return sorted(p for p in st.down if owner is None or p[0] == owner)


def dark_successors(st: Slow, rules: Rules) -> list[tuple[int, float, Slow]]:
    """Every (action, probability, next position) of a DARK position that is not over."""
    me = st.to_move
    out: list[tuple[int, float, Slow]] = []

    def finish(nxt: Slow, removed: bool) -> Slow:
        nxt.to_move = 1 - me
        nxt.ply = st.ply + 1
        nxt.since = 0 if removed else st.since + 1
        return nxt

    for (row, col), piece in sorted(st.cells.items()):
        kind, owner, rank = piece
        if kind == "down":
            if rules.reveal == "own" and owner != me:
                continue
            draws = _draws_for(st, piece)
            for o, r in draws:
                nxt = st.copy()
                nxt.cells[row, col] = ("up", o, r)
                nxt.down = st.down - {(o, r)}
                out.append((action_of(rules, row, col, None), 1 / len(draws), finish(nxt, False)))
            continue
        if owner != me:
            continue
        for d, (dr, dc) in enumerate(DIRS):
            to = (row + dr, col + dc)
            if not (0 <= to[0] < st.rows and 0 <= to[1] < st.cols):
                continue
            action = action_of(rules, row, col, d)
            target = st.cells.get(to)
            if target is None:
                nxt = st.copy()
                del nxt.cells[row, col]
                nxt.cells[to] = piece
                out.append((action, 1.0, finish(nxt, False)))
                continue
            if target[0] == "down":
                if not rules.attack_face_down:
                    continue
                draws = _draws_for(st, target)
                for o, r in draws:
                    nxt = st.copy()
                    nxt.down = st.down - {(o, r)}
                    removed = False
                    result = None if o == me else _dark_battle(rules, rank, r)
                    if result is None:
                        nxt.cells[to] = ("up", o, r)
                    elif result == "take":
                        del nxt.cells[row, col]
                        nxt.cells[to] = piece
                        removed = True
                    elif result == "both":
                        del nxt.cells[row, col]
                        del nxt.cells[to]
                        removed = True
                    else:
                        del nxt.cells[row, col]
                        nxt.cells[to] = ("up", o, r)
                        removed = True
                    out.append((action, 1 / len(draws), finish(nxt, removed)))
                continue
            if target[1] == me:
                continue
            result = _dark_battle(rules, rank, target[2])
            if result is None:
                continue
            nxt = st.copy()
            del nxt.cells[row, col]
            if result == "take":
                nxt.cells[to] = piece
            elif result == "both":
                del nxt.cells[to]
            out.append((action, 1.0, finish(nxt, True)))
    return out


def dark_over(st: Slow, rules: Rules) -> tuple[bool, int | None]:
    """(finished, winner) by the DARK rules: no pieces left, no-removal draw, no moves."""
    n0, n1 = _pieces(st, 0), _pieces(st, 1)
    if n0 == 0 or n1 == 0:
        return True, None if n0 == n1 else (0 if n0 else 1)
    if rules.no_removal_limit and st.since >= rules.no_removal_limit:
        return True, None
    if not dark_successors(st, rules):
        return True, None if rules.no_moves == "draw" else 1 - st.to_move
    return False, None


# ------------------------------------------------------------------------ CLASSIC

WATER = {(r, c) for r in (3, 4, 5) for c in (1, 2, 4, 5)}
DENS = {0: (0, 3), 1: (8, 3)}
TRAPS = {0: {(0, 2), (0, 4), (1, 3)}, 1: {(8, 2), (8, 4), (7, 3)}}


def _classic_can_take(st: Slow, frm: tuple[int, int], to: tuple[int, int]) -> bool:
    _, me, a = st.cells[frm]
    _, _, b = st.cells[to]
    assert me is not None  # a face-up piece has an owner
    if (frm in WATER) != (to in WATER):
        return False
    if to in TRAPS[me]:
        return True
    if a == 1 and b == 8:
        return True
    if a == 8 and b == 1:
        return False
    return a >= b


def classic_successors(st: Slow, rules: Rules) -> list[tuple[int, float, Slow]]:
    me = st.to_move
    out: list[tuple[int, float, Slow]] = []
    for (row, col), piece in sorted(st.cells.items()):
        _, owner, rank = piece
        if owner != me:
            continue
        for d, (dr, dc) in enumerate(DIRS):
            to = (row + dr, col + dc)
            if not (0 <= to[0] < 9 and 0 <= to[1] < 7):
                continue
            if to in WATER:
                if rank in (6, 7):
                    blocked = False
                    while to in WATER:
                        if to in st.cells:  # only a Rat can stand in water
                            blocked = True
                        to = (to[0] + dr, to[1] + dc)
                    if blocked:
                        continue
                elif rank != 1:
                    continue
            if to == DENS[me]:
                continue
            target = st.cells.get(to)
            if target is not None and (
                target[1] == me or not _classic_can_take(st, (row, col), to)
            ):
                continue
            nxt = st.copy()
            del nxt.cells[row, col]
            nxt.cells[to] = piece
            nxt.to_move = 1 - me
            nxt.ply = st.ply + 1
            nxt.since = 0 if target is not None else st.since + 1
            out.append((action_of(rules, row, col, d), 1.0, nxt))
    return out


def classic_over(st: Slow, rules: Rules) -> tuple[bool, int | None]:
    for owner in (0, 1):
        piece = st.cells.get(DENS[1 - owner])
        if piece is not None and piece[1] == owner:
            return True, owner
    n0, n1 = _pieces(st, 0), _pieces(st, 1)
    if n0 == 0 or n1 == 0:
        return True, None if n0 == n1 else (0 if n0 else 1)
    if rules.ply_limit and st.ply >= rules.ply_limit:
        return True, None
    if not classic_successors(st, rules):
        return True, None if rules.no_moves == "draw" else 1 - st.to_move
    return False, None


# ------------------------------------------------------------------------- common


def successors(st: Slow, rules: Rules) -> list[tuple[int, float, Slow]]:
    return dark_successors(st, rules) if rules.variant == "dark" else classic_successors(st, rules)


def over(st: Slow, rules: Rules) -> tuple[bool, int | None]:
    return dark_over(st, rules) if rules.variant == "dark" else classic_over(st, rules)


def perft(st: Slow, rules: Rules, depth: int) -> int:
    if depth == 0 or over(st, rules)[0]:
        return 1
    return sum(perft(nxt, rules, depth - 1) for _, _, nxt in successors(st, rules))
