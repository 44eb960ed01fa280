"""Tensors for learning: observations and the tabular feature view.

DARK observation, ``float32[7, 8, 6]`` for the player to move, channels:

0. probability that the piece on the square belongs to player 0 (1 or 0 for a face-up
   or known-owner piece; for a face-down piece of unknown owner, player 0's share of the
   face-down pieces);
1. the same for player 1;
2. rank / 8 for a face-up piece, 0 otherwise;
3. 1 for a face-up piece (so an occupied square with 0 here is face down);
4. as channel 0 / 1, for the player to move;
5. as channel 0 / 1, for the opponent.

CLASSIC observation, ``float32[9, 7, 22]``, channels:

- 0..7: player 0's piece of rank 1..8 on the square (one-hot);
- 8..15: player 1's piece of rank 1..8;
- 16: water; 17: a trap guarding player 0's den; 18: a trap guarding player 1's den;
- 19: player 0's den; 20: player 1's den;
- 21: all ones when player 1 is to move, all zeros when player 0 is.

Feature view, ``float32[rows, cols, 4]``: owner (0 / 1, 0.5 when unknown), rank / 8,
face up, occupied; an empty square is all zeros.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from jungle_core._state import State
from jungle_core._tables import tables

__all__ = ["CLASSIC_CHANNELS", "DARK_CHANNELS", "features", "observation", "observation_shape"]

DARK_CHANNELS = 6
CLASSIC_CHANNELS = 22

_CODES = np.arange(20)
_FACE_UP = (_CODES >= 1) & (_CODES <= 16)
_OWNER1 = (_CODES >= 9) & (_CODES <= 16)
_RANK = np.where(_FACE_UP, ((_CODES - 1) & 7) + 1, 0).astype(np.float32)


def observation_shape(state: State) -> tuple[int, int, int]:
    """The shape of :func:`observation` for the state's rule set.

    >>> from jungle_core import new_game, CLASSIC
    >>> observation_shape(new_game()), observation_shape(new_game(CLASSIC))
    ((7, 8, 6), (9, 7, 22))
    """
    rules = state.rules
    channels = DARK_CHANNELS if rules.variant == "dark" else CLASSIC_CHANNELS
    return (rules.rows, rules.cols, channels)


def _owner_probabilities(state: State) -> npt.NDArray[np.float32]:
    """``float32[20, 2]``: P(owner = 0), P(owner = 1) for each square code."""
    mask = state.face_down_mask
    n0 = bin(mask & 0xFF).count("1")
    n1 = bin(mask >> 8).count("1")
    table = np.zeros((20, 2), dtype=np.float32)
    table[1:9, 0] = 1.0
    table[9:17, 1] = 1.0
    if n0 + n1:
        table[17] = (n0 / (n0 + n1), n1 / (n0 + n1))
    table[18, 0] = 1.0
    table[19, 1] = 1.0
    return table


def observation(state: State) -> npt.NDArray[np.float32]:
    """The observation tensor for the player to move (see the module docstring).

    >>> from jungle_core import new_game
    >>> obs = observation(new_game())
    >>> obs.shape, obs.dtype, float(obs[0, 0, 0]), float(obs[0, 0, 3])
    ((7, 8, 6), dtype('float32'), 0.5, 0.0)
    """
    rules = state.rules
    codes = np.asarray(state.board, dtype=np.intp)
    if rules.variant == "dark":
        owners = _owner_probabilities(state)[codes]
        out = np.empty((codes.size, DARK_CHANNELS), dtype=np.float32)
        out[:, 0:2] = owners
        out[:, 2] = _RANK[codes] / 8.0
        out[:, 3] = _FACE_UP[codes]
        out[:, 4] = owners[:, state.to_move]
        out[:, 5] = owners[:, 1 - state.to_move]
        return out.reshape(rules.rows, rules.cols, DARK_CHANNELS)
    t = tables(rules)
    out = np.zeros((codes.size, CLASSIC_CHANNELS), dtype=np.float32)
    occupied = np.flatnonzero((codes >= 1) & (codes <= 16))
    out[occupied, codes[occupied] - 1] = 1.0
    out[:, 16] = t.water
    trap_of = np.asarray(t.trap_of)
    den_of = np.asarray(t.den_of)
    out[:, 17] = trap_of == 0
    out[:, 18] = trap_of == 1
    out[:, 19] = den_of == 0
    out[:, 20] = den_of == 1
    out[:, 21] = float(state.to_move)
    return out.reshape(rules.rows, rules.cols, CLASSIC_CHANNELS)


def features(state: State) -> npt.NDArray[np.float32]:
    """The tabular feature view ``float32[rows, cols, 4]``: owner, rank/8, face up, occupied.

    >>> from jungle_core import new_game
    >>> f = features(new_game())
    >>> f.shape, f[0, 0].tolist()
    ((7, 8, 4), [0.5, 0.0, 0.0, 1.0])
    """
    rules = state.rules
    codes = np.asarray(state.board, dtype=np.intp)
    owner = np.zeros(20, dtype=np.float32)
    owner[9:17] = 1.0
    owner[17] = 0.5
    owner[19] = 1.0
    out = np.empty((codes.size, 4), dtype=np.float32)
    out[:, 0] = owner[codes]
    out[:, 1] = _RANK[codes] / 8.0
    out[:, 2] = _FACE_UP[codes]
    out[:, 3] = codes != 0
    return out.reshape(rules.rows, rules.cols, 4)
