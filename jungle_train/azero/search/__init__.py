"""AlphaZero-style search on the JAX core: the true rules as the model.

:func:`make_search` builds a jitted search from a :class:`SearchConfig` and an evaluator
(a network, the hand-made value, or a blend); chance nodes are DARK's reveals; exact endgame
tables can score the leaves (:func:`leaf_tables`).
"""

from jungle_train.azero.search._config import SearchConfig
from jungle_train.azero.search._evaluations import (
    blended_evaluation,
    dqn_prior_evaluation,
    hand_evaluation,
)
from jungle_train.azero.search._mctx_fast import COMPILER_OPTIONS
from jungle_train.azero.search._search import make_search, step_result
from jungle_train.azero.search._slots import in_actions_values
from jungle_train.azero.search._table_leaves import leaf_tables

__all__ = [
    "COMPILER_OPTIONS",
    "SearchConfig",
    "blended_evaluation",
    "dqn_prior_evaluation",
    "hand_evaluation",
    "in_actions_values",
    "leaf_tables",
    "make_search",
    "step_result",
]
