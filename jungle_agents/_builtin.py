"""Registration of the built-in agents (random, greedy, minimax, alphabeta) in the spec
registry, and of two CLASSIC presets: ``classic-strong``, CLASSIC's strongest measured
agent (``alphabeta`` for a quarter of a second a move), and ``minimax-strong``, the
``minimax`` agent's strongest CLASSIC setting, the reference it was measured against.

Each parameter is declared once, on a field of the kind's settings class
(:class:`MinimaxConfig`, which gathers :class:`SearchConfig` and :class:`DarkWeights`;
:class:`GreedyWeights`): its type, default, help text (and choices) come from there
(:func:`jungle_agents.params_of`), the class checks the values, and the agent's name is
its settings' :func:`~jungle_agents.canonical_name`.
"""

from __future__ import annotations

from jungle_agents._base import Measured, register_agent, register_configured, register_preset
from jungle_agents._fields import canonical_name
from jungle_agents._simple import GreedyAgent, GreedyWeights, RandomAgent
from jungle_agents.alphabeta import AlphaBetaAgent, AlphaBetaConfig
from jungle_agents.minimax import MinimaxAgent, MinimaxConfig, make_evaluation
from jungle_core import CLASSIC, Rules

__all__: list[str] = []

MINIMAX_STRONG = "minimax:time=0.25,depth=30,quiescence=1"
"""The ``minimax`` agent's strongest CLASSIC search: every enhancement, quiescence,
iterative deepening for a quarter of a second (docs/results.md, "CLASSIC")."""

CLASSIC_STRONG = "alphabeta:time=0.25"
"""CLASSIC's strongest measured agent: the ``alphabeta`` search for a quarter of a second
a move (docs/results.md, "CLASSIC")."""


def _random(rules: Rules) -> RandomAgent:
    return RandomAgent(rules)


def _greedy(rules: Rules, weights: GreedyWeights) -> GreedyAgent:
    agent = GreedyAgent(rules, weights)
    agent.name = canonical_name("greedy", weights)
    return agent


def _minimax(rules: Rules, config: MinimaxConfig) -> MinimaxAgent:
    # the name always gives the depth; other parameters only where they differ from defaults
    name = canonical_name("minimax", config, always=("depth",))
    make_evaluation(config.eval, rules, 0, config.value_path)  # a bad name or file fails here
    return MinimaxAgent(
        rules,
        config.search,
        config.weights,
        name=name,
        evaluation=config.eval,
        evaluation_path=config.value_path,
    )


def _alphabeta(rules: Rules, config: AlphaBetaConfig) -> AlphaBetaAgent:
    return AlphaBetaAgent(rules, config, name=canonical_name("alphabeta", config))


def register_builtin_agents() -> None:
    """Register random, greedy, minimax and alphabeta, and the presets ``classic-strong``
    and ``minimax-strong`` (idempotent)."""
    register_agent("random", _random, {}, "uniformly random legal actions", replace=True)
    register_configured(
        "greedy",
        GreedyWeights,
        _greedy,
        "one ply, the heuristic H: material, position, mobility, safety (expected over chance)",
        replace=True,
    )
    register_configured(
        "minimax",
        MinimaxConfig,
        _minimax,
        "expectiminimax with a hand-written evaluation and switchable enhancements",
        replace=True,
    )
    register_configured(
        "alphabeta",
        AlphaBetaConfig,
        _alphabeta,
        "CLASSIC only: fast alpha-beta (PVS, killers, history, quiescence) on a mutable board",
        replace=True,
    )
    register_preset(
        "minimax-strong",
        MINIMAX_STRONG,
        CLASSIC,
        # against azero:simulations=8192, which scored 0.355 (52-38-110); 0.279 s a move
        Measured(0.645, "azero:simulations=8192", 200, 279.0),
        "the minimax agent's strongest CLASSIC setting",
    )
    register_preset(
        "classic-strong",
        CLASSIC_STRONG,
        CLASSIC,
        # 200 games from two-ply openings, each played with both colours
        Measured(0.823, MINIMAX_STRONG, 200, 225.0),
        "CLASSIC's strongest measured agent",
    )
