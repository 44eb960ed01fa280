"""Registration of the built-in agents (random, greedy, minimax) in the spec registry.

Each parameter is declared once, on a field of :class:`SearchConfig`,
:class:`DarkWeights` or :class:`GreedyWeights`: its type, default, help text (and choices)
come from there (:func:`jungle_agents._base.params_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jungle_agents._base import Param, ParamValue, canonical_spec, params_of, register_agent
from jungle_agents._simple import GreedyAgent, GreedyWeights, RandomAgent
from jungle_agents.minimax import HAND, DarkWeights, MinimaxAgent, SearchConfig, make_evaluation
from jungle_core import Rules

__all__: list[str] = []

_GREEDY_PARAMS = params_of(
    GreedyWeights, ("opp_material", "position", "mobility", "safety", "face_down")
)
_SEARCH_PARAMS = params_of(SearchConfig)
_DARK_WEIGHT_PARAMS = params_of(DarkWeights, help_prefix="DARK weight: ")
# the leaf evaluation is the agent's, not the search's: declared here, once
_EVALUATION_PARAMS = {
    "eval": Param(str, HAND, "leaf evaluation: hand (built in) or a registered network (value)"),
    "value_path": Param(str, "", "the network evaluation's checkpoint (default: shipped)"),
}
_MINIMAX_PARAMS = {**_SEARCH_PARAMS, **_DARK_WEIGHT_PARAMS, **_EVALUATION_PARAMS}


def _values(params: Mapping[str, Param], values: Mapping[str, ParamValue]) -> dict[str, Any]:
    """The values of ``params`` among ``values``, each as its parameter's kind (keyword
    arguments for the class that declares them)."""
    return {name: param.kind(values[name]) for name, param in params.items()}


def _random(rules: Rules) -> RandomAgent:
    return RandomAgent(rules)


def _greedy(rules: Rules, **params: ParamValue) -> GreedyAgent:
    weights = GreedyWeights(**_values(_GREEDY_PARAMS, params))
    agent = GreedyAgent(rules, weights)
    agent.name = canonical_spec("greedy", params, _GREEDY_PARAMS)
    return agent


def _minimax(rules: Rules, **params: ParamValue) -> MinimaxAgent:
    config = SearchConfig(**_values(_SEARCH_PARAMS, params))
    weights = DarkWeights(**_values(_DARK_WEIGHT_PARAMS, params))
    # the name always gives the depth; other parameters only where they differ from defaults
    named = {k: v for k, v in params.items() if k != "depth"}
    extras = canonical_spec("minimax", named, _MINIMAX_PARAMS).partition(":")[2]
    name = f"minimax:depth={params['depth']}" + (f",{extras}" if extras else "")
    evaluation, path = str(params["eval"]), str(params["value_path"])
    make_evaluation(evaluation, rules, 0, path)  # a bad name or file fails here, at once
    return MinimaxAgent(
        rules, config, weights, name=name, evaluation=evaluation, evaluation_path=path
    )


def register_builtin_agents() -> None:
    """Register random, greedy and minimax (idempotent)."""
    register_agent("random", _random, {}, "uniformly random legal actions", replace=True)
    register_agent(
        "greedy",
        _greedy,
        _GREEDY_PARAMS,
        "one ply, the heuristic H: material, position, mobility, safety (expected over chance)",
        replace=True,
    )
    register_agent(
        "minimax",
        _minimax,
        _MINIMAX_PARAMS,
        "expectiminimax with a hand-written evaluation and switchable enhancements",
        replace=True,
    )
