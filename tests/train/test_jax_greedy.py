"""The JAX Greedy agent (``jungle_train.jitted._greedy``) against the pure one.

The pure :class:`jungle_agents.GreedyAgent` is the reference: on positions from seeded
random play of the pure core (many face-down pieces, endgames, positions next to the
no-removal limit, and a few other DARK options), the JAX action values must equal the
pure ones for every legal action and be ``-inf`` for the others; ``act`` must pick one of
the pure agent's tied best actions, uniformly among them; batching must not change a
result.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_agents import GreedyAgent, GreedyWeights
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
)
from jungle_core.jax_env import JaxState, make
from jungle_train.jitted._greedy import TIE_TOLERANCE, JaxGreedy

TOLERANCE = 1e-3
"""The JAX values (float32) must be within this of the pure ones (float64)."""

OTHER_OPTIONS = [
    DARK_STRICT,  # home rows (known owners), reveal own, no attack on face-down pieces
    attrs.evolve(DARK, setup="home_rows", equal_rank="attacker_wins", weaker_attack="forbidden"),
]


BATCH = 64
"""Every batch is padded to a multiple of this, so each function compiles once."""

WEIGHTS = GreedyWeights(position=0.0, mobility=3.0, safety=2.0, take=7.0, face_down=25.0)
"""Weights other than the default; without a position term, ties are easy to build."""


@functools.cache
def agents(rules: Rules, weights: GreedyWeights | None = None) -> dict[str, Any]:
    """The pure agent and the JAX one, batched and jitted, once per rule set."""
    env = make(rules)
    greedy = JaxGreedy(env, weights)

    def both(state: JaxState, bits: jax.Array) -> tuple[jax.Array, jax.Array]:
        return greedy.action_values(state), greedy.act(state, bits)

    return {
        "env": env,
        "greedy": greedy,
        "pure": GreedyAgent(rules, weights),
        "batch": jax.jit(jax.vmap(both)),
        "one": jax.jit(both),
    }


def run(
    rules: Rules, states: list[State], bits: jax.Array, weights: GreedyWeights | None = None
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``(values: float32[B, A], actions: int32[B])`` of the JAX agent, jit(vmap)."""
    n = len(states)
    padded = states + [states[-1]] * (-n % BATCH)
    pad_bits = jnp.concatenate([bits, jnp.zeros(len(padded) - n, jnp.uint32)])
    values, actions = agents(rules, weights)["batch"](stack(padded, rules), pad_bits)
    return np.asarray(values)[:n], np.asarray(actions)[:n]


def some_bits(n: int, seed: int = 0) -> jax.Array:
    return jax.random.bits(jax.random.key(seed), (n,), jnp.uint32)


def random_positions(rules: Rules, games: int, every: int, seed: int) -> list[State]:
    """Positions of seeded random games of the pure core: every ``every``-th ply, every
    position within 5 plies of the no-removal limit, and the last position before the
    end of each game (an endgame, or the limit itself)."""
    rng = np.random.default_rng(seed)
    out: list[State] = []
    for game in range(games):
        state = new_game(rules, seed=seed * 1000 + game)
        near_limit = 0
        while outcome(state) is None:
            close = state.plies_since_removal >= rules.no_removal_limit - 5
            if state.ply % every == 0 or (close and near_limit < 3):
                out.append(state)
                near_limit += close
            actions = legal_actions(state)
            last = state
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
        out.append(last)
    return out


def stack(states: list[State], rules: Rules) -> JaxState:
    """The JAX states of ``states``, stacked (each distinct state converted once)."""
    env = make(rules)
    converted: dict[State, JaxState] = {}
    for s in states:
        if s not in converted:
            converted[s] = jax.device_get(env.from_state(s))
    batch: JaxState = jax.tree.map(lambda *x: np.stack(x), *(converted[s] for s in states))
    return batch


@functools.cache
def dark_positions() -> list[State]:
    positions = random_positions(DARK, games=8, every=8, seed=1)
    # Many face-down pieces: the first plies of more games.
    rng = np.random.default_rng(7)
    for game in range(20):
        state = new_game(DARK, seed=500 + game)
        for _ in range(int(rng.integers(0, 6))):
            actions = legal_actions(state)
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
        positions.append(state)
    return positions


def pure_tied(values: dict[int, float]) -> set[int]:
    best = max(values.values())
    return {a for a, v in values.items() if v >= best - 1e-9}


def check_values(
    rules: Rules, positions: list[State], weights: GreedyWeights | None = None
) -> None:
    """Assert the batched JAX values equal the pure ones."""
    pure = agents(rules, weights)["pure"]
    got, _ = run(rules, positions, some_bits(len(positions)), weights)
    for state, row in zip(positions, got, strict=True):
        want = pure.action_values(state)
        legal = np.zeros(rules.num_actions, dtype=bool)
        legal[list(want)] = True
        assert np.all(row[~legal] == -np.inf), state
        for action, value in want.items():
            assert abs(row[action] - value) <= TOLERANCE, (state, action, row[action], value)


def test_position_set_covers_the_awkward_cases() -> None:
    positions = dark_positions()
    assert len(positions) >= 200
    down = [bin(s.face_down_mask).count("1") for s in positions]
    assert max(down) == 16 and sum(d >= 12 for d in down) >= 20
    assert sum(d == 0 for d in down) >= 20  # endgames: everything face up
    assert sum(s.plies_since_removal >= DARK.no_removal_limit - 5 for s in positions) >= 5
    assert {s.to_move for s in positions} == {0, 1}


def test_action_values_equal_the_pure_agent() -> None:
    check_values(DARK, dark_positions())


@pytest.mark.parametrize("rules", OTHER_OPTIONS, ids=lambda r: repr(r)[:60])
def test_action_values_equal_the_pure_agent_under_other_dark_options(rules: Rules) -> None:
    check_values(rules, random_positions(rules, games=3, every=6, seed=3)[:BATCH])


def test_weights_are_followed() -> None:
    check_values(DARK, dark_positions()[::4], WEIGHTS)


def test_batched_equals_one_game() -> None:
    positions = dark_positions()[::12]
    bits = some_bits(len(positions), seed=3)
    values, actions = run(DARK, positions, bits)
    a = agents(DARK)
    for i, state in enumerate(positions):
        one_values, one_action = a["one"](a["env"].from_state(state), bits[i])
        np.testing.assert_allclose(values[i], np.asarray(one_values), rtol=0, atol=1e-4)
        assert actions[i] == int(one_action)


def test_act_picks_among_the_pure_tied_best() -> None:
    positions = dark_positions()
    pure = agents(DARK)["pure"]
    ties = [pure_tied(pure.action_values(state)) for state in positions]
    for seed in range(3):
        values, actions = run(DARK, positions, some_bits(len(positions), seed))
        for state, tied, action, row in zip(positions, ties, actions, values, strict=True):
            # The float32 tie test finds exactly the pure agent's ties.
            jax_tied = set(np.flatnonzero(row >= row.max() - TIE_TOLERANCE).tolist())
            assert jax_tied == tied, state
            assert int(action) in tied
    assert sum(len(t) > 1 for t in ties) >= 10  # ties do occur in these positions


def tie_position() -> State:
    """Nine face-down pieces on isolated inner squares: without a position term,
    revealing any of them (the only legal actions) is worth the same."""
    return from_fen("8/1?1?1?2/8/1?1?1?2/8/1?1?1?2/8 0 0 0 ELTPW eltp")


@pytest.mark.parametrize("consecutive", [False, True], ids=["random bits", "a counter"])
def test_ties_are_broken_uniformly(consecutive: bool) -> None:
    state = tie_position()
    tied = sorted(pure_tied(agents(DARK, WEIGHTS)["pure"].action_values(state)))
    assert len(tied) == 9
    draws = 45 * BATCH
    bits = jnp.arange(draws, dtype=jnp.uint32) if consecutive else some_bits(draws)
    _, actions = run(DARK, [state] * draws, bits, WEIGHTS)
    counts = np.array([np.sum(actions == t) for t in tied])
    assert counts.sum() == draws
    expected = draws / len(tied)
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 26.1, counts  # the 0.999 quantile of chi-square with 8 degrees of freedom


def test_act_is_a_function_of_its_bits() -> None:
    bits = jnp.array([5, 5, 9, 9] + [0] * (BATCH - 4), jnp.uint32)
    _, actions = run(DARK, [tie_position()] * BATCH, bits, WEIGHTS)
    assert actions[0] == actions[1] and actions[2] == actions[3]


def test_classic_is_refused() -> None:
    with pytest.raises(ValueError, match="DARK family only"):
        JaxGreedy(make(CLASSIC))
