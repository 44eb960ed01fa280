"""AlphaZero (``jungle_train.azero``): the search with the true rules as the model finds
decisive moves for either player (value signs), stays NaN-free, the targets equal a
plain loop, and the trainer, its checkpoints and the agent work end to end (tiny budgets)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from mctx._src.policies import _add_dirichlet_noise as mctx_dirichlet_noise
from mctx._src.search import backward as mctx_backward

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
from jungle_train._azero_agent import AZeroAgent
from jungle_train._azero_guides import build_network
from jungle_train._azero_net import (
    Evaluation,
    canonical_planes,
    network_evaluation,
    planes_shape,
    rotation,
)
from jungle_train._azero_search import (
    SearchConfig,
    _Model,
    make_search,
    step_result,
    zero_evaluator,
)
from jungle_train._errors import CheckpointError
from jungle_train._mctx_fast import batched_backward, dirichlet_noise, search_key
from jungle_train._run import run_training
from jungle_train._search_slots import (
    CLASSIC_SLOTS,
    DARK_SLOTS,
    pack_state,
    slot_actions,
    unpack_state,
)
from tests._boards import position

TINY = azero.TINY_CONFIG


def _batch(state: State) -> JaxState:
    one: JaxState = jax.tree.map(lambda x: x[None], make(state.rules).from_state(state))
    return one


def _plain_search(
    state: State, simulations: int, seed: int = 0, slots: bool = False
) -> tuple[str, Any]:
    """The action (as text) of a uniform-prior, zero-value search of ``state`` with the
    true rules, and the search tree (in slots with ``slots``: see :func:`_index`)."""
    env = make(state.rules)
    config = SearchConfig(simulations=simulations, slots=slots)
    search = jax.jit(make_search(env, zero_evaluator(env.num_actions), config))
    out = search(None, jax.random.key(seed), _batch(state))
    return action_to_str(state, int(out.action[0])), out.search_tree


def _index(tree: Any, state: State, action: int) -> int:
    """Where ``action`` sits on the tree's action axis: itself, or in a tree of slots
    (``SearchConfig.slots``: the legal actions ascending) its rank among the legal ones."""
    slotted = tree.num_actions == (DARK_SLOTS if state.rules.is_dark else CLASSIC_SLOTS)
    return legal_actions(state).index(action) if slotted else action


def _root_q(tree: Any, state: State, text: str) -> float:
    q = tree.qvalues(jnp.zeros(1, jnp.int32))[0]
    return float(q[_index(tree, state, parse_action(state, text))])


# --------------------------------------------------------------- decisive positions

# The Elephant takes the opponent's last piece: the mover wins at once.
CAPTURE = """
. . . . . . . .
. . . . . . . .
. . . {c} . . . .
. . . {E} . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
"""

# The Elephant bumps into the face-down piece on d5: half the time it is the opponent's
# last piece (the Cat) and the Elephant takes it; otherwise it is the mover's own Rat.
# Nothing else wins at once.
BUMP = """
? . . . . . . .
. . . . . . . .
. . . ? . . . .
. . . {E} . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
"""


def _dark(picture: str, player: int, face_down: str = "- -") -> State:
    mover, other = ("E", "c") if player == 0 else ("e", "C")
    return position(
        picture.replace("{E}", mover).replace("{c}", other),
        DARK,
        to_move=player,
        face_down=face_down,
    )


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize("player", [0, 1])
def test_dark_search_takes_the_last_piece(player: int, slots: bool) -> None:
    state = _dark(CAPTURE, player)
    action, tree = _plain_search(state, 32, slots=slots)
    assert action == "d4xd5"
    summary = tree.summary()
    assert float(summary.value[0]) > 0.5  # the mover's side: winning
    # the chance node's first visit counts its afterstate value (0 here), then wins
    assert _root_q(tree, state, "d4xd5") > 0.9


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize("player", [0, 1])
def test_dark_search_takes_the_winning_chance(player: int, slots: bool) -> None:
    # face-down: the mover's Rat and the opponent's Cat
    face_down = "R c" if player == 0 else "C r"
    state = _dark(BUMP, player, face_down)
    action, tree = _plain_search(state, 96, slots=slots)
    assert action == "d4xd5"
    q = _root_q(tree, state, "d4xd5")
    assert 0.3 < q <= 1.0  # half the outcomes win at once, the others are worth >= 0 here
    visits = np.asarray(tree.summary().visit_counts[0])
    assert int(np.argmax(visits)) == _index(tree, state, parse_action(state, "d4xd5"))
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
    from jungle_train._azero_guides import dqn_guide

    env = make(DARK)
    evaluate, params = dqn_guide(env)
    states = _random_states(DARK, 90, 11)[5::15]  # from the opening to face-up play
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
    from jungle_train._hand_value import classic_piece_squares, classic_targets
    from jungle_train._search_evaluations import hand_evaluation

    env = make(CLASSIC)
    evaluate = functools.partial(hand_evaluation, env)
    params = (
        jnp.asarray(classic_piece_squares(CLASSIC), jnp.float32),
        jnp.asarray(classic_targets(CLASSIC)),
    )
    states = _random_states(CLASSIC, 120, 4)
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
    state = _dark(CAPTURE, 1)
    env = make(DARK)
    config = SearchConfig(simulations=32, prior_mix=0.5, afterstate="parent")
    search = jax.jit(make_search(env, zero_evaluator(env.num_actions), config))
    out = search(None, jax.random.key(0), _batch(state))
    assert action_to_str(state, int(out.action[0])) == "d4xd5"
    with pytest.raises(ValueError, match="afterstate"):
        SearchConfig(afterstate="guess")


def _classic(picture: str, player: int) -> State:
    return position(picture, CLASSIC, to_move=player)


# Player 0's Dog next to player 1's den (d9): entering it wins.
DEN_P0 = """
l . . * . . .
. . . D . . .
. . . . . . .
. ~ ~ . ~ ~ .
. ~ ~ . ~ ~ .
. ~ ~ . ~ ~ .
. . . . . . .
. . . . . . .
. . . * . . L
"""

# The same turned 180° with the players swapped: player 1's dog next to d1.
DEN_P1 = """
l . . * . . .
. . . . . . .
. . . . . . .
. ~ ~ . ~ ~ .
. ~ ~ . ~ ~ .
. ~ ~ . ~ ~ .
. . . . . . .
. . . d . . .
. . . * . . L
"""


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize(
    ("picture", "player", "move"), [(DEN_P0, 0, "d8-d9"), (DEN_P1, 1, "d2-d1")]
)
def test_classic_search_enters_the_den(picture: str, player: int, move: str, slots: bool) -> None:
    state = _classic(picture, player)
    action, tree = _plain_search(state, 32, slots=slots)
    assert action == move
    assert _root_q(tree, state, move) == pytest.approx(1.0)


# Player 1's Wolf stands in player 0's trap d2, next to the den d1: unless player 0's Cat
# takes it now (a trapped piece can be taken by any piece), it enters the den next ply.
DEFEND_P0 = """
. . . * . . .
. . . . . . .
. . . . . . r
. ~ ~ . ~ ~ .
E ~ ~ . ~ ~ .
. ~ ~ . ~ ~ .
. . . . . . .
. . C w . . .
. . . * . . .
"""

DEFEND_P1 = """
. . . * . . .
. . . W c . .
. . . . . . .
. ~ ~ . ~ ~ .
. ~ ~ . ~ ~ e
. ~ ~ . ~ ~ .
R . . . . . .
. . . . . . .
. . . * . . .
"""


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
    state = _classic(picture, player)
    action, tree = _plain_search(state, 256, slots=slots)
    assert action == move
    q = tree.qvalues(jnp.zeros(1, jnp.int32))[0]
    visits = tree.summary().visit_counts[0]
    for a in legal_actions(state):
        k = _index(tree, state, a)
        if action_to_str(state, a) != move and int(visits[k]) > 1:
            assert float(q[k]) < 0  # the opponent's win, seen from the mover's side


# ------------------------------------------------------------------- model pieces


def test_step_result_signs() -> None:
    env = make(DARK)
    state = _dark(CAPTURE, 0)
    before = _batch(state)
    win = jnp.array([parse_action(state, "d4xd5")], jnp.int32)
    after = jax.vmap(env.step_outcome)(before, win, jnp.zeros(1, jnp.int32))
    assert [float(x[0]) for x in step_result(before, after)] == [1.0, 0.0]
    quiet = jnp.array([parse_action(state, "d4-c4")], jnp.int32)
    after = jax.vmap(env.step_outcome)(before, quiet, jnp.zeros(1, jnp.int32))
    assert [float(x[0]) for x in step_result(before, after)] == [0.0, -1.0]


def test_value_targets_equal_a_plain_loop() -> None:
    rng = np.random.default_rng(0)
    reward = rng.choice([-1.0, 0.0, 0.3, 1.0], size=(5, 40)).astype(np.float32)
    discount = rng.choice([-1.0, -1.0, -1.0, 1.0, 0.0], size=(5, 40)).astype(np.float32)
    reward = np.where(discount == 0, reward, 0.0).astype(np.float32)
    g, ok = azero.value_targets(jnp.asarray(reward), jnp.asarray(discount))
    for b in range(5):
        future, resolved = 0.0, False
        for t in reversed(range(40)):
            future = reward[b, t] + discount[b, t] * future
            resolved = bool(discount[b, t] == 0) or resolved
            assert float(ok[b, t]) == resolved
            if resolved:
                assert float(g[b, t]) == pytest.approx(future)


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
    network = _network(DARK)
    params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(DARK))))
    e0 = network_evaluation(env, network, params, _batch(p0))
    e1 = network_evaluation(env, network, params, _batch(p1))
    turn = rotation(DARK)
    np.testing.assert_allclose(np.asarray(e0.logits[0]), np.asarray(e1.logits[0][turn]), atol=1e-6)
    np.testing.assert_allclose(float(e0.value[0]), float(e1.value[0]), atol=1e-6)


def _network(rules: Rules) -> Any:
    return build_network(rules, 4, 2)


@pytest.mark.parametrize("rules", [DARK, CLASSIC])
def test_search_outputs_are_finite(rules: Rules) -> None:
    """A random network on positions from random play, finished-game leaves included."""
    env = make(rules)
    network = _network(rules)
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
        lambda *x: jnp.stack(x), *[env.from_state(s) for s in _random_states(rules, 40, 5)]
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
    network = _network(DARK)
    params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(DARK))))
    own_head = functools.partial(network_evaluation, env, network)

    def value_head(params: Any, states: JaxState) -> Evaluation:
        ev = network_evaluation(env, network, params, states)
        return Evaluation(ev.logits, ev.value, jnp.broadcast_to(ev.value[:, None], ev.logits.shape))

    picks = [s for s in _random_states(DARK, 60, 11) if outcome(s) is None][::6]
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


def _searched_batch(rules: Rules, seed: int, count: int) -> tuple[Any, Any, Any, JaxState]:
    """``(env, params, evaluate, batch)``: a random 4-channel network's evaluation and
    ``count`` unfinished positions of random play, stacked."""
    env = make(rules)
    network = _network(rules)
    params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(rules))))
    evaluate = functools.partial(network_evaluation, env, network)
    picks = [s for s in _random_states(rules, 40, seed) if outcome(s) is None][:count]
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in picks])
    return env, params, evaluate, batch


@pytest.mark.parametrize("rules", [DARK, CLASSIC], ids=["dark", "classic"])
def test_sequential_batching_is_the_one_game_search_per_game(rules: Rules) -> None:
    """``batching="sequential"`` (what ``auto`` picks on a CPU) searches game ``i`` of a
    batch exactly as a batch of one with key ``split(key, B)[i]``: actions, weights and
    root values; a batch of one is searched with the key as it is."""
    env, params, evaluate, batch = _searched_batch(rules, seed=3, count=3)

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


@pytest.mark.parametrize("rules", [DARK, CLASSIC], ids=["dark", "classic"])
def test_batched_backward_updates_the_tree_as_mctx_does(rules: Rules) -> None:
    """:func:`batched_backward` (the default) leaves a vectorized search's whole tree as
    mctx's own backward pass does, games of different depths in one batch; and from
    chosen leaves (one game at its root) it writes what mctx's writes."""
    env, params, evaluate, batch = _searched_batch(rules, seed=7, count=4)

    def search(backward: str) -> Any:
        knobs = SearchConfig(
            simulations=24,
            dirichlet_fraction=0.25,
            gumbel_scale=1.0,
            batching="vectorized",
            slots=True,
            backward=backward,
        )
        return jax.jit(make_search(env, evaluate, knobs))(params, jax.random.key(3), batch)

    ours, theirs = search("batched"), search("mctx")
    np.testing.assert_array_equal(ours.action, theirs.action)
    np.testing.assert_array_equal(ours.action_weights, theirs.action_weights)
    for name in ("node_values", "node_visits", "children_values", "children_visits", "parents"):
        np.testing.assert_array_equal(
            getattr(ours.search_tree, name), getattr(theirs.search_tree, name), err_msg=name
        )
    tree = theirs.search_tree
    assert int(jnp.max(tree.parents)) > 0  # lines deeper than one step were searched
    leaves = jnp.array([24, 0, 13, 7], jnp.int32)
    mine, reference = batched_backward(tree, leaves), mctx_backward(tree, leaves)
    for name in ("node_values", "node_visits", "children_values", "children_visits"):
        np.testing.assert_array_equal(getattr(mine, name), getattr(reference, name), err_msg=name)
    np.testing.assert_array_equal(mine.node_visits[1], tree.node_visits[1])  # at its root
    with pytest.raises(ValueError, match="backward"):
        SearchConfig(backward="scan")


def test_dirichlet_noise_is_drawn_at_once_with_a_threefry_key() -> None:
    """:func:`dirichlet_noise` (``SearchConfig.noise="threefry"``, the default): the
    noise of ``jax.random.dirichlet`` with a threefry key made from the search's ``rbg``
    key, drawn without a loop (mctx's own, with the ``rbg`` key, loops over every
    element: what made the GPU's search slow); Dirichlet's mean and variance; and with a
    share of 0 the search is mctx's exactly."""
    key = search_key(jax.random.key(4))
    probs = jnp.full((4000, 4), 0.25, jnp.float32)
    noisy = dirichlet_noise(key, probs, dirichlet_alpha=0.3, dirichlet_fraction=1.0)
    threefry = jax.random.wrap_key_data(jax.random.key_data(key)[:2], impl="threefry2x32")
    expected = jax.random.dirichlet(threefry, jnp.full((4,), 0.3), shape=(4000,))
    np.testing.assert_array_equal(noisy, expected)
    np.testing.assert_allclose(noisy.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(noisy.mean(axis=0), 0.25, atol=0.02)
    # Dirichlet(0.3 x 4): each share's variance is 0.3 * 0.9 / (1.2^2 * 2.2)
    np.testing.assert_allclose(noisy.var(axis=0), 0.27 / (1.44 * 2.2), rtol=0.12)

    def loop_carries(noise: Any) -> list[str]:
        """The types each ``while`` loop of the lowered draw (8 x 4 shares) carries."""
        draw = functools.partial(noise, dirichlet_alpha=0.3, dirichlet_fraction=0.25)
        text = str(jax.jit(draw).lower(key, probs[:8]).as_text())
        return [line.split(") : ")[-1] for line in text.splitlines() if "stablehlo.while(" in line]

    # Gamma's rejection loop: mctx's draws one variate at a time (a scalar f32 carried,
    # inside a loop over the 32 elements), this one all 32 at once
    assert any("tensor<f32>" in carry for carry in loop_carries(mctx_dirichlet_noise))
    ours = loop_carries(dirichlet_noise)
    assert not any("tensor<f32>" in carry for carry in ours)
    assert any("tensor<32xf32>" in carry for carry in ours)

    env, params, evaluate, batch = _searched_batch(DARK, seed=5, count=3)

    def search(noise: str) -> Any:
        knobs = SearchConfig(simulations=16, batching="vectorized", slots=True, noise=noise)
        return jax.jit(make_search(env, evaluate, knobs))(params, jax.random.key(2), batch)

    ours, theirs = search("threefry"), search("mctx")
    np.testing.assert_array_equal(ours.action_weights, theirs.action_weights)
    np.testing.assert_array_equal(ours.search_tree.node_values, theirs.search_tree.node_values)
    with pytest.raises(ValueError, match="noise"):
        SearchConfig(noise="philox")


# ------------------------------------------------------------------------ training


@pytest.fixture(scope="module")
def tiny_run() -> Any:
    return azero.make_train(TINY)(jax.random.key(3))


def test_train_smoke(tiny_run: Any) -> None:
    runner, metrics = tiny_run
    assert int(runner.rounds) == TINY.num_rounds
    assert np.isnan(float(metrics["policy_loss"][0]))  # round 0 only plays
    for name in ("policy_loss", "value_loss", "afterstate_loss"):
        assert np.isfinite(np.asarray(metrics[name][1:])).all()
    assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(runner.params))


def test_chunked_trainer_equals_one_jitted_run(tiny_run: Any) -> None:
    runner, _ = tiny_run
    trainer = azero.AZeroTrainer(TINY)
    state = trainer.init(3)
    state, _ = trainer.advance(state, TINY.steps_per_round)
    state, _ = trainer.advance(state, 3 * TINY.steps_per_round)
    assert trainer.steps_done(state) == TINY.num_rounds * TINY.steps_per_round
    for a, b in zip(jax.tree.leaves(state.params), jax.tree.leaves(runner.params), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


def test_run_training_checkpoints_resume_and_agent(tmp_path: Any) -> None:
    config = dataclasses.replace(TINY, total_steps=32)
    trainer = azero.AZeroTrainer(config)
    out = tmp_path / "run"
    run_training(trainer, out, steps=16, chunk_steps=16, eval_games=0)
    state = run_training(trainer, out, steps=32, chunk_steps=16, eval_games=0, resume=True)
    assert trainer.steps_done(state) == 32
    agent = AZeroAgent(DARK, str(out / "agent.npz"), simulations=4)
    game = new_game(DARK)
    assert agent.act(game, np.random.default_rng(0)) in legal_actions(game)
    with pytest.raises(CheckpointError):
        AZeroAgent(CLASSIC, str(out / "agent.npz"), simulations=4)


@pytest.mark.parametrize("teacher", ["", "shipped"], ids=["self", "teacher"])
def test_teacher_plays_self_play_whatever_the_network(teacher: str) -> None:
    """With a teacher, self-play's moves and targets come from the DQN-guided search and
    not from the network being trained: two different networks give the same round;
    without one, the network's own search plays and they differ."""
    config = dataclasses.replace(
        TINY, policy_target="visits", teacher=teacher, updates_per_round=0, random_games=0.0
    )
    parts = azero._Parts(config)
    runner = parts.init(jax.random.key(0))
    other = runner._replace(params=parts.init(jax.random.key(1)).params)
    one_round = jax.jit(parts.round)
    played = [one_round(r)[0].previous for r in (runner, other)]
    same = all(
        np.array_equal(np.asarray(a), np.asarray(b))
        for a, b in zip(jax.tree.leaves(played[0]), jax.tree.leaves(played[1]), strict=True)
    )
    assert same == bool(teacher)
    assert bool(np.asarray(played[0].valid).all())


def test_teacher_config_is_checked() -> None:
    with pytest.raises(ValueError, match="teacher"):
        dataclasses.replace(TINY, teacher="shipped")  # policy_target=completed_q
    with pytest.raises(ValueError, match="teacher"):
        dataclasses.replace(azero.CLASSIC_CPU_CONFIG, teacher="shipped", policy_target="visits")
    with pytest.raises(CheckpointError):
        azero._Parts(dataclasses.replace(TINY, policy_target="visits", teacher="missing.npz"))


def test_chance_order_reaches_the_searches_of_training() -> None:
    shuffled = dataclasses.replace(TINY, chance_order="shuffled")
    assert shuffled.search_config(self_play=True).chance_order == "shuffled"
    assert shuffled.search_config(self_play=False).chance_order == "shuffled"
    assert TINY.search_config(self_play=True).chance_order == "index"
    with pytest.raises(ValueError, match="chance_order"):
        dataclasses.replace(TINY, chance_order="random")


def test_registered_agent_kind() -> None:
    from jungle_agents import make_agent
    from jungle_train._registry import register_azero

    register_azero()  # what the `jungle.agents` entry point runs
    with pytest.raises(ValueError):
        make_agent("azero:simulations=0", DARK)


# ------------------------------------------------------------------- the DQN prior


def test_dqn_prior_evaluation_reads_the_q_values() -> None:
    """Prior logits are Q / tau; weight 1 gives the hand-made value everywhere, weight 0
    the DQN's own values (max legal Q, and Q per action, over the win reward)."""
    from jungle_train._azero_guides import dqn_functions, load_dqn
    from jungle_train._hand_value import heuristic_value
    from jungle_train._learned import shipped_checkpoint
    from jungle_train._search_evaluations import dqn_prior_evaluation

    config, params, _ = load_dqn(shipped_checkpoint("dqn"))
    env = make(DARK)
    q_network, observe = dqn_functions(env, config)
    states = _random_states(DARK, 12, seed=3)
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


def _random_states(rules: Rules, count: int, seed: int) -> list[State]:
    """``count`` positions along one random game (restarted when it ends)."""
    rng = np.random.default_rng(seed)
    state, states = new_game(rules, seed=seed), list[State]()
    while len(states) < count:
        if outcome(state) is not None:
            state = new_game(rules, seed=seed + len(states))
        actions = legal_actions(state)
        state = step(state, actions[int(rng.integers(len(actions)))], rng)
        states.append(state)
    return states


@pytest.mark.parametrize("player", [0, 1])
def test_dqn_prior_agent_takes_the_last_piece(player: int) -> None:
    """The default DARK agent (the search guided by the shipped DQN) builds from the
    shipped files alone and wins at once where it can, in either seat."""
    from jungle_agents import make_agent

    agent = make_agent("azero:simulations=32", DARK)
    assert isinstance(agent, AZeroAgent) and agent.prior == "dqn"
    state = _dark(CAPTURE, player)
    assert action_to_str(state, agent.act(state, np.random.default_rng(0))) == "d4xd5"
    hand = make_agent("azero:simulations=32,prior=hand", DARK)  # no network at all
    assert action_to_str(state, hand.act(state, np.random.default_rng(0))) == "d4xd5"


def test_azero_agent_options_are_checked() -> None:
    from jungle_agents import AgentSpecError, make_agent
    from jungle_train._learned import shipped_checkpoint

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
        ("azero:risk=1", DARK, "risk"),
        ("azero:risk=0.5", CLASSIC, "risk"),
    ]
    for spec, rules, match in refused:
        with pytest.raises(AgentSpecError, match=match):
            make_agent(spec, rules)
    spec = f"azero:path={shipped_checkpoint('dqn')},simulations=4,tau=2,hunt=0.02"
    agent = make_agent(spec, DARK)
    assert isinstance(agent, AZeroAgent)
    assert agent.prior == "dqn" and "tau=2" in agent.name and "hunt=0.02" in agent.name
    for option in ("cover=1", "capture=0.5", "chance_order=shuffled", "pb_c=2.5", "contempt=0.1"):
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
        out = search(None, jax.random.key(0), _batch(state))
        q = _root_q(out.search_tree, state, "d4xd5")
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
    from jungle_train._search_evaluations import hand_evaluation

    env = make(DARK)
    evaluate = functools.partial(hand_evaluation, env)
    params = (jnp.zeros(()), jnp.zeros((), jnp.int32))
    state = _batch(from_fen(f"7c/8/8/8/8/8/ELT5 {player} 0 0 - -"))
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
    from jungle_agents import AgentSpecError, make_agent
    from jungle_train._search_evaluations import hand_evaluation

    env = make(DARK)
    evaluate = functools.partial(hand_evaluation, env)
    params = (jnp.zeros(()), jnp.zeros((), jnp.int32))
    state = _batch(from_fen("7c/8/8/8/8/8/ELT5 0 0 0 - -"))
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
    with pytest.raises(AgentSpecError, match="qtransform"):
        make_agent("azero:qtransform=parent", DARK)
    with pytest.raises(AgentSpecError, match="qtransform"):
        make_agent("azero:qtransform=minmax", CLASSIC)
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


@pytest.mark.parametrize("knob", ["pb_c_face_down=2.5", "face_down_simulations=16", "risk=0.5"])
def test_face_down_knobs_serve_the_decisions_while_a_piece_is_face_down(knob: str) -> None:
    """``pb_c_face_down`` (an exploration constant), ``face_down_simulations`` and
    ``risk`` (the aversion to an even gamble) each compile a second search; the agent
    asks it while some piece is face down and the first one after (every piece face
    up); without them there is one search."""
    from jungle_agents import AgentSpecError, make_agent

    name = knob.split("=", maxsplit=1)[0]
    with pytest.raises(AgentSpecError, match=name):
        make_agent(f"azero:{name}=-1", DARK)
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


def _shipped_dqn_leaf_values() -> tuple[list[JaxState], Callable[..., Any]]:
    """The two positions the leaf-value tests score (b1 a Leopard and c1 a Tiger turned up,
    the rest face down; every piece face up), and the shipped DQN prior's evaluation of
    the pair (:func:`dqn_prior_evaluation`, hunt off), its static options as keywords."""
    from jungle_train._azero_guides import dqn_functions, load_dqn
    from jungle_train._learned import shipped_checkpoint
    from jungle_train._search_evaluations import dqn_prior_evaluation

    env = make(DARK)
    config, q_params, _ = load_dqn(shipped_checkpoint("dqn"))
    q_network, observe_one = dqn_functions(env, config)
    params = (q_params, jnp.float32(1.0), jnp.float32(1.0), jnp.float32(0.0))
    down = step_outcome(step_outcome(new_game(), 1, 4), 2, 13)
    up = from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -")
    assert down.face_down_mask and not up.face_down_mask
    one = [env.from_state(s) for s in (down, up)]
    states = jax.tree.map(lambda *x: jnp.stack(x), *one)

    def evaluate(**options: Any) -> Any:
        return dqn_prior_evaluation(
            env, q_network, observe_one, config.win_reward, params, states,
            hunting=False, **options,
        )  # fmt: skip

    return one, evaluate


def test_greedy_joins_the_leaf_value_while_a_piece_is_face_down() -> None:
    """``greedy=w``: while some piece is face down, ``w · tanh(B / GREEDY_SCALE)`` (``B``
    the Greedy balance of the mover) joins the hand-made value and the afterstate values
    of a DQN prior's evaluation; with every piece face up nothing changes. The knob is
    checked (0..1, a DQN prior only)."""
    from jungle_agents import AgentSpecError, make_agent
    from jungle_train._jax_greedy import JaxGreedy
    from jungle_train._search_evaluations import GREEDY_SCALE

    with pytest.raises(AgentSpecError, match="greedy"):
        make_agent("azero:greedy=2", DARK)
    with pytest.raises(AgentSpecError, match="greedy"):
        make_agent("azero:prior=hand,greedy=0.5", DARK)
    one, evaluate = _shipped_dqn_leaf_values()
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
    from jungle_agents import AgentSpecError, make_agent
    from jungle_train._board import potential
    from jungle_train._hand_value import POTENTIAL_WEIGHT, material_balance

    with pytest.raises(AgentSpecError, match="potential"):
        make_agent("azero:potential=-0.1", DARK)
    with pytest.raises(AgentSpecError, match="potential"):
        make_agent("azero:prior=hand,potential=0.04", DARK)
    one, evaluate = _shipped_dqn_leaf_values()
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
    counts the pieces by :data:`PIECE_VALUES`' fitted set instead of SPEC §7's (checked
    against a balance written here independently), in the values and the afterstate
    values alike, the potentials' term and the prior's logits unchanged; ``spec`` is the
    default. The knob is checked (a named set, a DQN prior only) and named in the agent's
    name when it is not the default."""
    from jungle_agents import AgentSpecError, make_agent
    from jungle_train._hand_value import PIECE_VALUES, material_balance

    assert PIECE_VALUES["spec"] == (30, 20, 30, 40, 50, 60, 70, 80)
    with pytest.raises(AgentSpecError, match="values"):
        make_agent("azero:values=rank", DARK)
    with pytest.raises(AgentSpecError, match="values"):
        make_agent("azero:prior=hand,values=fitted", DARK)
    for state in (
        from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -"),
        from_fen("8/8/8/8/8/8/E1r5 1 0 0 - -"),
    ):
        x = make(DARK).from_state(state)
        for me in (0, 1):
            for name, values in PIECE_VALUES.items():
                assert float(material_balance(x, me, values)) == pytest.approx(
                    _balance(state, me, values), abs=1e-6
                ), name
    # the pair the leaf values score: every piece still in play (a balance of 0 by any
    # values), then Tiger and Rat against Lion and Wolf, player 0 to move
    one, evaluate = _shipped_dqn_leaf_values()
    assert int(one[0].face_down_mask) and not int(one[1].face_down_mask)
    plain, fitted = evaluate(), evaluate(piece_values=PIECE_VALUES["fitted"])
    up = from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -")
    shift = np.array([0.0, _balance(up, 0, PIECE_VALUES["fitted"]) - _balance(up, 0)])
    assert abs(shift[1]) > 0.05
    assert np.asarray(fitted.value) == pytest.approx(np.asarray(plain.value) + shift, abs=1e-5)
    assert np.asarray(fitted.afterstate) == pytest.approx(
        np.asarray(plain.afterstate) + shift[:, None], abs=1e-5
    )
    assert np.asarray(fitted.logits) == pytest.approx(np.asarray(plain.logits))
    agent = make_agent("azero:simulations=8,values=fitted,endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and "values=fitted" in agent.name
    assert "values" not in make_agent("azero:simulations=8,endgame=0", DARK).name
    _act_in_both_phases(agent)


def _act_in_both_phases(agent: AZeroAgent) -> None:
    """One decision of ``agent`` with every piece face down (the start), then one with
    every piece face up; each must be legal."""
    rng = np.random.default_rng(0)
    for state in (new_game(), from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -")):
        assert agent.act(state, rng) in legal_actions(state)


def test_potential_face_down_sets_the_weight_of_the_chance_phase_searches() -> None:
    """``potential_face_down=w``: the decisions taken while some piece is face down use a
    search whose evaluation weighs the shaping potentials by ``w``, the others the
    ``potential`` one; the knob is checked (-1 or not negative, a DQN prior only) and
    named in the agent's name."""
    from jungle_agents import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError, match="potential_face_down"):
        make_agent("azero:potential_face_down=-0.5", DARK)
    with pytest.raises(AgentSpecError, match="potential_face_down"):
        make_agent("azero:prior=hand,potential_face_down=0", DARK)
    plain = make_agent("azero:simulations=8,endgame=0", DARK)
    assert isinstance(plain, AZeroAgent)
    assert plain._search_face_down is plain._search and "potential" not in plain.name
    agent = make_agent("azero:simulations=8,potential_face_down=0,endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and "potential_face_down=0" in agent.name
    assert agent._model[-1] == pytest.approx(0.01) and agent._model_face_down[-1] == 0.0
    assert agent._model_face_down[:-1] == agent._model[:-1]
    asked: list[str] = []
    searches = {"face down": agent._search_face_down, "face up": agent._search}

    def spy(name: str) -> Any:
        def search(*args: Any) -> Any:
            asked.append(name)
            return searches[name](*args)

        return search

    agent._search_face_down, agent._search = spy("face down"), spy("face up")
    _act_in_both_phases(agent)
    assert asked == ["face down", "face up"]


def test_face_down_minimax_decides_while_a_piece_is_face_down() -> None:
    """``face_down_minimax=T``: the Minimax agent (deepening for ``T`` seconds) plays the
    decisions taken while some piece is face down, the search the ones after; the knob is
    checked (not negative, DARK only) and named in the agent's name."""
    from jungle_agents import AgentSpecError, MinimaxAgent, make_agent

    with pytest.raises(AgentSpecError, match="face_down_minimax"):
        make_agent("azero:face_down_minimax=-1", DARK)
    with pytest.raises(AgentSpecError, match="DARK"):
        make_agent("azero:face_down_minimax=0.1", CLASSIC)
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
    _act_in_both_phases(agent)
    assert asked == ["minimax", "search"]


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
    from jungle_train._hand_value import winnable

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
    from jungle_train._hand_value import DRAWN_SHARE, heuristic_value

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
        lambda *x: jnp.stack(x), *[env.from_state(s) for s in _random_states(DARK, 30, 5)]
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
    from jungle_train._hand_value import heuristic_value, hunt

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
        lambda *x: jnp.stack(x), *[env.from_state(s) for s in _random_states(DARK, 30, 4)]
    )
    value = jax.vmap(functools.partial(heuristic_value, DARK, hunt_weight=0.3))
    np.testing.assert_allclose(
        value(batch, batch.current_player), -value(batch, 1 - batch.current_player), atol=1e-6
    )


def test_time_sets_a_power_of_two_from_a_middlegame() -> None:
    """``time`` picks the simulations once, from a search of a fixed middlegame (some
    pieces face up, the game not over); the count is a power of two, at least 8."""
    from jungle_train._azero_agent import _calibration_position

    position = _calibration_position(DARK)
    assert outcome(position) is None and position == _calibration_position(DARK)
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
    from jungle_agents import AgentSpecError, make_agent
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
    with pytest.raises(AgentSpecError, match="endgame"):
        make_agent("azero:endgame=5", DARK)


def test_classic_hand_value_is_the_piece_square_evaluation() -> None:
    """CLASSIC's hand-made value is the minimax evaluation's piece-square part (no
    threats, no mobility) through tanh, from either side, on positions of random games."""
    from jungle_agents import ClassicEvaluator, ClassicWeights
    from jungle_train._hand_value import CLASSIC_VALUE_SCALE, classic_piece_squares, hand_value

    env = make(CLASSIC)
    pst = jnp.asarray(classic_piece_squares(CLASSIC))
    weights = ClassicWeights(threat=0.0, mobility=0.0)
    evaluators = [ClassicEvaluator(CLASSIC, p, weights) for p in (0, 1)]
    states = [s for s in _random_states(CLASSIC, 60, 3) if outcome(s) is None]
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
    state = _classic(picture, player)
    assert action_to_str(state, agent.act(state, np.random.default_rng(0))) == move
    with pytest.raises(AgentSpecError, match="no path"):
        make_agent("azero:prior=hand,hunt=0.1", CLASSIC)


def test_classic_hand_prior_is_each_moves_change_of_the_evaluation() -> None:
    """CLASSIC's hand prior: each legal move's logit is the change of the piece-square
    evaluation for the mover from the position to the core's successor, over the scale
    (steps, river jumps and captures, both players)."""
    from jungle_agents import ClassicEvaluator, ClassicWeights
    from jungle_train._hand_value import (
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
    for state in [s for s in _random_states(CLASSIC, 400, 5) if outcome(s) is None][::5]:
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
    from jungle_train._hand_value import capture_gain, heuristic_value, material_balance

    env = make(DARK)
    states = [s for s in _random_states(DARK, 400, 11) if outcome(s) is None][::3]
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


def _balance(
    state: State, player: int, value: tuple[float, ...] = (30, 20, 30, 40, 50, 60, 70, 80)
) -> float:
    """The mover's material balance of a pure-core state, by identity (face up or
    down), as :func:`material_balance` defines it (SPEC §7's Greedy values unless
    ``value`` gives others, Rat to Elephant): written here independently."""
    held = [value[i & 7] * (state.in_play >> i & 1) for i in range(16)]
    mine = sum(held[8 * player : 8 * player + 8])
    total = sum(held)
    return (2 * mine - total) / total if total else 0.0


def test_expected_gain_is_the_average_over_the_pure_cores_transitions() -> None:
    """:func:`expected_gain` of every legal action equals the probability-weighted change
    of the mover's material balance over the pure core's ``transitions`` (each outcome
    played out); positions along random games include captures, bumps into face-down
    pieces that win and that lose on average, and reveals (0)."""
    from jungle_core import transitions
    from jungle_train._hand_value import expected_gain

    env = make(DARK)

    @jax.jit
    def gains(state: JaxState) -> jax.Array:  # float32[A]
        def one(action: jax.Array) -> jax.Array:
            return expected_gain(DARK, state, action, env.chance_probs(state, action))

        return jax.vmap(one)(jnp.arange(env.num_actions))

    states = [s for s in _random_states(DARK, 600, 17) if outcome(s) is None][::4]
    n = DARK.rows * DARK.cols
    seen = {"bump won": 0, "bump lost": 0, "capture": 0, "reveal": 0}
    for state in states:
        got = np.asarray(gains(env.from_state(state)))
        me, before = state.to_move, _balance(state, state.to_move)
        for action in legal_actions(state):
            played = transitions(state, action)
            want = sum(p * (_balance(after, me) - before) for p, after in played)
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
    from jungle_train._azero_search import _Model
    from jungle_train._hand_value import expected_gain
    from jungle_train._search_evaluations import hand_evaluation

    env = make(DARK)
    evaluate = functools.partial(hand_evaluation, env)
    for fen in ("8/8/8/8/8/8/Ew?5 0 0 0 - r", "8/8/8/8/8/8/Ew?5 1 0 0 - r"):
        state = _batch(from_fen(fen))
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


def test_shuffled_chance_order_searches_outcomes_in_a_random_order() -> None:
    """mctx searches a chance node's outcomes by ``probability / (visits + 1)``, ties to
    the lowest index: under ``chance_order="index"`` a reveal's 16 equally likely pieces
    come in the order of their identities. ``"shuffled"`` jitters the logits so that the
    order is a random permutation of the possible outcomes (another with another key),
    while the probabilities stay within 1 % of the true ones; an action without chance
    keeps its single outcome."""
    from jungle_train._azero_search import CHANCE_JITTER, _Model

    env = make(DARK)
    start = _batch(new_game(DARK))
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
    state = _dark(CAPTURE, 0)
    move = jnp.array([parse_action(state, "d4xd5")], jnp.int32)
    single = logits("shuffled", 3, _batch(state), move)
    assert first_searched(single, 3) == [0, 0, 0]
    with pytest.raises(ValueError, match="chance_order"):
        SearchConfig(chance_order="random")
