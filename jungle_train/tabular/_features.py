"""The 16 features ``φ(s, a)`` of the approximate Q-learner, each in [0, 1].

There are board (6), tactical (6) and action (4) features. The board and tactical
features describe the position **after the learner's ply** (an after-state), for an
action that turns a piece face up the probability-weighted mean over its chance outcomes:
features of ``s`` alone are the same for every action and could not rank the actions of a
position. "Own" is the player to move in ``s``. With ``V'`` the Q-learners' piece
values (:data:`jungle_train.tabular._shaping.VALUE`, 20.5 for a full side) and ``d`` Manhattan
distances between revealed pieces:

====  =========================  ===============================================================
 i    name                       value
====  =========================  ===============================================================
 0    own_pieces                 own pieces (face up + face down) / 16
 1    opp_pieces                 opponent's pieces / 16
 2    own_revealed_share         own face-up pieces / own pieces (0 with none)
 3    opp_revealed_share         opponent's face-up / opponent's pieces (0 with none)
 4    own_value_share            Σ V' of own pieces / 20.5 (a full side's V')
 5    opp_value_share            Σ V' of the opponent's pieces / 20.5
 6    max_threat                 max over own face-up pieces of 2 / (1 + d) if its nearest
                                 enemy can take it (else 0)
 7    mean_threat                the mean of the same over own face-up pieces (0 with none)
 8    max_opportunity            max over own face-up pieces of 2 / (1 + d) if it can take its
                                 nearest enemy
 9    mean_opportunity           the mean of the same
 10   nearest_enemy              1 / (1 + the smallest own-enemy distance); 0 when either side
                                 has no face-up piece
 11   own_revealed               own face-up pieces / 8
 12   is_reveal                  1 for a reveal action
 13   is_move                    1 for a move (onto a face-down piece included)
 14   target_centre              the target square's closeness to the board's centre:
                                 ``1 - (|row - 3| / 3 + |col - 3.5| / 3.5) / 2``
                                 (a normalised row and column of the target folded
                                 into one symmetric number: DARK has no sides of the board)
 15   tactical_change            ``0.5 + 0.5 tanh(Δ / 4)``, Δ the expected change of the
                                 shaping potential (Opp - Threat, :func:`potential`)
====  =========================  ===============================================================

Threat and opportunity use the nearest enemy as :func:`jungle_train.tabular._shaping.tactics`
defines it (ties: any of the nearest); the factor 2 scales ``1 / (1 + d)``, at most 1/2
for adjacent pieces, to [0, 1].

>>> from jungle_core import from_fen, parse_action
>>> s = from_fen("e7/8/8/8/8/8/Ew6 0 0 0 - -")     # E a1 can take w b1
>>> actions, phi = action_features(s)
>>> phi.shape, bool(((phi >= 0) & (phi <= 1)).all())
((2, 16), True)
>>> take = actions.index(parse_action(s, "a1xb1"))
>>> phi[take, :2].tolist()                            # after the capture: 1 own, 1 enemy
[0.0625, 0.0625]
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from jungle_core import State, legal_actions, transitions
from jungle_train.tabular._shaping import OPP_WEIGHT, THREAT_WEIGHT, VALUE, potential, tactics

__all__ = ["FEATURE_NAMES", "NUM_FEATURES", "action_features", "state_features"]

FEATURE_NAMES = (
    "own_pieces",
    "opp_pieces",
    "own_revealed_share",
    "opp_revealed_share",
    "own_value_share",
    "opp_value_share",
    "max_threat",
    "mean_threat",
    "max_opportunity",
    "mean_opportunity",
    "nearest_enemy",
    "own_revealed",
    "is_reveal",
    "is_move",
    "target_centre",
    "tactical_change",
)
NUM_FEATURES = 16
_FULL_SIDE = sum(VALUE)


def state_features(state: State, player: int) -> list[float]:
    """Features 0..11 (board and tactical) of ``state`` for ``player``.

    >>> from jungle_core import new_game
    >>> state_features(new_game(), 0)[:6]
    [0.5, 0.5, 0.0, 0.0, 1.0, 1.0]
    """
    return _features_and_potential(state, player)[0]


def _features_and_potential(state: State, player: int) -> tuple[list[float], float]:
    mask = state.face_down_mask
    pieces = [0, 0]
    revealed = [0, 0]
    value = [0.0, 0.0]
    for i in range(16):
        if mask >> i & 1:
            pieces[i >> 3] += 1
            value[i >> 3] += VALUE[(i & 7) + 1]
    for c in state.board:
        if 0 < c < 17:
            side = (c - 1) >> 3
            pieces[side] += 1
            revealed[side] += 1
            value[side] += VALUE[((c - 1) & 7) + 1]
    me, them = player, 1 - player
    opps, threats, nearest = tactics(state, player)
    n = len(opps)
    shaping = OPP_WEIGHT * sum(opps) - THREAT_WEIGHT * sum(threats)
    return [
        pieces[me] / 16,
        pieces[them] / 16,
        revealed[me] / pieces[me] if pieces[me] else 0.0,
        revealed[them] / pieces[them] if pieces[them] else 0.0,
        value[me] / _FULL_SIDE,
        value[them] / _FULL_SIDE,
        2 * max(threats) if n else 0.0,
        2 * sum(threats) / n if n else 0.0,
        2 * max(opps) if n else 0.0,
        2 * sum(opps) / n if n else 0.0,
        1.0 / (1 + nearest) if nearest else 0.0,
        revealed[me] / 8,
    ], shaping


def action_features(state: State) -> tuple[list[int], npt.NDArray[np.float64]]:
    """The legal actions of ``state`` and ``float64[A, 16]``: ``φ(state, a)`` per action
    (module docstring), for the player to move."""
    me = state.to_move
    rules = state.rules
    rows, cols = rules.rows, rules.cols
    n = rows * cols
    cr, cc = (rows - 1) / 2, (cols - 1) / 2
    before = potential(state, me)
    actions = list(legal_actions(state))
    out = np.zeros((len(actions), NUM_FEATURES), dtype=np.float64)
    for j, action in enumerate(actions):
        mean = [0.0] * 12
        change = 0.0
        for p, child in transitions(state, action):
            features, shaping = _features_and_potential(child, me)
            for i, f in enumerate(features):
                mean[i] += p * f
            change += p * (shaping - before)
        if action < n:
            target = action
            out[j, 12] = 1.0
        else:
            target = (action - n) >> 2
            d = (action - n) & 3
            target += (-cols, cols, -1, 1)[d]
            out[j, 13] = 1.0
        row, col = divmod(target, cols)
        out[j, :12] = mean
        out[j, 14] = 1.0 - (abs(row - cr) / cr + abs(col - cc) / cc) / 2
        out[j, 15] = 0.5 + 0.5 * math.tanh(change / 4)
    # a mean over chance outcomes can round a hair past 1
    np.clip(out, 0.0, 1.0, out=out)
    return actions, out
