"""The DQN's league (``jungle_train.dqn._league``): the snapshot pool's add and evict,
prioritised fictitious self-play's weights and sampling, each side of a league game
played by its own network, the frozen opponent, and the league trainer's resume."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_core import DARK
from jungle_train import dqn
from jungle_train.common import CheckpointError
from jungle_train.dqn import _league, _learner
from jungle_train.players import DQNAgent
from tests._dqn import LEAGUE, TINY


def test_pfsp_weights_favour_the_members_the_learner_does_not_beat() -> None:
    points = jnp.array([2.0, 8.0, 0.0, 5.0])
    games = jnp.array([10.0, 10.0, 0.0, 10.0])
    available = jnp.array([True, True, False, True])
    w = np.asarray(_league.pfsp_weights(points, games, available, 2.0))
    x = (np.array([2.0, 8.0, 5.0]) + 1) / 12
    expected = (1 - x) ** 2 / np.sum((1 - x) ** 2)
    assert w[2] == 0.0
    np.testing.assert_allclose(w[[0, 1, 3]], expected, rtol=1e-5)
    uniform = np.asarray(_league.pfsp_weights(points, games, available, 0.0))
    np.testing.assert_allclose(uniform, [1 / 3, 1 / 3, 0, 1 / 3], rtol=1e-6)


def test_members_are_drawn_in_proportion_to_their_weights() -> None:
    """A chi-square test over 40,000 draws from a fixed seed: p well above 0.001 for the
    weights drawn from, and far below it for weights that differ by a few percent."""
    weights = jnp.array([0.5, 0.0, 0.2, 0.25, 0.05])
    words = jax.random.bits(jax.random.key(7), (40_000,), jnp.uint32)
    counts = np.bincount(np.asarray(_league.draw_members(words, weights)), minlength=5)
    assert counts[1] == 0
    chi2 = stats_chi2(counts, np.asarray(weights))
    assert chi2 < 16.3  # p = 0.001 at 3 degrees of freedom
    assert stats_chi2(counts, np.array([0.52, 0.0, 0.18, 0.25, 0.05])) > 16.3


def stats_chi2(counts: np.ndarray, weights: np.ndarray) -> float:
    expected = weights * counts.sum()
    keep = expected > 0
    return float(np.sum((counts[keep] - expected[keep]) ** 2 / expected[keep]))


def test_results_are_counted_per_member_over_a_window() -> None:
    points, games = jnp.zeros(3), jnp.zeros(3)
    member = jnp.array([0, 0, 2, 1])
    score = jnp.array([1.0, 0.5, 0.0, 1.0])
    counted = jnp.array([True, True, True, False])
    points, games = _league.record_results(points, games, member, score, counted)
    assert np.asarray(points).tolist() == [1.5, 0.0, 0.0]
    assert np.asarray(games).tolist() == [2.0, 0.0, 1.0]
    many = jnp.full(500, True)
    points, games = _league.record_results(
        points, games, jnp.zeros(500, jnp.int32), jnp.ones(500), many
    )
    assert float(games[0]) == pytest.approx(_league.WINDOW)
    assert float(points[0] / games[0]) == pytest.approx(501.5 / 502)


def test_snapshots_enter_the_pool_and_the_oldest_is_evicted() -> None:
    """Every second update is a snapshot: after the run the pool has taken one snapshot
    for the start and one per period, in the slots in turn (pool of two: the newest
    overwrote the oldest); the slot just written holds the current network; its counts
    restarted."""
    parts = _learner.Parts(LEAGUE)
    runner = parts.init(jax.random.key(0))
    assert runner.pool_next is not None and runner.member is not None
    assert int(runner.pool_next) == 1
    np.testing.assert_array_equal(np.asarray(runner.member) >= 0, True)
    round_ = jax.jit(parts.round)
    history = []
    for _ in range(12):
        runner, _metrics = round_(runner)
        history.append((int(runner.updates), jax.tree.map(np.asarray, runner.params)))
    updates = int(runner.updates)
    assert updates >= 6  # the rounds after min_buffer learned
    assert runner.pool_next is not None and runner.pool_games is not None
    assert int(runner.pool_next) == 1 + updates // LEAGUE.self_play_period
    newest = (int(runner.pool_next) - 1) % LEAGUE.pool_size
    older = 1 - newest
    by_update = dict(history)
    assert updates % 2 == 0  # two updates a round, a snapshot every second one
    for slot, at in ((newest, updates), (older, updates - 2)):
        pooled = jax.tree.map(lambda p, s=slot: np.asarray(p[s]), runner.pool)
        jax.tree.map(np.testing.assert_array_equal, pooled, by_update[at])
    # the slot just overwritten counts from zero again (no game of the new member ended
    # in the update that wrote it)
    assert float(runner.pool_games[newest]) == 0.0


def test_each_side_of_a_league_game_plays_its_own_network() -> None:
    """Pool members with different networks: every league game's reply is the argmax
    of its own member's Q-values, and the learner's decision (no exploration) is the
    argmax of the learner's."""
    parts = _learner.Parts(LEAGUE)
    runner = parts.init(jax.random.key(1))
    keys = jax.random.split(jax.random.key(2), LEAGUE.pool_size)
    zeros = jnp.zeros((1, LEAGUE.observation_size))
    pool = jax.tree.map(lambda *xs: jnp.stack(xs), *[parts.network.init(k, zeros) for k in keys])
    b = LEAGUE.num_envs
    member = jnp.arange(b, dtype=jnp.int32) % (LEAGUE.pool_size + 1)
    runner = runner._replace(pool=pool, pool_next=jnp.int32(LEAGUE.pool_size), member=member)
    state = runner.env
    words = jnp.arange(b, dtype=jnp.uint32)
    reply = np.asarray(parts.opponent_actions(runner, state, words))
    lo = parts.bounds[4]
    networks = [jax.tree.map(lambda p, k=k: p[k], pool) for k in range(LEAGUE.pool_size)]
    networks.append(runner.params)
    for game in range(lo, b):
        one = jax.tree.map(lambda a, g=game: a[g : g + 1], state)
        q = np.array(parts.q_values(networks[int(member[game])], one))[0]
        q[~np.asarray(one.legal_action_mask)[0]] = -np.inf
        assert reply[game] == int(np.argmax(q)), game
    # the learner's side: its own network, whatever the opponents'
    _, transition, _ = jax.jit(parts.iteration)(runner, jnp.int32(0))
    q = np.array(parts.q_values(runner.params, state))
    q[~np.asarray(state.legal_action_mask)] = -np.inf
    np.testing.assert_array_equal(np.asarray(transition.action), np.argmax(q, axis=1))


def test_league_games_are_counted_and_drawn_by_member() -> None:
    """A run's league games fill the members' counts (no other kind does), and the
    metrics count the league's games apart."""
    parts = _learner.Parts(LEAGUE)
    runner = parts.init(jax.random.key(3))
    round_ = jax.jit(parts.round)
    league_games = 0.0
    for _ in range(40):
        runner, metrics = round_(runner)
        league_games += float(metrics["games_league"])
    assert league_games > 0
    counted = float(np.sum(np.asarray(runner.pool_games)))
    assert 0 < counted <= league_games
    members = np.asarray(runner.member)[parts.bounds[4] :]
    available = np.arange(LEAGUE.pool_size + 1)
    assert set(members.tolist()) <= set(available.tolist())


def test_a_frozen_opponent_plays_the_self_slots_and_is_never_refreshed(tmp_path: Path) -> None:
    config = dataclasses.replace(TINY, opponents="random=1,self=1", self_play_period=1)
    trainer = dqn.DQNTrainer(config)
    state = trainer.init(0)
    state, _ = trainer.advance(state, 32)
    frozen = tmp_path / "frozen.npz"
    trainer.save_agent(state, str(frozen))
    exploit = dataclasses.replace(config, frozen_opponent=str(frozen))
    parts = _learner.Parts(exploit)
    runner = parts.init(jax.random.key(5))
    round_ = jax.jit(parts.round)
    for _ in range(10):
        runner, _metrics = round_(runner)
    assert int(runner.updates) > 0
    saved = {"params": DQNAgent(DARK, str(frozen)).params}
    got = jax.tree.map(np.asarray, runner.opponent_params)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=0, atol=0), got, saved)
    other = dataclasses.replace(config, hidden=(8,), frozen_opponent=str(frozen))
    with pytest.raises(CheckpointError, match=r"frozen\.npz"):
        _learner.Parts(other)


def test_league_config_round_trips_through_a_config_file(tmp_path: Path) -> None:
    path = tmp_path / "league.json"
    fields = {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(LEAGUE).items()
    }
    path.write_text(json.dumps(fields))
    from jungle_train.common import load_config

    assert load_config(dqn.Config, path) == LEAGUE
