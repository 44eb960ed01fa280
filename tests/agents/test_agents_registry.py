"""The agent registry (``jungle_agents``): building every built-in kind from its spec,
bad specs' messages, later registrations; and every built-in agent returns only legal
actions."""

from __future__ import annotations

import numpy as np
import pytest

from jungle_agents import (
    AgentSpecError,
    GreedyAgent,
    MinimaxAgent,
    Param,
    SearchConfig,
    agent_kinds,
    make_agent,
    register_agent,
)
from jungle_agents._base import _REGISTRY
from jungle_core import CLASSIC, DARK, DARK_STRICT, Rules, State, legal_actions, new_game
from tests._agents import positions

# ------------------------------------------------------------------ registry


def test_registry_builds_every_builtin_kind() -> None:
    assert {"random", "greedy", "minimax"} <= set(agent_kinds())
    assert make_agent("random", DARK).name == "random"
    assert make_agent(" Greedy ", DARK).name == "greedy"
    agent = make_agent("minimax:depth=2,tt=0,quiescence=1,time=0.5", DARK)
    assert isinstance(agent, MinimaxAgent)
    assert agent.config == SearchConfig(depth=2, tt=False, quiescence=True, time=0.5)
    assert agent.name == "minimax:depth=2,tt=0,quiescence=1,time=0.5"
    weighted = make_agent("minimax:rank=5,taken=0", DARK)
    assert isinstance(weighted, MinimaxAgent) and weighted.weights is not None
    assert (weighted.weights.rank, weighted.weights.taken) == (5.0, 0.0)
    greedy = make_agent("greedy:opp_material=1", DARK)
    assert isinstance(greedy, GreedyAgent) and greedy.weights.opp_material == 1.0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("minmax", "unknown agent 'minmax' in spec 'minmax'; valid agents: "),
        ("greedy:depth=2", "greedy takes no parameter 'depth'"),
        ("minimax:depth=three", "minimax:depth='three' is not a valid int"),
        ("minimax:tt=maybe", "minimax:tt='maybe' is not a valid bool (write 0 or 1)"),
        ("minimax:depth", "'depth' in agent spec 'minimax:depth' is not key=value"),
        ("minimax:depth=2,depth=3", "parameter 'depth' is given twice"),
        ("minimax:depth=0", "depth must be 1..64"),
        ("minimax:tiebreak=best", "must be one of ['approach', 'random']"),
        (":depth=2", "has no agent name"),
    ],
)
def test_bad_specs_say_what_is_valid(spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec, DARK)
    assert message in str(info.value)
    if "unknown agent" in message:
        assert "greedy" in str(info.value) and "minimax" in str(info.value)
    if "no parameter" in message:
        assert "valid parameters: opp_material (float)" in str(info.value)


def test_later_agents_register_into_the_same_factory() -> None:
    class First:
        def __init__(self, rules: Rules, offset: int) -> None:
            self.name = f"first:offset={offset}"
            self.offset = offset

        def act(self, state: State, rng: np.random.Generator) -> int:
            return legal_actions(state)[self.offset]

    register_agent("first", First, {"offset": Param(int, 0, "which legal action")}, "test")
    try:
        agent = make_agent("first:offset=1", DARK)
        assert agent.act(new_game(), np.random.default_rng(0)) == legal_actions(new_game())[1]
        with pytest.raises(ValueError, match="already registered"):
            register_agent("first", First)
        with pytest.raises(ValueError, match="must be non-empty"):
            register_agent("bad:name", First)
    finally:
        _REGISTRY.pop("first", None)


# ------------------------------------------------------------- legal actions

AGENT_SPECS = [
    "random",
    "greedy",
    "minimax:depth=1",
    "minimax:depth=2",
    "minimax:depth=2,alphabeta=0,tt=0,ordering=0,star1=0",
    "minimax:depth=2,quiescence=1,qdepth=2",
    "minimax:depth=4,time=0.02",
    "minimax:depth=2,tiebreak=random",
]


@pytest.mark.parametrize("rules", [DARK, DARK_STRICT, CLASSIC], ids=lambda r: r.name)
def test_agents_only_return_legal_actions(rules: Rules) -> None:
    rng = np.random.default_rng(1)
    states = positions(rules, 6, seed=3, plies=(0, 120))
    for spec in AGENT_SPECS:
        agent = make_agent(spec, rules)
        for state in states:
            action = agent.act(state, rng)
            assert action in legal_actions(state), (spec, state)
