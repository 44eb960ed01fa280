"""The hand-made values and the search's evaluators (``jungle_train.azero._hand_value``,
``jungle_train.azero.search._evaluations``): each term against an independent statement of it
(the pure core, the exact endgame tables, the CLASSIC evaluation)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_core import (
    CLASSIC,
    DARK,
    State,
    action_to_str,
    from_fen,
    legal_actions,
    outcome,
    step,
    to_fen,
)
from jungle_core.jax_env import JaxState, make
from jungle_train.azero._agent import AZeroAgent
from jungle_train.azero._net import Evaluation
from jungle_train.azero.search._config import SearchConfig
from jungle_train.azero.search._search import _Model
from tests._agents import assert_refused
from tests._azero import (
    DEFEND_P0,
    DEFEND_P1,
    DEN_P0,
    DEN_P1,
    assert_leaf_values_shifted,
    check_knob,
    classic_position,
    independent_balance,
    one_batch,
    random_states,
    shipped_dqn_leaf_values,
)

# ------------------------------------------------------------------- the DQN prior


def test_dqn_prior_evaluation_reads_the_q_values() -> None:
    """Prior logits are Q / tau; weight 1 gives the hand-made value everywhere, weight 0
    the DQN's own values (max legal Q, and Q per action, over the win reward)."""
    from jungle_train.azero._guides import dqn_functions, load_dqn
    from jungle_train.azero._hand_value import heuristic_value
    from jungle_train.azero.search._evaluations import dqn_prior_evaluation
    from jungle_train.players._numpy import shipped_checkpoint

    config, params, _ = load_dqn(shipped_checkpoint("dqn"))
    env = make(DARK)
    q_network, observe = dqn_functions(env, config)
    states = random_states(DARK, 12, seed=3)
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *[env.from_state(s) for s in states])
    q = np.asarray(q_network(params, jax.vmap(observe)(batch)))
    legal = np.asarray(batch.legal_action_mask)

    def evaluate(tau: float, weight: float) -> Evaluation:
        p = (params, jnp.float32(1.0 / tau), jnp.float32(weight), jnp.float32(0.0))
        return dqn_prior_evaluation(env, q_network, observe, config.win_reward, p, batch)

    hand = np.asarray(
        jax.vmap(functools.partial(heuristic_value, DARK))(batch, batch.current_player)
    )
    ev = evaluate(0.5, 1.0)
    np.testing.assert_allclose(np.asarray(ev.logits), q / 0.5, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ev.value), hand, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(ev.afterstate), np.repeat(hand[:, None], 280, 1), atol=1e-6
    )
    ev = evaluate(1.0, 0.0)
    best = np.where(legal, q, -np.inf).max(axis=1)
    np.testing.assert_allclose(np.asarray(ev.value), np.clip(best / 10.0, -1, 1), atol=1e-5)
    np.testing.assert_allclose(np.asarray(ev.afterstate), np.clip(q / 10.0, -1, 1), atol=1e-5)


def test_greedy_joins_the_leaf_value_while_a_piece_is_face_down() -> None:
    """``greedy=w``: while some piece is face down, ``w · tanh(B / GREEDY_SCALE)`` (``B``
    the Greedy balance of the mover) joins the hand-made value and the afterstate values
    of a DQN prior's evaluation; with every piece face up nothing changes. The knob is
    checked (0..1, a DQN prior only)."""
    from jungle_train.azero.search._evaluations import GREEDY_SCALE
    from jungle_train.jitted._greedy import JaxGreedy

    assert_refused("azero:greedy=2", DARK, "greedy must be in [0, 1]")
    assert_refused("azero:prior=hand,greedy=0.5", DARK, "of prior=dqn only")
    one, evaluate = shipped_dqn_leaf_values()
    plain, mixed = evaluate(greedy=0.0), evaluate(greedy=0.5)
    greedy = JaxGreedy(make(DARK))
    balance = jax.jit(greedy.balance)
    scored = np.array([float(balance(x)) for x in one])
    assert scored[0] != 0.0
    term = np.array([0.5 * np.tanh(scored[0] / GREEDY_SCALE), 0.0])
    assert np.asarray(mixed.value) == pytest.approx(np.asarray(plain.value) + term, abs=1e-5)
    assert np.asarray(mixed.afterstate) == pytest.approx(
        np.asarray(plain.afterstate) + term[:, None], abs=1e-5
    )
    assert np.asarray(mixed.logits) == pytest.approx(np.asarray(plain.logits))


def test_potential_weighs_the_shaping_potentials_in_the_leaf_value() -> None:
    """``potential=w``: the hand-made leaf value of a DQN prior's evaluation is the
    material balance plus ``w`` times the difference of the two players' shaping
    potentials (:data:`POTENTIAL_WEIGHT` by default), in the values and the afterstate
    values alike; the prior's logits do not change. The knob is checked (not negative, a
    DQN prior only) and named in the agent's name when it is not the default."""
    from jungle_agents import make_agent
    from jungle_train.azero._hand_value import POTENTIAL_WEIGHT, material_balance
    from jungle_train.jitted._board import potential

    assert_refused("azero:potential=-0.1", DARK, "potential must be >= 0")
    assert_refused("azero:prior=hand,potential=0.04", DARK, "of prior=dqn only")
    one, evaluate = shipped_dqn_leaf_values()
    plain, heavier = evaluate(), evaluate(potential_weight=0.04)
    gap = np.array(
        [float(potential(x, x.current_player) - potential(x, 1 - x.current_player)) for x in one]
    )
    assert gap[1] != 0.0
    balance = np.array([float(material_balance(x, x.current_player)) for x in one])
    assert np.asarray(plain.value) == pytest.approx(balance + POTENTIAL_WEIGHT * gap, abs=1e-5)
    assert np.asarray(heavier.value) == pytest.approx(balance + 0.04 * gap, abs=1e-5)
    assert np.asarray(heavier.afterstate) == pytest.approx(
        np.asarray(plain.afterstate) + (0.04 - POTENTIAL_WEIGHT) * gap[:, None], abs=1e-5
    )
    assert np.asarray(heavier.logits) == pytest.approx(np.asarray(plain.logits))
    assert "potential=0.04" in make_agent("azero:simulations=8,potential=0.04,endgame=0", DARK).name


def test_values_names_the_piece_values_of_the_leaf_values_material() -> None:
    """``values=fitted``: the material balance of a DQN prior's hand-made leaf value
    counts the pieces by :data:`PIECE_VALUES`' fitted set instead of ``spec``'s (checked
    against a balance written here independently), in the values and the afterstate
    values alike, the potentials' term and the prior's logits unchanged; ``spec`` is the
    default. The knob is checked (a named set, a DQN prior only) and named in the agent's
    name when it is not the default."""
    from jungle_train.azero._hand_value import PIECE_VALUES, material_balance

    assert PIECE_VALUES["spec"] == (30, 20, 30, 40, 50, 60, 70, 80)
    assert_refused("azero:values=rank", DARK, "must be one of ['spec', 'fitted']")
    assert_refused("azero:prior=hand,values=fitted", DARK, "of prior=dqn only")
    for state in (
        from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -"),
        from_fen("8/8/8/8/8/8/E1r5 1 0 0 - -"),
    ):
        x = make(DARK).from_state(state)
        for me in (0, 1):
            for name, values in PIECE_VALUES.items():
                assert float(material_balance(x, me, values)) == pytest.approx(
                    independent_balance(state, me, values), abs=1e-6
                ), name
    # the pair the leaf values score: every piece still in play (a balance of 0 by any
    # values), then Tiger and Rat against Lion and Wolf, player 0 to move
    one, evaluate = shipped_dqn_leaf_values()
    assert int(one[0].face_down_mask) and not int(one[1].face_down_mask)
    plain, fitted = evaluate(), evaluate(piece_values=PIECE_VALUES["fitted"])
    up = from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -")
    shift = np.array(
        [0.0, independent_balance(up, 0, PIECE_VALUES["fitted"]) - independent_balance(up, 0)]
    )
    assert abs(shift[1]) > 0.05
    assert_leaf_values_shifted(plain, fitted, shift)
    check_knob("values=fitted")


def test_material_difference_makes_equal_trades_neutral() -> None:
    """``material=difference``: the material balance of a DQN prior's hand-made leaf
    value is the difference of the two sides' material over the full set's (760 by
    the Greedy values) instead of over the material still in play, so that trading two
    equal pieces leaves it where it was (the ratio rises for the side ahead); checked
    against a balance written here, in the values and the afterstate values alike, the
    prior's logits unchanged; ``ratio`` is the default. The knob is checked (a named
    form, a DQN prior only) and named in the agent's name when it is not the default."""
    from jungle_train.azero._hand_value import MATERIAL_FORMS, material_balance

    assert MATERIAL_FORMS == ("ratio", "difference", "scaled")
    assert_refused("azero:material=sum", DARK, "must be one of ['ratio', 'difference', 'scaled']")
    assert_refused("azero:prior=hand,material=difference", DARK, "of prior=dqn only")
    with pytest.raises(ValueError, match="material form"):
        material_balance(make(DARK).from_state(from_fen("8/8/8/8/8/8/E1r5 0 0 0 - -")), 0, form="x")

    def difference(state: State, me: int) -> float:
        held = [
            (30, 20, 30, 40, 50, 60, 70, 80)[i & 7] * (state.in_play >> i & 1) for i in range(16)
        ]
        return (2 * sum(held[8 * me : 8 * me + 8]) - sum(held)) / 760

    # Tiger, Wolf and Cat against Wolf and Cat; then the Wolves traded; then the Cats too
    before, traded, again = (
        from_fen(f"8/8/8/2T5/8/8/{row} 0 0 0 - -") for row in ("WC3w1c", "1C5c", "8")
    )
    for form in MATERIAL_FORMS:
        got = [
            float(material_balance(make(DARK).from_state(s), me, form=form))
            for s in (before, traded, again)
            for me in (0, 1)
        ]
        want = [
            (independent_balance if form == "ratio" else difference)(s, me)
            for s in (before, traded, again)
            for me in (0, 1)
        ]
        assert got == pytest.approx(want, abs=1e-6), form
    ratio = [float(material_balance(make(DARK).from_state(s), 0)) for s in (before, traded)]
    diff = [
        float(material_balance(make(DARK).from_state(s), 0, form="difference"))
        for s in (before, traded)
    ]
    assert ratio[1] > ratio[0] + 0.1 and diff[1] == pytest.approx(diff[0], abs=1e-6)
    assert diff[0] == pytest.approx(60 / 760, abs=1e-6)
    _, evaluate = shipped_dqn_leaf_values()
    plain, differenced = evaluate(), evaluate(material="difference")
    up = from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -")
    shift = np.array([0.0, difference(up, 0) - independent_balance(up, 0)])
    assert abs(shift[1]) > 0.05
    assert_leaf_values_shifted(plain, differenced, shift)
    check_knob("material=difference")


def test_material_scaled_is_the_ratio_value_times_the_share_in_play() -> None:
    """``material=scaled``: the whole hand-made value (material and the shaping
    potentials) is the default ``ratio`` form's times the share of the full set's
    material still in the game, on positions of random games and for either player."""
    from jungle_agents import make_agent
    from jungle_train.azero._hand_value import heuristic_value

    env = make(DARK)
    checked = 0
    for state in random_states(DARK, 40, seed=11):
        x = env.from_state(state)
        share = (
            sum(
                (30, 20, 30, 40, 50, 60, 70, 80)[i & 7] for i in range(16) if state.in_play >> i & 1
            )
            / 760
        )
        for me in (0, 1):
            ratio = float(heuristic_value(DARK, x, me))
            scaled = float(heuristic_value(DARK, x, me, material="scaled"))
            assert scaled == pytest.approx(ratio * share, abs=1e-5)
            checked += share < 0.9 and abs(ratio) > 0.01
    assert checked >= 10
    assert (
        "material=scaled" in make_agent("azero:simulations=8,material=scaled,endgame=0", DARK).name
    )


@pytest.mark.parametrize(
    ("material", "covered", "single"),
    [
        ("TL3e2", False, True),  # Tiger and Lion cannot remove an Elephant
        ("DC3w2", False, True),  # Dog and Cat against a Wolf
        ("RL3e2", True, False),  # the Rat takes the Elephant, which cannot take the Rat
        ("CT3t2", True, True),  # the Tigers trade
        ("EP3r2", True, False),  # the Leopard takes the Rat (the Elephant cannot)
    ],
)
def test_winnable_agrees_with_the_exact_tables(material: str, covered: bool, single: bool) -> None:
    """Two pieces against one: :func:`winnable` says the pair can remove the single piece
    exactly where the exact endgame tables have some placement won for the pair (with
    either side to move) — and a material the pair cannot win is never won, however
    large its material lead."""
    from jungle_agents.endgame import EndgameTables, material_of
    from jungle_train.azero._hand_value import winnable

    state = from_fen(f"8/8/8/8/8/8/{material} 0 0 0 - -")
    env = make(DARK)
    assert bool(winnable(DARK, env.from_state(state), 0)) is covered
    assert bool(winnable(DARK, env.from_state(state), 1)) is single  # can the one remove both?
    found = material_of(state)
    assert found is not None
    results = EndgameTables()._fresh(DARK, found)
    pair_wins = (results[0] == 1).any() or (results[1] == -1).any()
    assert pair_wins == covered
    single_wins = (results[1] == 1).any() or (results[0] == -1).any()
    assert single or not single_wins  # a side that cannot remove both never wins


def test_cover_caps_the_lead_of_a_side_that_cannot_win() -> None:
    """With ``cover``, a material lead that cannot be converted (no piece that removes
    the enemy's last) keeps :data:`DRAWN_SHARE` of its value, the value stays zero-sum,
    and positions both sides can win are unchanged."""
    from jungle_train.azero._hand_value import DRAWN_SHARE, heuristic_value

    env = make(DARK)
    stuck = env.from_state(from_fen("8/8/8/8/8/8/TL3e2 0 0 0 - -"))
    plain = float(heuristic_value(DARK, stuck, 0))
    assert plain > 0.2
    assert float(heuristic_value(DARK, stuck, 0, cover=True)) == pytest.approx(
        DRAWN_SHARE * plain, abs=1e-6
    )
    assert float(heuristic_value(DARK, stuck, 1, cover=True)) == pytest.approx(
        -DRAWN_SHARE * plain, abs=1e-6
    )
    batch: JaxState = jax.tree.map(
        lambda *x: jnp.stack(x), *[env.from_state(s) for s in random_states(DARK, 30, 5)]
    )
    value = jax.vmap(functools.partial(heuristic_value, DARK, cover=True))
    covered = value(batch, batch.current_player)
    np.testing.assert_allclose(covered, -value(batch, 1 - batch.current_player), atol=1e-6)
    whole = jax.vmap(functools.partial(heuristic_value, DARK))(batch, batch.current_player)
    np.testing.assert_allclose(covered, whole, atol=1e-6)  # early positions: both can win


def test_hunt_pulls_the_side_ahead_and_is_zero_sum() -> None:
    """The hunting term: the side ahead in material is worth more the nearer its pieces
    stand to the enemies they can take or trade off; the value stays zero-sum, and a
    weight of 0 is the plain hand-made value."""
    from jungle_train.azero._hand_value import heuristic_value, hunt

    env = make(DARK)
    # Black (player 1) is ahead: elephant and rat against a lone elephant; the
    # elephants trade off (both removed), so Black's elephant hunts White's
    near = env.from_state(from_fen("8/8/8/8/8/8/Ee5r 1 0 0 - -"))
    far = env.from_state(from_fen("e7/8/8/8/8/8/E6r 1 0 0 - -"))
    assert float(hunt(DARK, near, 1)) > float(hunt(DARK, far, 1)) > 0
    for state in (near, far):
        plain = float(heuristic_value(DARK, state, 1))
        pulled = float(heuristic_value(DARK, state, 1, 0.5))
        assert pulled - plain == pytest.approx(0.5 * float(hunt(DARK, state, 1)), abs=1e-6)
    gain = float(heuristic_value(DARK, near, 1, 0.5)) - float(heuristic_value(DARK, far, 1, 0.5))
    plain_gain = float(heuristic_value(DARK, near, 1)) - float(heuristic_value(DARK, far, 1))
    assert gain > plain_gain
    batch: JaxState = jax.tree.map(
        lambda *x: jnp.stack(x), *[env.from_state(s) for s in random_states(DARK, 30, 4)]
    )
    value = jax.vmap(functools.partial(heuristic_value, DARK, hunt_weight=0.3))
    np.testing.assert_allclose(
        value(batch, batch.current_player), -value(batch, 1 - batch.current_player), atol=1e-6
    )


def test_classic_hand_value_is_the_piece_square_evaluation() -> None:
    """CLASSIC's hand-made value is the minimax evaluation's piece-square part (no
    threats, no mobility) through tanh, from either side, on positions of random games."""
    from jungle_agents import ClassicEvaluator, ClassicWeights
    from jungle_train.azero._hand_value import (
        CLASSIC_VALUE_SCALE,
        classic_piece_squares,
        hand_value,
    )

    env = make(CLASSIC)
    pst = jnp.asarray(classic_piece_squares(CLASSIC))
    weights = ClassicWeights(threat=0.0, mobility=0.0)
    evaluators = [ClassicEvaluator(CLASSIC, p, weights) for p in (0, 1)]
    states = [s for s in random_states(CLASSIC, 60, 3) if outcome(s) is None]
    assert len(states) > 40
    for state in states[::3]:
        jstate = env.from_state(state)
        for player in (0, 1):
            want = np.tanh(evaluators[player].evaluate(state) / CLASSIC_VALUE_SCALE)
            got = float(hand_value(CLASSIC, pst, jstate, jnp.int32(player)))
            assert got == pytest.approx(want, abs=1e-5)
            assert got == pytest.approx(-float(hand_value(CLASSIC, pst, jstate, 1 - player)))


# Player 0's Dog next to the den d9, and 23 other moves, all of lower index: with equal
# prior logits and no Gumbel noise, a root that considered 16 actions never saw d8-d9.
CROWD_P0 = """
l . . * . . .
. . . D . . .
. . . . . . .
. ~ ~ . ~ ~ .
. ~ ~ . ~ ~ .
. ~ ~ . ~ ~ .
. . . . . . .
L . W . P . C
. T . * . E .
"""


@pytest.mark.parametrize(
    ("picture", "player", "move"),
    [
        (DEN_P0, 0, "d8-d9"),
        (DEN_P1, 1, "d2-d1"),
        (DEFEND_P0, 0, "c2xd2"),
        (DEFEND_P1, 1, "e8xd8"),
        (CROWD_P0, 0, "d8-d9"),
    ],
)
def test_hand_prior_is_classic_default_and_finds_the_den(
    picture: str, player: int, move: str
) -> None:
    """Without a shipped CLASSIC checkpoint ``azero`` on CLASSIC is the search with the
    uniform prior and the hand-made value: it enters the den, and stops the opponent's
    entry, for either player; its root weighs every legal action (CROWD_P0)."""
    from jungle_agents import AgentSpecError, make_agent

    agent = make_agent("azero:simulations=256", CLASSIC)
    assert isinstance(agent, AZeroAgent) and agent.prior == "hand"
    state = classic_position(picture, player)
    assert action_to_str(state, agent.act(state, np.random.default_rng(0))) == move
    with pytest.raises(AgentSpecError, match="no path"):
        make_agent("azero:prior=hand,hunt=0.1", CLASSIC)


def test_classic_hand_prior_is_each_moves_change_of_the_evaluation() -> None:
    """CLASSIC's hand prior: each legal move's logit is the change of the piece-square
    evaluation for the mover from the position to the core's successor, over the scale
    (steps, river jumps and captures, both players)."""
    from jungle_agents import ClassicEvaluator, ClassicWeights
    from jungle_train.azero._hand_value import (
        PRIOR_SCALE,
        classic_piece_squares,
        classic_prior_logits,
        classic_targets,
    )

    env = make(CLASSIC)
    pst = jnp.asarray(classic_piece_squares(CLASSIC))
    targets = jnp.asarray(classic_targets(CLASSIC))
    weights = ClassicWeights(threat=0.0, mobility=0.0)
    evaluators = [ClassicEvaluator(CLASSIC, p, weights) for p in (0, 1)]
    prior = jax.jit(functools.partial(classic_prior_logits, CLASSIC, pst, targets))
    seen = {"capture": 0, "jump": 0, "player 1": 0}
    rng = np.random.default_rng(0)
    for state in [s for s in random_states(CLASSIC, 400, 5) if outcome(s) is None][::5]:
        logits = np.asarray(prior(env.from_state(state)))
        mover = evaluators[state.to_move]
        for action in legal_actions(state):
            child = step(state, action, rng)
            change = mover.evaluate(child) - mover.evaluate(state)
            assert logits[action] * PRIOR_SCALE == pytest.approx(change, abs=1e-3)
            text = action_to_str(state, action)  # e.g. "a3-a4", "c2xd2"
            steps = abs(ord(text[0]) - ord(text[3])) + abs(int(text[1]) - int(text[4]))
            seen["capture"] += "x" in text
            seen["jump"] += steps > 1
            seen["player 1"] += state.to_move
    assert min(seen.values()) > 0, seen


def test_capture_gain_is_the_best_capture_the_pure_core_finds() -> None:
    """:func:`capture_gain` equals, position by position, the largest rise of the
    mover's material balance over its legal attacks on face-up enemies, each played by
    the pure core; it is 0 where no attack gains (a trade that loses balance, a weaker
    attacker, nothing adjacent). With ``capture``, the hand-made value moves by that
    share for the mover and the opposite for the other side (zero-sum kept)."""
    from jungle_core import transitions
    from jungle_core.lowlevel import tables
    from jungle_train.azero._hand_value import capture_gain, heuristic_value, material_balance

    env = make(DARK)
    states = [s for s in random_states(DARK, 400, 11) if outcome(s) is None][::3]
    n = DARK.rows * DARK.cols
    gains = []
    for state in states:
        me, want = state.to_move, 0.0
        before = float(material_balance(env.from_state(state), me))
        for action in legal_actions(state):
            if action < n:
                continue
            code = state.board[tables(DARK).step[action - n]]
            if not (0 < code <= 16 and (code - 1) >> 3 != me):
                continue
            ((_, after),) = transitions(state, action)
            gain = float(material_balance(env.from_state(after), me)) - before
            want = max(want, gain)
        got = float(capture_gain(DARK, env.from_state(state)))
        assert got == pytest.approx(want, abs=1e-5), to_fen(state)
        gains.append(got)
    assert sum(g > 0 for g in gains) >= 5 and sum(g == 0 for g in gains) >= 5
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in states])
    mover = batch.current_player
    plain = jax.vmap(functools.partial(heuristic_value, DARK))(batch, mover)
    value = jax.vmap(functools.partial(heuristic_value, DARK, capture=0.5))
    with_capture = value(batch, mover)
    np.testing.assert_allclose(with_capture - plain, 0.5 * np.array(gains), atol=1e-5)
    np.testing.assert_allclose(with_capture, -value(batch, 1 - mover), atol=1e-5)


def test_expected_gain_is_the_average_over_the_pure_cores_transitions() -> None:
    """:func:`expected_gain` of every legal action equals the probability-weighted change
    of the mover's material balance over the pure core's ``transitions`` (each outcome
    played out); positions along random games include captures, bumps into face-down
    pieces that win and that lose on average, and reveals (0)."""
    from jungle_core import transitions
    from jungle_train.azero._hand_value import expected_gain

    env = make(DARK)

    @jax.jit
    def gains(state: JaxState) -> jax.Array:  # float32[A]
        def one(action: jax.Array) -> jax.Array:
            return expected_gain(DARK, state, action, env.chance_probs(state, action))

        return jax.vmap(one)(jnp.arange(env.num_actions))

    states = [s for s in random_states(DARK, 600, 17) if outcome(s) is None][::4]
    n = DARK.rows * DARK.cols
    seen = {"bump won": 0, "bump lost": 0, "capture": 0, "reveal": 0}
    for state in states:
        got = np.asarray(gains(env.from_state(state)))
        me, before = state.to_move, independent_balance(state, state.to_move)
        for action in legal_actions(state):
            played = transitions(state, action)
            want = sum(p * (independent_balance(after, me) - before) for p, after in played)
            assert got[action] == pytest.approx(want, abs=1e-5), (to_fen(state), action)
            hidden = action >= n and len(played) > 1
            seen["reveal"] += action < n
            seen["capture"] += action >= n and not hidden and want > 0
            seen["bump won"] += hidden and want > 0
            seen["bump lost"] += hidden and want < 0
    assert min(seen.values()) > 0, seen


def test_expected_afterstate_adds_the_material_change_to_the_parents_value() -> None:
    """``afterstate="expected"``: a chance node's first value is the position's value
    plus :func:`expected_gain` of its action, for a legal action of either seat; the
    plain ``"parent"`` value for a move that removes nothing; -1 for an unused slot."""
    from jungle_train.azero._hand_value import expected_gain
    from jungle_train.azero.search._evaluations import hand_evaluation

    env = make(DARK)
    evaluate = functools.partial(hand_evaluation, env)
    for fen in ("8/8/8/8/8/8/Ew?5 0 0 0 - r", "8/8/8/8/8/8/Ew?5 1 0 0 - r"):
        state = one_batch(from_fen(fen))
        params = (jnp.zeros(()), jnp.zeros((), jnp.int32))
        afterstates = {}
        for mode in ("parent", "expected"):
            model = _Model(env, evaluate, SearchConfig(afterstate=mode, slots=True))
            ev, node = model.node(params, state)
            for slot in range(8):
                out, _ = model.decision(params, jax.random.key(0), jnp.array([slot]), node)
                afterstates[mode, slot] = float(out.afterstate_value[0])
        actions = np.asarray(node.slots[0])
        for slot, action in enumerate(actions[:8]):
            parent = afterstates["parent", slot]
            if action >= env.num_actions:
                assert parent == afterstates["expected", slot] == -1.0
                continue
            one = jax.tree.map(lambda x: x[0], state)
            gain = float(expected_gain(DARK, one, action, env.chance_probs(one, action)))
            assert parent == pytest.approx(float(ev.value[0]), abs=1e-6)
            assert afterstates["expected", slot] == pytest.approx(parent + gain, abs=1e-6)
        assert any(afterstates["expected", k] != afterstates["parent", k] for k in range(8)), fen
