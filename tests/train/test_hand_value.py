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
from tests._azero import (
    DEFEND_P0,
    DEFEND_P1,
    DEN_P0,
    DEN_P1,
    classic_position,
    independent_balance,
    one_batch,
    random_states,
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
        p = (params, jnp.float32(1.0 / tau), jnp.float32(weight))
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
        make_agent("azero:prior=hand,path=x.npz", CLASSIC)


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
    attacker, nothing adjacent)."""
    from jungle_core import transitions
    from jungle_core.lowlevel import tables
    from jungle_train.azero._hand_value import capture_gain, material_balance

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
