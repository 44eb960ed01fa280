"""The hand-made values the searches are measured with: no learning, one home.

- DARK: :func:`heuristic_value`, the material balance (:func:`material_balance`, by the
  piece values of :data:`PIECE_VALUES`) plus :data:`POTENTIAL_WEIGHT` times the shaping
  potentials' difference; :func:`winning_material` (from :func:`winnable`), whether a
  side's material can still win, for the search's draw bounds; and
  :func:`expected_gain` for the search's ``afterstate="expected"``;
- CLASSIC: the CLASSIC evaluation's piece-square table (:func:`classic_piece_squares`)
  through ``tanh`` (:func:`hand_value`) and each move's change of it as a prior
  (:func:`classic_prior_logits`).

All are written on the JAX core's :class:`jungle_core.jax_env.JaxState` for one position
(``vmap`` them over a batch); :mod:`jungle_train.azero.search._evaluations` turns them into the
search's evaluators.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jungle_agents import ClassicEvaluator, GreedyWeights
from jungle_core import Rules
from jungle_core.jax_env import JaxState
from jungle_core.lowlevel import NUM_CODES, BattleResult, tables
from jungle_train.jitted import potential, present

__all__ = [
    "CLASSIC_VALUE_SCALE",
    "PIECE_VALUES",
    "POTENTIAL_WEIGHT",
    "PRIOR_SCALE",
    "capture_gain",
    "classic_piece_squares",
    "classic_prior_logits",
    "classic_targets",
    "expected_gain",
    "hand_value",
    "heuristic_value",
    "material_balance",
    "winnable",
    "winning_material",
]


PIECE_VALUES: dict[str, tuple[float, ...]] = {
    "spec": tuple(GreedyWeights().values[rank] for rank in range(1, 9)),
}
"""The piece values of :func:`material_balance` by name, Rat (rank 1) to Elephant (8).
``spec``: the Greedy agent's values (:class:`jungle_agents.GreedyWeights`' ``values``,
so they have one home)."""


def _values_array(values: tuple[float, ...]) -> jax.Array:
    """``float32[16]``: ``values`` (8, by rank) for each piece identity ``owner*8 + rank-1``."""
    if len(values) != 8:
        raise ValueError(f"piece values: 8 (Rat to Elephant), not {len(values)}: {values}")
    return jnp.asarray(np.array(values * 2, np.float32))


def _balance_of(
    held_bits: jax.Array,
    player: jax.Array | int,
    values: tuple[float, ...] = PIECE_VALUES["spec"],
) -> jax.Array:
    """:func:`material_balance` of a ``present`` mask (``int32[...]``), over its leading axes."""
    bits = (held_bits[..., None] >> jnp.arange(16)) & 1
    held = bits.astype(jnp.float32) * _values_array(values)
    mine = jnp.where(player == 0, jnp.sum(held[..., :8], -1), jnp.sum(held[..., 8:], -1))
    total = jnp.sum(held, -1)
    return jnp.where(total > 0, (2.0 * mine - total) / jnp.maximum(total, 1.0), 0.0)


def material_balance(
    state: JaxState,
    player: jax.Array | int,
    values: tuple[float, ...] = PIECE_VALUES["spec"],
) -> jax.Array:
    """``float32[]``: ``(M_player - M_other) / (M_player + M_other)`` over the pieces
    still in the game (face up on the board or face down, by identity), ``M`` by the
    piece ``values`` (8 floats, Rat to Elephant; static), the Greedy agent's values by
    default (rank 8: 80, ..., 2: 20, the Rat 30; :data:`PIECE_VALUES`); 0 when nobody
    has any.

    >>> from jungle_core import from_fen
    >>> from jungle_core.jax_env import make
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/E1r5 0 0 0 - -"))
    >>> round(float(material_balance(s, 0)), 3), round(float(material_balance(s, 1)), 3)
    (0.455, -0.455)
    """
    return _balance_of(present(state), player, values)


@functools.cache
def _capture_tables(rules: Rules) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``(step int32[N, 4], gone int32[20, 20])``: DARK's neighbours (``N``, the padding
    square, off the board) and the identities removed when face-up code ``p`` attacks
    face-up code ``q`` (``gone[p, q]``; 0 for anything else), from the core's tables."""
    t = tables(rules)
    n = rules.rows * rules.cols
    step = np.array(t.step, dtype=np.int32).reshape(n, 4)
    step[step < 0] = n
    gone = np.zeros((NUM_CODES, NUM_CODES), np.int32)
    for p in range(1, 17):
        for q in range(1, 17):
            gone[p, q] = t.dark_effect[p * NUM_CODES + q][2]
    return step, gone


def capture_gain(rules: Rules, state: JaxState) -> jax.Array:
    """``float32[]``: what the player to move gains at once by its best legal attack on a
    face-up enemy piece: the rise of its :func:`material_balance` (0 when no attack
    gains). A leaf's static value misses a piece left hanging for the side to move, and
    after a reveal (a chance node) the search's first look at the new position is such a
    leaf: the piece it just turned up beside a stronger enemy reads as safe. This is a
    one-ply capture search at the leaf, as quiescence search does it, without the reply.
    DARK only.

    >>> from jungle_core import DARK, from_fen
    >>> from jungle_core.jax_env import make
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -"))  # E takes w
    >>> round(float(capture_gain(DARK, s)), 3), round(float(material_balance(s, 0)), 3)
    (0.667, 0.333)
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/E1w5 0 0 0 - -"))  # not adjacent
    >>> float(capture_gain(DARK, s))
    0.0
    """
    step_np, gone_np = _capture_tables(rules)
    n = rules.rows * rules.cols
    player = state.current_player
    b = state.board.astype(jnp.int32)
    q = jnp.concatenate([b, jnp.zeros(1, jnp.int32)])[jnp.asarray(step_np)]  # [N, 4]
    enemy = (q >= 1) & (q <= 16) & (((q - 1) >> 3) != player)
    legal = state.legal_action_mask[n:].reshape(n, 4)
    held = present(state)
    after = held & ~jnp.asarray(gone_np)[b[:, None], q]  # [N, 4]
    gain = _balance_of(after, player) - _balance_of(held, player)
    return jnp.maximum(jnp.max(jnp.where(legal & enemy, gain, 0.0)), 0.0)


def expected_gain(rules: Rules, state: JaxState, action: jax.Array, probs: jax.Array) -> jax.Array:
    """``float32[]``: the expected change of the mover's :func:`material_balance` when
    ``action`` is played in ``state``, over its chance outcomes ``probs`` (``float32[16]``,
    :meth:`jungle_core.jax_env.JaxEnv.chance_probs` of the same action): a move onto a
    face-up enemy piece changes it by what the battle removes; a move onto a face-down
    piece by the average over the pieces it may turn out to be (one of the mover's own:
    nothing removed); a reveal or a move onto an empty square not at all (the balance
    counts face-down pieces by identity already). DARK only; what the search's chance
    node is worth before any of its outcomes is searched with ``afterstate="expected"``
    (:class:`jungle_train.azero.search._config.SearchConfig`).

    >>> from jungle_core import DARK, from_fen
    >>> from jungle_core.jax_env import make
    >>> env = make()
    >>> s = env.from_state(from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -"))  # E takes w
    >>> take = 56 + 0 * 4 + 3  # a1 -> b1
    >>> round(float(expected_gain(DARK, s, take, env.chance_probs(s, take))), 3)
    0.667
    >>> s = env.from_state(from_fen("8/8/8/8/8/8/E?6 0 0 0 - r"))  # b1: p1's face-down Rat
    >>> round(float(expected_gain(DARK, s, take, env.chance_probs(s, take))), 3)
    -1.455
    """
    step_np, gone_np = _capture_tables(rules)
    n = rules.rows * rules.cols
    player = state.current_player
    board = jnp.concatenate([state.board.astype(jnp.int32), jnp.zeros(1, jnp.int32)])
    action = jnp.asarray(action, jnp.int32)
    is_move = (action >= n) & (action < 5 * n)
    move = jnp.clip(action - n, 0, 4 * n - 1)
    mover_code = board[move // 4]
    target = board[jnp.asarray(step_np)[move // 4, move % 4]]
    # a face-down target: each possible piece in turn (outcome i is identity i, code i + 1)
    codes = jnp.where(target > 16, jnp.arange(16, dtype=jnp.int32) + 1, target)  # [16]
    enemy = (codes >= 1) & (codes <= 16) & (((codes - 1) >> 3) != player)
    removed = jnp.where(is_move & enemy, jnp.asarray(gone_np)[mover_code, codes], 0)
    held = present(state)
    gain = _balance_of(held & ~removed, player) - _balance_of(held, player)  # [16]
    return jnp.sum(probs * gain)


POTENTIAL_WEIGHT = 0.01
"""Weight of the shaping potential's difference in :func:`heuristic_value`."""


@functools.cache
def _hunt_relation(rules: Rules) -> np.ndarray[Any, Any]:
    """``bool[20, 20]``: square code ``a`` can take or trade with (both removed) ``b``."""
    battle = np.asarray(tables(rules).battle).reshape(20, 20)
    hunts: np.ndarray[Any, Any] = (battle == BattleResult.TAKE) | (battle == BattleResult.BOTH)
    return hunts


def winnable(rules: Rules, state: JaxState, player: jax.Array | int) -> jax.Array:
    """``bool[]``: whether ``player`` can still remove every enemy piece: each enemy piece
    in the game (face up or face down) has at least one piece of ``player``'s in the game
    that can take it or trade with it (equal ranks: both removed) under ``rules``' battle
    table. A side that cannot is playing for a draw at best: DARK is won only by removing
    the last enemy piece, and the exact tables of :mod:`jungle_agents.endgame` have every
    two-against-one material in which neither of the two can remove the one drawn (or
    lost), whatever the material count says (a Tiger and a Lion against an Elephant).

    >>> from jungle_core import DARK, from_fen
    >>> from jungle_core.jax_env import make
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/TL3e2 0 0 0 - -"))  # Tiger, Lion / Elephant
    >>> bool(winnable(DARK, s, 0)), bool(winnable(DARK, s, 1))
    (False, True)
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/RL3e2 0 0 0 - -"))  # the Rat takes it
    >>> bool(winnable(DARK, s, 0))
    True
    """
    relation = jnp.asarray(_hunt_relation(rules)[1:17, 1:17])  # identity i removes j
    bits = ((present(state) >> jnp.arange(16)) & 1).astype(bool)
    owner = jnp.arange(16) >> 3
    mine = bits & (owner == player)
    theirs = bits & (owner != player)
    removable = jnp.any(relation & mine[:, None], axis=0)
    return jnp.all(removable | ~theirs)


def winning_material(
    rules: Rules, state: JaxState, player: jax.Array | int, trades: bool = False
) -> jax.Array:
    """``bool[]``: whether ``player``'s material can still win: it can remove every enemy
    piece (:func:`winnable`), and it holds more pieces than the enemy or one piece that
    takes an enemy piece and survives. Without either, every removal it can make is a
    trade of equal ranks, so the count never tips its way and its last removal takes its
    own last piece with the enemy's (one Elephant against one: a draw). A necessary
    condition for a win, not a sufficient one (a lone chaser needs the parity, and a
    side can let its pieces be taken): where it fails for both sides the position is a
    dead draw, whatever the material count says.

    With ``trades`` (static), the sharper test that counts them: an enemy piece none of
    ``player``'s takes can only be traded with (by the one piece of its rank), which
    costs ``player`` that piece, so it must hold more pieces than there are such enemy
    pieces (the others taken first, by pieces that survive). A lone Elephant against an
    Elephant and a Tiger takes the Tiger, then must trade its last piece: no win. Like
    the other, it stays false once false: an enemy piece none of ``player``'s takes
    leaves the game only in a trade with one of them.

    >>> from jungle_core import DARK, from_fen
    >>> from jungle_core.jax_env import make
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/E3e3 0 0 0 - -"))  # Elephant / Elephant
    >>> bool(winning_material(DARK, s, 0)), bool(winning_material(DARK, s, 1))
    (False, False)
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/EL2el2 0 0 0 - -"))  # E takes the Lion
    >>> bool(winning_material(DARK, s, 0)), bool(winning_material(DARK, s, 1))
    (True, True)
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/E3et2 0 0 0 - -"))  # E / E, Tiger
    >>> bool(winning_material(DARK, s, 0)), bool(winning_material(DARK, s, 0, trades=True))
    (True, False)
    """
    battle = np.asarray(tables(rules).battle).reshape(NUM_CODES, NUM_CODES)[1:17, 1:17]
    takes = jnp.asarray(battle == BattleResult.TAKE)  # identity i takes j and survives
    bits = ((present(state) >> jnp.arange(16)) & 1).astype(bool)
    owner = jnp.arange(16) >> 3
    mine = bits & (owner == player)
    theirs = bits & (owner != player)
    taken = jnp.any(takes & mine[:, None], axis=0)  # j: some piece of player's takes it
    if trades:
        enough = jnp.sum(mine) > jnp.sum(theirs & ~taken)
    else:
        enough = (jnp.sum(mine) > jnp.sum(theirs)) | jnp.any(taken & theirs)
    return winnable(rules, state, player) & enough


def heuristic_value(rules: Rules, state: JaxState, player: jax.Array | int) -> jax.Array:
    """``float32[]``: a hand-made value of a position for ``player``, in about [-1, 1]:
    the :func:`material_balance` plus :data:`POTENTIAL_WEIGHT` times the difference of
    the two players' shaping potentials (Opp − Threat: pieces near enemies they can take
    count for, near enemies that can take them against;
    :func:`jungle_train.jitted.potential`), which points the search at the enemy's weaker
    pieces beyond its horizon.

    >>> from jungle_core import DARK, from_fen
    >>> from jungle_core.jax_env import make
    >>> s = make().from_state(from_fen("8/8/8/8/8/8/E1r5 0 0 0 - -"))
    >>> round(float(heuristic_value(DARK, s, 0)), 3)
    0.431
    """
    mine = potential(state, player, rules)
    theirs = potential(state, 1 - player, rules)
    return material_balance(state, player) + POTENTIAL_WEIGHT * (mine - theirs)


CLASSIC_VALUE_SCALE = 200.0
"""CLASSIC's hand-made value is ``tanh(evaluation / CLASSIC_VALUE_SCALE)``: a piece of
value 80 up reads as about 0.38, the Elephant's 100 with its development as about 0.5."""


@functools.cache
def classic_piece_squares(rules: Rules) -> np.ndarray[Any, np.dtype[np.float32]]:
    """``float32[NUM_CODES, N]``: the piece-square table of the CLASSIC evaluation of
    :class:`jungle_agents.ClassicEvaluator` for player 0 (piece value, development, den
    attack and den defence, enemy pieces negative; 0 for the empty square), so that
    ``Σ_sq table[board[sq], sq]`` is that evaluation without its threat and mobility
    terms (which need a move loop). Player 1's is its negation.

    >>> from jungle_core import CLASSIC
    >>> classic_piece_squares(CLASSIC).shape
    (20, 63)
    """
    pst = np.zeros((NUM_CODES, rules.num_squares), np.float32)
    rows = ClassicEvaluator(rules, 0).pst
    pst[: len(rows)] = np.asarray(rows, np.float32)
    return pst


PRIOR_SCALE = 20.0
"""CLASSIC's hand prior: logits are each move's change of the piece-square evaluation
for the mover divided by this (taking a piece of value 80: about +4; a step toward the
enemy den: +0.075 far from it, more within five steps of it, where den attack counts)."""


@functools.cache
def classic_targets(rules: Rules) -> np.ndarray[Any, np.dtype[np.int32]]:
    """``int32[NUM_CODES, N, 4]``: the square each piece reaches from each square in each
    direction on an otherwise empty board (a Lion's or Tiger's jump lands beyond the
    river), read from the core's ``tables(rules).classic_candidates``; the square itself where the
    piece cannot move that way. Legality (a Rat in the water blocking a jump, the
    capture rules, the own den) is left to the legal-action mask.

    >>> from jungle_core import CLASSIC
    >>> t = classic_targets(CLASSIC)
    >>> t.shape, int(t[0, 5, 0])          # the empty square goes nowhere
    ((20, 63, 4), 5)
    """
    n = rules.num_squares
    target = np.tile(np.arange(n, dtype=np.int32)[None, :, None], (NUM_CODES, 1, 4))
    t = tables(rules)
    for code in range(1, 17):
        for sq in range(n):
            for action, to, _, _ in t.classic_candidates[code][sq]:
                target[code, sq, (action - n) % 4] = to
    return target


def classic_prior_logits(
    rules: Rules, pst: jax.Array, targets: jax.Array, state: JaxState
) -> jax.Array:
    """``float32[A]``: CLASSIC's hand prior for the player to move: each move's change of
    the piece-square evaluation (:func:`classic_piece_squares`; a capture also removes
    the victim's term) for the mover, over :data:`PRIOR_SCALE`; 0 for the reveal slots
    (illegal in CLASSIC). ``targets``: :func:`classic_targets`.

    >>> from jungle_core import CLASSIC, from_fen, new_game, parse_action
    >>> from jungle_core.jax_env import make
    >>> s = new_game(CLASSIC)
    >>> pst = jnp.asarray(classic_piece_squares(CLASSIC))
    >>> logits = classic_prior_logits(CLASSIC, pst, jnp.asarray(classic_targets(CLASSIC)),
    ...                               make(CLASSIC).from_state(s))
    >>> bool(logits[parse_action(s, "a3-a4")] > 0)   # the Elephant steps toward the den
    True
    """
    n = rules.num_squares
    board = state.board.astype(jnp.int32)
    codes = jnp.repeat(board, 4)  # the piece on each move's square, move order (sq, dir)
    squares = jnp.repeat(jnp.arange(n), 4)
    to = targets[codes, squares, jnp.tile(jnp.arange(4), n)]
    victims = board[to]
    change = pst[codes, to] - pst[codes, squares] - jnp.where(to != squares, pst[victims, to], 0.0)
    mover = jnp.where(state.current_player == 0, change, -change) / PRIOR_SCALE
    return jnp.concatenate([jnp.zeros(n, jnp.float32), mover.astype(jnp.float32)])


def hand_value(rules: Rules, pst: jax.Array, state: JaxState, player: jax.Array | int) -> jax.Array:
    """``float32[]``: a hand-made value of a position for ``player``, in [-1, 1]: DARK's
    :func:`heuristic_value`; CLASSIC's piece-square evaluation (``pst``:
    :func:`classic_piece_squares`, ``float32[NUM_CODES, N]``) through ``tanh(x /``
    :data:`CLASSIC_VALUE_SCALE` ``)``.

    >>> from jungle_core import CLASSIC, from_fen, new_game
    >>> from jungle_core.jax_env import make
    >>> pst = jnp.asarray(classic_piece_squares(CLASSIC))
    >>> start = make(CLASSIC).from_state(new_game(CLASSIC))
    >>> float(hand_value(CLASSIC, pst, start, 0)) == float(hand_value(CLASSIC, pst, start, 1))
    True
    """
    if rules.is_dark:
        return heuristic_value(rules, state, player)
    squares = jnp.arange(rules.num_squares)
    score = jnp.sum(pst[state.board.astype(jnp.int32), squares])
    return jnp.tanh(jnp.where(player == 0, score, -score) / CLASSIC_VALUE_SCALE)
