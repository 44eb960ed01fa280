"""The Minimax agent: depth-limited expectiminimax with switchable enhancements.

The search (:class:`Searcher`) and its settings (:class:`SearchConfig`; every setting of
the agent kind: :class:`MinimaxConfig`), the DARK and CLASSIC
evaluations, and the registry of named leaf evaluations (``minimax:eval=NAME``). The agent
kind ``minimax`` of the registry builds a :class:`MinimaxAgent` from a spec string.

>>> import numpy as np
>>> from jungle_core import DARK, legal_actions, new_game
>>> agent, start = MinimaxAgent(DARK, SearchConfig(depth=2)), new_game(DARK, seed=0)
>>> agent.act(start, np.random.default_rng(0)) in legal_actions(start)
True
"""

from jungle_agents.minimax._agent import MinimaxAgent, MinimaxConfig
from jungle_agents.minimax._classic_eval import ClassicEvaluator, ClassicWeights, classic_moves
from jungle_agents.minimax._config import SearchConfig
from jungle_agents.minimax._dark_eval import DarkEvaluator, DarkWeights
from jungle_agents.minimax._evaluations import HAND, make_evaluation, register_evaluation
from jungle_agents.minimax._search import MAX_DEPTH, WIN, Searcher, SearchInfo

__all__ = [
    "HAND",
    "MAX_DEPTH",
    "WIN",
    "ClassicEvaluator",
    "ClassicWeights",
    "DarkEvaluator",
    "DarkWeights",
    "MinimaxAgent",
    "MinimaxConfig",
    "SearchConfig",
    "SearchInfo",
    "Searcher",
    "classic_moves",
    "make_evaluation",
    "register_evaluation",
]
