"""The AlphaZero agent (``make_agent("azero", ...)``, ``jungle_train.azero._agent``): the
DQN-guided search takes what wins, its options are checked, and each measured knob
reaches the search it is meant for."""

from __future__ import annotations

import functools
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
from jungle_train.azero._agent import AZeroAgent
from jungle_train.azero._net import Evaluation
from jungle_train.azero.search._config import SearchConfig
from jungle_train.azero.search._search import _Model, make_search, zero_evaluator
from tests._agents import assert_refused
from tests._azero import CAPTURE, act_in_both_phases, dark_position, one_batch, root_q
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
        ("azero:tau=0", DARK, "tau"),
        # a DQN file read as azero
        (
            f"azero:prior=azero,path={shipped_checkpoint('dqn')},simulations=4",
            DARK,
            "not of 'azero'",
        ),
        ("azero:hunt=-1", DARK, "hunt"),
        ("azero:prior=hand,cover=1", DARK, "cover"),
        ("azero:capture=1.5", DARK, "capture"),
        ("azero:prior=hand,capture=0.5", DARK, "capture"),
        ("azero:chance_order=random", DARK, "chance_order"),
        ("azero:pb_c=0", DARK, "pb_c"),
        ("azero:contempt=1", DARK, "contempt"),
        ("azero:contempt=0.1", CLASSIC, "contempt"),
        ("azero:dead_draw=1", DARK, "dead_draw"),
        ("azero:dead_draw=0.1", CLASSIC, "dead_draw"),
        ("azero:dead_draw=0.1,contempt=0.1", DARK, "dead_draw"),
        ("azero:draw_bounds=1", CLASSIC, "draw_bounds"),
        ("azero:draw_bounds=1,contempt=0.1", DARK, "draw_bounds"),
        ("azero:press=1", DARK, "press"),
        ("azero:press=0.1", CLASSIC, "press"),
        ("azero:press=0.1,contempt=0.1", DARK, "press"),
        ("azero:spare_behind=1", DARK, "spare_behind"),
        ("azero:count_trades=1", DARK, "count_trades"),
        ("azero:risk=1", DARK, "risk"),
        ("azero:risk=0.5", CLASSIC, "risk"),
    ]
    for spec, rules, match in refused:
        assert_refused(spec, rules, match)
    spec = f"azero:path={shipped_checkpoint('dqn')},simulations=4,tau=2,hunt=0.02"
    agent = make_agent(spec, DARK)
    assert isinstance(agent, AZeroAgent)
    assert agent.prior == "dqn" and "tau=2" in agent.name and "hunt=0.02" in agent.name
    options = ("cover=1", "capture=0.5", "chance_order=shuffled", "chance_order=stratified")
    bounds = (
        "dead_draw=0.1",
        "draw_bounds=1",
        "dead_draw=0.1,count_trades=1",
        "dead_draw=0.1,draw_bounds=1,press=0.1,spare_behind=1",
    )
    for option in (*options, "pb_c=2.5", "contempt=0.1", *bounds):
        playing = make_agent(f"azero:simulations=4,{option}", DARK)
        assert option in playing.name
        assert playing.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())


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


@pytest.mark.parametrize("player", [0, 1])
def test_contempt_makes_a_draw_cost_the_root_mover(player: int) -> None:
    """With ``contempt`` the trade that ends the game drawn is worth ``-contempt`` to
    the searching player, whichever seat it holds (its root Q lies between that and half
    of it), and the search then plays another move; without it the trade is worth 0.
    Zero evaluator, uniform prior, true rules."""
    picture = TRADE.replace("{c}", "e" if player == 0 else "E").replace(
        "{E}", "E" if player == 0 else "e"
    )
    state = position(picture, DARK, to_move=player)
    env = make(DARK)
    for contempt in (0.0, 0.3):
        config = SearchConfig(simulations=64, slots=True, contempt=contempt)
        search = jax.jit(make_search(env, zero_evaluator(env.num_actions), config))
        out = search(None, jax.random.key(0), one_batch(state))
        q = root_q(out.search_tree, state, "d4xd5")
        if not contempt:
            assert q == 0.0
        else:
            # the chance node's first visit counts its afterstate value (0), then the draw
            assert -contempt - 1e-6 <= q <= -contempt / 2 + 1e-6
            assert action_to_str(state, int(out.action[0])) != "d4xd5"
    with pytest.raises(ValueError, match="contempt"):
        SearchConfig(contempt=1.0)
    with pytest.raises(ValueError, match="contempt"):
        make_search(make(CLASSIC), zero_evaluator(315), SearchConfig(contempt=0.1))


@pytest.mark.parametrize("player", [0, 1])
def test_risk_shrinks_the_values_that_favour_the_root_mover(player: int) -> None:
    """``risk``: every evaluated value that favours the root's mover keeps ``1 - risk``
    of itself, whichever seat searches, and one that favours the opponent is unchanged.
    Player 0 is far ahead (Elephant, Lion and Tiger against a Cat out of reach of the
    search): its search values every position at half with ``risk=0.5`` (mctx's Q
    normalization makes the visits the same), and player 1's search is not changed at
    all. Hand-made value, uniform prior, true rules."""
    from jungle_train.azero.search._evaluations import hand_evaluation

    env = make(DARK)
    evaluate = functools.partial(hand_evaluation, env)
    params = (jnp.zeros(()), jnp.zeros((), jnp.int32))
    state = one_batch(from_fen(f"7c/8/8/8/8/8/ELT5 {player} 0 0 - -"))
    trees = {}
    for risk in (0.0, 0.5):
        search = jax.jit(make_search(env, evaluate, SearchConfig(16, slots=True, risk=risk)))
        trees[risk] = search(params, jax.random.key(0), state).search_tree.summary()
    plain, averse = float(trees[0.0].value[0]), float(trees[0.5].value[0])
    assert (plain > 0.5) if player == 0 else (plain < -0.5)
    assert averse == pytest.approx(plain / 2 if player == 0 else plain, rel=1e-5)
    assert np.array_equal(trees[0.0].visit_counts, trees[0.5].visit_counts)
    with pytest.raises(ValueError, match="risk"):
        SearchConfig(risk=1.0)
    with pytest.raises(ValueError, match="risk"):
        make_search(make(CLASSIC), zero_evaluator(315), SearchConfig(risk=0.5))
    with pytest.raises(ValueError, match="afterstate=expected"):
        SearchConfig(risk=0.5, afterstate="expected")


def test_qtransform_minmax_scales_q_by_the_value_range_not_the_siblings() -> None:
    """``qtransform="minmax"``: PUCT reads Q over the fixed range [-1, 1], so halving
    every value (``risk=0.5`` with the root's mover far ahead, as above) changes where a
    16-simulation search goes, where mctx's default, which rescales by the node's value
    and its searched children's, visits exactly as before. DARK only, and a named
    transform only."""
    from jungle_agents import make_agent
    from jungle_train.azero.search._evaluations import hand_evaluation

    env = make(DARK)
    evaluate = functools.partial(hand_evaluation, env)
    params = (jnp.zeros(()), jnp.zeros((), jnp.int32))
    state = one_batch(from_fen("7c/8/8/8/8/8/ELT5 0 0 0 - -"))
    visits = {}
    for qtransform in ("siblings", "minmax"):
        for risk in (0.0, 0.5):
            config = SearchConfig(16, slots=True, risk=risk, qtransform=qtransform)
            search = jax.jit(make_search(env, evaluate, config))
            tree = search(params, jax.random.key(0), state).search_tree.summary()
            visits[qtransform, risk] = np.asarray(tree.visit_counts)
    assert np.array_equal(visits["siblings", 0.0], visits["siblings", 0.5])
    assert not np.array_equal(visits["minmax", 0.0], visits["minmax", 0.5])
    assert not np.array_equal(visits["minmax", 0.0], visits["siblings", 0.0])
    with pytest.raises(ValueError, match="qtransform"):
        SearchConfig(qtransform="min_max")
    with pytest.raises(ValueError, match="qtransform"):
        make_search(make(CLASSIC), zero_evaluator(315), SearchConfig(qtransform="minmax"))
    assert_refused("azero:qtransform=parent", DARK, "must be one of ['siblings', 'minmax']")
    assert_refused("azero:qtransform=minmax", CLASSIC, "qtransform is for DARK rules")
    agent = make_agent("azero:simulations=8,qtransform=minmax,endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and "qtransform=minmax" in agent.name
    assert "qtransform" not in make_agent("azero:simulations=8,endgame=0", DARK).name


def test_contempt_charges_the_no_removal_clock_to_the_root_mover() -> None:
    """Each evaluated position loses ``contempt * plies_since_removal / limit`` for the
    root's mover and gains it for the other (zero evaluator: the value is that alone)."""
    env = make(DARK)
    model = _Model(env, zero_evaluator(env.num_actions), SearchConfig(contempt=0.2))
    picture = TRADE.replace("{c}", "e").replace("{E}", "E")
    states = jax.tree.map(
        lambda *xs: jnp.stack(xs),
        *(env.from_state(position(picture, DARK, to_move=p, since=50)) for p in (0, 1)),
    )
    root = jnp.zeros(2, jnp.int32)  # player 0's search
    ev = model._evaluate((None, root), states)
    expected = [-0.2 * 50 / DARK.no_removal_limit, 0.2 * 50 / DARK.no_removal_limit]
    assert np.asarray(ev.value) == pytest.approx(expected)
    assert np.asarray(ev.afterstate[:, 0]) == pytest.approx(expected)
    plain = _Model(env, zero_evaluator(env.num_actions), SearchConfig())
    assert np.asarray(plain._evaluate(None, states).value) == pytest.approx([0.0, 0.0])


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
        SearchConfig(dead_draw=0.1, contempt=0.1)
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
        SearchConfig(draw_bounds=True, contempt=0.1)
    with pytest.raises(ValueError, match="draw_bounds"):
        make_search(make(CLASSIC), zero_evaluator(315), SearchConfig(draw_bounds=True))


def test_press_charges_the_clock_only_where_the_root_mover_can_win() -> None:
    """``press``: contempt's clock charge (``press * plies_since_removal / limit`` off
    the root's mover's value, onto the other's) where the root's mover's material can
    still win, none where it cannot; with ``draw_bounds`` the bounds hold after the
    charge (zero and constant evaluators: the values are these alone)."""
    env = make(DARK)
    pictures = [(LIVE, 0), (LIVE, 1), (ONE_SIDED, 0), (ONE_SIDED, 1)]
    states = jax.tree.map(
        lambda *xs: jnp.stack(xs),
        *(env.from_state(position(p, DARK, to_move=m, since=50)) for p, m in pictures),
    )
    charge = 0.2 * 50 / DARK.no_removal_limit
    model = _Model(env, zero_evaluator(env.num_actions), SearchConfig(press=0.2))
    # player 0's search: in ONE_SIDED its Tiger cannot win, so nothing is charged there
    ev = model._evaluate((None, jnp.zeros(4, jnp.int32)), states)
    assert np.asarray(ev.value) == pytest.approx([-charge, charge, 0.0, 0.0])
    assert np.asarray(ev.afterstate[:, 0]) == pytest.approx([-charge, charge, 0.0, 0.0])
    # player 1's search: its Elephant can win in both
    ev = model._evaluate((None, jnp.ones(4, jnp.int32)), states)
    assert np.asarray(ev.value) == pytest.approx([charge, -charge, charge, -charge])
    # with the bounds (player 1's search, a draw worth -0.1 to it): the Tiger's side is
    # capped at the draw after its gain, the Elephant's side floored at it after its loss
    config = SearchConfig(press=0.2, dead_draw=0.1, draw_bounds=True)
    root = jnp.ones(4, jnp.int32)
    for value, want in (
        (0.5, [0.5 + charge, 0.5 - charge, 0.1, 0.5 - charge]),
        (-0.5, [-0.5 + charge, -0.5 - charge, -0.5 + charge, -0.1]),
    ):
        bounded = _Model(env, constant_evaluator(env.num_actions, value), config)
        assert np.asarray(bounded._evaluate((None, root), states).value) == pytest.approx(want)
    with pytest.raises(ValueError, match="press"):
        SearchConfig(press=0.1, contempt=0.1)
    with pytest.raises(ValueError, match="press"):
        SearchConfig(press=1.0)
    with pytest.raises(ValueError, match="press"):
        make_search(make(CLASSIC), zero_evaluator(315), SearchConfig(press=0.1))


# Player 0's lone Elephant takes the Tiger but must trade with the Elephant: no win once
# the trades are counted; player 1's Elephant and Tiger can win either way.
LONE_ELEPHANT = """
. . . . . . . .
. . . . . . . .
. . . . . . . .
. E . . . e . t
. . . . . . . .
. . . . . . . .
. . . . . . . .
"""


def test_count_trades_sharpens_the_bounds() -> None:
    """``count_trades``: the bounds read the sharper test, so a lone Elephant against an
    Elephant and a Tiger is capped at a draw for its side (and its opponent floored
    there), where the looser test lets the evaluation stand (player 0's search,
    ``draw_bounds`` with ``dead_draw=0.1``)."""
    env = make(DARK)
    states = jax.tree.map(
        lambda *xs: jnp.stack(xs),
        *(env.from_state(position(LONE_ELEPHANT, DARK, to_move=m)) for m in (0, 1)),
    )
    root = jnp.zeros(2, jnp.int32)
    expected = {
        # (count_trades, the evaluator's value): the values for mover 0 and mover 1
        (False, 0.5): [0.5, 0.5],
        (False, -0.5): [-0.5, -0.5],
        (True, 0.5): [-0.1, 0.5],
        (True, -0.5): [-0.5, 0.1],
    }
    for (trades, value), want in expected.items():
        config = SearchConfig(dead_draw=0.1, draw_bounds=True, count_trades=trades)
        model = _Model(env, constant_evaluator(env.num_actions, value), config)
        ev = model._evaluate((None, root), states)
        assert np.asarray(ev.value) == pytest.approx(want)
        assert np.asarray(ev.afterstate[:, 0]) == pytest.approx(want)
    with pytest.raises(ValueError, match="count_trades"):
        SearchConfig(count_trades=True)


def test_spare_behind_leaves_a_root_mover_behind_in_pieces_uncharged() -> None:
    """``spare_behind``: ``press`` charges no clock where the root's mover holds fewer
    pieces than its opponent, even where its material can win (player 0's lone Elephant
    against an Elephant and a Tiger: it takes the Tiger, so the looser test says it can),
    and charges as before where it is level or ahead (zero evaluator)."""
    env = make(DARK)
    pictures = [(LONE_ELEPHANT, 0), (LONE_ELEPHANT, 1), (LIVE, 0), (LIVE, 1)]
    states = jax.tree.map(
        lambda *xs: jnp.stack(xs),
        *(env.from_state(position(p, DARK, to_move=m, since=50)) for p, m in pictures),
    )
    c = 0.2 * 50 / DARK.no_removal_limit
    expected = {
        # (spare_behind, root): the values for the four positions
        (False, 0): [-c, c, -c, c],
        (True, 0): [0.0, 0.0, -c, c],  # one piece against two: spared
        (True, 1): [c, -c, c, -c],  # two against one: charged
    }
    for (spare, root), want in expected.items():
        config = SearchConfig(press=0.2, spare_behind=spare)
        model = _Model(env, zero_evaluator(env.num_actions), config)
        ev = model._evaluate((None, jnp.full(4, root, jnp.int32)), states)
        assert np.asarray(ev.value) == pytest.approx(want)
        assert np.asarray(ev.afterstate[:, 0]) == pytest.approx(want)
    with pytest.raises(ValueError, match="spare_behind"):
        SearchConfig(spare_behind=True)


@pytest.mark.parametrize("knob", ["pb_c_face_down=2.5", "face_down_simulations=16", "risk=0.5"])
def test_face_down_knobs_serve_the_decisions_while_a_piece_is_face_down(knob: str) -> None:
    """``pb_c_face_down`` (an exploration constant), ``face_down_simulations`` and
    ``risk`` (the aversion to an even gamble) each compile a second search; the agent
    asks it while some piece is face down and the first one after (every piece face
    up); without them there is one search."""
    from jungle_agents import make_agent

    name = knob.split("=", maxsplit=1)[0]
    assert_refused(f"azero:{name}=-1", DARK, name)
    plain = make_agent("azero:simulations=8", DARK)
    assert isinstance(plain, AZeroAgent) and plain._search_face_down is plain._search
    assert plain.face_down_simulations == 8
    agent = make_agent(f"azero:simulations=8,{knob},endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and knob in agent.name
    assert agent._search_face_down is not agent._search
    assert agent.face_down_simulations == (16 if name == "face_down_simulations" else 8)
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


def test_potential_face_down_sets_the_weight_of_the_chance_phase_searches() -> None:
    """``potential_face_down=w``: the decisions taken while some piece is face down use a
    search whose evaluation weighs the shaping potentials by ``w``, the others the
    ``potential`` one; the knob is checked (-1 or not negative, a DQN prior only) and
    named in the agent's name."""
    from jungle_agents import make_agent

    assert_refused("azero:potential_face_down=-0.5", DARK, "potential_face_down must be >= 0")
    assert_refused("azero:prior=hand,potential_face_down=0", DARK, "of prior=dqn only")
    plain = make_agent("azero:simulations=8,endgame=0", DARK)
    assert isinstance(plain, AZeroAgent)
    assert plain._search_face_down is plain._search and "potential" not in plain.name
    agent = make_agent("azero:simulations=8,potential_face_down=0,endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and "potential_face_down=0" in agent.name
    assert agent._model[-1] == pytest.approx(0.01) and agent._model_face_down[-1] == 0.0
    assert agent._model_face_down[:-1] == agent._model[:-1]
    assert searches_asked(agent) == ["face down", "face up"]


def searches_asked(agent: AZeroAgent) -> list[str]:
    """Which of the agent's two searches each of :func:`act_in_both_phases`' decisions
    asked (the start, every piece face down; then every piece face up)."""
    asked: list[str] = []
    searches = {"face down": agent._search_face_down, "face up": agent._search}

    def spy(name: str) -> Any:
        def search(*args: Any) -> Any:
            asked.append(name)
            return searches[name](*args)

        return search

    agent._search_face_down, agent._search = spy("face down"), spy("face up")
    act_in_both_phases(agent)
    return asked


def test_press_face_down_sets_the_charge_of_the_chance_phase_searches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``press_face_down=p``: the decisions taken while some piece is face down use a
    search whose clock charge is ``p`` (0: none, ``press`` only once every piece is face
    up), with ``spare_behind`` and ``count_trades`` kept only where that search has a test
    to sharpen; -1 (the default) is ``press`` in both, one search; checked and named."""
    from jungle_agents import make_agent
    from jungle_train.azero._guides import compiled_search

    for refused, rules, why in (
        ("press_face_down=1", DARK, "press_face_down must be in"),
        ("press_face_down=-0.5", DARK, "press_face_down must be in"),
        ("press_face_down=0.1", CLASSIC, "press is for DARK rules"),
        ("contempt=0.1,press_face_down=0.1", DARK, "press does not combine with contempt"),
        ("press_face_down=0,spare_behind=1", DARK, "spare_behind is press'"),
    ):
        assert_refused(f"azero:{refused}", rules, why)
    configs: list[SearchConfig] = []

    def record(rules: Any, model: Any, config: SearchConfig) -> Any:
        configs.append(config)
        return compiled_search(rules, model, config)

    monkeypatch.setattr("jungle_train.azero._agent.compiled_search", record)
    plain = make_agent("azero:simulations=8,endgame=0,press=0.1", DARK)
    assert isinstance(plain, AZeroAgent) and plain._search_face_down is plain._search
    assert [c.press for c in configs] == [0.1]
    configs.clear()
    spec = "simulations=8,endgame=0,press=0.1,spare_behind=1,count_trades=1,press_face_down=0"
    agent = make_agent(f"azero:{spec}", DARK)
    assert isinstance(agent, AZeroAgent) and "press_face_down=0" in agent.name
    face_up, face_down = configs
    assert make_agent(agent.name, DARK).name == agent.name
    assert (face_up.press, face_up.spare_behind, face_up.count_trades) == (0.1, True, True)
    assert (face_down.press, face_down.spare_behind, face_down.count_trades) == (0.0, False, False)
    assert searches_asked(agent) == ["face down", "face up"]
    configs.clear()
    make_agent("azero:simulations=8,endgame=0,press_face_down=0.2,dead_draw=0.1", DARK)
    assert [c.press for c in configs] == [0.0, 0.2]


def test_material_face_down_sets_the_form_of_the_chance_phase_searches() -> None:
    """``material_face_down=F``: the decisions taken while some piece is face down use a
    search whose hand-made value takes its material in form ``F``
    (:data:`MATERIAL_FORMS`), the others the ``material`` one; with
    ``potential_face_down`` too both change; the knob is checked (a form, a DQN prior
    only) and named in the agent's name."""
    from jungle_agents import make_agent

    assert_refused("azero:material_face_down=sum", DARK, "must be one of ['', 'ratio',")
    assert_refused("azero:prior=hand,material_face_down=scaled", DARK, "of prior=dqn only")
    agent = make_agent("azero:simulations=8,material_face_down=scaled,endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and "material_face_down=scaled" in agent.name
    assert agent._model[-2] == "ratio" and agent._model_face_down[-2] == "scaled"
    assert agent._model_face_down[:-2] == agent._model[:-2]
    assert agent._model_face_down[-1] == agent._model[-1]
    both = make_agent(
        "azero:simulations=8,material_face_down=difference,potential_face_down=0,endgame=0", DARK
    )
    assert isinstance(both, AZeroAgent)
    assert both._model_face_down[-2:] == ("difference", 0.0) and both._model[-2] == "ratio"
    assert searches_asked(agent) == ["face down", "face up"]


def test_face_down_minimax_decides_while_a_piece_is_face_down() -> None:
    """``face_down_minimax=T``: the Minimax agent (deepening for ``T`` seconds) plays the
    decisions taken while some piece is face down, the search the ones after; the knob is
    checked (not negative, DARK only) and named in the agent's name."""
    from jungle_agents import MinimaxAgent, make_agent

    assert_refused("azero:face_down_minimax=-1", DARK, "face_down_minimax must be >= 0")
    assert_refused("azero:face_down_minimax=0.1", CLASSIC, "face_down_minimax is for DARK")
    assert make_agent("azero:simulations=8", DARK)._minimax is None  # type: ignore[attr-defined]
    agent = make_agent("azero:simulations=8,face_down_minimax=0.02,endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and "face_down_minimax=0.02" in agent.name
    assert isinstance(agent._minimax, MinimaxAgent)
    assert agent._minimax.config.time == 0.02
    asked: list[str] = []
    minimax_act, search = agent._minimax.act, agent._search

    def by_minimax(state: Any, rng: Any) -> int:
        asked.append("minimax")
        return minimax_act(state, rng)

    def by_search(*args: Any) -> Any:
        asked.append("search")
        return search(*args)

    agent._minimax.act = by_minimax  # type: ignore[method-assign]
    agent._search = by_search
    act_in_both_phases(agent)
    assert asked == ["minimax", "search"]


def test_time_sets_a_power_of_two_from_a_middlegame() -> None:
    """``time`` picks the simulations once, from a search of a fixed middlegame (some
    pieces face up, the game not over); the count is a power of two, at least 8."""
    from jungle_train.azero._agent import calibration_position

    position = calibration_position(DARK)
    assert outcome(position) is None and position == calibration_position(DARK)
    assert any(0 < code <= 16 for code in position.board)  # something face up
    agent = AZeroAgent(DARK, simulations=8, time=0.01)
    assert agent.simulations >= 8 and agent.simulations & (agent.simulations - 1) == 0
    assert agent.name == "azero:time=0.01"
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
    assert_refused("azero:endgame=5", DARK, "endgame must be 0 (off), 2, 3 or 4 pieces")
