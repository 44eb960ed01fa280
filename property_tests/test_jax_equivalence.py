"""The JAX core equals the pure core, action by action.

Hypothesis draws games: a rule set of the family, a seeded random prefix (to reach
middlegames, endings and the draw limits quickly), then actions and chance outcomes drawn
one by one. The JAX core then replays the whole game by itself, in one jitted call: a
``lax.scan`` of ``step_outcome`` from ``from_state`` of the first position. At every
position of the game the two cores must agree on

- the state (``to_state`` of the JAX state is the pure state), the legal mask, the
  terminal flag (``truncated`` stays False) and the rewards of the step into it;
- the observation;
- ``chance_probs`` of the played action and the pure ``chance_outcomes``;
- ``step_outcome`` for *every* outcome of the played action (all 16 outcome indices for
  an action without chance: the outcome must be ignored), with the result's legal mask,
  terminal flag and rewards;
- ``step`` with a key: a successor the pure ``transitions`` list.

At the last position every action of the action space is tried with every outcome:
legal ones must match the pure core, illegal ones forfeit (the mover loses, nothing
else changes), and in a finished game every action changes nothing and pays nothing.

Each rule set's jitted checker is compiled once for the module (cached), at fixed shapes
(games padded to ``MAX_PLIES`` plies), so examples cost no compilation.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from jungle_core import (
    CLASSIC,
    DARK,
    DARK_STRICT,
    Rules,
    State,
    chance_outcomes,
    legal_action_mask,
    legal_actions,
    new_game,
    observation,
    outcome,
    returns,
    step_outcome,
    to_fen,
    transitions,
)
from jungle_core.jax_env import JaxEnv, JaxState, make

FAMILIES: dict[str, list[Rules]] = {
    "dark": [
        DARK,
        DARK_STRICT,
        attrs.evolve(DARK, name="DARK scattered", setup="scattered"),
        attrs.evolve(DARK, name="DARK home_rows no_moves=draw", setup="home_rows", no_moves="draw"),
        attrs.evolve(
            DARK,
            name="DARK attacker_wins weaker_forbidden",
            equal_rank="attacker_wins",
            weaker_attack="forbidden",
        ),
        attrs.evolve(
            DARK,
            name="DARK no_face_down_attack equal_forbidden no_moves=draw limit=30",
            attack_face_down=False,
            equal_rank="forbidden",
            no_moves="draw",
            no_removal_limit=30,
        ),
        attrs.evolve(
            DARK,
            name="DARK scattered no_removal_limit=0 ply_limit=120",
            setup="scattered",
            no_removal_limit=0,
            ply_limit=120,
        ),
    ],
    "classic": [
        CLASSIC,
        attrs.evolve(CLASSIC, name="CLASSIC ply_limit=120", ply_limit=120),
        attrs.evolve(
            CLASSIC,
            name="CLASSIC no_removal_limit=40 no_moves=draw",
            no_removal_limit=40,
            no_moves="draw",
        ),
    ],
}
"""Rule sets drawn per family: the presets and option combinations (``name`` only labels
the statistics of ``--hypothesis-show-statistics``)."""

MAX_PRELUDE = 280
MAX_DRAWN = 16
MAX_PLIES = MAX_PRELUDE + MAX_DRAWN
"""Games are padded to this many plies, so every example runs the same compiled code."""


# --------------------------------------------------------------------- games


@attrs.frozen
class Game:
    """A drawn game: ``states[i + 1]`` is ``step_outcome(states[i], actions[i],
    outcomes[i])`` (outcome -1: the action has no chance)."""

    states: list[State]
    actions: list[int]
    outcomes: list[int]
    seed: int


def _play(state: State, action: int, choice: int) -> tuple[int, State]:
    options = chance_outcomes(state, action)
    o = options[choice % len(options)][0]
    return o, step_outcome(state, action, o)


@st.composite
def games(draw: st.DrawFn, name: str) -> Game:
    """A seeded random prefix, then actions and outcomes drawn by Hypothesis."""
    rules = draw(st.sampled_from(FAMILIES[name]))
    seed = draw(st.integers(0, 2**32 - 1))
    state = new_game(rules, seed=seed)
    game = Game([state], [], [], seed)
    rng = np.random.default_rng(seed)

    def push(action: int, choice: int) -> None:
        o, nxt = _play(game.states[-1], action, choice)
        game.states.append(nxt)
        game.actions.append(action)
        game.outcomes.append(o)

    for _ in range(draw(st.integers(0, MAX_PRELUDE))):
        if outcome(game.states[-1]) is not None:
            return game
        actions = legal_actions(game.states[-1])
        push(actions[int(rng.integers(len(actions)))], int(rng.integers(16)))
    for _ in range(draw(st.integers(0, MAX_DRAWN))):
        if outcome(game.states[-1]) is not None:
            break
        push(draw(st.sampled_from(legal_actions(game.states[-1]))), draw(st.integers(0, 15)))
    return game


# ------------------------------------------------------------ jitted checkers


def _where(flag: jax.Array, a: JaxState, b: JaxState) -> JaxState:
    out: JaxState = jax.tree.map(lambda x, y: jnp.where(flag, x, y), a, b)
    return out


@functools.cache
def checkers(rules: Rules) -> tuple[JaxEnv, Any, Any]:
    """``(env, replay, position)`` for a rule set, jitted once (see the module docstring).

    - ``replay(start, actions, outcomes, valid, key)``: the game replayed from ``start``
      by ``step_outcome`` (steps with ``valid`` False keep the state), and per ply the
      state before, the state after, ``chance_probs``, ``step_outcome`` for each of the
      16 outcomes, the observation before, and ``step`` with a key.
    - ``position(state)``: ``step_outcome`` of every action with every outcome
      (``[A, 16]`` states) and ``chance_probs`` of every action (``float32[A, 16]``).
    """
    env = make(rules)
    outcomes16 = jnp.arange(16, dtype=jnp.int32)

    def every_outcome(state: JaxState, action: jax.Array) -> JaxState:
        out: JaxState = jax.vmap(lambda o: env.step_outcome(state, action, o))(outcomes16)
        return out

    def replay(
        start: JaxState,
        actions: jax.Array,
        outcomes: jax.Array,
        valid: jax.Array,
        key: jax.Array,
    ) -> tuple[Any, ...]:
        def body(state: JaxState, x: tuple[jax.Array, ...]) -> tuple[JaxState, Any]:
            action, o, ok = x
            nxt = _where(ok, env.step_outcome(state, action, o), state)
            return nxt, (state, nxt)

        _, (before, after) = jax.lax.scan(body, start, (actions, outcomes, valid))
        probs = jax.vmap(env.chance_probs)(before, actions)
        every = jax.vmap(every_outcome)(before, actions)
        obs = jax.vmap(env.observe)(before)
        keys = jax.random.split(key, actions.shape[0])
        sampled = jax.vmap(env.step)(before, actions, keys)
        return before, after, probs, every, obs, sampled

    def position(state: JaxState) -> tuple[JaxState, jax.Array]:
        actions = jnp.arange(env.num_actions, dtype=jnp.int32)
        every = jax.vmap(lambda a: every_outcome(state, a))(actions)
        probs = jax.vmap(lambda a: env.chance_probs(state, a))(actions)
        return every, probs

    return env, jax.jit(replay), jax.jit(position)


# ------------------------------------------------------------------ comparing


def row(tree: JaxState, *index: int) -> JaxState:
    """One game of a (host, numpy) batched state."""
    out: JaxState = jax.tree.map(lambda x: x[index], tree)
    return out


def pure_probs(state: State, action: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The pure chance outcomes as the JAX core's ``float32[16]`` vector."""
    probs = np.zeros(16, dtype=np.float32)
    for o, p in chance_outcomes(state, action):
        probs[max(o, 0)] += p
    return probs


def successors_by_outcome(state: State, action: int) -> list[tuple[int, State]]:
    """``(outcome index, pure next state)`` for each outcome of a legal action; for an
    action without chance, all 16 indices with the one next state (the JAX core must
    ignore the outcome)."""
    options = chance_outcomes(state, action)
    if options[0][0] < 0:
        nxt = step_outcome(state, action, -1)
        return [(o, nxt) for o in range(16)]
    return [(o, step_outcome(state, action, o)) for o, _ in options]


def assert_same(env: JaxEnv, got: JaxState, want: State, what: str) -> None:
    """The JAX state ``got`` is the pure ``want``, with its mask and terminal flag."""
    assert env.to_state(got) == want, f"{what}: state {env.to_state(got)!r} != {want!r}"
    assert np.array_equal(got.legal_action_mask, legal_action_mask(want)), (
        f"{what}: legal mask differs in {to_fen(want)!r}: JAX only "
        f"{np.flatnonzero(got.legal_action_mask & ~legal_action_mask(want)).tolist()}, "
        f"pure only {np.flatnonzero(~got.legal_action_mask & legal_action_mask(want)).tolist()}"
    )
    assert bool(got.terminated) == (outcome(want) is not None), (
        f"{what}: terminated={bool(got.terminated)} but outcome {outcome(want)} in {to_fen(want)!r}"
    )
    assert not bool(got.truncated), f"{what}: truncated"


def assert_step_result(env: JaxEnv, got: JaxState, want: State, what: str) -> None:
    """``got`` is the result of a step into the pure ``want``: state and rewards."""
    assert_same(env, got, want, what)
    expected = returns(want) if outcome(want) is not None else (0.0, 0.0)
    assert tuple(np.asarray(got.rewards).tolist()) == expected, (
        f"{what}: rewards {got.rewards} != {expected} ({outcome(want)}) in {to_fen(want)!r}"
    )


def check_position(env: JaxEnv, position: Any, state: State, js: JaxState) -> None:
    """Every action with every outcome from one position (see the module docstring)."""
    every, probs = jax.device_get(position(js))
    over = outcome(state) is not None
    legal = set(legal_actions(state)) if not over else set()
    for action in range(env.num_actions):
        what = f"action {action} in {to_fen(state)!r}"
        if action in legal:
            assert np.array_equal(probs[action], pure_probs(state, action)), f"probs, {what}"
            for o, expected in successors_by_outcome(state, action):
                assert_step_result(env, row(every, action, o), expected, f"outcome {o}, {what}")
            continue
        no_chance = np.zeros(16, dtype=np.float32)
        no_chance[0] = 1.0
        assert np.array_equal(probs[action], no_chance), f"no chance when not played, {what}"
        for o in (0, 15):
            got = row(every, action, o)
            assert env.to_state(got) == state, f"unchanged position, {what}"
            assert np.array_equal(got.legal_action_mask, legal_action_mask(state)), what
            assert bool(got.terminated), f"terminated after illegal/finished, {what}"
            if over:
                assert np.asarray(got.rewards).tolist() == [0.0, 0.0], f"no reward, {what}"
            else:
                forfeit = [-1.0, 1.0] if state.to_move == 0 else [1.0, -1.0]
                assert np.asarray(got.rewards).tolist() == forfeit, f"forfeit, {what}"


def check_game(env: JaxEnv, replay: Any, position: Any, game: Game) -> None:
    """The whole comparison of one drawn game."""
    n = len(game.actions)
    pad = MAX_PLIES - n
    actions = np.array(game.actions + [0] * pad, dtype=np.int32)
    outcomes = np.array([max(o, 0) for o in game.outcomes] + [0] * pad, dtype=np.int32)
    valid = np.arange(MAX_PLIES) < n
    start = env.from_state(game.states[0])
    assert_same(env, jax.device_get(start), game.states[0], "from_state of the start")
    out = replay(start, actions, outcomes, valid, jax.random.key(game.seed % 2**31))
    before, after, probs, every, obs, sampled = jax.device_get(out)
    for i in range(n):
        state, action, nxt = game.states[i], game.actions[i], game.states[i + 1]
        what = f"ply {i}, action {action} in {to_fen(state)!r}"
        assert_same(env, row(before, i), state, f"before {what}")
        assert np.array_equal(obs[i], observation(state)), f"observation, {what}"
        assert np.array_equal(probs[i], pure_probs(state, action)), f"chance probs, {what}"
        assert_step_result(env, row(after, i), nxt, f"after {what}")
        for o, expected in successors_by_outcome(state, action):
            assert_step_result(env, row(every, i, o), expected, f"outcome {o}, {what}")
        successors = {s for _, s in transitions(state, action)}
        assert env.to_state(row(sampled, i)) in successors, f"sampled step, {what}"
    last = row(after, n - 1) if n else jax.device_get(start)
    check_position(env, position, game.states[-1], last)


@pytest.mark.parametrize("name", sorted(FAMILIES))
@settings(deadline=None)
@given(data=st.data())
def test_jax_core_equals_pure_core(name: str, data: st.DataObject) -> None:
    game = data.draw(games(name))
    rules = game.states[-1].rules
    result = outcome(game.states[-1])
    event(f"{rules.name}: {'goes on' if result is None else result.reason.value}")
    env, replay, position = checkers(rules)
    check_game(env, replay, position, game)


# --------------------------------------------------------- positions by hand

STRICT = attrs.evolve(
    DARK,
    name="DARK no_face_down_attack equal_forbidden no_moves=draw limit=30",
    attack_face_down=False,
    equal_rank="forbidden",
    no_moves="draw",
    no_removal_limit=30,
)
STUCK_DRAWS = attrs.evolve(DARK_STRICT, name="DARK_STRICT no_moves=draw", no_moves="draw")
SIDE_LIMITS = FAMILIES["classic"][2]
"""CLASSIC with a no-removal limit of 40 and ``no_moves="draw"``."""

_CLASSIC_BY_HAND: list[tuple[str, str, int, int, set[str]]] = [
    # (picture from rank 9 down, name, player to move, ply, reasons some successor shows)
    (
        """
        . . . . . . .
        . . . # . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . L
        . . . e . . .
        . . . . . . .
        """,
        "p1 Elephant on d2 steps into player 0's den",
        1,
        40,
        {"den_entered"},
    ),
    (
        """
        . . . . . . .
        . . . E . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . l
        """,
        "p0 Elephant on d8 steps into player 1's den",
        0,
        41,
        {"den_entered"},
    ),
    (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        w . . T . . .
        L r . . . . e
        . R . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        """,
        "rats in the river, blocked and open jumps, captures on landing",
        0,
        10,
        {"goes on"},
    ),
    (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . T . . .
        L . . . r . .
        . . . . . . .
        . . . . . . w
        . . . . . . .
        . . . . . . .
        """,
        "Tiger and Lion jumps, one over a rat (blocked)",
        0,
        10,
        {"goes on"},
    ),
    (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . E r . . .
        . . . . t C .
        """,
        "pieces standing in player 0's traps can be taken by anything",
        0,
        12,
        {"goes on"},
    ),
    (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        c . . . . . .
        R . d . . . .
        """,
        "player 1 walls in player 0's last piece (no legal move)",
        1,
        50,
        {"no_legal_actions"},
    ),
    (
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . L . . . . .
        . r . . . . .
        """,
        "the last piece of player 1 is taken",
        0,
        60,
        {"elimination"},
    ),
]


def _classic_positions() -> list[tuple[State, set[str]]]:
    from tests._boards import position

    out = []
    for picture, _, to_move, ply, reasons in _CLASSIC_BY_HAND:
        for rules in (CLASSIC, SIDE_LIMITS):
            out.append((position(picture, rules, to_move=to_move, ply=ply), reasons))
    start = new_game(CLASSIC)
    out.append((attrs.evolve(start, ply=299, plies_since_removal=299), {"ply_limit"}))
    out.append(
        (attrs.evolve(start, rules=SIDE_LIMITS, plies_since_removal=39), {"no_removal_limit"})
    )
    return out


def _dark_positions() -> list[tuple[State, set[str]]]:
    from tests._boards import position

    both = """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        c . . . . . . .
        C . . . . . . .
        """
    walled = """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        c . . . . . . .
        R . d . . . . .
        """
    bump = """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        ? ? . . . . . .
        R ? . . . . . .
        """
    return [
        (position(both, DARK), {"elimination"}),
        (position(walled, DARK_STRICT, to_move=1), {"no_legal_actions"}),
        (position(walled, STUCK_DRAWS, to_move=1), {"no_legal_actions"}),
        (position(bump, DARK, face_down="ET e"), {"goes on"}),
        (position(bump, STRICT, face_down="ET e"), {"goes on"}),
        (position(bump, DARK, face_down="ET e", since=99), {"no_removal_limit"}),
    ]


def _reasons(state: State) -> set[str]:
    found = set()
    for action in legal_actions(state):
        for _, nxt in transitions(state, action):
            result = outcome(nxt)
            found.add("goes on" if result is None else result.reason.value)
    return found


@pytest.mark.parametrize("index", range(len(_CLASSIC_BY_HAND) * 2 + 2))
def test_classic_positions_by_hand(index: int) -> None:
    state, reasons = _classic_positions()[index]
    assert reasons <= _reasons(state), "the position no longer shows what it is for"
    env, _, position = checkers(state.rules)
    check_position(env, position, state, env.from_state(state))


@pytest.mark.parametrize("index", range(6))
def test_dark_positions_by_hand(index: int) -> None:
    state, reasons = _dark_positions()[index]
    result = outcome(state)
    assert reasons <= _reasons(state) | {"goes on" if result is None else result.reason.value}
    env, _, position = checkers(state.rules)
    check_position(env, position, state, env.from_state(state))
