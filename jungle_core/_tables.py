"""Lookup tables built once per rule set: neighbours, terrain, jumps and battle results.

The move generator and the transition function read these tables instead of re-deriving
geometry or the battle rules on every call; the JAX core builds its own arrays from the
same tables, so both cores share one description of the rules.
"""

from __future__ import annotations

import functools

import attrs

from jungle_core._codes import EMPTY, HIDDEN, NUM_CODES
from jungle_core._rules import Rules

__all__ = ["LEAPERS", "BattleResult", "Tables", "can_take", "tables"]


ClassicCandidate = tuple[int, int, tuple[bool, ...], tuple[int, ...]]
"""One entry of ``Tables.classic_candidates``: ``(action, landing, ok, crossed)``."""


class BattleResult:
    """What happens when a face-up piece moves onto an opponent's face-up piece."""

    FORBIDDEN = 0
    """The attack is not a legal move (or, onto a piece just turned up: the turn ends)."""
    TAKE = 1
    """The defender is removed and the attacker moves in."""
    BOTH = 2
    """Both are removed."""
    LOSE = 3
    """The attacker is removed; the defender stays."""


def can_take(attacker_rank: int, defender_rank: int) -> bool:
    """The base capture rule for two revealed pieces of opposite sides.

    Strictly higher rank takes, except that an Elephant never takes a Rat, and a Rat
    takes an Elephant.

    >>> can_take(8, 7), can_take(8, 1), can_take(1, 8), can_take(3, 3)
    (True, False, True, False)
    """
    if attacker_rank == 1 and defender_rank == 8:
        return True
    if attacker_rank == 8 and defender_rank == 1:
        return False
    return attacker_rank > defender_rank


@attrs.frozen
class Tables:
    """Precomputed tables for one rule set (built by :func:`tables`).

    - ``step[sq * 4 + d]``: the neighbour of ``sq`` in direction ``d`` (0 = row - 1,
      1 = row + 1, 2 = col - 1, 3 = col + 1), or -1 off the board.
    - ``neighbours[sq]``: ``(d, neighbour)`` pairs in ascending ``d``.
    - ``battle[p * NUM_CODES + q]``: the :class:`BattleResult` of face-up code ``p`` attacking
      face-up code ``q`` (DARK options applied; CLASSIC ignores trap/water here).
    - ``water[sq]``, ``trap_of[sq]`` (the player whose den the trap guards, or -1),
      ``den_of[sq]`` (-1 or the den's owner), ``dens[player]``: CLASSIC terrain.
    - ``jump[sq * 4 + d]``: for a Lion/Tiger on ``sq`` next to water in direction ``d``,
      ``(landing, water squares crossed)``; None otherwise.
    - ``moves_of[sq]``: ``(action, neighbour)`` for each on-board direction from ``sq``.
    - ``dark_target_ok[p][q]``: DARK: may face-up code ``p`` move onto a square holding
      code ``q`` (empty, a face-down piece if ``attack_face_down``, or a battle the
      options allow)?
    - ``dark_effect[p * NUM_CODES + q]``: DARK: what face-up ``p`` moving onto a square
      whose piece is (or has just turned up as) face-up ``q`` (0: empty) leaves behind,
      ``(code left on the source square, code left on the target, removed-piece bits)``
      with bit ``code - 1`` per piece removed; a piece of the mover's own that turns up
      stops the move. The one statement of a DARK move's effect: the
      transition and the agents' incremental evaluations read it.
    - ``classic_candidates[code][sq]``: CLASSIC: the moves the piece ``code`` on ``sq``
      may make on the terrain alone, as ``(action, landing, ok, crossed)`` in ascending
      action: ``ok[q]`` says whether it may land on a square holding code ``q`` (empty;
      an enemy it takes by rank, or any enemy on a trap by its own den; nothing across
      the water's edge), and ``crossed`` lists the water squares a leap crosses (a Rat in
      one blocks it). The static half of CLASSIC's move rule: the terrain
      (only a Rat swims, a Tiger or Lion leaps, nobody enters their own den) is decided
      here once; :func:`jungle_core._moves.classic_actions` adds the board. Empty for
      DARK.
    - ``classic_landing[code][sq * 4 + d]``: CLASSIC: where the piece ``code`` on ``sq``
      moving in direction ``d`` lands (a Tiger or Lion facing water: across it), or -1
      off the board; what the transition and ``landing`` read. Empty for DARK.
    - ``classic_clear[code][sq]``: CLASSIC: ``(squares, by_own)``: the bits of every
      landing and crossed water square of ``classic_candidates[code][sq]``, and for
      each subset of them that the mover's own pieces hold, the actions still legal
      when no enemy piece stands on any of them (an own piece on a landing blocks it,
      an own Rat in the water blocks the leap, an empty landing is always allowed). The
      generator reads one entry per piece and tests the candidates one by one only for
      a piece next to an enemy (or an enemy Rat in its leap).
    - ``neighbour_window[sq]``: the bits of ``sq``'s on-board neighbours in the window
      ``(bitboard << cols) >> sq`` of a bitboard (bit ``t - sq + cols`` for neighbour
      ``t``; the shift by ``cols`` keeps the row above at bit 0 and up).
    - ``moves_by_window[sq]``: for each subset of ``neighbour_window[sq]`` (the
      neighbours a piece on ``sq`` may not enter), the move actions to the other
      neighbours, ascending. The DARK move generator reads one entry per piece.
    - ``dark_rank_forbids``: DARK: some face-up piece may not attack some opposing
      face-up piece (``weaker_attack`` or ``equal_rank`` ``"forbidden"``), so a move
      onto an opponent needs ``dark_target_ok``.
    """

    rows: int
    cols: int
    step: tuple[int, ...]
    neighbours: tuple[tuple[tuple[int, int], ...], ...]
    battle: tuple[int, ...]
    water: tuple[bool, ...]
    trap_of: tuple[int, ...]
    den_of: tuple[int, ...]
    dens: tuple[int, int]
    jump: tuple[tuple[int, tuple[int, ...]] | None, ...]
    moves_of: tuple[tuple[tuple[int, int], ...], ...]
    dark_target_ok: tuple[tuple[bool, ...], ...]
    dark_effect: tuple[tuple[int, int, int], ...]
    classic_candidates: tuple[tuple[tuple[ClassicCandidate, ...], ...], ...]
    classic_landing: tuple[tuple[int, ...], ...]
    classic_clear: tuple[tuple[tuple[int, dict[int, tuple[int, ...]]], ...], ...] = attrs.field(
        eq=False
    )
    neighbour_window: tuple[int, ...]
    moves_by_window: tuple[dict[int, tuple[int, ...]], ...] = attrs.field(eq=False)
    dark_rank_forbids: bool


_DELTAS = ((-1, 0), (1, 0), (0, -1), (0, 1))
LEAPERS = (6, 7)
"""Tiger and Lion: the ranks that leap over water (CLASSIC)."""


_TAKE = BattleResult.TAKE


def _classic_candidates(
    n: int,
    step: list[int],
    water: list[bool],
    trap_of: list[int],
    den_of: list[int],
    jump: list[tuple[int, tuple[int, ...]] | None],
    battle: tuple[int, ...],
) -> tuple[tuple[tuple[ClassicCandidate, ...], ...], ...]:
    """``Tables.classic_candidates`` of a CLASSIC board (index: code, then square)."""
    by_code: list[tuple[tuple[ClassicCandidate, ...], ...]] = [((),) * n]
    for c in range(1, 17):
        owner, rank = (c - 1) >> 3, ((c - 1) & 7) + 1
        own = range(owner * 8 + 1, owner * 8 + 9)
        per_square = []
        for sq in range(n):
            moves: list[ClassicCandidate] = []
            for d in range(4):
                target = step[sq * 4 + d]
                if target < 0:
                    continue
                crossed: tuple[int, ...] = ()
                if water[target] and rank != 1:
                    leap = jump[sq * 4 + d]
                    if rank not in LEAPERS or leap is None:
                        continue
                    target, crossed = leap
                if den_of[target] == owner:
                    continue
                edge = water[sq] != water[target]
                ok = tuple(
                    q == 0
                    or (
                        q not in own
                        and not edge
                        and (trap_of[target] == owner or battle[c * NUM_CODES + q] == _TAKE)
                    )
                    for q in range(NUM_CODES)
                )
                moves.append((n + sq * 4 + d, target, ok, crossed))
            per_square.append(tuple(moves))
        by_code.append(tuple(per_square))
    by_code.extend([((),) * n] * (NUM_CODES - 17))
    return tuple(by_code)


def _classic_clear(
    candidates: tuple[tuple[tuple[ClassicCandidate, ...], ...], ...],
) -> tuple[tuple[tuple[int, dict[int, tuple[int, ...]]], ...], ...]:
    """``Tables.classic_clear`` from ``Tables.classic_candidates``."""
    by_code = []
    for per_square in candidates:
        entries = []
        for moves in per_square:
            bits = sorted({1 << sq for _, target, _, crossed in moves for sq in (target, *crossed)})
            table = {}
            for subset in range(1 << len(bits)):
                own = sum(bit for i, bit in enumerate(bits) if subset >> i & 1)
                table[own] = tuple(
                    action
                    for action, target, _, crossed in moves
                    if not own & (1 << target) and not any(own & (1 << w) for w in crossed)
                )
            entries.append((sum(bits), table))
        by_code.append(tuple(entries))
    return tuple(by_code)


def _window_tables(
    n: int, cols: int, moves_of: tuple[tuple[tuple[int, int], ...], ...]
) -> tuple[tuple[int, ...], tuple[dict[int, tuple[int, ...]], ...]]:
    """``Tables.neighbour_window`` and ``Tables.moves_by_window`` of a board."""
    windows = []
    by_window = []
    for sq in range(n):
        bits = [1 << (target - sq + cols) for _, target in moves_of[sq]]
        windows.append(sum(bits))
        by_window.append(_subsets(bits, [action for action, _ in moves_of[sq]]))
    return tuple(windows), tuple(by_window)


def _subsets(bits: list[int], actions: list[int]) -> dict[int, tuple[int, ...]]:
    """For each subset of ``bits`` (blocked landings), the actions whose bit is not in it."""
    table = {}
    for subset in range(1 << len(bits)):
        blocked = sum(bit for i, bit in enumerate(bits) if subset >> i & 1)
        table[blocked] = tuple(a for i, a in enumerate(actions) if not subset >> i & 1)
    return table


def _battle_table(rules: Rules) -> tuple[int, ...]:
    table = [BattleResult.FORBIDDEN] * NUM_CODES * NUM_CODES
    for p in range(1, 17):
        for q in range(1, 17):
            if (p - 1) >> 3 == (q - 1) >> 3:
                continue
            a, b = ((p - 1) & 7) + 1, ((q - 1) & 7) + 1
            if a == b:
                result = {
                    "both_removed": BattleResult.BOTH,
                    "forbidden": BattleResult.FORBIDDEN,
                    "attacker_wins": BattleResult.TAKE,
                }[rules.equal_rank]
            elif can_take(a, b):
                result = BattleResult.TAKE
            elif rules.weaker_attack == "attacker_removed":
                result = BattleResult.LOSE
            else:
                result = BattleResult.FORBIDDEN
            table[p * NUM_CODES + q] = result
    return tuple(table)


def _dark_effect_table(battle: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    effect = [(0, 0, 0)] * (NUM_CODES * NUM_CODES)
    for p in range(1, 17):
        for q in range(17):
            if not q:
                result = BattleResult.TAKE
            elif (q - 1) >> 3 == (p - 1) >> 3:
                result = BattleResult.FORBIDDEN
            else:
                result = battle[p * NUM_CODES + q]
            p_bit, q_bit = 1 << (p - 1), (1 << (q - 1)) if q else 0
            effect[p * NUM_CODES + q] = {
                BattleResult.TAKE: (EMPTY, p, q_bit),
                BattleResult.BOTH: (EMPTY, EMPTY, p_bit | q_bit),
                BattleResult.LOSE: (EMPTY, q, p_bit),
                BattleResult.FORBIDDEN: (p, q, 0),
            }[result]
    return tuple(effect)


@functools.cache
def tables(rules: Rules) -> Tables:
    """The tables of a rule set, built on first use and cached.

    >>> from jungle_core import DARK, CLASSIC
    >>> t = tables(DARK)
    >>> t.step[0 * 4 + 1], t.step[0 * 4 + 0]   # a1 up is a2 (square 8); a1 down is off
    (8, -1)
    >>> tables(CLASSIC).jump[(3 * 7 + 0) * 4 + 3]   # a4 jumps right over b4, c4 to d4
    (24, (22, 23))
    """
    rows, cols = rules.rows, rules.cols
    n = rows * cols
    step = [-1] * (n * 4)
    for sq in range(n):
        r, c = divmod(sq, cols)
        for d, (dr, dc) in enumerate(_DELTAS):
            rr, cc = r + dr, c + dc
            if 0 <= rr < rows and 0 <= cc < cols:
                step[sq * 4 + d] = rr * cols + cc
    neighbours = tuple(
        tuple((d, step[sq * 4 + d]) for d in range(4) if step[sq * 4 + d] >= 0) for sq in range(n)
    )
    water = [False] * n
    trap_of = [-1] * n
    den_of = [-1] * n
    dens = (-1, -1)
    if rules.variant == "classic":
        for r in range(3, 6):
            for c in (1, 2, 4, 5):
                water[r * cols + c] = True
        dens = (0 * cols + 3, 8 * cols + 3)
        den_of[dens[0]] = 0
        den_of[dens[1]] = 1
        for sq in (0 * cols + 2, 0 * cols + 4, 1 * cols + 3):
            trap_of[sq] = 0
        for sq in (8 * cols + 2, 8 * cols + 4, 7 * cols + 3):
            trap_of[sq] = 1
    jump: list[tuple[int, tuple[int, ...]] | None] = [None] * (n * 4)
    for sq in range(n):
        if water[sq]:
            continue
        for d in range(4):
            crossed: list[int] = []
            t = step[sq * 4 + d]
            while t >= 0 and water[t]:
                crossed.append(t)
                t = step[t * 4 + d]
            if crossed and t >= 0:
                jump[sq * 4 + d] = (t, tuple(crossed))
    battle = _battle_table(rules)
    moves_of = tuple(tuple((n + 4 * sq + d, t) for d, t in neighbours[sq]) for sq in range(n))
    dark_target_ok = tuple(
        tuple(
            q == 0
            or (q >= HIDDEN and rules.attack_face_down)
            or (1 <= p <= 16 and q <= 16 and battle[p * NUM_CODES + q] != BattleResult.FORBIDDEN)
            for q in range(NUM_CODES)
        )
        for p in range(NUM_CODES)
    )
    classic = rules.variant == "classic"
    candidates = (
        _classic_candidates(n, step, water, trap_of, den_of, jump, battle)
        if classic
        else ((),) * NUM_CODES
    )
    neighbour_window, moves_by_window = _window_tables(n, cols, moves_of)
    return Tables(
        neighbour_window=neighbour_window,
        moves_by_window=moves_by_window,
        dark_rank_forbids=any(
            battle[p * NUM_CODES + q] == BattleResult.FORBIDDEN
            for p in range(1, 17)
            for q in range(1, 17)
            if (p - 1) >> 3 != (q - 1) >> 3
        ),
        classic_candidates=candidates,
        classic_landing=tuple(
            tuple(
                leap[0]
                if classic
                and 0 <= (target := step[m]) < n
                and water[target]
                and ((code - 1) & 7) + 1 in LEAPERS
                and (leap := jump[m]) is not None
                else step[m]
                for m in range(4 * n)
            )
            if classic and 1 <= code <= 16
            else ()
            for code in range(NUM_CODES)
        ),
        classic_clear=_classic_clear(candidates),
        dark_effect=_dark_effect_table(battle),
        rows=rows,
        cols=cols,
        step=tuple(step),
        neighbours=neighbours,
        battle=battle,
        water=tuple(water),
        trap_of=tuple(trap_of),
        den_of=tuple(den_of),
        dens=dens,
        jump=tuple(jump),
        moves_of=moves_of,
        dark_target_ok=dark_target_ok,
    )
