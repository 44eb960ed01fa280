"""The learners on the pure DARK core: tabular Q-learning and approximate (linear) Q-learning.

One algorithm a module: :mod:`jungle_train.tabular.qlearn` (the table keyed by the hashable
state) and :mod:`jungle_train.tabular.approxq` (a linear Q over 16 hand-made features).
Both train on the shaped reward of the training game they share, with numpy only.

The shaped reward is public (the JAX twins in :mod:`jungle_train.jitted` score with the
same constants): :func:`expected_ply_reward`, :func:`ply_reward`, :func:`potential` and the
weights they use.
"""

from jungle_train.tabular._shaping import (
    CAPTURE,
    DRAW,
    LOSS,
    LOST,
    MUTUAL,
    OPP_WEIGHT,
    STEP_COST,
    THREAT_WEIGHT,
    VALUE,
    WIN,
    expected_ply_reward,
    ply_reward,
    potential,
)

__all__ = [
    "CAPTURE",
    "DRAW",
    "LOSS",
    "LOST",
    "MUTUAL",
    "OPP_WEIGHT",
    "STEP_COST",
    "THREAT_WEIGHT",
    "VALUE",
    "WIN",
    "expected_ply_reward",
    "ply_reward",
    "potential",
]
