"""The JAX one-ply look-ahead (``jungle_train.jitted._lookahead``) against the pure reward.

The pure :func:`jungle_train.tabular._shaping.expected_ply_reward` is the reference: on
positions from seeded random play of the pure core (openings full of face-down pieces,
middle games, the last plies before each game's end, where captures end the game), the
JAX values must equal it within 1e-3 on every legal action and be ``-inf`` on the
others; ``act`` must play one of the best legal actions and break ties at random. A few
hand-made positions under other DARK options cover the one game end that the default
options cannot produce: the opponent left without a legal action.
"""

from __future__ import annotations

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
    from_fen,
    legal_actions,
    new_game,
    outcome,
    step,
    transitions,
)
from jungle_core.jax_env import JaxState, make
from jungle_train.jitted import JaxLookahead
from jungle_train.tabular._shaping import expected_ply_reward, piece_counts

TOLERANCE = 1e-3
"""The JAX values (float32) must be within this of the pure ones (float64)."""

BATCH = 64
"""Every batch is padded to a multiple of this, so each function compiles once per rule set."""

FORBIDDING = attrs.evolve(DARK, weaker_attack="forbidden", equal_rank="forbidden")
"""Attacks on stronger or equal pieces are illegal: a player can be left without a move."""

STUCK_FENS = [
    "8/8/8/8/W7/8/cD6 0 0 0 - -",  # W a3-a2 or D b1xa1: c a1 is walled in / taken
    "8/8/8/8/w7/8/Cd6 1 0 0 - -",  # the same for player 1
    "7p/7T/8/8/8/W7/cD6 0 0 0 - -",  # T h6xh7 takes the last free piece
    "7?/8/8/8/8/W7/cD6 0 0 0 P -",  # revealing the last face-down piece (self's)
    "7?/7T/8/8/8/W7/cD6 0 0 0 - r",  # T h6 onto the last face-down piece (the opponent's)
    "8/8/8/8/W7/8/cD6 0 99 120 - -",  # a3-a2 is a draw first (the no-removal limit)
]


@functools.cache
def players(rules: Rules) -> dict[str, Any]:
    """The JAX look-ahead, batched and jitted, once per rule set."""
    env = make(rules)
    lookahead = JaxLookahead(env)

    def both(state: JaxState, bits: jax.Array) -> tuple[jax.Array, jax.Array]:
        return lookahead.action_values(state), lookahead.act(state, bits)

    return {"env": env, "batch": jax.jit(jax.vmap(both)), "act": jax.jit(lookahead.act)}


def stack(states: list[State], rules: Rules) -> JaxState:
    env = make(rules)
    converted = [jax.device_get(env.from_state(s)) for s in states]
    batch: JaxState = jax.tree.map(lambda *x: np.stack(x), *converted)
    return batch


def run(
    rules: Rules, states: list[State], seed: int = 0
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``(values: float32[B, A], actions: int32[B])`` of the JAX look-ahead, jit(vmap)."""
    n = len(states)
    padded = states + [states[-1]] * (-n % BATCH)
    bits = jax.random.bits(jax.random.key(seed), (len(padded),), jnp.uint32)
    values, actions = players(rules)["batch"](stack(padded, rules), bits)
    return np.asarray(values)[:n], np.asarray(actions)[:n]


def random_positions(rules: Rules, games: int, every: int, seed: int) -> list[State]:
    """Every ``every``-th position of seeded random games and the last 4 before each
    game's end."""
    rng = np.random.default_rng(seed)
    out: list[State] = []
    for game in range(games):
        state = new_game(rules, seed=seed * 1000 + game)
        seen: list[State] = []
        while outcome(state) is None:
            seen.append(state)
            actions = legal_actions(state)
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
        out += seen[:-4:every] + seen[-4:]
    return out


@functools.cache
def dark_positions() -> tuple[State, ...]:
    positions = random_positions(DARK, games=12, every=9, seed=1)
    rng = np.random.default_rng(7)  # openings: many face-down pieces
    for game in range(24):
        state = new_game(DARK, seed=500 + game)
        for _ in range(int(rng.integers(0, 8))):
            actions = legal_actions(state)
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
        positions.append(state)
    return tuple(positions)


@functools.cache
def pure_values(rules: Rules, states: tuple[State, ...]) -> list[dict[int, float]]:
    return [{a: expected_ply_reward(s, a) for a in legal_actions(s)} for s in states]


def check_values(rules: Rules, states: tuple[State, ...]) -> None:
    got, _ = run(rules, list(states))
    for state, row, want in zip(states, got, pure_values(rules, states), strict=True):
        legal = np.zeros(rules.num_actions, dtype=bool)
        legal[list(want)] = True
        assert np.all(row[~legal] == -np.inf), state
        for action, value in want.items():
            assert abs(row[action] - value) <= TOLERANCE, (state, action, row[action], value)


def mutual_possible(state: State) -> bool:
    """Some legal action may remove a piece of each side."""
    me = state.to_move
    before = piece_counts(state)
    for action in legal_actions(state):
        for _, child in transitions(state, action):
            gone = [
                i for i, (a, b) in enumerate(zip(before, piece_counts(child), strict=True)) if b < a
            ]
            if {i >> 3 for i in gone} == {me, 1 - me}:
                return True
    return False


def test_position_set_covers_the_awkward_cases() -> None:
    states = dark_positions()
    values = pure_values(DARK, states)
    assert len(states) >= 250
    assert {s.to_move for s in states} == {0, 1}
    assert sum(bin(s.face_down_mask).count("1") >= 12 for s in states) >= 20
    assert sum(s.face_down_mask == 0 for s in states) >= 20
    best = [max(v.values()) for v in values]
    worst = [min(v.values()) for v in values]
    assert sum(b > 5.0 for b in best) >= 30  # a capture is possible
    assert sum(b > 50.0 for b in best) >= 5  # a capture may win the game
    assert sum(w < -50.0 for w in worst) >= 5  # a move may lose it
    assert sum(mutual_possible(s) for s in states) >= 10


def test_action_values_equal_the_pure_reward() -> None:
    check_values(DARK, dark_positions())


@pytest.mark.parametrize(
    "rules",
    [DARK_STRICT, attrs.evolve(DARK, setup="home_rows", equal_rank="attacker_wins")],
    ids=lambda r: repr(r)[:60],
)
def test_action_values_under_other_dark_options(rules: Rules) -> None:
    check_values(rules, tuple(random_positions(rules, games=3, every=6, seed=3)[:BATCH]))


@pytest.mark.parametrize(
    "rules", [FORBIDDING, attrs.evolve(FORBIDDING, no_moves="draw")], ids=["loses", "draw"]
)
def test_a_player_left_without_a_move(rules: Rules) -> None:
    states = tuple(from_fen(fen, rules) for fen in STUCK_FENS)
    ends = [
        a
        for s in states
        for a in legal_actions(s)
        for _, child in transitions(s, a)
        if outcome(child) is not None and not legal_actions(child)
    ]
    assert len(ends) >= 5  # the positions do leave the opponent without a move
    check_values(rules, states)


def test_act_plays_a_best_legal_action() -> None:
    states = dark_positions()
    values, actions = run(DARK, list(states), seed=5)
    for state, row, action, want in zip(
        states, values, actions, pure_values(DARK, states), strict=True
    ):
        assert int(action) in want, state
        assert want[int(action)] >= max(want.values()) - 2 * TOLERANCE, state
        assert row[action] >= np.max(row) - TOLERANCE


def test_ties_are_broken_at_random() -> None:
    # At the start each of the 16 reveals is worth the step cost alone: all tied.
    start = new_game(DARK)
    act = players(DARK)["act"]
    state = make(DARK).from_state(start)
    picked = [int(act(state, jnp.uint32(i))) for i in range(320)]
    assert set(picked) == set(legal_actions(start))
    assert max(np.bincount(picked)) <= 40  # about 20 each


def test_classic_is_refused() -> None:
    with pytest.raises(ValueError, match="DARK family only"):
        JaxLookahead(make(CLASSIC))
