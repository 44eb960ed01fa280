"""Pure transition functions of both rule families.

Every function takes a :class:`State` and returns new values; nothing is mutated. The
hot path (``legal_actions``, ``step``, ``outcome``) reads the precomputed tables of
:mod:`jungle_core._tables` and builds one new board tuple per ply.
"""

from __future__ import annotations

import reprlib
from itertools import compress

import numpy as np
import numpy.typing as npt

from jungle_core._errors import GameOverError, IllegalActionError, JungleError, int_text
from jungle_core._rules import DARK, Rules
from jungle_core._state import EMPTY, HIDDEN, Outcome, Reason, State
from jungle_core._tables import BattleResult, tables

__all__ = [
    "chance_outcomes",
    "is_chance_action",
    "legal_action_mask",
    "legal_actions",
    "new_game",
    "outcome",
    "perft",
    "returns",
    "score",
    "step",
    "step_outcome",
    "transitions",
]

_SQUARES = range(256)
_FORBIDDEN, _TAKE, _BOTH, _LOSE = (
    BattleResult.FORBIDDEN,
    BattleResult.TAKE,
    BattleResult.BOTH,
    BattleResult.LOSE,
)
_P0 = frozenset(range(1, 9))
_P1 = frozenset(range(9, 17))
_RATS = (1, 9)

# CLASSIC set-up of SPEC §3, as (square name, owner, rank).
_CLASSIC_SETUP = (
    ("a1", 0, 6), ("g1", 0, 7), ("b2", 0, 2), ("f2", 0, 3),
    ("a3", 0, 8), ("c3", 0, 4), ("e3", 0, 5), ("g3", 0, 1),
    ("a9", 1, 7), ("g9", 1, 6), ("b8", 1, 3), ("f8", 1, 2),
    ("a7", 1, 1), ("c7", 1, 5), ("e7", 1, 4), ("g7", 1, 8),
)  # fmt: skip


_OUTCOMES_OF_MASK: dict[int, tuple[int, ...]] = {}


def _mask_outcomes(mask: int) -> tuple[int, ...]:
    """The outcome indices whose bits are set in ``mask``, ascending (memoised)."""
    found = _OUTCOMES_OF_MASK.get(mask)
    if found is None:
        found = _OUTCOMES_OF_MASK[mask] = tuple(i for i in range(16) if mask >> i & 1)
    return found


def _position_key(board: tuple[int, ...], to_move: int) -> int:
    return hash((board, to_move))


def _as_int(value: object, what: str) -> int:
    """``value`` as a plain int (numpy integers too); anything else is a ``TypeError``.

    Called only when ``type(value) is not int``, so the hot path pays one type test.
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(
            f"{what} must be an int, not {type(value).__name__} {reprlib.repr(value)}"
        )
    return int(value)


def _action_in_space(state: State, action: object) -> int:
    """``action`` as an int of the rule set's action space, else ``TypeError`` /
    :class:`IllegalActionError` naming it."""
    a = action if type(action) is int else _as_int(action, "an action")
    n = state.rules.num_actions
    if not 0 <= a < n:
        raise IllegalActionError(
            f"action {int_text(a)} is outside the action space 0..{n - 1} of {state.rules.name}"
        )
    return a


# --------------------------------------------------------------------------- set-up


def new_game(rules: Rules = DARK, *, seed: int | None = None) -> State:
    """The starting position of a rule set.

    ``seed`` matters only for ``setup="scattered"``, where it picks the 16 squares of
    the face-down pieces; the other set-ups are the same every time (under
    ``mixed_rows`` nobody knows which face-down piece is which, so there is nothing to
    shuffle: a reveal draws its piece when it happens).

    >>> s = new_game()
    >>> s.board[:8], s.to_move
    ((17, 17, 17, 17, 17, 17, 17, 17), 0)
    >>> from jungle_core import CLASSIC
    >>> new_game(CLASSIC).board[0]   # a1: player 0's Tiger
    6
    """
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a Rules value, not {type(rules).__name__}")
    if seed is not None:
        if type(seed) is not int:
            seed = _as_int(seed, "seed")
        if seed < 0:
            raise JungleError(f"seed must be None or an int >= 0, not {int_text(seed)}")
    n = rules.rows * rules.cols
    board = [EMPTY] * n
    mask = 0xFFFF
    cols = rules.cols
    if rules.setup == "mixed_rows":
        for c in range(cols):
            board[c] = board[(rules.rows - 1) * cols + c] = HIDDEN
    elif rules.setup == "home_rows":
        for c in range(cols):
            board[c] = 18
            board[(rules.rows - 1) * cols + c] = 19
    elif rules.setup == "scattered":
        rng = np.random.default_rng(seed)
        for sq in rng.choice(n, size=16, replace=False):
            board[int(sq)] = HIDDEN
    else:
        mask = 0
        for name, owner, rank in _CLASSIC_SETUP:
            col, row = ord(name[0]) - 97, int(name[1:]) - 1
            board[row * cols + col] = owner * 8 + rank
    b = tuple(board)
    history = (_position_key(b, 0),) if rules.repetition == "ban_third" else ()
    return State(rules, b, 0, mask, 0, 0, history)


# ------------------------------------------------------------------ legal actions

# One-entry caches keyed on the identity of the last state asked about: the usual loop
# (legal_actions, step, outcome of the new state, legal_actions of it) asks twice.
_last_legal: tuple[State | None, tuple[int, ...]] = (None, ())
_last_outcome: tuple[State | None, Outcome | None] = (None, None)


def legal_actions(state: State) -> tuple[int, ...]:
    """The legal actions, ascending (reveals first, then moves); empty when none.

    Actions are SPEC §4 integers: ``sq`` reveals square ``sq``, and
    ``rows * cols + sq * 4 + d`` moves the piece on ``sq`` in direction ``d``
    (0 = row - 1, 1 = row + 1, 2 = col - 1, 3 = col + 1). A finished game may still list
    actions (the game is over by :func:`outcome`, not by an empty list).

    >>> legal_actions(new_game())[:3], len(legal_actions(new_game()))
    ((0, 1, 2), 16)
    """
    global _last_legal
    cached = _last_legal
    if cached[0] is state:
        return cached[1]
    result = _dark_legal(state) if state.rules.variant == "dark" else _classic_legal(state)
    _last_legal = (state, result)
    return result


def legal_action_mask(state: State) -> npt.NDArray[np.bool_]:
    """A ``bool[rules.num_actions]`` vector, True exactly for the legal actions.

    >>> m = legal_action_mask(new_game())
    >>> m.shape, m.dtype, int(m.sum())
    ((280,), dtype('bool'), 16)
    """
    mask = np.zeros(state.rules.num_actions, dtype=np.bool_)
    mask[list(legal_actions(state))] = True
    return mask


def _dark_legal(state: State) -> tuple[int, ...]:
    rules = state.rules
    t = tables(rules)
    board = state.board
    me = state.to_move
    moves_of = t.moves_of
    target_ok = t.dark_target_ok
    reveal_any = rules.reveal == "any"
    own_hidden = 18 + me
    lo = me * 8 + 1
    hi = lo + 8
    reveals: list[int] = []
    moves: list[int] = []
    # compress() skips the empty squares at C speed: most squares are empty.
    for sq in compress(_SQUARES, board):
        c = board[sq]
        if c >= HIDDEN:
            if reveal_any or c == own_hidden:
                reveals.append(sq)
        elif lo <= c < hi:
            ok = target_ok[c]
            for action, target in moves_of[sq]:
                if ok[board[target]]:
                    moves.append(action)
    reveals.extend(moves)
    return tuple(reveals)


def _classic_destination(state: State, sq: int, d: int) -> int:
    """Where the piece on ``sq`` lands moving in direction ``d``, or -1 if it cannot."""
    t = tables(state.rules)
    board = state.board
    c = board[sq]
    target = t.step[sq * 4 + d]
    if target < 0:
        return -1
    if t.water[target]:
        rank = ((c - 1) & 7) + 1
        if rank == 1:
            return target
        if rank not in (6, 7):
            return -1
        jump = t.jump[sq * 4 + d]
        if jump is None:
            return -1
        landing, crossed = jump
        for w in crossed:
            if board[w] in _RATS:
                return -1
        return landing
    return target


def _classic_legal(state: State) -> tuple[int, ...]:
    t = tables(state.rules)
    board = state.board
    me = state.to_move
    n = len(board)
    lo = me * 8 + 1
    hi = lo + 8
    moves_of, water, jump, den_of, trap_of, battle = (
        t.moves_of,
        t.water,
        t.jump,
        t.den_of,
        t.trap_of,
        t.battle,
    )
    moves: list[int] = []
    for sq in compress(_SQUARES, board):
        c = board[sq]
        if not lo <= c < hi:
            continue
        rank = c - lo + 1
        for action, step_to in moves_of[sq]:
            target = step_to
            if water[target]:
                if rank == 1:
                    pass
                elif rank in (6, 7):
                    leap = jump[action - n]
                    if leap is None:
                        continue
                    target, crossed = leap
                    if any(board[w] in _RATS for w in crossed):
                        continue
                else:
                    continue
            if den_of[target] == me:
                continue
            q = board[target]
            if q and (
                lo <= q < hi
                or water[sq] != water[target]
                or (trap_of[target] != me and battle[c * 20 + q] != _TAKE)
            ):
                continue
            moves.append(action)
    if state.rules.repetition == "ban_third":
        return tuple(a for a in moves if _repetition_ok(state, a))
    return tuple(moves)


def _repetition_ok(state: State, action: int) -> bool:
    nxt = _apply(state, action, -1)
    key = nxt.history[-1]
    return state.history.count(key) < 2


def _is_legal(state: State, action: int) -> bool:
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
        return c >= HIDDEN and (rules.reveal == "any" or c == 18 + me)
    sq, d = divmod(action - n, 4)
    c = board[sq]
    if not (me * 8 < c <= me * 8 + 8):
        return False
    target = tables(rules).step[sq * 4 + d]
    if target < 0:
        return False
    q = board[target]
    if not q:
        return True
    if q >= HIDDEN:
        return rules.attack_face_down
    return tables(rules).battle[c * 20 + q] != BattleResult.FORBIDDEN


# ----------------------------------------------------------------------- chance


def _chance_mask(state: State, action: int) -> int:
    """The face-down mask an action draws its outcome from (0: no chance)."""
    board = state.board
    n = len(board)
    if action < n:
        square = action
    else:
        if state.rules.variant != "dark":
            return 0
        square = tables(state.rules).step[action - n]
    c = board[square]
    if c == HIDDEN:
        return state.face_down_mask
    if c == 18:
        return state.face_down_mask & 0xFF
    if c == 19:
        return state.face_down_mask & 0xFF00
    return 0


def is_chance_action(state: State, action: int) -> bool:
    """True when a legal ``action`` turns a piece face up (a chance event).

    An action outside the action space raises :class:`IllegalActionError`.

    >>> is_chance_action(new_game(), 0)
    True
    """
    return _chance_mask(state, _action_in_space(state, action)) != 0


def chance_outcomes(state: State, action: int) -> tuple[tuple[int, float], ...]:
    """The chance outcomes of a legal action as ``(outcome, probability)`` pairs.

    An outcome is the index ``owner * 8 + rank - 1`` of the piece turned face up, drawn
    uniformly from the matching pieces still face down. An action without chance has the
    single outcome ``(-1, 1.0)``.

    >>> chance_outcomes(new_game(), 0)[:2]
    ((0, 0.0625), (1, 0.0625))
    """
    if type(action) is not int:
        action = _as_int(action, "an action")
    _check(state, action)
    outcomes = _mask_outcomes(_chance_mask(state, action))
    if not outcomes:
        return ((-1, 1.0),)
    p = 1.0 / len(outcomes)
    return tuple((o, p) for o in outcomes)


# ------------------------------------------------------------------- transitions


def _apply(state: State, action: int, outcome_index: int) -> State:
    """The next state after a legal action with a given chance outcome (-1: none)."""
    rules = state.rules
    board = list(state.board)
    n = len(board)
    me = state.to_move
    mask = state.face_down_mask
    removed = False
    if action < n:
        board[action] = outcome_index + 1
        mask &= ~(1 << outcome_index)
    elif rules.variant == "dark":
        t = tables(rules)
        sq = (action - n) >> 2
        target = t.step[action - n]
        p = board[sq]
        q = board[target]
        if q >= HIDDEN:
            mask &= ~(1 << outcome_index)
            q = outcome_index + 1
            result = _FORBIDDEN if (q - 1) >> 3 == me else t.battle[p * 20 + q]
            if result == _FORBIDDEN:
                board[target] = q
        elif q:
            result = t.battle[p * 20 + q]
        else:
            result = _TAKE
        if result == _TAKE:
            removed = q != EMPTY
            board[target] = p
            board[sq] = EMPTY
        elif result == _BOTH:
            removed = True
            board[target] = board[sq] = EMPTY
        elif result == _LOSE:
            removed = True
            board[target] = q
            board[sq] = EMPTY
    else:
        sq, d = divmod(action - n, 4)
        target = _classic_destination(state, sq, d)
        removed = board[target] != EMPTY
        board[target] = board[sq]
        board[sq] = EMPTY
    b = tuple(board)
    history = state.history
    if rules.repetition == "ban_third":
        key = _position_key(b, 1 - me)
        history = (key,) if removed else (*history, key)
    return State(
        rules,
        b,
        1 - me,
        mask,
        0 if removed else state.plies_since_removal + 1,
        state.ply + 1,
        history,
    )


def _check(state: State, action: int) -> None:
    if not _is_legal(state, action):
        from jungle_core._notation import describe_action, to_fen

        raise IllegalActionError(
            f"{describe_action(state, action)} is not legal in {to_fen(state)!r}"
        )


def _check_not_over(state: State, action: int) -> None:
    if outcome(state) is not None:
        from jungle_core._notation import describe_action, to_fen

        raise GameOverError(
            f"cannot play {describe_action(state, action)}: the game is over in {to_fen(state)!r}"
        )


def transitions(state: State, action: int) -> tuple[tuple[float, State], ...]:
    """The exact distribution of next states after ``action``: ``(probability, state)``.

    One entry of probability 1.0 for an action without chance; one per possible
    (owner, rank) for an action that turns a piece face up.

    >>> ts = transitions(new_game(), 0)
    >>> len(ts), ts[0][0]
    (16, 0.0625)
    """
    if type(action) is not int:
        action = _as_int(action, "an action")
    _check_not_over(state, action)
    _check(state, action)
    outcomes = _mask_outcomes(_chance_mask(state, action))
    if not outcomes:
        return ((1.0, _apply(state, action, -1)),)
    p = 1.0 / len(outcomes)
    return tuple((p, _apply(state, action, o)) for o in outcomes)


def step_outcome(state: State, action: int, outcome_index: int) -> State:
    """The next state after ``action`` when its chance outcome is ``outcome_index``.

    ``outcome_index`` is ``owner * 8 + rank - 1`` of the piece turned face up, or -1
    for an action without chance; it must be one of :func:`chance_outcomes`.

    >>> s = step_outcome(new_game(), 0, 15)   # a1 turns out to be player 1's Elephant
    >>> s.board[0], s.to_move
    (16, 1)
    """
    if type(action) is not int:
        action = _as_int(action, "an action")
    if type(outcome_index) is not int:
        outcome_index = _as_int(outcome_index, "an outcome index")
    _check_not_over(state, action)
    _check(state, action)
    possible = _mask_outcomes(_chance_mask(state, action)) or (-1,)
    if outcome_index not in possible:
        raise IllegalActionError(
            f"outcome {int_text(outcome_index)} is not possible for action {action}; "
            f"possible: {possible}"
        )
    return _apply(state, action, outcome_index)


def step(state: State, action: int, rng: np.random.Generator) -> State:
    """Play ``action``, sampling its chance outcome (if any) with ``rng``.

    Raises :class:`GameOverError` on a finished game and :class:`IllegalActionError`
    for an illegal action; the input state is never changed.

    >>> rng = np.random.default_rng(0)
    >>> s = step(new_game(), 0, rng)
    >>> s.ply, s.board[0] != 17
    (1, True)
    """
    if type(action) is not int:
        action = _as_int(action, "an action")
    _check_not_over(state, action)
    cached = _last_legal
    if cached[0] is not state or action not in cached[1]:
        _check(state, action)
    outcomes = _mask_outcomes(_chance_mask(state, action))
    if not outcomes:
        return _apply(state, action, -1)
    k = len(outcomes)
    # rng.random() is several times cheaper than rng.integers() per call.
    return _apply(state, action, outcomes[min(int(rng.random() * k), k - 1)])


# ---------------------------------------------------------------------- game end


def outcome(state: State) -> Outcome | None:
    """How the game ended, or None while it goes on.

    Checked in this order: a den entered (CLASSIC); a player without pieces (both at
    once: a draw); the no-removal limit and the ply limit (draws); the player to move
    without a legal action (a loss, or a draw under ``no_moves="draw"``).

    >>> outcome(new_game()) is None
    True
    """
    global _last_outcome
    cached = _last_outcome
    if cached[0] is state:
        return cached[1]
    result = _outcome(state)
    _last_outcome = (state, result)
    return result


def _outcome(state: State) -> Outcome | None:
    rules = state.rules
    board = state.board
    if rules.variant == "classic":
        dens = tables(rules).dens
        if board[dens[1]] in _P0:
            return Outcome(0, Reason.DEN_ENTERED)
        if board[dens[0]] in _P1:
            return Outcome(1, Reason.DEN_ENTERED)
    mask = state.face_down_mask
    if mask & 0xFF and mask & 0xFF00:
        has0 = has1 = True
    else:
        present = set(board)
        has0 = bool(mask & 0xFF) or not present.isdisjoint(_P0)
        has1 = bool(mask & 0xFF00) or not present.isdisjoint(_P1)
    if not (has0 and has1):
        winner = None if has0 == has1 else (0 if has0 else 1)
        return Outcome(winner, Reason.ELIMINATION)
    if rules.no_removal_limit and state.plies_since_removal >= rules.no_removal_limit:
        return Outcome(None, Reason.NO_REMOVAL_LIMIT)
    if rules.ply_limit and state.ply >= rules.ply_limit:
        return Outcome(None, Reason.PLY_LIMIT)
    if not (mask and rules.reveal == "any") and not legal_actions(state):
        winner = None if rules.no_moves == "draw" else 1 - state.to_move
        return Outcome(winner, Reason.NO_LEGAL_ACTIONS)
    return None


def returns(state: State) -> tuple[float, float]:
    """The players' returns: (+1, -1), (-1, +1), (0, 0) for a draw or an unfinished game.

    An unfinished game counts as a draw here and in :func:`score` (as the arena counts a
    game stopped at its ply limit); test :func:`outcome` to tell them apart.

    >>> returns(new_game())
    (0.0, 0.0)
    """
    result = outcome(state)
    if result is None or result.winner is None:
        return (0.0, 0.0)
    return (1.0, -1.0) if result.winner == 0 else (-1.0, 1.0)


def score(state: State, player: int) -> float:
    """``player``'s score: 1 a win, 0.5 a draw, 0 a loss; ``(returns(state)[player] + 1) / 2``.

    Results are reported as the mean score over games (SPEC §2). An unfinished game
    scores 0.5, as :func:`returns` gives it (0, 0). ``player`` must be 0 or 1.

    >>> from jungle_core import from_fen
    >>> score(from_fen("8/8/8/8/8/8/E7 1 0 9 - -"), 0)
    1.0
    >>> score(new_game(), 1)
    0.5
    """
    if type(player) is not int:
        player = _as_int(player, "player")
    if player not in (0, 1):
        raise JungleError(f"player must be 0 or 1, not {int_text(player)}")
    return (returns(state)[player] + 1.0) / 2.0


# ------------------------------------------------------------------------ perft


def perft(state: State, depth: int) -> int:
    """The number of action sequences of length ``depth`` from ``state``.

    Each chance outcome is its own branch, and a finished game counts as one leaf.

    >>> perft(new_game(), 1)   # 16 reveals, 16 possible pieces each
    256
    """
    if type(depth) is not int:
        depth = _as_int(depth, "perft depth")
    if depth < 0:
        raise JungleError(f"perft depth must be >= 0, not {int_text(depth)}")
    return _perft(state, depth)


def _perft(state: State, depth: int) -> int:
    if depth == 0 or outcome(state) is not None:
        return 1
    total = 0
    for action in legal_actions(state):
        outcomes = _mask_outcomes(_chance_mask(state, action))
        if depth == 1:
            total += len(outcomes) or 1
            continue
        for o in outcomes or (-1,):
            total += _perft(_apply(state, action, o), depth - 1)
    return total
