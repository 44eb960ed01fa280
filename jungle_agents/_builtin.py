"""Registration of the built-in agents (random, greedy, minimax) in the spec registry."""

from __future__ import annotations

from jungle_agents._base import Param, ParamValue, canonical_spec, register_agent
from jungle_agents._dark_eval import DarkWeights
from jungle_agents._minimax import MinimaxAgent
from jungle_agents._search_config import SearchConfig
from jungle_agents._simple import GreedyAgent, GreedyWeights, RandomAgent
from jungle_core import Rules

__all__: list[str] = []

_GREEDY_PARAMS = {
    "opp_material": Param(float, 0.8, "factor of the opponent's material in H"),
    "position": Param(float, 1.5, "factor of the position term of H"),
    "mobility": Param(float, 2.0, "per legal action of H's mobility term"),
    "safety": Param(float, 10.0, "factor of H's safety sum"),
    "face_down": Param(float, 30.0, "value of a face-down piece in H"),
}

_MINIMAX_PARAMS = {
    "depth": Param(int, 3, "search depth in decisions (chance nodes take none)"),
    "alphabeta": Param(bool, True, "alpha-beta pruning at decision nodes"),
    "ordering": Param(bool, True, "move ordering (TT move, MVV/LVA, history)"),
    "tt": Param(bool, True, "transposition table keyed on the state"),
    "star1": Param(bool, True, "Star1 pruning at chance nodes"),
    "quiescence": Param(bool, False, "quiescence search on captures"),
    "qdepth": Param(int, 6, "maximum plies of the quiescence search"),
    "reply": Param(bool, True, "at the horizon the opponent may answer a threat (DARK)"),
    "time": Param(float, 0.0, "seconds per decision; > 0: iterative deepening to depth"),
    "margin": Param(float, 2.0, "root values within this of the best count as ties"),
    "contempt": Param(
        float, 100.0, "a draw scores -contempt; quiet plies cost their share of it (DARK)"
    ),
    "tiebreak": Param(
        str,
        "approach",
        "among equal root values: approach enemy pieces, or at random",
        choices=("approach", "random"),
    ),
    "count": Param(float, 1.0, "DARK weight: piece count difference"),
    "rank": Param(float, 10.0, "DARK weight: revealed rank sum difference"),
    "own_face_down": Param(float, 5.0, "DARK weight: own face-down pieces"),
    "opp_face_down": Param(float, 10.0, "DARK weight: opponent's face-down pieces (subtracted)"),
    "take": Param(float, 20.0, "DARK weight: adjacent pair where self can take"),
    "taken": Param(float, 15.0, "DARK weight: adjacent pair where self can be taken"),
}


def _random(rules: Rules) -> RandomAgent:
    return RandomAgent(rules)


def _greedy(rules: Rules, **params: ParamValue) -> GreedyAgent:
    weights = GreedyWeights(
        opp_material=float(params["opp_material"]),
        position=float(params["position"]),
        mobility=float(params["mobility"]),
        safety=float(params["safety"]),
        face_down=float(params["face_down"]),
    )
    agent = GreedyAgent(rules, weights)
    agent.name = canonical_spec("greedy", params, _GREEDY_PARAMS)
    return agent


def _minimax(rules: Rules, **params: ParamValue) -> MinimaxAgent:
    config = SearchConfig(
        depth=int(params["depth"]),
        alphabeta=bool(params["alphabeta"]),
        ordering=bool(params["ordering"]),
        tt=bool(params["tt"]),
        star1=bool(params["star1"]),
        quiescence=bool(params["quiescence"]),
        qdepth=int(params["qdepth"]),
        reply=bool(params["reply"]),
        time=float(params["time"]),
        margin=float(params["margin"]),
        tiebreak=str(params["tiebreak"]),
        contempt=float(params["contempt"]),
    )
    weights = DarkWeights(
        count=float(params["count"]),
        rank=float(params["rank"]),
        own_face_down=float(params["own_face_down"]),
        opp_face_down=float(params["opp_face_down"]),
        take=float(params["take"]),
        taken=float(params["taken"]),
    )
    # the name always gives the depth; other parameters only where they differ from defaults
    named = {k: v for k, v in params.items() if k != "depth"}
    extras = canonical_spec("minimax", named, _MINIMAX_PARAMS).partition(":")[2]
    name = f"minimax:depth={params['depth']}" + (f",{extras}" if extras else "")
    return MinimaxAgent(rules, config, weights, name=name)


def register_builtin_agents() -> None:
    """Register random, greedy and minimax (idempotent)."""
    register_agent("random", _random, {}, "uniformly random legal actions", replace=True)
    register_agent(
        "greedy",
        _greedy,
        _GREEDY_PARAMS,
        "one ply, the SPEC §7 heuristic H (expected over chance outcomes)",
        replace=True,
    )
    register_agent(
        "minimax",
        _minimax,
        _MINIMAX_PARAMS,
        "expectiminimax with the SPEC §7 evaluation and switchable enhancements",
        replace=True,
    )
