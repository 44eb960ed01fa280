"""Pure transition functions of both rule families.

Every function takes a :class:`State` and returns new values; nothing is mutated. These are the
checked entry points: they validate their arguments (typed errors naming the input and
the position) and then call the trusting rules of :mod:`jungle_core._moves`, which read
the precomputed tables of :mod:`jungle_core._tables` and build one new board tuple per
ply.
"""

from __future__ import annotations

import reprlib

import numpy as np
import numpy.typing as npt

from jungle_core._codes import EMPTY, HIDDEN, HIDDEN_P0, HIDDEN_P1
from jungle_core._errors import GameOverError, IllegalActionError, JungleError, int_text
from jungle_core._moves import (
    apply,
    chance_mask,
    is_legal,
    legal_actions,
    mask_outcomes,
    outcome,
    position_key,
    vouched,
)
from jungle_core._notation import describe_action
from jungle_core._position_text import to_fen
from jungle_core._rules import DARK, Rules
from jungle_core._state import State

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

# CLASSIC set-up (player 1's is player 0's turned 180°), as (square name, owner, rank).
_CLASSIC_SETUP = (
    ("a1", 0, 6), ("g1", 0, 7), ("b2", 0, 2), ("f2", 0, 3),
    ("a3", 0, 8), ("c3", 0, 4), ("e3", 0, 5), ("g3", 0, 1),
    ("a9", 1, 7), ("g9", 1, 6), ("b8", 1, 3), ("f8", 1, 2),
    ("a7", 1, 1), ("c7", 1, 5), ("e7", 1, 4), ("g7", 1, 8),
)  # fmt: skip


def _as_int(value: object, what: str) -> int:
    """``value`` as a plain int (numpy integers too); anything else is a ``TypeError``.

    Called only when ``type(value) is not int``, so the hot path pays one type test.
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{what} must be an int, not {type(value).__name__} {reprlib.repr(value)}")
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
            board[c] = HIDDEN_P0
            board[(rules.rows - 1) * cols + c] = HIDDEN_P1
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
    history = (position_key(b, 0),) if rules.repetition == "ban_third" else ()
    return State(rules, b, 0, mask, 0, 0, history)


# ------------------------------------------------------------------ legal actions


def legal_action_mask(state: State) -> npt.NDArray[np.bool_]:
    """A ``bool[rules.num_actions]`` vector, True exactly for the legal actions.

    >>> m = legal_action_mask(new_game())
    >>> m.shape, m.dtype, int(m.sum())
    ((280,), dtype('bool'), 16)
    """
    mask = np.zeros(state.rules.num_actions, dtype=np.bool_)
    mask[list(legal_actions(state))] = True
    return mask


# ----------------------------------------------------------------------- chance


def is_chance_action(state: State, action: int) -> bool:
    """True when a legal ``action`` turns a piece face up (a chance event).

    An action outside the action space raises :class:`IllegalActionError`.

    >>> is_chance_action(new_game(), 0)
    True
    """
    return chance_mask(state, _action_in_space(state, action)) != 0


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
    outcomes = mask_outcomes(chance_mask(state, action))
    if not outcomes:
        return ((-1, 1.0),)
    p = 1.0 / len(outcomes)
    return tuple((o, p) for o in outcomes)


# ------------------------------------------------------------------- transitions


def _check(state: State, action: int) -> None:
    if not is_legal(state, action):
        raise IllegalActionError(
            f"{describe_action(state, action)} is not legal in {to_fen(state)!r}"
        )


def _check_not_over(state: State, action: int) -> None:
    if outcome(state) is not None:
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
    outcomes = mask_outcomes(chance_mask(state, action))
    if not outcomes:
        return ((1.0, apply(state, action, -1)),)
    p = 1.0 / len(outcomes)
    return tuple((p, apply(state, action, o)) for o in outcomes)


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
    possible = mask_outcomes(chance_mask(state, action)) or (-1,)
    if outcome_index not in possible:
        raise IllegalActionError(
            f"outcome {int_text(outcome_index)} is not possible for action {action}; "
            f"possible: {possible}"
        )
    return apply(state, action, outcome_index)


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
    if not vouched(state, action):
        if outcome(state) is not None:
            _check_not_over(state, action)
        _check(state, action)
    return apply(state, action, -1, rng)


# ---------------------------------------------------------------------- game end


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

    Results are reported as the mean score over games, (wins + draws / 2) / games. An
    unfinished game scores 0.5, as :func:`returns` gives it (0, 0). ``player`` must be 0
    or 1.

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
        outcomes = mask_outcomes(chance_mask(state, action))
        if depth == 1:
            total += len(outcomes) or 1
            continue
        for o in outcomes or (-1,):
            total += _perft(apply(state, action, o), depth - 1)
    return total
