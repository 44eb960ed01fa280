"""The ``azero`` presets: the strongest measured AlphaZero-style agents under plain names,
registered through the ``jungle.agents`` entry point ``presets`` (``pyproject.toml``), as
the learned agents are (:mod:`jungle_train._registry`).

Each preset is a full spec with the figures measured for it on DARK (docs/results.md,
"The AlphaZero-style agent", where the commands that measured them are):

- ``azero-strong``: four-piece endgame tables, a small price on a draw and on a dead
  draw, bounds on a side that can no longer win, and twice the search while a piece is
  face down. 0.905 against minimax depth 3 over 400 duplicate deals, 918 ms a decision.
- ``azero-fast``: the default search at half its simulations, 1,024. 0.825 against
  minimax depth 3 over 200 games, 135 ms a decision (the default, 2,048 simulations:
  0.854 over 1,000 games, 312 ms).

>>> register_presets()
>>> from jungle_agents import presets
>>> presets()["azero-strong"].measured.score
0.905
"""

from __future__ import annotations

from jungle_agents import Measured, register_preset
from jungle_core import DARK

__all__ = ["AZERO_FAST", "AZERO_STRONG", "register_presets"]

AZERO_STRONG = "azero:endgame=4,dead_draw=0.1,draw_bounds=1,face_down_simulations=4096"
"""The strongest ``azero`` measured on DARK."""

AZERO_FAST = "azero:simulations=1024"
"""The default search at 1,024 simulations: most of its strength at under half its time."""


def register_presets() -> None:
    """Register ``azero-strong`` and ``azero-fast`` (idempotent)."""
    register_preset(
        "azero-strong",
        AZERO_STRONG,
        DARK,
        Measured(0.905, "minimax:depth=3", 400, 918.0),
        "the strongest measured DARK agent",
    )
    register_preset(
        "azero-fast",
        AZERO_FAST,
        DARK,
        Measured(0.825, "minimax:depth=3", 200, 135.0),
        "azero at 1,024 simulations: most of its strength at under half its time",
    )
