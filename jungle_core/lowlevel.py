"""The core's low-level, unchecked layer: for agents and tools that visit millions of states.

Everything here trusts its input: an action must be legal and a chance outcome possible
(ask :func:`jungle_core.legal_actions` and :func:`chance_mask`), or the result is
undefined. The checked, documented entry points are :func:`jungle_core.step`,
:func:`jungle_core.transitions` and friends; use these only where their checks cost too
much (a search's inner loop). As python-chess does with its masked generator, the rules
are stated once, here, and a search asks instead of restating them.

- Square codes (:data:`EMPTY`, :data:`HIDDEN`, :data:`HIDDEN_P0`, :data:`HIDDEN_P1`,
  :data:`NUM_CODES`, the stride of tables indexed by two codes) and
  :func:`piece_code` / :func:`piece_owner` / :func:`piece_rank`.
- :func:`tables`: per-rule-set lookup tables (neighbours, terrain, jumps, battle results
  ``battle[p * NUM_CODES + q]`` as :class:`BattleResult`).
- :func:`apply`: the transition (``outcome_index`` -1 for an action without chance);
  :func:`chance_mask` / :func:`mask_outcomes`: a reveal's possible outcomes;
  :func:`draw_outcome`: one drawn uniformly.
- :func:`classic_actions`: CLASSIC's legal moves (no repetition ban), the move rule over
  ``tables(rules).classic_candidates`` (each piece's moves on the terrain);
  :func:`classic_moves`: the same as ``(action, from, to)``; :func:`leap_blocked`: a
  Rat in a leap's way;
  :func:`landing`: where a move lands; ``tables(rules).dark_effect``: what a DARK move
  leaves behind.
- :func:`next_state`: the core's constructor for a computed successor;
  :data:`LAYER_BITS` / :data:`LAYER_MASK`: the layout of a state's derived
  ``bitboards`` (each player's face-up pieces, the face-down pieces), for a generator
  that reads pieces by the bit instead of scanning the board.
- :func:`settled_outcome`: :func:`jungle_core.outcome` but for its last rule (the mover
  without a legal action), which :func:`stuck_outcome` states, for a search that
  generates the moves anyway.

>>> from jungle_core import new_game
>>> s = new_game()
>>> mask_outcomes(chance_mask(s, 0))[:3]
(0, 1, 2)
>>> apply(s, 0, 7).board[0] == piece_code(0, 8)   # a1 turned out to be player 0's Elephant
True
"""

from __future__ import annotations

from jungle_core._codes import (
    EMPTY,
    HIDDEN,
    HIDDEN_OWNED,
    HIDDEN_P0,
    HIDDEN_P1,
    NUM_CODES,
    piece_code,
    piece_owner,
    piece_rank,
)
from jungle_core._moves import (
    apply,
    chance_mask,
    classic_actions,
    classic_moves,
    dark_legal,
    draw_outcome,
    is_legal,
    landing,
    leap_blocked,
    mask_outcomes,
    position_key,
    settled_outcome,
    stuck_outcome,
)
from jungle_core._state import LAYER_BITS, LAYER_MASK, next_state
from jungle_core._tables import BattleResult, Tables, tables

__all__ = [
    "EMPTY",
    "HIDDEN",
    "HIDDEN_OWNED",
    "HIDDEN_P0",
    "HIDDEN_P1",
    "LAYER_BITS",
    "LAYER_MASK",
    "NUM_CODES",
    "BattleResult",
    "Tables",
    "apply",
    "chance_mask",
    "classic_actions",
    "classic_moves",
    "dark_legal",
    "draw_outcome",
    "is_legal",
    "landing",
    "leap_blocked",
    "mask_outcomes",
    "next_state",
    "piece_code",
    "piece_owner",
    "piece_rank",
    "position_key",
    "settled_outcome",
    "stuck_outcome",
    "tables",
]
