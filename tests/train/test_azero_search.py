"""The AlphaZero search (``jungle_train.azero.search._search``) with the true rules as the model:
it finds decisive moves for either player (value signs), stays NaN-free, searches in slots
as over the whole action space, and reaches into no private module of mctx."""

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
    Rules,
    State,
    action_to_str,
    from_fen,
    legal_actions,
    new_game,
    outcome,
    parse_action,
    step,
    step_outcome,
    to_fen,
)
from jungle_core.jax_env import JaxState, make
from jungle_train import azero
from jungle_train.azero._net import (
    Evaluation,
    canonical_planes,
    network_evaluation,
    planes_shape,
    rotation,
)
from jungle_train.azero.search._config import SearchConfig
from jungle_train.azero.search._search import _Model, make_search, step_result, zero_evaluator
from jungle_train.azero.search._slots import (
    CLASSIC_SLOTS,
    DARK_SLOTS,
    pack_state,
    slot_actions,
    unpack_state,
)
from tests._azero import (
    BUMP,
    CAPTURE,
    DEFEND_P0,
    DEFEND_P1,
    DEN_P0,
    DEN_P1,
    classic_position,
    dark_position,
    one_batch,
    plain_search,
    random_network,
    random_states,
    root_q,
    searched_batch,
    slot_index,
)
from tests._boards import position


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize("player", [0, 1])
def test_dark_search_takes_the_last_piece(player: int, slots: bool) -> None:
    state = dark_position(CAPTURE, player)
    action, tree = plain_search(state, 32, slots=slots)
    assert action == "d4xd5"
    summary = tree.summary()
    assert float(summary.value[0]) > 0.5  # the mover's side: winning
    # the chance node's first visit counts its afterstate value (0 here), then wins
    assert root_q(tree, state, "d4xd5") > 0.9


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize("player", [0, 1])
def test_dark_search_takes_the_winning_chance(player: int, slots: bool) -> None:
    # face-down: the mover's Rat and the opponent's Cat
    face_down = "R c" if player == 0 else "C r"
    state = dark_position(BUMP, player, face_down)
    action, tree = plain_search(state, 96, slots=slots)
    assert action == "d4xd5"
    q = root_q(tree, state, "d4xd5")
    assert 0.3 < q <= 1.0  # half the outcomes win at once, the others are worth >= 0 here
    visits = np.asarray(tree.summary().visit_counts[0])
    assert int(np.argmax(visits)) == slot_index(tree, state, parse_action(state, "d4xd5"))
    assert float(tree.summary().value[0]) > 0.0


# The most legal actions DARK has: eight face down and the mover's eight face up, each
# with four moves (onto an empty square or a face-down piece).
WIDEST = """
? ? ? ? ? ? ? ?
. E . L . T . .
. . . . . . . .
. P . W . D . .
. . . . . . . .
. C . R . . . .
. . . . . . . .
"""


def test_dark_slots_hold_every_legal_action() -> None:
    """:data:`DARK_SLOTS` is the most legal actions a DARK position has (reached by
    :data:`WIDEST`, never passed in random play), and :func:`slot_actions` lists them
    ascending, then the out-of-range action."""
    widest = position(WIDEST, DARK, to_move=0, face_down="- rcdwptle")
    assert len(legal_actions(widest)) == DARK_SLOTS
    env = make(DARK)
    rng = np.random.default_rng(3)
    states = [widest]
    for game in range(6):
        state = new_game(seed=game)
        while outcome(state) is None:
            assert len(legal_actions(state)) <= DARK_SLOTS
            if rng.random() < 0.05:
                states.append(state)
            actions = legal_actions(state)
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in states])
    slots = np.asarray(jax.jit(slot_actions, static_argnums=1)(batch.legal_action_mask, DARK_SLOTS))
    for row, state in zip(slots, states, strict=True):
        legal = legal_actions(state)
        assert tuple(row[: len(legal)]) == legal
        assert (row[len(legal) :] == env.num_actions).all()


def test_dark_slots_search_as_the_full_action_space_does() -> None:
    """The search in slots (``SearchConfig.slots``) gives the same visit weights over the
    rules' actions as the search over all 280 actions, on positions of random play with
    the shipped DQN's prior, and both choose a most visited action (where two are
    equally visited, mctx's tie-break noise, drawn per axis entry, may pick either); the
    trainer's completed-Q policy target is the same from either tree."""
    from jungle_train.azero._guides import dqn_guide

    env = make(DARK)
    evaluate, params = dqn_guide(env)
    states = random_states(DARK, 90, 11)[5::15]  # from the opening to face-up play
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in states])
    outs = []
    for slots in (False, True):
        search_config = SearchConfig(simulations=48, afterstate="parent", slots=slots)
        outs.append(
            jax.jit(make_search(env, evaluate, search_config))(params, jax.random.key(5), batch)
        )
    full, slotted = outs
    np.testing.assert_allclose(full.action_weights, slotted.action_weights, atol=1e-6)
    assert slotted.search_tree.num_actions == DARK_SLOTS
    # the trainer's completed-Q target, read through the root's slots, is the same policy
    logits = evaluate(params, batch).logits
    legal = batch.legal_action_mask
    for rescale in (False, True):
        targets = [
            azero.completed_q_policy(out.search_tree, logits, legal, rescale=rescale)
            for out in (full, slotted)
        ]
        np.testing.assert_allclose(targets[0], targets[1], atol=1e-5)
        assert not np.asarray(targets[1])[~np.asarray(legal)].any()
    for i, state in enumerate(states):
        # equally visited actions: mctx's tie-breaking noise is drawn per axis entry
        weights = np.asarray(slotted.action_weights[i])
        assert weights[int(slotted.action[i])] == weights.max()
        assert weights[int(full.action[i])] == weights.max()
        assert int(slotted.action[i]) in legal_actions(state)


def test_classic_slots_search_as_the_full_action_space_does() -> None:
    """CLASSIC's Gumbel search in slots chooses what the search over all 315 actions
    chooses, with the same improved policy over the rules' actions (the hand-made prior:
    no Gumbel noise in play), on positions of random play; no position has more legal
    actions than :data:`CLASSIC_SLOTS`."""
    from jungle_train.azero._hand_value import classic_piece_squares, classic_targets
    from jungle_train.azero.search._evaluations import hand_evaluation

    env = make(CLASSIC)
    evaluate = functools.partial(hand_evaluation, env)
    params = (
        jnp.asarray(classic_piece_squares(CLASSIC), jnp.float32),
        jnp.asarray(classic_targets(CLASSIC)),
    )
    states = random_states(CLASSIC, 120, 4)
    assert max(len(legal_actions(s)) for s in states) <= CLASSIC_SLOTS
    states = states[10::20]
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in states])
    outs = []
    for slots in (False, True):
        search_config = SearchConfig(simulations=64, max_considered=315, slots=slots)
        search = jax.jit(make_search(env, evaluate, search_config))
        outs.append(search(params, jax.random.key(2), batch))
    full, slotted = outs
    np.testing.assert_array_equal(full.action, slotted.action)
    np.testing.assert_allclose(full.action_weights, slotted.action_weights, atol=1e-5)
    assert slotted.search_tree.num_actions == CLASSIC_SLOTS


def test_dark_search_options_keep_the_capture() -> None:
    """A chance node valued by its parent, and a prior mixed with the uniform one, do
    not hide a winning capture."""
    state = dark_position(CAPTURE, 1)
    env = make(DARK)
    config = SearchConfig(simulations=32, prior_mix=0.5, afterstate="parent")
    search = jax.jit(make_search(env, zero_evaluator(env.num_actions), config))
    out = search(None, jax.random.key(0), one_batch(state))
    assert action_to_str(state, int(out.action[0])) == "d4xd5"
    with pytest.raises(ValueError, match="afterstate"):
        SearchConfig(afterstate="guess")


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize(
    ("picture", "player", "move"), [(DEN_P0, 0, "d8-d9"), (DEN_P1, 1, "d2-d1")]
)
def test_classic_search_enters_the_den(picture: str, player: int, move: str, slots: bool) -> None:
    state = classic_position(picture, player)
    action, tree = plain_search(state, 32, slots=slots)
    assert action == move
    assert root_q(tree, state, move) == pytest.approx(1.0)


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize(
    ("picture", "player", "move"), [(DEFEND_P0, 0, "c2xd2"), (DEFEND_P1, 1, "e8xd8")]
)
def test_classic_search_sees_the_reply(picture: str, player: int, move: str, slots: bool) -> None:
    """Two plies deep: every move but the capture loses to the opponent's den entry,
    which the search sees only through the discount's sign flip. (Sequential halving
    needs a few visits per root action before the reply is found: with a uniform prior
    the interior selection tries actions in index order, and player 0's den entry has
    a high index here.)"""
    state = classic_position(picture, player)
    action, tree = plain_search(state, 256, slots=slots)
    assert action == move
    q = tree.qvalues(jnp.zeros(1, jnp.int32))[0]
    visits = tree.summary().visit_counts[0]
    for a in legal_actions(state):
        k = slot_index(tree, state, a)
        if action_to_str(state, a) != move and int(visits[k]) > 1:
            assert float(q[k]) < 0  # the opponent's win, seen from the mover's side


# ------------------------------------------------------------------- model pieces


def test_step_result_signs() -> None:
    env = make(DARK)
    state = dark_position(CAPTURE, 0)
    before = one_batch(state)
    win = jnp.array([parse_action(state, "d4xd5")], jnp.int32)
    after = jax.vmap(env.step_outcome)(before, win, jnp.zeros(1, jnp.int32))
    assert [float(x[0]) for x in step_result(before, after)] == [1.0, 0.0]
    quiet = jnp.array([parse_action(state, "d4-c4")], jnp.int32)
    after = jax.vmap(env.step_outcome)(before, quiet, jnp.zeros(1, jnp.int32))
    assert [float(x[0]) for x in step_result(before, after)] == [0.0, -1.0]


@pytest.mark.parametrize("rules", [DARK, CLASSIC])
def test_rotation_is_the_board_turned(rules: Rules) -> None:
    turn = rotation(rules)
    assert (turn[turn] == np.arange(rules.num_actions)).all()
    if rules == CLASSIC:  # the start is symmetric: player 0's moves turn into player 1's
        start = new_game(rules)
        second = from_fen(to_fen(start).replace(" 0 0 0", " 1 0 0"), rules)
        assert sorted(int(turn[a]) for a in legal_actions(start)) == list(legal_actions(second))


def test_canonical_view_is_the_same_for_either_seat() -> None:
    """A position with player 1 to move looks, to the network, exactly like its twin
    (board turned 180°, players swapped) with player 0 to move."""
    p0 = position(
        """
        . . . . . . . .
        ? . . . . . . .
        . . . . . . l .
        . . . . . . . .
        . . E . . . . .
        . . . . . . . r
        . . . . . . . .
        """,
        to_move=0,
        face_down="- C",
    )
    p1 = position(
        """
        . . . . . . . .
        R . . . . . . .
        . . . . . e . .
        . . . . . . . .
        . L . . . . . .
        . . . . . . . ?
        . . . . . . . .
        """,
        to_move=1,
        face_down="C -",
    )
    env = make(DARK)
    a = canonical_planes(env, env.from_state(p0))
    b = canonical_planes(env, env.from_state(p1))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    network = random_network(DARK)
    params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(DARK))))
    e0 = network_evaluation(env, network, params, one_batch(p0))
    e1 = network_evaluation(env, network, params, one_batch(p1))
    turn = rotation(DARK)
    np.testing.assert_allclose(np.asarray(e0.logits[0]), np.asarray(e1.logits[0][turn]), atol=1e-6)
    np.testing.assert_allclose(float(e0.value[0]), float(e1.value[0]), atol=1e-6)


@pytest.mark.parametrize("rules", [DARK, CLASSIC])
def test_search_outputs_are_finite(rules: Rules) -> None:
    """A random network on positions from random play, finished-game leaves included."""
    env = make(rules)
    network = random_network(rules)
    params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(rules))))
    evaluate = functools.partial(network_evaluation, env, network)
    noisy = SearchConfig(simulations=24, dirichlet_fraction=0.25, temperature=1.0, gumbel_scale=1.0)
    search = jax.jit(make_search(env, evaluate, noisy))
    rng = np.random.default_rng(0)
    states = []
    for _ in range(8):
        s = new_game(rules)
        for _ in range(int(rng.integers(0, 60))):
            nxt = step(s, int(rng.choice(legal_actions(s))), rng)
            if outcome(nxt) is not None:
                break
            s = nxt
        states.append(env.from_state(s))
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *states)
    out = search(params, jax.random.key(1), batch)
    weights = np.asarray(out.action_weights)
    assert np.isfinite(weights).all()
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-5)
    assert np.isfinite(np.asarray(out.search_tree.node_values)).all()
    assert (np.asarray(batch.legal_action_mask)[np.arange(8), np.asarray(out.action)]).all()


@pytest.mark.parametrize("rules", [DARK, CLASSIC], ids=["dark", "classic"])
def test_packed_state_round_trip(rules: Rules) -> None:
    """The search tree's packed positions unpack to the positions, field for field."""
    env = make(rules)
    batch: JaxState = jax.tree.map(
        lambda *x: jnp.stack(x), *[env.from_state(s) for s in random_states(rules, 40, 5)]
    )
    packed = pack_state(batch)
    assert packed.legal_bits.shape == (40, -(-env.num_actions // 32))
    again = unpack_state(packed, env.num_actions)
    for name in ("board", "legal_action_mask", "current_player", "rewards", "terminated"):
        np.testing.assert_array_equal(getattr(again, name), getattr(batch, name), err_msg=name)


def test_compact_nodes_search_as_the_plain_ones() -> None:
    """Compact nodes (packed positions; with ``afterstate="parent"``, one value a node)
    must search exactly as plain ones do, with either afterstate; and ``"parent"`` as
    ``"head"`` does with an afterstate head that repeats the position's value."""
    env = make(DARK)
    network = random_network(DARK)
    params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(DARK))))
    own_head = functools.partial(network_evaluation, env, network)

    def value_head(params: Any, states: JaxState) -> Evaluation:
        ev = network_evaluation(env, network, params, states)
        return Evaluation(ev.logits, ev.value, jnp.broadcast_to(ev.value[:, None], ev.logits.shape))

    picks = [s for s in random_states(DARK, 60, 11) if outcome(s) is None][::6]
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in picks])

    def weights(evaluate: Any, afterstate: str, compact: bool) -> np.ndarray[Any, Any]:
        config = SearchConfig(simulations=32, afterstate=afterstate, compact=compact)
        out = jax.jit(make_search(env, evaluate, config))(params, jax.random.key(2), batch)
        return np.asarray(out.action_weights)

    for afterstate in ("head", "parent"):
        plain = weights(own_head, afterstate, False)
        np.testing.assert_allclose(weights(own_head, afterstate, True), plain, atol=1e-6)
    np.testing.assert_allclose(
        weights(value_head, "parent", True), weights(value_head, "head", True), atol=1e-6
    )


@pytest.mark.parametrize("rules", [DARK, CLASSIC], ids=["dark", "classic"])
def test_sequential_batching_is_the_one_game_search_per_game(rules: Rules) -> None:
    """``batching="sequential"`` (what ``auto`` picks on a CPU) searches game ``i`` of a
    batch exactly as a batch of one with key ``split(key, B)[i]``: actions, weights and
    root values; a batch of one is searched with the key as it is."""
    env, params, evaluate, batch = searched_batch(rules, seed=3, count=3)

    def search(batching: str) -> Any:
        knobs = SearchConfig(
            simulations=16, dirichlet_fraction=0.25, gumbel_scale=1.0, batching=batching
        )
        return jax.jit(make_search(env, evaluate, knobs))

    vectorized, sequential = search("vectorized"), search("sequential")
    key = jax.random.key(5)
    out = sequential(params, key, batch)
    assert out.action_weights.shape == (3, env.num_actions)
    for i, k in enumerate(jax.random.split(key, 3)):
        one = vectorized(params, k, jax.tree.map(lambda x, i=i: x[i : i + 1], batch))
        assert int(one.action[0]) == int(out.action[i])
        np.testing.assert_array_equal(one.action_weights[0], out.action_weights[i])
        np.testing.assert_array_equal(
            one.search_tree.node_values[0], out.search_tree.node_values[i]
        )
    single = jax.tree.map(lambda x: x[:1], batch)
    np.testing.assert_array_equal(
        sequential(params, key, single).action_weights,
        vectorized(params, key, single).action_weights,
    )
    with pytest.raises(ValueError, match="batching"):
        SearchConfig(batching="parallel")


def test_the_search_reaches_into_no_private_mctx_module() -> None:
    """The search uses mctx's public API only: no module of the package imports
    ``mctx._src``, and building and running a search leaves mctx's modules as they
    were."""
    import pathlib

    import mctx

    import jungle_train.azero.search as search_package

    root = pathlib.Path(search_package.__file__).parent.parent
    for path in root.rglob("*.py"):
        assert "mctx._src" not in path.read_text(), path
    before = {name: getattr(mctx, name) for name in dir(mctx)}
    env, params, evaluate, batch = searched_batch(DARK, seed=5, count=2)
    jax.jit(make_search(env, evaluate, SearchConfig(simulations=8, slots=True)))(
        params, jax.random.key(2), batch
    )
    assert {name: getattr(mctx, name) for name in dir(mctx)} == before


def test_shuffled_chance_order_searches_outcomes_in_a_random_order() -> None:
    """mctx searches a chance node's outcomes by ``probability / (visits + 1)``, ties to
    the lowest index: under ``chance_order="index"`` a reveal's 16 equally likely pieces
    come in the order of their identities. ``"shuffled"`` jitters the logits so that the
    order is a random permutation of the possible outcomes (another with another key),
    while the probabilities stay within 1 % of the true ones; an action without chance
    keeps its single outcome."""
    from jungle_train.azero.search._config import CHANCE_JITTER

    env = make(DARK)
    start = one_batch(new_game(DARK))
    reveal = jnp.array([0], jnp.int32)  # a1, 16 possible pieces

    def logits(order: str, key: int, state: JaxState, action: jax.Array) -> np.ndarray:
        model = _Model(env, zero_evaluator(env.num_actions), SearchConfig(chance_order=order))
        _, node = model.node(None, state)
        out, _ = model.decision(None, jax.random.key(key), action, node)
        return np.asarray(out.chance_logits[0])

    def first_searched(x: np.ndarray, k: int) -> list[int]:  # mctx's rule, k visits
        visits, order = np.zeros(16), []
        for _ in range(k):
            pick = int(np.argmax(np.exp(x - x.max()) / (visits + 1)))
            visits[pick] += 1
            order.append(pick)
        return order

    plain = logits("index", 0, start, reveal)
    assert first_searched(plain, 16) == list(range(16))
    orders = [first_searched(logits("shuffled", key, start, reveal), 16) for key in (1, 2)]
    assert sorted(orders[0]) == list(range(16)) and orders[0] != list(range(16))
    assert orders[0] != orders[1]
    shuffled = logits("shuffled", 1, start, reveal)
    probs = np.exp(shuffled - shuffled.max())
    probs /= probs.sum()
    np.testing.assert_allclose(probs, 1 / 16, rtol=CHANCE_JITTER)
    # a plain move: one outcome, all the mass, as before
    state = dark_position(CAPTURE, 0)
    move = jnp.array([parse_action(state, "d4xd5")], jnp.int32)
    single = logits("shuffled", 3, one_batch(state), move)
    assert first_searched(single, 3) == [0, 0, 0]
    with pytest.raises(ValueError, match="chance_order"):
        SearchConfig(chance_order="random")


def test_stratified_chance_order_spreads_ranks_and_sides_alike_for_both_seats() -> None:
    """``"stratified"`` makes mctx search a reveal's 16 pieces in
    :func:`stratified_order` of the mover, the same for every key (no randomness): the
    first two are one rank of either side, the first eight four ranks of either side,
    and player 1's order is player 0's with the sides swapped. Where fewer pieces are
    possible, the order is the same one restricted to them; probabilities stay within
    1 % of the true ones."""
    from jungle_train.azero.search._config import CHANCE_JITTER, stratified_order

    env = make(DARK)
    model = _Model(env, zero_evaluator(env.num_actions), SearchConfig(chance_order="stratified"))

    def order(state: State, action: int, key: int, k: int) -> tuple[list[int], np.ndarray]:
        _, node = model.node(None, one_batch(state))
        out, _ = model.decision(None, jax.random.key(key), jnp.array([action], jnp.int32), node)
        x = np.asarray(out.chance_logits[0])
        visits, searched = np.zeros(16), []
        for _ in range(k):  # mctx's rule
            pick = int(np.argmax(np.exp(x - x.max()) / (visits + 1)))
            visits[pick] += 1
            searched.append(pick)
        return searched, x

    start = new_game(DARK)
    first, logits = order(start, 0, 1, 16)
    assert first == list(stratified_order(0)) == order(start, 0, 2, 16)[0]
    assert [o >> 3 for o in first[:4]] == [1, 0, 1, 0]
    ranks = sorted({(o & 7) + 1 for o in first[:8]})
    assert ranks == [1, 3, 5, 7]
    probs = np.exp(logits - logits.max())
    np.testing.assert_allclose(probs / probs.sum(), 1 / 16, rtol=CHANCE_JITTER)
    # player 1 to move: the same order with the sides swapped
    second = step_outcome(start, 0, 15)  # a1: player 1's Elephant
    assert second.to_move == 1
    swapped = [o ^ 8 for o in stratified_order(0)]
    assert stratified_order(1) == tuple(swapped)
    searched, _ = order(second, 1, 3, 15)
    assert searched == [o for o in stratified_order(1) if o != 15]
