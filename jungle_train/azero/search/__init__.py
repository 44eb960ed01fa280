"""AlphaZero-style search on the JAX core: the true rules as the model.

:func:`make_search` builds a jitted search from a :class:`SearchConfig` and an evaluator
(a network, the hand-made value, or a DQN's prior with the hand-made value); chance nodes
are DARK's reveals. The search calls only mctx's public policies.
"""

from jungle_train.azero.search._config import SearchConfig
from jungle_train.azero.search._evaluations import (
    blended_evaluation,
    dqn_prior_evaluation,
    hand_evaluation,
)
from jungle_train.azero.search._mctx_fast import COMPILER_OPTIONS
from jungle_train.azero.search._search import make_search, step_result, zero_evaluator
from jungle_train.azero.search._slots import in_actions_values

__all__ = [
    "COMPILER_OPTIONS",
    "SearchConfig",
    "blended_evaluation",
    "dqn_prior_evaluation",
    "hand_evaluation",
    "in_actions_values",
    "make_search",
    "step_result",
    "zero_evaluator",
]
