"""The endgame tables inside the JAX search: :func:`exact_value` equals the pure tables'
probe, and the agent's leaf values take it (jungle_train.azero.search._table_leaves)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_agents.endgame import EndgameTables
from jungle_core import CLASSIC, DARK, from_fen
from jungle_core.jax_env import JaxState, make
from jungle_train.azero.search._table_leaves import all_materials, exact_value, leaf_tables
from tests._agents import assert_refused

LETTERS = " RCDWPTLErcdwptle"
# a pair that cannot remove the single piece, one that trades with it, one that takes
# it, a one-against-one, and one side's pair against the other's single piece reversed
MATERIALS = ((6, 7, 16), (2, 6, 14), (1, 2, 16), (8, 14), (5, 9, 13))


def _fen(squares: dict[int, int], to_move: int, count: int) -> str:
    rows = []
    for row in range(6, -1, -1):
        text, gap = "", 0
        for col in range(8):
            code = squares.get(row * 8 + col, 0)
            if code:
                text += (str(gap) if gap else "") + LETTERS[code]
                gap = 0
            else:
                gap += 1
        rows.append(text + (str(gap) if gap else ""))
    return f"{'/'.join(rows)} {to_move} {count} 200 - -"


def test_exact_value_equals_the_tables_probe() -> None:
    """On random placements of several materials, sides to move and no-removal counts,
    the packed lookup gives the pure tables' result for either player, and says it does
    not cover positions with a face-down piece or a material it was not given."""
    leaves = leaf_tables(DARK, MATERIALS)
    tables = EndgameTables()
    env = make(DARK)
    rng = np.random.default_rng(0)
    states, expected = [], []
    for material in MATERIALS:
        for _ in range(60):
            where = rng.choice(56, size=len(material), replace=False)
            state = from_fen(
                _fen(
                    dict(zip(where.tolist(), material, strict=True)),
                    int(rng.integers(2)),
                    int(rng.integers(100)),
                )
            )
            probe = tables.probe(state)
            if probe is None:  # a game already over
                continue
            states.append(env.from_state(state))
            expected.append(probe.result if state.to_move == 0 else -probe.result)
    assert len(set(expected)) == 3  # wins, draws and losses all checked
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *states)
    lookup = jax.vmap(functools.partial(exact_value, DARK, leaves))
    covered, value = lookup(batch, jnp.zeros(len(states), jnp.int32))
    assert bool(jnp.all(covered))
    np.testing.assert_array_equal(np.asarray(value), np.asarray(expected, np.float32))
    _, value_1 = lookup(batch, jnp.ones(len(states), jnp.int32))
    np.testing.assert_array_equal(np.asarray(value_1), -np.asarray(expected, np.float32))

    hidden = env.from_state(from_fen("8/8/8/8/8/8/E1t4? 0 0 0 - R"))  # a Rat face down
    other = env.from_state(from_fen("8/8/8/8/8/8/L1t5 0 0 0 - -"))  # not packed
    for position in (hidden, other):
        assert not bool(exact_value(DARK, leaves, position, jnp.int32(0))[0])


def test_leaf_tables_cover_every_small_material_and_refuse_classic() -> None:
    assert len(all_materials()) == 64 + 448
    with pytest.raises(ValueError, match="do not solve"):
        leaf_tables(CLASSIC, ((8, 14),))


def test_agent_leaf_values_use_the_tables() -> None:
    """``leaf_tables=1``: the DQN-prior evaluation gives a covered position its exact
    value (a Tiger and a Lion against the Elephant: a draw, not +0.24) and leaves an
    uncovered one as it was; refused where the tables do not solve the rules."""
    from jungle_train.azero._guides import dqn_guide

    env = make(DARK)
    evaluate, guide = dqn_guide(env)
    leaves = leaf_tables(DARK, ((6, 7, 16),))
    params = (*guide, leaves)
    drawn = from_fen("8/8/8/8/8/8/TL3e2 0 0 0 - -")
    open_game = from_fen("8/8/8/8/8/8/TL3e1? 0 0 0 - R")
    batch: JaxState = jax.tree.map(
        lambda *x: jnp.stack(x), *[env.from_state(s) for s in (drawn, open_game)]
    )
    plain = evaluate(params[:4], batch)
    exact = evaluate(params, batch, exact=True)
    assert float(plain.value[0]) > 0.2 and float(exact.value[0]) == 0.0
    assert float(exact.value[1]) == pytest.approx(float(plain.value[1]))
    np.testing.assert_array_equal(np.asarray(exact.afterstate[0]), 0.0)
    assert_refused("azero:prior=hand,leaf_tables=1", DARK, "of prior=dqn only")


def test_agent_plays_with_leaf_tables_and_the_root_tables_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``leaf_tables=1`` does not need the root tables (``endgame=0``): the agent builds,
    packs the tables into its parameters, and plays a legal move in a covered position
    (one material packed here instead of all 512, which take about 90 s)."""
    import jungle_train.azero._agent as azero_agent
    from jungle_agents import make_agent
    from jungle_core import legal_actions

    monkeypatch.setattr(
        azero_agent, "packed_leaf_tables", lambda rules: leaf_tables(rules, ((6, 7, 16),))
    )
    agent = make_agent("azero:simulations=8,endgame=0,leaf_tables=1", DARK)
    assert "leaf_tables=1" in agent.name and "endgame=0" in agent.name
    assert isinstance(agent, azero_agent.AZeroAgent)
    assert len(agent.params) == 5  # the packed tables ride with the DQN's parameters
    state = from_fen("8/8/8/8/8/8/TL3e2 0 0 0 - -")
    assert agent.act(state, np.random.default_rng(0)) in legal_actions(state)
