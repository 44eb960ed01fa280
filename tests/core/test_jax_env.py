"""Examples of the JAX core's documented semantics (``jungle_core.jax_env``).

The action-by-action equality with the pure core is proven by
``property_tests/test_jax_equivalence.py``; here: set-ups, dtypes and shapes, illegal
actions and finished games, chance sampling, batching, the converters and the tables the
traced move generator rebuilds without gathers.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import attrs
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_core import (
    CLASSIC,
    DARK,
    DARK_STRICT,
    Rules,
    State,
    chance_outcomes,
    from_fen,
    legal_action_mask,
    legal_actions,
    new_game,
    outcome,
    step_outcome,
    to_fen,
    validate,
)
from jungle_core._jax_rules import Kernel
from jungle_core._jax_tables import WALL, jax_tables
from jungle_core.jax_env import JaxEnv, JaxState, make

PRESETS = [DARK, DARK_STRICT, CLASSIC]
SET_UPS = [
    DARK,
    DARK_STRICT,
    attrs.evolve(DARK, setup="home_rows"),
    CLASSIC,
]


@functools.cache
def jitted(rules: Rules) -> dict[str, Any]:
    """The environment's functions, jitted once per rule set for this module."""
    env = make(rules)
    return {
        "init": jax.jit(env.init),
        "step": jax.jit(env.step),
        "step_outcome": jax.jit(env.step_outcome),
        "chance_probs": jax.jit(env.chance_probs),
        "observe": jax.jit(env.observe),
    }


def fields(state: JaxState) -> dict[str, np.ndarray[Any, Any]]:
    return {f.name: np.asarray(getattr(state, f.name)) for f in dataclasses.fields(state)}


def assert_equal_states(a: JaxState, b: JaxState) -> None:
    fa, fb = fields(a), fields(b)
    assert fa.keys() == fb.keys()
    for name in fa:
        assert fa[name].dtype == fb[name].dtype, name
        assert np.array_equal(fa[name], fb[name]), name


def random_position(rules: Rules, plies: int, seed: int) -> State:
    """A position after ``plies`` random plies (fewer if the game ends)."""
    rng = np.random.default_rng(seed)
    state = new_game(rules, seed=seed)
    for _ in range(plies):
        if outcome(state) is not None:
            break
        actions = legal_actions(state)
        action = actions[int(rng.integers(len(actions)))]
        options = chance_outcomes(state, action)
        state = step_outcome(state, action, options[int(rng.integers(len(options)))][0])
    return state


# ------------------------------------------------------------------ building


def test_make_refuses_the_repetition_ban_with_a_reason() -> None:
    with pytest.raises(ValueError, match=r"repetition='ban_third'.*position since the last"):
        make(attrs.evolve(CLASSIC, repetition="ban_third"))


def test_make_gives_one_environment_per_rule_set() -> None:
    assert make(DARK) is make(DARK) is make()
    assert make(CLASSIC) is not make(DARK)
    assert isinstance(make(CLASSIC), JaxEnv)


@pytest.mark.parametrize("rules", SET_UPS, ids=lambda r: r.name + "/" + r.setup)
def test_init_is_the_pure_start(rules: Rules) -> None:
    env = make(rules)
    state = jitted(rules)["init"](jax.random.key(3))
    assert env.to_state(state) == new_game(rules)
    assert np.array_equal(state.legal_action_mask, legal_action_mask(new_game(rules)))
    assert not bool(state.terminated) and not bool(state.truncated)
    assert np.asarray(state.rewards).tolist() == [0.0, 0.0]


def test_scattered_init_draws_sixteen_distinct_squares_from_the_key() -> None:
    rules = attrs.evolve(DARK, setup="scattered")
    env = make(rules)
    init = jax.jit(jax.vmap(env.init))
    states = init(jax.random.split(jax.random.key(0), 64))
    boards = np.asarray(states.board)
    assert ((boards == 17).sum(axis=1) == 16).all() and ((boards == 0).sum(axis=1) == 40).all()
    assert len({b.tobytes() for b in boards}) == 64
    # every square is used by some game: the squares are not a fixed subset
    assert (boards == 17).any(axis=0).all()
    for i in range(4):
        state = env.to_state(jax.tree.map(lambda x, i=i: x[i], states))
        validate(state)
        assert state.face_down_mask == 0xFFFF and state.ply == 0 and state.to_move == 0
        assert np.array_equal(states.legal_action_mask[i], legal_action_mask(state))


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_state_fields_have_the_documented_dtypes_and_shapes(rules: Rules) -> None:
    state = jitted(rules)["init"](jax.random.key(0))
    n, a = rules.num_squares, rules.num_actions
    expected = {
        "board": ((n,), jnp.int8),
        "face_down_mask": ((), jnp.int32),
        "current_player": ((), jnp.int32),
        "plies_since_removal": ((), jnp.int32),
        "ply": ((), jnp.int32),
        "legal_action_mask": ((a,), jnp.bool_),
        "rewards": ((2,), jnp.float32),
        "terminated": ((), jnp.bool_),
        "truncated": ((), jnp.bool_),
    }
    got = {name: (value.shape, value.dtype) for name, value in fields(state).items()}
    assert got == {name: (shape, np.dtype(dtype)) for name, (shape, dtype) in expected.items()}
    obs = jitted(rules)["observe"](state)
    assert obs.shape == make(rules).observation_shape and obs.dtype == jnp.float32
    # stepping keeps every dtype (no silent promotion inside the step)
    action = int(np.flatnonzero(state.legal_action_mask)[0])
    after = jitted(rules)["step"](state, action, jax.random.key(1))
    assert {k: (v.shape, v.dtype) for k, v in fields(after).items()} == got
    assert int(after.step_count) == int(after.ply) == 1


# --------------------------------------------------------- awkward cases


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
@pytest.mark.parametrize("mover", [0, 1])
def test_an_illegal_action_loses_for_the_mover_and_changes_nothing_else(
    rules: Rules, mover: int
) -> None:
    env = make(rules)
    pure = new_game(rules)
    if mover:
        action = legal_actions(pure)[0]
        pure = step_outcome(pure, action, chance_outcomes(pure, action)[0][0])
    state = env.from_state(pure)
    illegal = [a for a in range(rules.num_actions) if not state.legal_action_mask[a]][:3]
    for action in [*illegal, -1, rules.num_actions, 10**6]:
        after = jitted(rules)["step"](state, action, jax.random.key(0))
        expected = [1.0, 1.0]
        expected[mover] = -1.0
        assert np.asarray(after.rewards).tolist() == expected
        assert bool(after.terminated) and not bool(after.truncated)
        assert env.to_state(after) == pure
        assert np.array_equal(after.legal_action_mask, state.legal_action_mask)
        probs = jitted(rules)["chance_probs"](state, action)
        assert np.asarray(probs).tolist() == [1.0] + [0.0] * 15


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_a_finished_game_changes_nothing_and_pays_nothing(rules: Rules) -> None:
    env = make(rules)
    fns = jitted(rules)
    state = fns["init"](jax.random.key(0))
    key = jax.random.key(1)
    steps = 0
    while not bool(state.terminated):  # random play to the end
        key, k_action, k_step = jax.random.split(key, 3)
        legal = np.flatnonzero(state.legal_action_mask)
        action = int(legal[int(jax.random.randint(k_action, (), 0, len(legal)))])
        before = state
        state = fns["step"](state, action, k_step)
        steps += 1
    assert steps == int(state.ply)
    pure = env.to_state(state)
    result = outcome(pure)
    assert result is not None
    assert np.asarray(state.rewards).tolist() == (
        [0.0, 0.0] if result.winner is None else [1.0 - 2 * result.winner, 2 * result.winner - 1.0]
    )
    assert not bool(before.terminated)
    for action in [0, int(np.flatnonzero(before.legal_action_mask)[0]), -1, 10**6]:
        again = fns["step"](state, action, jax.random.key(action % 97))
        assert np.asarray(again.rewards).tolist() == [0.0, 0.0]
        assert_equal_states(again.replace(rewards=state.rewards), state)
        again = fns["step_outcome"](state, action, 3)
        assert_equal_states(again.replace(rewards=state.rewards), state)
        assert np.asarray(fns["chance_probs"](state, action)).tolist() == [1.0] + [0.0] * 15


def test_the_ply_limit_terminates_with_a_draw_and_never_truncates() -> None:
    env = make(CLASSIC)
    state = env.from_state(attrs.evolve(new_game(CLASSIC), ply=299))
    action = int(np.flatnonzero(state.legal_action_mask)[0])
    after = jitted(CLASSIC)["step"](state, action, jax.random.key(0))
    assert bool(after.terminated) and not bool(after.truncated)
    assert np.asarray(after.rewards).tolist() == [0.0, 0.0]
    assert int(after.ply) == 300


def test_truncated_set_by_a_wrapper_freezes_the_game_like_terminated() -> None:
    state = jitted(DARK)["init"](jax.random.key(0)).replace(truncated=jnp.bool_(True))
    after = jitted(DARK)["step"](state, 0, jax.random.key(0))
    assert_equal_states(after, state.replace(rewards=jnp.zeros(2, jnp.float32)))


# ------------------------------------------------------------------ chance


def test_actions_without_chance_put_all_mass_on_index_zero() -> None:
    state = make(CLASSIC).from_state(new_game(CLASSIC))
    for action in np.flatnonzero(state.legal_action_mask):
        probs = np.asarray(jitted(CLASSIC)["chance_probs"](state, int(action)))
        assert probs.tolist() == [1.0] + [0.0] * 15
    # a DARK move onto an empty square
    pure = from_fen("8/8/8/8/8/8/E6? 0 0 5 - r", DARK)
    move = 56 + 0 * 4 + 1  # a1 up
    probs = np.asarray(jitted(DARK)["chance_probs"](make(DARK).from_state(pure), move))
    assert probs.tolist() == [1.0] + [0.0] * 15


@pytest.mark.parametrize(
    ("rules", "square", "possible"),
    [
        (DARK, 0, range(16)),
        (attrs.evolve(DARK, setup="home_rows"), 0, range(8)),  # a1 is player 0's
        (attrs.evolve(DARK, setup="home_rows"), 48, range(8, 16)),  # a7 is player 1's
    ],
)
def test_step_samples_the_outcomes_uniformly(rules: Rules, square: int, possible: range) -> None:
    env = make(rules)
    state = jitted(rules)["init"](jax.random.key(0))
    probs = np.asarray(jitted(rules)["chance_probs"](state, square))
    assert np.flatnonzero(probs).tolist() == list(possible)
    assert np.allclose(probs[list(possible)], 1.0 / len(possible))
    draws = 200 * len(possible)
    keys = jax.random.split(jax.random.key(42), draws)
    after = jax.jit(jax.vmap(env.step, in_axes=(None, None, 0)))(state, square, keys)
    counts = np.bincount(np.asarray(after.board[:, square]) - 1, minlength=16)
    assert counts[list(possible)].sum() == draws
    # 200 expected per outcome; a fixed key makes this deterministic, the bound is loose
    assert counts[list(possible)].min() > 140 and counts[list(possible)].max() < 260


# --------------------------------------------------------------- batching


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_jit_of_vmap_equals_one_game_at_a_time(rules: Rules) -> None:
    env = make(rules)
    positions = [random_position(rules, plies, seed) for seed, plies in enumerate(range(0, 80, 10))]
    singles = [env.from_state(p) for p in positions]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *singles)
    actions = np.array(
        [int(np.flatnonzero(s.legal_action_mask)[-1]) for s in singles], dtype=np.int32
    )
    outcomes = np.arange(len(singles), dtype=np.int32) % 16
    keys = jax.random.split(jax.random.key(5), len(singles))
    stepped = jax.jit(jax.vmap(env.step))(batch, actions, keys)
    fixed = jax.jit(jax.vmap(env.step_outcome))(batch, actions, outcomes)
    probs = jax.jit(jax.vmap(env.chance_probs))(batch, actions)
    obs = jax.jit(jax.vmap(env.observe))(batch)
    fns = jitted(rules)
    for i, single in enumerate(singles):
        pick = functools.partial(lambda x, i: x[i], i=i)
        assert_equal_states(jax.tree.map(pick, stepped), fns["step"](single, actions[i], keys[i]))
        assert_equal_states(
            jax.tree.map(pick, fixed), fns["step_outcome"](single, actions[i], outcomes[i])
        )
        assert np.array_equal(probs[i], fns["chance_probs"](single, actions[i]))
        assert np.array_equal(obs[i], fns["observe"](single))


# -------------------------------------------------------------- converters


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_from_state_and_to_state_round_trip(rules: Rules) -> None:
    env = make(rules)
    for seed in range(3):
        pure = random_position(rules, 40 * seed, seed)
        assert env.to_state(env.from_state(pure)) == pure
        assert to_fen(env.to_state(env.from_state(pure))) == to_fen(pure)


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_from_position_inside_jit_equals_from_state(rules: Rules) -> None:
    """The traceable constructor gives ``from_state``'s state (but ``ply`` 0) for
    positions mid-game and finished ones, the legal mask and game end included."""
    env = make(rules)
    build = jax.jit(env.from_position)
    for seed in range(6):
        pure = random_position(rules, 30 * seed + 3, seed)
        want = env.from_state(pure)
        got = build(want.board, want.face_down_mask, want.current_player, want.plies_since_removal)
        assert_equal_states(got, want.replace(ply=jnp.zeros((), jnp.int32)))


def test_converters_reject_batches_and_other_rules() -> None:
    env = make(DARK)
    batch = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))
    with pytest.raises(ValueError, match="unbatched"):
        env.to_state(batch)
    with pytest.raises(ValueError, match="rules"):
        env.from_state(new_game(CLASSIC))


# ------------------------------------------------------------------- tables


@pytest.mark.parametrize(
    "rules",
    [
        DARK,
        DARK_STRICT,
        attrs.evolve(DARK, equal_rank="attacker_wins", weaker_attack="forbidden"),
        attrs.evolve(DARK, attack_face_down=False, equal_rank="forbidden"),
    ],
    ids=lambda r: f"{r.equal_rank}/{r.weaker_attack}/{r.attack_face_down}",
)
def test_shift_built_move_bits_equal_the_table(rules: Rules) -> None:
    kernel = Kernel(rules)
    table = jax_tables(rules).move_bits
    codes = jnp.arange(20, dtype=jnp.int8)
    for player in (0, 1):
        got = np.asarray(kernel.move_row_bits(codes, jnp.int32(player)))
        assert got.tolist() == table[player * 20 : player * 20 + 20].tolist()


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_neighbour_reads_equal_the_step_table(rules: Rules) -> None:
    kernel = Kernel(rules)
    step = jax_tables(rules).step
    rng = np.random.default_rng(0)
    for _ in range(3):
        board = rng.integers(0, 20, rules.num_squares).astype(np.int8)
        padded = np.concatenate([board, [WALL]]).astype(np.int8)
        got = np.asarray(kernel.neighbours(jnp.asarray(board)))
        assert np.array_equal(got, padded[step].T)
