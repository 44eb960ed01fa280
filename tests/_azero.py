"""Shared by the AlphaZero tests: positions, one-position batches, a plain search and
its tree, random positions, the shipped DQN's leaf values."""

from __future__ import annotations

import functools
from collections.abc import Callable
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
)
from jungle_core.jax_env import JaxState, make
from jungle_train import azero
from jungle_train.azero._agent import AZeroAgent
from jungle_train.azero._guides import build_network
from jungle_train.azero._net import network_evaluation, planes_shape
from jungle_train.azero.search._config import SearchConfig
from jungle_train.azero.search._search import make_search, zero_evaluator
from jungle_train.azero.search._slots import CLASSIC_SLOTS, DARK_SLOTS
from tests._boards import position

TINY = azero.TINY_CONFIG


def one_batch(state: State) -> JaxState:
    one: JaxState = jax.tree.map(lambda x: x[None], make(state.rules).from_state(state))
    return one


def plain_search(
    state: State, simulations: int, seed: int = 0, slots: bool = False
) -> tuple[str, Any]:
    """The action (as text) of a uniform-prior, zero-value search of ``state`` with the
    true rules, and the search tree (in slots with ``slots``: see :func:`slot_index`)."""
    env = make(state.rules)
    config = SearchConfig(simulations=simulations, slots=slots)
    search = jax.jit(make_search(env, zero_evaluator(env.num_actions), config))
    out = search(None, jax.random.key(seed), one_batch(state))
    return action_to_str(state, int(out.action[0])), out.search_tree


def slot_index(tree: Any, state: State, action: int) -> int:
    """Where ``action`` sits on the tree's action axis: itself, or in a tree of slots
    (``SearchConfig.slots``: the legal actions ascending) its rank among the legal ones."""
    slotted = tree.num_actions == (DARK_SLOTS if state.rules.is_dark else CLASSIC_SLOTS)
    return legal_actions(state).index(action) if slotted else action


def root_q(tree: Any, state: State, text: str) -> float:
    q = tree.qvalues(jnp.zeros(1, jnp.int32))[0]
    return float(q[slot_index(tree, state, parse_action(state, text))])


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


def dark_position(picture: str, player: int, face_down: str = "- -") -> State:
    mover, other = ("E", "c") if player == 0 else ("e", "C")
    return position(
        picture.replace("{E}", mover).replace("{c}", other),
        DARK,
        to_move=player,
        face_down=face_down,
    )


def classic_position(picture: str, player: int) -> State:
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


def random_network(rules: Rules) -> Any:
    return build_network(rules, 4, 2)


def searched_batch(rules: Rules, seed: int, count: int) -> tuple[Any, Any, Any, JaxState]:
    """``(env, params, evaluate, batch)``: a random 4-channel network's evaluation and
    ``count`` unfinished positions of random play, stacked."""
    env = make(rules)
    network = random_network(rules)
    params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(rules))))
    evaluate = functools.partial(network_evaluation, env, network)
    picks = [s for s in random_states(rules, 40, seed) if outcome(s) is None][:count]
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in picks])
    return env, params, evaluate, batch


def random_states(rules: Rules, count: int, seed: int) -> list[State]:
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


def shipped_dqn_leaf_values() -> tuple[list[JaxState], Callable[..., Any]]:
    """The two positions the leaf-value tests score (b1 a Leopard and c1 a Tiger turned up,
    the rest face down; every piece face up), and the shipped DQN prior's evaluation of
    the pair (:func:`dqn_prior_evaluation`)."""
    from jungle_train.azero._guides import dqn_functions, load_dqn
    from jungle_train.azero.search._evaluations import dqn_prior_evaluation
    from jungle_train.players._numpy import shipped_checkpoint

    env = make(DARK)
    config, q_params, _ = load_dqn(shipped_checkpoint("dqn"))
    q_network, observe_one = dqn_functions(env, config)
    params = (q_params, jnp.float32(1.0), jnp.float32(1.0))
    down = step_outcome(step_outcome(new_game(), 1, 4), 2, 13)
    up = from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -")
    assert down.face_down_mask and not up.face_down_mask
    one = [env.from_state(s) for s in (down, up)]
    states = jax.tree.map(lambda *x: jnp.stack(x), *one)

    def evaluate() -> Any:
        return dqn_prior_evaluation(env, q_network, observe_one, config.win_reward, params, states)

    return one, evaluate


def assert_leaf_values_shifted(plain: Any, changed: Any, shift: np.ndarray[Any, Any]) -> None:
    """Two evaluations of :func:`shipped_dqn_leaf_values`' pair: ``changed``'s values and
    afterstate values are ``plain``'s plus ``shift`` (one float per position), and the
    prior's logits are the same."""
    assert np.asarray(changed.value) == pytest.approx(np.asarray(plain.value) + shift, abs=1e-5)
    assert np.asarray(changed.afterstate) == pytest.approx(
        np.asarray(plain.afterstate) + shift[:, None], abs=1e-5
    )
    assert np.asarray(changed.logits) == pytest.approx(np.asarray(plain.logits))


def check_knob(setting: str) -> None:
    """An agent with ``setting`` (``"name=value"``, beside 8 simulations and no endgame
    tables) names it in its name, the default agent does not name the knob, and the
    agent acts legally in both phases (:func:`act_in_both_phases`)."""
    from jungle_agents import make_agent

    agent = make_agent(f"azero:simulations=8,{setting},endgame=0", DARK)
    assert isinstance(agent, AZeroAgent) and setting in agent.name
    knob = setting.split("=", maxsplit=1)[0]
    assert knob not in make_agent("azero:simulations=8,endgame=0", DARK).name
    act_in_both_phases(agent)


def act_in_both_phases(agent: AZeroAgent) -> None:
    """One decision of ``agent`` with every piece face down (the start), then one with
    every piece face up; each must be legal."""
    rng = np.random.default_rng(0)
    for state in (new_game(), from_fen("8/8/8/2T5/8/8/R4l1w 0 0 0 - -")):
        assert agent.act(state, rng) in legal_actions(state)


def independent_balance(
    state: State, player: int, value: tuple[float, ...] = (30, 20, 30, 40, 50, 60, 70, 80)
) -> float:
    """The mover's material balance of a pure-core state, by identity (face up or
    down), as :func:`material_balance` defines it (the Greedy agent's values unless
    ``value`` gives others, Rat to Elephant): written here independently."""
    held = [value[i & 7] * (state.in_play >> i & 1) for i in range(16)]
    mine = sum(held[8 * player : 8 * player + 8])
    total = sum(held)
    return (2 * mine - total) / total if total else 0.0
