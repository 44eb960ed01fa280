"""Agent settings declared once (an attrs class per kind: the registry's parameters, their
checks and the agent's canonical name) and presets (plain names for measured specs)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from jungle_agents import (
    AgentSpecError,
    Measured,
    MinimaxAgent,
    MinimaxConfig,
    SearchConfig,
    canonical_name,
    check_spec,
    describe_agents,
    kind_params,
    make_agent,
    params_of,
    presets,
    register_configured,
    register_preset,
)
from jungle_agents._base import _PRESETS, _REGISTRY
from jungle_core import CLASSIC, DARK, Rules, State, legal_actions, new_game

MINIMAX_PARAMS = [
    "depth",
    "alphabeta",
    "ordering",
    "tt",
    "star1",
    "quiescence",
    "qdepth",
    "reply",
    "time",
    "margin",
    "contempt",
    "tiebreak",
    "count",
    "rank",
    "own_face_down",
    "opp_face_down",
    "take",
    "taken",
    "eval",
    "value_path",
]


def test_minimax_parameters_come_from_its_settings_in_the_same_order() -> None:
    assert list(kind_params("minimax")) == MINIMAX_PARAMS
    assert kind_params("minimax") == params_of(MinimaxConfig)
    assert kind_params("minimax")["rank"].help == "DARK weight: revealed rank sum difference"
    assert list(kind_params("greedy")) == [
        "opp_material",
        "position",
        "mobility",
        "safety",
        "face_down",
    ]


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("minimax", "minimax:depth=3"),
        ("minimax:depth=3,tt=1", "minimax:depth=3"),
        (
            "minimax:depth=2,tt=0,quiescence=1,time=0.5",
            "minimax:depth=2,tt=0,quiescence=1,time=0.5",
        ),
        ("minimax:tt=0,depth=2", "minimax:depth=2,tt=0"),  # declaration order, whatever the spec's
        ("minimax:rank=5,taken=0", "minimax:depth=3,rank=5,taken=0"),
        ("minimax:eval=hand,tiebreak=random", "minimax:depth=3,tiebreak=random"),
        ("greedy", "greedy"),
        ("greedy:opp_material=1,face_down=25", "greedy:opp_material=1,face_down=25"),
    ],
)
def test_names_are_the_canonical_specs(spec: str, name: str) -> None:
    assert make_agent(spec, DARK).name == name


def test_check_spec_runs_the_settings_checks() -> None:
    with pytest.raises(
        AgentSpecError, match=r"agent spec 'minimax:depth=0': depth must be 1\.\.64"
    ):
        check_spec("minimax:depth=0")
    with pytest.raises(AgentSpecError, match="time must be >= 0"):
        check_spec("minimax:time=-1")
    check_spec("minimax:depth=5,quiescence=1")


def test_a_configured_kind_gets_its_settings_and_names_itself() -> None:
    @attrs.frozen
    class Pick:
        index: int = attrs.field(default=0, metadata={"help": "which legal action"})
        mode: str = attrs.field(default="a", metadata={"help": "a mode", "choices": ("a", "b")})

        def __attrs_post_init__(self) -> None:
            if self.index < 0:
                raise ValueError("index must be >= 0")

    class Picker:
        def __init__(self, rules: Rules, settings: Pick) -> None:
            self.name = canonical_name("picker", settings)
            self.settings = settings

        def act(self, state: State, rng: np.random.Generator) -> int:
            return legal_actions(state)[self.settings.index]

    register_configured("picker", Pick, Picker, "test")
    try:
        agent = make_agent("picker:mode=b,index=1", DARK)
        assert agent.name == "picker:index=1,mode=b"
        assert agent.act(new_game(), np.random.default_rng(0)) == legal_actions(new_game())[1]
        with pytest.raises(AgentSpecError, match="'picker:index=-1': index must be >= 0"):
            make_agent("picker:index=-1", DARK)
        with pytest.raises(AgentSpecError, match="must be one of"):
            check_spec("picker:mode=c")
    finally:
        _REGISTRY.pop("picker", None)


def test_minimax_config_gathers_the_search_and_the_weights() -> None:
    agent = make_agent("minimax:depth=2,rank=5", DARK)
    assert isinstance(agent, MinimaxAgent)
    assert agent.config == SearchConfig(depth=2)
    assert agent.weights is not None and agent.weights.rank == 5.0


def test_a_preset_resolves_to_its_spec_and_takes_overrides() -> None:
    strong = presets()["minimax-strong"]
    assert strong.spec == "minimax:time=0.25,depth=30,quiescence=1" and strong.rules == "CLASSIC"
    agent = make_agent("minimax-strong", CLASSIC)
    assert isinstance(agent, MinimaxAgent)
    assert agent.config == SearchConfig(depth=30, quiescence=True, time=0.25)
    assert agent.name == "minimax:depth=30,quiescence=1,time=0.25"  # stable without the preset
    assert make_agent("minimax-strong:time=0.5", CLASSIC).name.endswith("time=0.5")
    with pytest.raises(AgentSpecError, match="minimax takes no parameter 'nope'"):
        check_spec("minimax-strong:nope=1")


def test_presets_are_listed_with_their_figures() -> None:
    text = describe_agents()
    assert "minimax-strong = minimax:time=0.25,depth=30,quiescence=1 (CLASSIC: 0.645 " in text
    assert "against azero:simulations=8192 over 200 games, 279 ms a decision)" in text


def test_preset_names_are_checked() -> None:
    measured = Measured(0.5, "random", 2, 1.0)
    with pytest.raises(AgentSpecError, match="already an agent kind"):
        register_preset("minimax", "minimax:depth=2", DARK, measured)
    with pytest.raises(AgentSpecError, match="must be non-empty"):
        register_preset("a:b", "minimax:depth=2", DARK, measured)
    register_preset("tmp-preset", "minimax:depth=2", DARK, measured)
    try:
        with pytest.raises(AgentSpecError, match="names another preset"):
            register_preset("tmp-other", "tmp-preset", DARK, measured)
        assert make_agent("tmp-preset", DARK).name == "minimax:depth=2"
    finally:
        _PRESETS.pop("tmp-preset", None)


def test_the_azero_presets() -> None:
    from jungle_train._presets import AZERO_STRONG, register_presets

    register_presets()
    strong = presets()["azero-strong"]
    assert strong.spec == AZERO_STRONG and strong.rules == "DARK"
    assert (strong.measured.score, strong.measured.opponent) == (0.905, "minimax:depth=3")
    assert (strong.measured.games, strong.measured.ms) == (400, 918.0)
    check_spec("azero-strong")
    check_spec("azero-fast:simulations=16")
    assert "azero-strong = azero:endgame=4" in describe_agents()


def test_the_learned_agents_settings_check_epsilon() -> None:
    from jungle_train._registry import LearnedSettings

    assert list(kind_params("dqn")) == ["path", "epsilon"]
    assert kind_params("qlearn")["path"].help == "checkpoint file (default: the shipped qlearn.npz)"
    assert params_of(LearnedSettings)["epsilon"].default == 0.0
    with pytest.raises(AgentSpecError, match=r"epsilon must be in \[0, 1\]"):
        check_spec("dqn:epsilon=1.5")


def test_params_of_reads_the_azero_settings() -> None:
    settings = pytest.importorskip("jungle_train._azero_settings")
    params = params_of(settings.AZeroSettings)
    assert {"simulations", "endgame", "dead_draw", "draw_bounds"} <= set(params)
    assert params["simulations"].kind is int and params["draw_bounds"].kind is bool
