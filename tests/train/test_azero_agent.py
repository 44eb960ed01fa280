"""The AlphaZero agent (``make_agent("azero", ...)``, ``jungle_train.azero._agent``): the
DQN-guided search takes what wins, its settings are checked and name it, and each
setting reaches the search it is meant for."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_core import (
    CLASSIC,
    DARK,
    action_to_str,
    from_fen,
    legal_actions,
    new_game,
    outcome,
)
from jungle_core.jax_env import make
from jungle_train.azero._agent import AZeroAgent, AZeroSettings
from jungle_train.azero._net import Evaluation
from jungle_train.azero.search._config import SearchConfig
from jungle_train.azero.search._search import _Model, make_search, zero_evaluator
from tests._agents import assert_refused
from tests._azero import CAPTURE, dark_position, one_batch
from tests._boards import position


@pytest.mark.parametrize("player", [0, 1])
def test_dqn_prior_agent_takes_the_last_piece(player: int) -> None:
    """The default DARK agent (the search guided by the shipped DQN) builds from the
    shipped files alone and wins at once where it can, in either seat."""
    from jungle_agents import make_agent

    agent = make_agent("azero:simulations=32", DARK)
    assert isinstance(agent, AZeroAgent) and agent.prior == "dqn"
    state = dark_position(CAPTURE, player)
    assert action_to_str(state, agent.act(state, np.random.default_rng(0))) == "d4xd5"
    hand = make_agent("azero:simulations=32,prior=hand", DARK)  # no network at all
    assert action_to_str(state, hand.act(state, np.random.default_rng(0))) == "d4xd5"


def test_azero_agent_options_are_checked() -> None:
    from jungle_agents import make_agent
    from jungle_train.players._numpy import shipped_checkpoint

    refused = [
        ("azero:prior=dqn", CLASSIC, "DARK rules only"),
        # a DQN file read as azero
        (
            f"azero:prior=azero,path={shipped_checkpoint('dqn')},simulations=4",
            DARK,
            "not of 'azero'",
        ),
        ("azero:simulations=0", DARK, "simulations must be >= 1"),
        ("azero:time=-1", DARK, "time must be >= 0"),
        ("azero:prior=hand,path=x.npz", DARK, "no path"),
        ("azero:dead_draw=1", DARK, "dead_draw"),
        ("azero:dead_draw=0.1", CLASSIC, "dead_draw"),
        ("azero:draw_bounds=1", CLASSIC, "draw_bounds"),
        ("azero:hunt=0.1", DARK, "hunt"),  # a setting measured no better, removed
    ]
    for spec, rules, match in refused:
        assert_refused(spec, rules, match)
    spec = f"azero:path={shipped_checkpoint('dqn')},simulations=4"
    agent = make_agent(spec, DARK)
    assert isinstance(agent, AZeroAgent)
    assert agent.prior == "dqn" and agent.name == spec
    for option in ("dead_draw=0.1", "draw_bounds=1", "dead_draw=0.1,draw_bounds=1"):
        playing = make_agent(f"azero:simulations=4,{option}", DARK)
        assert option in playing.name
        assert playing.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())


def test_the_name_is_the_settings_canonical_spec() -> None:
    """The agent's name is its settings' kind and the fields that differ from their
    defaults, in declaration order, whatever order the spec gave them in; the
    registry's parameters are the settings' fields."""
    from jungle_agents import kind_params, make_agent
    from jungle_train._azero_settings import AZeroSettings

    strongest = make_agent(
        "azero:simulations=8,endgame=4,dead_draw=0.1,draw_bounds=1,face_down_simulations=16", DARK
    )
    assert strongest.name == (
        "azero:simulations=8,face_down_simulations=16,endgame=4,dead_draw=0.1,draw_bounds=1"
    )
    assert AZeroSettings().name() == "azero"
    params = kind_params("azero")
    assert list(params) == [field.name for field in AZeroSettings.__attrs_attrs__]
    assert params["endgame"].choices == (0, 2, 3, 4) and params["endgame"].default == 3


# The Elephants face each other: the mover's d4xd5 removes both, the last two pieces (a
# draw by elimination); any other move goes on.
TRADE = """
. . . . . . . .
. . . . . . . .
. . . {c} . . . .
. . . {E} . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
"""


# An Elephant and a Lion against an Elephant and a Lion: either Elephant takes the
# other side's Lion, so both sides can still win; with the Lions gone (below), one
# Elephant against one is a dead draw.
LIVE = """
. . . . . . . .
. . . . . . . .
. . . . . . . .
. E . L . e . l
. . . . . . . .
. . . . . . . .
. . . . . . . .
"""


def test_dead_draw_values_a_dead_draw_and_a_draw_for_the_root_mover() -> None:
    """``dead_draw``: a position where neither side's material can win is worth
    ``-dead_draw`` to the root's mover (``+dead_draw`` with the other to move), a live
    one keeps its evaluation, and a finished game's draw costs the root's mover the
    same; no clock is charged (zero evaluator: the values are these alone)."""
    env = make(DARK)
    model = _Model(env, zero_evaluator(env.num_actions), SearchConfig(dead_draw=0.1))
    dead = LIVE.replace("L", ".").replace("l", ".")
    pictures = [(dead, 0), (dead, 1), (LIVE, 0), (LIVE, 1)]
    states = jax.tree.map(
        lambda *xs: jnp.stack(xs),
        *(env.from_state(position(p, DARK, to_move=m, since=50)) for p, m in pictures),
    )
    root = jnp.zeros(4, jnp.int32)  # player 0's search
    ev = model._evaluate((None, root), states)
    assert np.asarray(ev.value) == pytest.approx([-0.1, 0.1, 0.0, 0.0])
    assert np.asarray(ev.afterstate[:, 0]) == pytest.approx([-0.1, 0.1, 0.0, 0.0])
    # the Elephants trade off, the last two pieces: a draw, -0.1 for the root's mover
    trade = position(TRADE.replace("{c}", "e").replace("{E}", "E"), DARK, to_move=0)
    before = one_batch(trade)
    action = jnp.asarray([legal_actions(trade)[0]])
    for a in legal_actions(trade):
        if action_to_str(trade, a) == "d4xd5":
            action = jnp.asarray([a])
    after = jax.vmap(env.step_outcome)(before, action, jnp.full(1, -1, jnp.int32))
    assert outcome(trade) is None and bool(after.terminated[0])
    for root_player, expected in ((0, -0.1), (1, 0.1)):
        reward, _ = model._result((None, jnp.asarray([root_player])), before, after)
        assert float(reward[0]) == pytest.approx(expected)
    with pytest.raises(ValueError, match="dead_draw"):
        make_search(make(CLASSIC), zero_evaluator(315), SearchConfig(dead_draw=0.1))


# A Tiger against an Elephant: no piece of the Tiger's side removes the Elephant, so
# only the Elephant's side can still win.
ONE_SIDED = """
. . . . . . . .
. . . . . . . .
. . . . . . . .
. T . . . e . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
"""


def constant_evaluator(num_actions: int, value: float) -> Any:
    """Uniform prior, every position and afterstate worth ``value`` to the mover."""

    def evaluate(params: Any, states: Any) -> Evaluation:
        del params
        batch = states.current_player.shape[0]
        full = jnp.full((batch, num_actions), value, jnp.float32)
        return Evaluation(jnp.zeros_like(full), jnp.full(batch, value, jnp.float32), full)

    return evaluate


@pytest.mark.parametrize("dead_draw", [0.0, 0.1])
def test_draw_bounds_cap_a_side_that_cannot_win_at_a_draw(dead_draw: float) -> None:
    """``draw_bounds``: where the mover's material can no longer win its value is at
    most a draw's (``-dead_draw`` for the root's mover, ``+dead_draw`` for the other),
    where the opponent's cannot, at least a draw's; where both can, the evaluation
    stands, and where neither can, it is the draw's (player 0's search, the evaluator's
    value a constant for the mover)."""
    env = make(DARK)
    config = SearchConfig(dead_draw=dead_draw, draw_bounds=True)
    dead = LIVE.replace("L", ".").replace("l", ".")
    pictures = [(ONE_SIDED, 0), (ONE_SIDED, 1), (LIVE, 0), (LIVE, 1), (dead, 0), (dead, 1)]
    states = jax.tree.map(
        lambda *xs: jnp.stack(xs),
        *(env.from_state(position(p, DARK, to_move=m, since=50)) for p, m in pictures),
    )
    root = jnp.zeros(len(pictures), jnp.int32)
    c = dead_draw
    expected = {
        # the Tiger's side (0) cannot win, the Elephant's (1) can
        0.5: [-c, 0.5, 0.5, 0.5, -c, c],
        -0.5: [-0.5, c, -0.5, -0.5, -c, c],
        1.5: [-c, 1.5, 1.5, 1.5, -c, c],  # no bound where the side can win
    }
    for value, want in expected.items():
        model = _Model(env, constant_evaluator(env.num_actions, value), config)
        ev = model._evaluate((None, root), states)
        assert np.asarray(ev.value) == pytest.approx(want)
        assert np.asarray(ev.afterstate[:, 0]) == pytest.approx(want)
    with pytest.raises(ValueError, match="draw_bounds"):
        make_search(make(CLASSIC), zero_evaluator(315), SearchConfig(draw_bounds=True))


def test_face_down_simulations_serve_the_decisions_while_a_piece_is_face_down() -> None:
    """``face_down_simulations`` compiles a second search; the agent asks it while some
    piece is face down and the first one after (every piece face up); without it there
    is one search."""
    from jungle_agents import make_agent

    knob = "face_down_simulations=16"
    assert_refused("azero:face_down_simulations=-1", DARK, "face_down_simulations")
    plain = make_agent("azero:simulations=8", DARK)
    assert isinstance(plain, AZeroAgent) and plain._search_face_down is plain._search
    assert plain.face_down_simulations == 8
    agent = make_agent(f"azero:simulations=8,{knob},endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and knob in agent.name
    assert agent._search_face_down is not agent._search
    assert agent.face_down_simulations == 16
    asked: list[str] = []

    def spy(name: str, search: Any) -> Any:
        def run(*args: Any) -> Any:
            asked.append(name)
            return search(*args)

        return run

    agent._search_face_down = spy("face_down", agent._search_face_down)
    agent._search = spy("face_up", agent._search)
    rng = np.random.default_rng(0)
    start = new_game()
    assert agent.act(start, rng) in legal_actions(start)
    face_up = from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -")
    assert not face_up.face_down_mask
    assert agent.act(face_up, rng) in legal_actions(face_up)
    assert asked == ["face_down", "face_up"]


def test_time_sets_a_power_of_two_from_a_middlegame() -> None:
    """``time`` picks the simulations once, from a search of a fixed middlegame (some
    pieces face up, the game not over); the count is a power of two, at least 8."""
    from jungle_train.azero._agent import calibration_position

    position = calibration_position(DARK)
    assert outcome(position) is None and position == calibration_position(DARK)
    assert any(0 < code <= 16 for code in position.board)  # something face up
    agent = AZeroAgent(DARK, AZeroSettings(simulations=8, time=0.01))
    assert agent.simulations >= 8 and agent.simulations & (agent.simulations - 1) == 0
    assert agent.name == "azero:simulations=8,time=0.01"
    state = new_game(DARK)
    assert agent.act(state, np.random.default_rng(0)) in legal_actions(state)


def test_dqn_prior_agent_keeps_the_endgame_tables_value() -> None:
    """Where the endgame tables cover a position, the agent's action is one that keeps its
    exact value (a fastest win, a drawing or a slowest losing action), including where
    the search alone (8 simulations) would choose otherwise; ``endgame=0`` turns it off."""
    from jungle_agents import make_agent
    from jungle_agents.endgame import EndgameTables

    tables = EndgameTables()
    agent = make_agent("azero:simulations=8", DARK)
    plain = make_agent("azero:simulations=8,endgame=0", DARK)
    assert isinstance(plain, AZeroAgent)
    assert "endgame=0" in plain.name and plain._endgame is None
    restricted = plain_outside = 0
    fens = [
        "8/8/8/8/8/8/E1t5",
        "8/8/3r4/8/8/2E5/8",
        "8/8/8/3e4/8/2E1R3/8",
        "8/8/2p5/8/4P3/8/l7",
        "8/3t4/8/8/3E4/8/8",
    ]
    for fen in fens:
        for to_move in (0, 1):
            state = from_fen(f"{fen} {to_move} 0 0 - -")
            best = tables.best_actions(state)
            assert best is not None
            restricted += len(best) < len(legal_actions(state))
            for seed in range(3):
                assert agent.act(state, np.random.default_rng(seed)) in best
                plain_outside += plain.act(state, np.random.default_rng(seed)) not in best
    assert restricted >= 4 and plain_outside >= 1  # the check can fail without the tables
    assert_refused("azero:endgame=5", DARK, "must be one of")
