"""The DQN trainer (``jungle_train.dqn``), the games it plays: rewards from the
learner's side, games restarting in alternating seats, random endgame starts, phase 1's
exploring by Greedy's action, and the shaping potential against the pure one."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_core import DARK, from_fen, legal_actions, new_game, outcome, step
from jungle_core.jax_env import make
from jungle_train import dqn
from jungle_train.dqn import _learner, _rewards
from jungle_train.jitted import JaxGreedy, potential
from jungle_train.jitted._starts import random_endgame
from jungle_train.tabular._shaping import potential as pure_potential
from tests._dqn import LIGHT

# ----------------------------------------------------------------------- rewards


def _reward(config: dqn.Config, before: str, after: str, learner: int) -> float:
    env = make(DARK)
    return float(
        _rewards.ply_reward(
            config,
            env.from_state(from_fen(before)),
            env.from_state(from_fen(after)),
            jnp.int32(learner),
        )
    )


def test_rewards_count_material_from_the_learners_side() -> None:
    spec = dqn.SPEC_CONFIG
    # player 0's Elephant takes player 1's Wolf on b1
    before, after = "8/8/8/8/8/8/Ew4Rr 0 0 0 - -", "8/8/8/8/8/8/1E4Rr 1 0 1 - -"
    assert _reward(spec, before, after, 0) == pytest.approx(0.2 * 4)
    assert _reward(spec, before, after, 1) == pytest.approx(-0.3)
    cpu = dqn.CPU_CONFIG
    assert _reward(cpu, before, after, 1) == pytest.approx(-0.2 * 4)
    # equal ranks: both removed
    before, after = "8/8/8/8/8/8/Ww4Rr 0 5 5 - -", "8/8/8/8/8/8/6Rr 1 0 6 - -"
    assert _reward(spec, before, after, 0) == pytest.approx(0.2 * 4 - 0.3)


def test_games_restart_with_the_learner_to_move_in_alternating_seats() -> None:
    """Between iterations every game has the learner's seat to move; finished games
    restart with the other seat (the opponent's first action already played when the
    learner is second); every stored action is legal where it was taken."""
    config = dataclasses.replace(
        LIGHT, total_steps=8 * 2 * 100, updates_per_rollout=0, buffer_size=256
    )
    parts = _learner.Parts(config)
    runner = parts.init(jax.random.key(4))
    seats = [np.asarray(runner.seat)]
    episodes = 0
    step = jax.jit(parts.round)
    for _ in range(config.num_rounds):
        runner, metrics = step(runner)
        episodes += int(metrics["episodes"])
        assert np.array_equal(np.asarray(runner.env.current_player), np.asarray(runner.seat))
        assert not np.asarray(runner.env.terminated).any()
        seats.append(np.asarray(runner.seat))
    assert episodes > 0
    changed = np.any(np.stack(seats) != seats[0], axis=0)
    assert changed.any()
    exp = runner.buffer.experience
    legal = np.asarray(exp.position.legal)
    action = np.asarray(exp.action)
    assert np.take_along_axis(legal, action[..., None], axis=-1).all()


def test_random_endgames_are_legal_positions_the_pure_core_agrees_on() -> None:
    """Every drawn endgame: all pieces face up, each code at most once, 1..max pieces a
    side (every count drawn), the given player to move; its legal mask and game end
    equal the pure core's."""
    env = make(DARK)
    words = jnp.arange(300, dtype=jnp.uint32) * jnp.uint32(2654435761)
    players = jnp.arange(300, dtype=jnp.int32) % 2
    states = jax.jit(jax.vmap(lambda w, p: random_endgame(env, w, p, 4)))(words, players)
    counts = set()
    for i in range(300):
        one = jax.tree.map(lambda a, i=i: a[i], states)
        board = np.asarray(one.board)
        pieces = board[board != 0]
        assert (pieces <= 16).all() and len(set(pieces.tolist())) == len(pieces)
        mine, theirs = int((pieces <= 8).sum()), int((pieces > 8).sum())
        assert 1 <= mine <= 4 and 1 <= theirs <= 4
        counts.add((mine, theirs))
        pure = env.to_state(one)
        assert pure.face_down_mask == 0 and pure.to_move == int(players[i])
        assert np.flatnonzero(np.asarray(one.legal_action_mask)).tolist() == list(
            legal_actions(pure)
        )
        assert bool(one.terminated) == (outcome(pure) is not None)
    assert len(counts) == 16
    with pytest.raises(ValueError, match="max_pieces"):
        random_endgame(env, jnp.uint32(0), jnp.int32(0), 9)
    # the mover's and the other side's most pieces apart: 2..5 against 1
    uneven = jax.jit(jax.vmap(lambda w, p: random_endgame(env, w, p, 5, 1)))(words, players)
    boards, movers = np.asarray(uneven.board), np.asarray(uneven.current_player)
    own = np.where(movers[:, None] == 0, (boards > 0) & (boards <= 8), boards > 8).sum(axis=1)
    other = (boards > 0).sum(axis=1) - own
    assert (other == 1).all() and set(own.tolist()) == {1, 2, 3, 4, 5}


def test_endgame_starts_are_played_and_counted_apart() -> None:
    """With ``endgame_starts`` some games start from a random endgame (learner to
    move, nothing face down); their results go to the ``endgame`` metrics, so the
    per-opponent scores count only games from the start position."""
    config = dataclasses.replace(
        LIGHT,
        total_steps=8 * 2 * 150,
        updates_per_rollout=0,
        buffer_size=256,
        endgame_starts=0.5,
        endgame_pieces=2,
    )
    parts = _learner.Parts(config)
    runner = parts.init(jax.random.key(5))
    step = jax.jit(parts.round)
    games = {name: 0 for name in ("random", "self", "endgame", "all")}
    seen_endgame = False
    for _ in range(config.num_rounds):
        runner, metrics = step(runner)
        for name in ("random", "self", "endgame"):
            games[name] += int(metrics[f"games_{name}"])
        games["all"] += int(metrics["episodes"])
        assert np.array_equal(np.asarray(runner.env.current_player), np.asarray(runner.seat))
        flagged = np.asarray(runner.endgame)
        if flagged.any():
            seen_endgame = True
            # an endgame start has every piece face up (none was ever face down)
            assert (np.asarray(runner.env.face_down_mask)[flagged] == 0).all()
    assert seen_endgame and games["endgame"] > 0 and games["random"] > 0
    assert games["random"] + games["self"] + games["endgame"] == games["all"]
    line = dqn.summarize_rounds([{k: float(v) for k, v in metrics.items()}])
    assert "train_score/endgame" in line or int(metrics["games_endgame"]) == 0
    with pytest.raises(ValueError, match="endgame_starts"):
        dataclasses.replace(LIGHT, endgame_starts=1.5)


def test_phase1_explores_with_greedys_action() -> None:
    """In phase 1 an exploring decision is one of Greedy's best actions in every game
    (where Greedy's best are fewer than the legal actions, so a uniform pick would miss)."""
    config = dataclasses.replace(
        LIGHT,
        opponents="random=1",
        updates_per_rollout=0,
        buffer_size=256,
        phase1_fraction=1.0,
        phase1_epsilon=(1.0, 1.0),
    )
    parts = _learner.Parts(config)
    runner = parts.init(jax.random.key(6))
    iteration = jax.jit(parts.iteration)
    greedy = jax.jit(jax.vmap(JaxGreedy(parts.env).action_values))
    narrower = 0
    for _ in range(40):
        state = runner.env
        runner, transition, _ = iteration(runner, jnp.int32(0))
        action = np.asarray(transition.action)
        legal = np.asarray(state.legal_action_mask)
        v = np.where(legal, np.asarray(greedy(state)), -np.inf)
        best = v >= v.max(axis=-1, keepdims=True) - 1e-3
        assert np.take_along_axis(best, action[:, None], axis=-1).all()
        narrower += int((best.sum(axis=-1) < legal.sum(axis=-1)).sum())
    assert narrower > 0


def test_shaping_potential_equals_the_pure_one() -> None:
    """The Opp − Threat shaping potential on the JAX core equals the Q-learners' pure one
    on every position of a few random games, for both players."""
    env = make(DARK)
    rng = np.random.default_rng(0)
    f = jax.jit(potential)
    checked = 0
    for _ in range(4):
        state = new_game()
        while outcome(state) is None and state.ply < 200:
            js = env.from_state(state)
            for player in (0, 1):
                assert float(f(js, player)) == pytest.approx(
                    pure_potential(state, player), abs=1e-5
                )
                checked += 1
            actions = legal_actions(state)
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
    assert checked > 400
    before, after = "8/8/8/8/8/8/E2w4 0 0 0 - -", "8/8/8/8/8/8/1E1w4 1 1 1 - -"
    shaped = dataclasses.replace(dqn.SPEC_CONFIG, shaping=0.5)
    # E a1 -> b1 approaches w d1: Opp 3/(1+3) -> 3/(1+2)
    assert _reward(shaped, before, after, 0) - _reward(dqn.SPEC_CONFIG, before, after, 0) == (
        pytest.approx(0.5 * (1.0 - 0.75))
    )
