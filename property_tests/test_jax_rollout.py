"""Random play in the JAX core: a ``lax.scan`` rollout equals a plain Python loop.

The same random legal actions and chance keys drive both: one jitted ``lax.scan`` over
``step`` (the way training runs the core), and a Python loop calling the jitted
single-game ``step`` once per ply. Every intermediate state must be identical, field by
field; a game that ends stays frozen (zero rewards) for the rest of the rollout. The
rollout's games are also batched with ``vmap`` inside the scan, and each game of the
batch must equal its own single-game loop.
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
from hypothesis import given, settings
from hypothesis import strategies as st

from jungle_core import CLASSIC, DARK, Rules, outcome
from jungle_core.jax_env import JaxEnv, JaxState, make

RULES = [
    DARK,
    attrs.evolve(DARK, setup="home_rows"),
    attrs.evolve(DARK, setup="scattered"),
    CLASSIC,
]
PLIES = 120
BATCH = 2


def choose(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniformly random legal action (``int32``) of one game."""
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


@functools.cache
def rollouts(rules: Rules) -> tuple[JaxEnv, Any, Any, Any]:
    """``(env, scan_rollout, one_step, init)``, jitted once per rule set. Keys travel as
    raw ``uint32[..., 2]`` key data (slicing a host array costs no device call).

    ``scan_rollout(keys)``: ``BATCH`` games from ``init(keys[:, 0])``, ``PLIES`` plies
    each in one ``lax.scan`` (``vmap`` over the games); returns the states after every
    ply, ``[PLIES, BATCH]``. ``one_step(state, key)``: the same ply of one game.
    """
    env = make(rules)

    def ply(state: JaxState, raw: jax.Array) -> JaxState:
        k_action, k_step = jax.random.split(jax.random.wrap_key_data(raw))
        return env.step(state, choose(k_action, state.legal_action_mask), k_step)

    def init(raw: jax.Array) -> JaxState:
        return env.init(jax.random.wrap_key_data(raw))

    def scan_rollout(keys: jax.Array) -> JaxState:
        start = jax.vmap(init)(keys[:, 0])

        def body(states: JaxState, ply_keys: jax.Array) -> tuple[JaxState, JaxState]:
            nxt = jax.vmap(ply)(states, ply_keys)
            return nxt, nxt

        _, history = jax.lax.scan(body, start, jnp.swapaxes(keys[:, 1:], 0, 1))
        return history

    return env, jax.jit(scan_rollout), jax.jit(ply), jax.jit(init)


def _host(state: JaxState) -> dict[str, np.ndarray[Any, Any]]:
    return {f.name: np.asarray(getattr(state, f.name)) for f in dataclasses.fields(state)}


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.name}/{r.setup}")
@settings(deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_scan_rollout_equals_a_python_loop_of_steps(rules: Rules, seed: int) -> None:
    env, scan_rollout, one_step, init = rollouts(rules)
    keys = jax.random.split(jax.random.key(seed), BATCH * (PLIES + 1))
    raw = np.asarray(jax.random.key_data(keys)).reshape(BATCH, PLIES + 1, 2)
    history = _host(scan_rollout(raw))
    for game in range(BATCH):
        state = init(raw[game, 0])
        loop = []
        for t in range(PLIES):
            state = one_step(state, raw[game, t + 1])
            loop.append(state)
        finished_at = None
        for t, step in enumerate(jax.device_get(loop)):
            want = _host(step)
            for name, value in want.items():
                assert np.array_equal(history[name][t, game], value), (name, game, t)
            if finished_at is None and want["terminated"]:
                finished_at = t
                assert outcome(env.to_state(step)) is not None
            elif finished_at is not None:
                assert want["rewards"].tolist() == [0.0, 0.0]
                assert int(want["ply"]) == finished_at + 1
