"""The rules of movement, once: legal actions, chance, the transition, the end of a game.

These functions trust their input (a legal action, a possible chance outcome): they are
the hot path of the pure core and of every search, and the checked public functions of
:mod:`jungle_core._game` call them after validating. Agents reach them through the public
:mod:`jungle_core.lowlevel`.

The CLASSIC move rule lives in :func:`classic_moves` (which moves exist) and
:func:`landing` (where a move lands); the DARK move rule in :func:`dark_legal` and the
DARK battle in ``Tables.dark_effect``; the transition of both in :func:`apply`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from jungle_core._codes import EMPTY, HIDDEN, HIDDEN_P0, HIDDEN_P1, NUM_CODES
from jungle_core._rules import Rules
from jungle_core._state import (
    LAYER_BITS,
    LAYER_MASK,
    Outcome,
    Reason,
    State,
    board_bitboards,
    next_state,
)
from jungle_core._tables import Tables, tables

__all__ = [
    "apply",
    "chance_mask",
    "classic_actions",
    "classic_moves",
    "draw_outcome",
    "is_legal",
    "landing",
    "leap_blocked",
    "legal_actions",
    "mask_outcomes",
    "outcome",
    "position_key",
    "settled_outcome",
    "stuck_outcome",
    "vouched",
]

_RATS = (1, 9)


# The tables of the rule set last asked about, by identity: cheaper than the cached
# ``tables()`` call (which hashes the Rules) on every ply of a game.
_hot_rules: Rules | None = None
_hot_tables: Tables | None = None


def _tables(rules: Rules) -> Tables:
    global _hot_rules, _hot_tables
    if rules is not _hot_rules or _hot_tables is None:
        _hot_tables = tables(rules)
        _hot_rules = rules
    return _hot_tables


@functools.cache
def mask_outcomes(mask: int) -> tuple[int, ...]:
    """The outcome indices whose bits are set in a face-down mask, ascending.

    >>> mask_outcomes(0b1000_0000_0000_0101)
    (0, 2, 15)
    """
    return tuple(i for i in range(16) if mask >> i & 1)


def position_key(board: tuple[int, ...], to_move: int) -> int:
    """The repetition key of a position (``repetition='ban_third'``)."""
    return hash((board, to_move))


# ------------------------------------------------------------------ legal actions


def dark_legal(state: State) -> tuple[int, ...]:
    """DARK's legal actions, ascending (reveals, then moves).

    Read off the state's bitboards: the face-down squares are the reveals (under
    ``reveal="own"``, those of the mover's own face-down code), and each of the mover's
    face-up pieces moves to every neighbour that no piece of its own holds (nor a
    face-down piece, unless ``attack_face_down``): one lookup of
    ``Tables.moves_by_window`` per piece. Where the rules forbid some attacks by rank
    (``Tables.dark_rank_forbids``), a move onto an opposing piece is then checked against
    ``Tables.dark_target_ok``, the battle rule's one statement.
    """
    rules = state.rules
    t = _hot_tables if rules is _hot_rules and _hot_tables else _tables(rules)
    me = state.to_move
    bitboards = state.bitboards
    down = bitboards >> 128
    out: list[int] = []
    # The near-copies below are on purpose: merged forms measured slower on the positions
    # of random DARK games (µs a call, the same process): one reveal loop that tests
    # ``reveal`` per square 1.42-1.67 against 1.23-1.25, one piece loop that tests
    # ``dark_rank_forbids`` per piece 1.57-1.67 against 1.24-1.39.
    if down:
        if rules.reveal == "any":
            bits = down
            while bits:
                low = bits & -bits
                out.append(low.bit_length() - 1)
                bits ^= low
        else:
            board = state.board
            own_hidden = HIDDEN_P0 + me
            bits = down
            while bits:
                low = bits & -bits
                sq = low.bit_length() - 1
                if board[sq] == own_hidden:
                    out.append(sq)
                bits ^= low
    own = (bitboards >> (me << 6)) & LAYER_MASK
    if not own:
        return tuple(out)
    pad = t.cols
    blocked = (own if rules.attack_face_down else own | down) << pad
    window = t.neighbour_window
    by_window = t.moves_by_window
    if not t.dark_rank_forbids:
        while own:
            low = own & -own
            sq = low.bit_length() - 1
            own ^= low
            out += by_window[sq][(blocked >> sq) & window[sq]]
        return tuple(out)
    enemy = ((bitboards >> ((1 - me) << 6)) & LAYER_MASK) << pad
    board = state.board
    n = len(board)
    step = t.step
    target_ok = t.dark_target_ok
    while own:
        low = own & -own
        sq = low.bit_length() - 1
        own ^= low
        moves = by_window[sq][(blocked >> sq) & window[sq]]
        if (enemy >> sq) & window[sq]:
            ok = target_ok[board[sq]]
            out += [a for a in moves if ok[board[step[a - n]]]]
        else:
            out += moves
    return tuple(out)


def classic_actions(
    board: tuple[int, ...], me: int, t: Tables, bitboards: int | None = None
) -> list[int]:
    """CLASSIC's moves for player ``me``, ascending: the one statement of its move rule.

    The rules: land steps one square; only a Rat enters water; a Tiger or Lion leaps a
    river unless a Rat swims in the way; nobody enters their own den; a capture needs a
    higher rank (Rat takes Elephant), except that a piece on a trap by the mover's den is
    taken by any rank; a Rat does not capture across the water's edge. What the terrain
    alone decides is in ``t.classic_candidates`` (built once per rule set); this adds the
    board: what stands on the landing square, and Rats in a leap's way. Repetition is not
    checked here (:func:`legal_actions` filters it under ``repetition='ban_third'``).

    ``bitboards`` (``State.bitboards`` of the position; computed from ``board`` when
    not given) finds the mover's pieces; a piece with no enemy on the squares its
    candidates land on or leap over takes its moves from one lookup by the own pieces
    there (``Tables.classic_clear``), the others test their candidates one by one.

    >>> from jungle_core import CLASSIC, new_game
    >>> classic_actions(new_game(CLASSIC).board, 0, tables(CLASSIC))[:2]   # a1 up, a1 right
    [64, 66]
    """
    if bitboards is None:
        bitboards = board_bitboards(board)
    own = (bitboards >> (me << 6)) & LAYER_MASK
    enemy = (bitboards >> ((1 - me) << 6)) & LAYER_MASK
    candidates = t.classic_candidates
    clear = t.classic_clear
    actions: list[int] = []
    pieces = own
    while pieces:
        low = pieces & -pieces
        sq = low.bit_length() - 1
        pieces ^= low
        c = board[sq]
        squares, by_own = clear[c][sq]
        if enemy & squares:
            for action, target, ok, crossed in candidates[c][sq]:
                if ok[board[target]] and not (crossed and leap_blocked(board, crossed)):
                    actions.append(action)
        else:
            actions += by_own[own & squares]
    return actions


def leap_blocked(board: tuple[int, ...], crossed: tuple[int, ...]) -> bool:
    """True when a Rat (either side's) swims on one of the water squares a leap crosses.

    >>> from jungle_core import CLASSIC, from_fen
    >>> leap_blocked(from_fen("7/7/7/7/7/1r5/7/7/7 0 0 0", rules=CLASSIC).board, (22, 23))
    True
    """
    return any(board[w] in _RATS for w in crossed)


def classic_moves(board: tuple[int, ...], me: int, t: Tables) -> Iterator[tuple[int, int, int]]:
    """CLASSIC's moves for player ``me``, as ``(action, from, to)`` in ascending action.

    The moves of :func:`classic_actions`, with the square each leaves and the one it
    lands on (a leap lands across the water).

    >>> from jungle_core import CLASSIC, new_game
    >>> s = new_game(CLASSIC)
    >>> next(classic_moves(s.board, 0, tables(CLASSIC)))   # the Tiger on a1 steps to a2
    (64, 0, 7)
    """
    n = len(board)
    to = t.classic_landing
    for action in classic_actions(board, me, t):
        sq = (action - n) >> 2
        yield action, sq, to[board[sq]][action - n]


def landing(t: Tables, board: tuple[int, ...], sq: int, d: int) -> int:
    """Where the piece on ``sq`` moving in direction ``d`` lands, or -1 off the board.

    Geometry only (a Tiger or Lion facing water lands across it); whether the move is
    legal is :func:`classic_moves`' question. DARK boards have no water: one step.

    >>> from jungle_core import CLASSIC, new_game
    >>> landing(tables(CLASSIC), new_game(CLASSIC).board, 0, 1)   # a1 up: a2
    7
    """
    by_move = t.classic_landing[board[sq]]  # empty for DARK and for an empty square
    return by_move[sq * 4 + d] if by_move else t.step[sq * 4 + d]


def _classic_legal(state: State) -> tuple[int, ...]:
    rules = state.rules
    t = _hot_tables if rules is _hot_rules and _hot_tables else _tables(rules)
    moves = tuple(classic_actions(state.board, state.to_move, t, state.bitboards))
    if rules.repetition == "ban_third":
        return tuple(a for a in moves if _repetition_ok(state, a))
    return moves


def _repetition_ok(state: State, action: int) -> bool:
    key = apply(state, action, -1).history[-1]
    return state.history.count(key) < 2


# One-entry caches keyed on the identity of the last state asked about: the usual loop
# (legal_actions, step, outcome of the new state, legal_actions of it) asks twice.
_last_legal: tuple[State | None, tuple[int, ...]] = (None, ())
_last_outcome: tuple[State | None, Outcome | None] = (None, None)


def legal_actions(state: State) -> tuple[int, ...]:
    """The legal actions, ascending (reveals first, then moves); empty when none.

    Actions are integers (docs/rules.md): ``sq`` reveals square ``sq``, and
    ``rows * cols + sq * 4 + d`` moves the piece on ``sq`` in direction ``d``
    (0 = row - 1, 1 = row + 1, 2 = col - 1, 3 = col + 1). A finished game may still list
    actions (the game is over by :func:`outcome`, not by an empty list).

    >>> from jungle_core import new_game
    >>> legal_actions(new_game())[:3], len(legal_actions(new_game()))
    ((0, 1, 2), 16)
    """
    global _last_legal
    cached = _last_legal
    if cached[0] is state:
        return cached[1]
    result = dark_legal(state) if state.rules.variant == "dark" else _classic_legal(state)
    _last_legal = (state, result)
    return result


def vouched(state: State, action: int) -> bool:
    """True when the one-entry caches know this very state to go on and ``action`` to be
    among its legal actions (a cheap pre-check for :func:`jungle_core.step`: False means
    only "not known", not "illegal" or "over")."""
    known = _last_outcome
    listed = _last_legal
    return known[0] is state and known[1] is None and listed[0] is state and action in listed[1]


def is_legal(state: State, action: int) -> bool:
    """True when ``action`` (any int) is legal in ``state`` (the game need not go on).

    >>> from jungle_core import new_game
    >>> is_legal(new_game(), 3), is_legal(new_game(), 56)
    (True, False)
    """
    rules = state.rules
    n = len(state.board)
    if not 0 <= action < 5 * n:
        return False
    if rules.variant != "dark":
        return action in legal_actions(state)
    board = state.board
    me = state.to_move
    if action < n:
        c = board[action]
        return c >= HIDDEN and (rules.reveal == "any" or c == HIDDEN_P0 + me)
    sq = (action - n) >> 2
    c = board[sq]
    if not (me * 8 < c <= me * 8 + 8):
        return False
    t = _tables(rules)
    target = t.step[action - n]
    return target >= 0 and t.dark_target_ok[c][board[target]]


# ----------------------------------------------------------------------- chance


def chance_mask(state: State, action: int) -> int:
    """The face-down mask a legal action draws its outcome from (0: no chance).

    >>> from jungle_core import new_game
    >>> hex(chance_mask(new_game(), 0))
    '0xffff'
    """
    board = state.board
    n = len(board)
    if action < n:
        square = action
    else:
        if state.rules.variant != "dark":
            return 0
        square = _tables(state.rules).step[action - n]
    c = board[square]
    if c == HIDDEN:
        return state.face_down_mask
    if c == HIDDEN_P0:
        return state.face_down_mask & 0xFF
    if c == HIDDEN_P1:
        return state.face_down_mask & 0xFF00
    return 0


# ------------------------------------------------------------------- transitions


def draw_outcome(state: State, action: int, rng: np.random.Generator) -> int:
    """A chance outcome of a legal action drawn uniformly with ``rng`` (-1: no chance).

    One ``rng.random()`` per chance event (several times cheaper than
    ``rng.integers()``), none otherwise.

    >>> from jungle_core import new_game
    >>> 0 <= draw_outcome(new_game(), 0, np.random.default_rng(0)) < 16
    True
    """
    outcomes = mask_outcomes(chance_mask(state, action))
    if not outcomes:
        return -1
    k = len(outcomes)
    return outcomes[min(int(rng.random() * k), k - 1)]


def apply(
    state: State, action: int, outcome_index: int, rng: np.random.Generator | None = None
) -> State:
    """The next state after a legal action with a possible chance outcome (-1: none).

    With ``rng`` given (and ``outcome_index`` -1), the outcome of an action that turns a
    piece face up is drawn as :func:`draw_outcome` draws it, so a caller that samples
    pays for chance only on the plies that have it.

    >>> from jungle_core import new_game
    >>> apply(new_game(), 0, 15).board[0]   # a1 turns out to be player 1's Elephant
    16
    """
    rules = state.rules
    board = list(state.board)
    n = len(board)
    me = state.to_move
    mask = state.face_down_mask
    in_play = state.in_play
    bitboards = state.bitboards
    removed = False
    if action < n:
        if rng is not None:
            outcome_index = draw_outcome(state, action, rng)
        bitboards ^= (LAYER_BITS[board[action]] ^ LAYER_BITS[outcome_index + 1]) << action
        board[action] = outcome_index + 1
        mask &= ~(1 << outcome_index)
    elif rules.variant == "dark":
        t = _hot_tables if rules is _hot_rules and _hot_tables else _tables(rules)
        sq = (action - n) >> 2
        target = t.step[action - n]
        p = board[sq]
        q = was = board[target]
        if q >= HIDDEN:
            if rng is not None:
                outcome_index = draw_outcome(state, action, rng)
            mask &= ~(1 << outcome_index)
            q = outcome_index + 1
        left_on_source, left_on_target, gone = t.dark_effect[p * NUM_CODES + q]
        board[sq] = left_on_source
        board[target] = left_on_target
        bitboards ^= (LAYER_BITS[p] ^ LAYER_BITS[left_on_source]) << sq ^ (
            LAYER_BITS[was] ^ LAYER_BITS[left_on_target]
        ) << target
        if gone:
            removed = True
            in_play &= ~gone
    else:
        t = _hot_tables if rules is _hot_rules and _hot_tables else _tables(rules)
        sq = (action - n) >> 2
        p = board[sq]
        target = t.classic_landing[p][action - n]
        q = board[target]
        if q:
            removed = True
            in_play &= ~(1 << (q - 1))
        bitboards ^= LAYER_BITS[p] << sq ^ (LAYER_BITS[q] ^ LAYER_BITS[p]) << target
        board[target] = p
        board[sq] = EMPTY
    b = tuple(board)
    history = state.history
    if rules.repetition == "ban_third":
        key = position_key(b, 1 - me)
        history = (key,) if removed else (*history, key)
    return next_state(
        rules,
        b,
        1 - me,
        mask,
        0 if removed else state.plies_since_removal + 1,
        state.ply + 1,
        history,
        in_play,
        bitboards,
    )


# ---------------------------------------------------------------------- game end


def outcome(state: State) -> Outcome | None:
    """How the game ended, or None while it goes on.

    Checked in this order: a den entered (CLASSIC); a player without pieces (both at
    once: a draw); the no-removal limit and the ply limit (draws); the player to move
    without a legal action (a loss, or a draw under ``no_moves="draw"``).

    >>> from jungle_core import new_game
    >>> outcome(new_game()) is None
    True
    """
    global _last_outcome
    cached = _last_outcome
    if cached[0] is state:
        return cached[1]
    result = settled_outcome(state)
    if (
        result is None
        and not (state.face_down_mask and state.rules.reveal == "any")
        and not legal_actions(state)
    ):
        result = stuck_outcome(state)
    _last_outcome = (state, result)
    return result


def settled_outcome(state: State) -> Outcome | None:
    """:func:`outcome` by every rule but the last: a mover without a legal action is left
    to the caller (a search that generates the moves anyway finds out for free).

    >>> from jungle_core import from_fen
    >>> settled_outcome(from_fen("8/8/8/8/8/8/E7 1 0 9 - -")).reason.value
    'elimination'
    """
    rules = state.rules
    if rules.variant == "classic":
        board = state.board
        t = _hot_tables if rules is _hot_rules and _hot_tables else _tables(rules)
        dens = t.dens
        den = board[dens[1]]
        if 0 < den <= 8:
            return Outcome(0, Reason.DEN_ENTERED)
        den = board[dens[0]]
        if 8 < den <= 16:
            return Outcome(1, Reason.DEN_ENTERED)
    in_play = state.in_play
    has0 = in_play & 0xFF
    has1 = in_play & 0xFF00
    if not (has0 and has1):
        winner = None if bool(has0) == bool(has1) else (0 if has0 else 1)
        return Outcome(winner, Reason.ELIMINATION)
    if rules.no_removal_limit and state.plies_since_removal >= rules.no_removal_limit:
        return Outcome(None, Reason.NO_REMOVAL_LIMIT)
    if rules.ply_limit and state.ply >= rules.ply_limit:
        return Outcome(None, Reason.PLY_LIMIT)
    return None


def stuck_outcome(state: State) -> Outcome:
    """The outcome when the player to move has no legal action: a loss, or a draw under
    ``no_moves="draw"``.

    >>> from jungle_core import new_game
    >>> stuck_outcome(new_game()).winner
    1
    """
    winner = None if state.rules.no_moves == "draw" else 1 - state.to_move
    return Outcome(winner, Reason.NO_LEGAL_ACTIONS)
