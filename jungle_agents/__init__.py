"""jungle_agents: game-playing agents behind one protocol, and the arena.

Builds on :mod:`jungle_core` only; it never imports :mod:`jungle_train`.

>>> import numpy as np
>>> from jungle_core import DARK, new_game, legal_actions
>>> agent = make_agent("minimax:depth=2", DARK)
>>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
True
"""

from jungle_agents._base import (
    Agent,
    AgentFactory,
    AgentFailure,
    AgentSpecError,
    Measured,
    Param,
    Preset,
    agent_kinds,
    canonical_name,
    check_spec,
    describe_agents,
    expand_preset,
    kind_help,
    kind_params,
    make_agent,
    params_of,
    parse_spec,
    presets,
    register_agent,
    register_configured,
    register_preset,
)
from jungle_agents._builtin import register_builtin_agents
from jungle_agents._simple import GreedyAgent, GreedyWeights, RandomAgent, greedy_heuristic
from jungle_agents.alphabeta import AlphaBetaAgent, AlphaBetaConfig, AlphaBetaInfo, AlphaBetaSearch
from jungle_agents.engine import register_engine_agent
from jungle_agents.minimax import (
    MAX_DEPTH,
    WIN,
    ClassicEvaluator,
    ClassicWeights,
    DarkEvaluator,
    DarkWeights,
    MinimaxAgent,
    MinimaxConfig,
    SearchConfig,
    Searcher,
    SearchInfo,
    classic_moves,
    register_evaluation,
)

register_builtin_agents()
register_engine_agent()

__all__ = [
    "MAX_DEPTH",
    "WIN",
    "Agent",
    "AgentFactory",
    "AgentFailure",
    "AgentSpecError",
    "AlphaBetaAgent",
    "AlphaBetaConfig",
    "AlphaBetaInfo",
    "AlphaBetaSearch",
    "ClassicEvaluator",
    "ClassicWeights",
    "DarkEvaluator",
    "DarkWeights",
    "GreedyAgent",
    "GreedyWeights",
    "Measured",
    "MinimaxAgent",
    "MinimaxConfig",
    "Param",
    "Preset",
    "RandomAgent",
    "SearchConfig",
    "SearchInfo",
    "Searcher",
    "agent_kinds",
    "canonical_name",
    "check_spec",
    "classic_moves",
    "describe_agents",
    "expand_preset",
    "greedy_heuristic",
    "kind_help",
    "kind_params",
    "make_agent",
    "params_of",
    "parse_spec",
    "presets",
    "register_agent",
    "register_configured",
    "register_evaluation",
    "register_preset",
]
