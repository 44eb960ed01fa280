"""The DQN trainer (``jungle_train.dqn``), what it learns with: the cheap samplers, the
n-step target against a hand calculation, the loss against a NumPy reference, and the
networks and observations against their NumPy twins."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jungle_core import DARK, from_fen, legal_actions, new_game, observation, outcome, step
from jungle_core.jax_env import make
from jungle_core.lowlevel import HIDDEN, HIDDEN_P0, HIDDEN_P1
from jungle_train import dqn
from jungle_train.dqn import _learner, _replay
from jungle_train.jitted._sampling import best_action, coin, uniform_legal
from jungle_train.players import danger_table
from jungle_train.players._numpy import (
    conv_numpy,
    danger_planes,
    enemy_fields,
    extra_inputs,
    network_numpy,
)
from tests._dqn import TINY

# ---------------------------------------------------------------------- samplers


def test_uniform_legal_is_uniform() -> None:
    """Chi-square test: each legal action equally likely (280 actions, 40 legal)."""
    rng = np.random.default_rng(0)
    mask = np.zeros(280, bool)
    legal = rng.choice(280, 40, replace=False)
    mask[legal] = True
    n = 40_000
    seeds = jax.random.bits(jax.random.key(1), (n,), jnp.uint32)
    picks = np.asarray(jax.jit(uniform_legal)(seeds, jnp.broadcast_to(mask, (n, 280))))
    assert set(picks.tolist()) <= set(legal.tolist())
    counts = np.bincount(picks, minlength=280)[legal]
    expected = n / 40
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 72.0  # 39 degrees of freedom: p ≈ 0.001


def test_best_action_breaks_ties_uniformly_and_coin_has_its_rate() -> None:
    values = jnp.array([1.0, 5.0, 5.0, -jnp.inf, 4.9995, 2.0])
    seeds = jax.random.bits(jax.random.key(2), (9_000,), jnp.uint32)
    picks = np.asarray(jax.vmap(best_action, in_axes=(None, 0))(values, seeds))
    counts = np.bincount(picks, minlength=6)
    assert counts[[0, 3, 5]].sum() == 0
    assert all(abs(c - 3_000) < 250 for c in counts[[1, 2, 4]])
    heads = np.asarray(coin(seeds, jnp.float32(0.3)))
    assert abs(heads.mean() - 0.3) < 0.02


# ----------------------------------------------------------------- n-step target


def test_n_step_return_and_bootstrap_by_hand(
    tiny_run: tuple[Any, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trainer's n-step target (n = 3, γ = 0.99) on sequences of rewards 1, 10, 100,
    1000: the return ``Σ_k γ^k r_k`` over the first n rewards, cut after the first
    ``done`` (that step's reward still counts), and the bootstrap γⁿ only when no game
    ended inside the n steps (a ``done`` at step n itself belongs to the next window)."""
    runner, _ = tiny_run
    assert (TINY.n_step, TINY.gamma) == (3, 0.99)
    g = 0.99
    parts = _learner.Parts(TINY)
    batch = parts.buffer.sample(runner.buffer, jax.random.key(7)).experience
    m = TINY.batch_size
    done_at = [(), (0,), (1,), (2,), (3,), (0, 2), (), (1, 3)]
    assert len(done_at) == m
    done = np.zeros((m, TINY.n_step + 1), bool)
    for i, steps in enumerate(done_at):
        done[i, list(steps)] = True
    reward = np.tile(np.array([1.0, 10.0, 100.0, 1000.0], np.float32), (m, 1))
    reward[6] = np.array([-2.0, 0.5, 3.0, 7.0], np.float32)
    batch = batch._replace(reward=jnp.asarray(reward), done=jnp.asarray(done))
    full = 1 + 10 * g + 100 * g**2
    want_returns = [full, 1, 1 + 10 * g, full, full, 1, -2 + 0.5 * g + 3 * g**2, 1 + 10 * g]
    want_bootstrap = [g**3, 0, 0, 0, g**3, 0, g**3, 0]

    seen: dict[str, Any] = {}
    real = dqn.double_q_loss

    def record(*args: Any, **kwargs: Any) -> tuple[jax.Array, jax.Array]:
        seen.update(inspect.signature(real).bind(*args, **kwargs).arguments)
        return real(*args, **kwargs)

    monkeypatch.setattr(_learner, "double_q_loss", record)
    parts.loss(runner.params, runner.params, batch, jnp.ones(m), jax.random.key(0))
    np.testing.assert_allclose(np.asarray(seen["returns"]), want_returns, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(seen["bootstrap"]), want_bootstrap, rtol=1e-6)


# -------------------------------------------------------------------------- loss


def _numpy_loss(
    config: dqn.Config, params: Any, target: Any, batch: dqn.Transition, weights: np.ndarray
) -> tuple[float, np.ndarray]:
    """The double-DQN n-step Huber loss written out in NumPy, one transition at a time."""
    env = make(DARK)
    n, gamma = config.n_step, config.gamma
    p = jax.device_get(params["params"])
    t = jax.device_get(target["params"])

    def obs(position: Any, i: int, k: int) -> np.ndarray:
        state = env.to_state(
            _replay.state_of(jax.tree.map(lambda a: a[i, k], position)).replace(ply=jnp.int32(0))
        )
        o = observation(state).reshape(-1)
        clock = np.float32(state.plies_since_removal / 100)
        return np.concatenate([o, [clock]]).astype(np.float32)

    losses, tds = [], []
    for i in range(batch.action.shape[0]):
        ret, disc = 0.0, 1.0
        for k in range(n):
            ret += disc * float(batch.reward[i, k])
            disc *= gamma
            if bool(batch.done[i, k]):
                disc = 0.0
                break
        q = network_numpy(p, obs(batch.position, i, 0))
        q_next_online = network_numpy(p, obs(batch.position, i, n))
        q_next_target = network_numpy(t, obs(batch.position, i, n))
        legal = np.asarray(batch.position.legal[i, n])
        best = int(np.argmax(np.where(legal, q_next_online, -np.inf)))
        target_value = ret + disc * q_next_target[best]
        td = target_value - q[int(batch.action[i, 0])]
        huber = (
            0.5 * td**2
            if abs(td) <= config.huber_delta
            else config.huber_delta * (abs(td) - 0.5 * config.huber_delta)
        )
        losses.append(weights[i] * huber)
        tds.append(td)
    return float(np.mean(losses)), np.array(tds)


def test_loss_equals_a_numpy_reference(tiny_run: tuple[Any, dict[str, Any]]) -> None:
    runner, _ = tiny_run
    parts = _learner.Parts(TINY)
    sample = parts.buffer.sample(runner.buffer, jax.random.key(7))
    batch = sample.experience
    # games that end inside the n steps: the return is cut there, nothing is bootstrapped
    batch = batch._replace(done=batch.done.at[::3, 1].set(True).at[1::4, 0].set(True))
    weights = np.linspace(0.5, 1.0, TINY.batch_size).astype(np.float32)
    # a target network that differs from the online one
    target = jax.tree.map(lambda a: a * 0.9, runner.params)
    loss, td = jax.jit(parts.loss)(
        runner.params, target, batch, jnp.asarray(weights), jax.random.key(0)
    )
    ref_loss, ref_td = _numpy_loss(TINY, runner.params, target, batch, weights)
    np.testing.assert_allclose(np.asarray(td), ref_td, rtol=1e-4, atol=1e-4)
    assert abs(float(loss) - ref_loss) < 1e-4 * max(1.0, abs(ref_loss))


def _loss_batch(seed: int) -> list[np.ndarray[Any, Any]]:
    """Six transitions over twelve actions: Q-values, actions, returns, bootstraps (a
    third of them 0, as after a game's end), next Q of both networks, legal masks and
    importance weights, all from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    m, a = 6, 12
    q = rng.normal(0, 3, (m, a)).astype(np.float32)
    action = rng.integers(0, a, m).astype(np.int32)
    returns = rng.normal(0, 2, m).astype(np.float32)
    bootstrap = np.where(rng.random(m) < 0.3, 0.0, 0.99 ** rng.integers(1, 4, m))
    q_target = rng.normal(0, 3, (m, a)).astype(np.float32)
    q_online = rng.normal(0, 3, (m, a)).astype(np.float32)
    legal = rng.random((m, a)) < 0.5
    legal[:, 0] = True
    weights = rng.random(m).astype(np.float32)
    selector = np.where(legal, q_online, -1e9).astype(np.float32)
    return [q, action, returns, bootstrap.astype(np.float32), q_target, selector, weights]


# (seed, Huber delta) -> loss, TD errors, sum and sum of |.| of the loss's gradient in q:
# computed with rlax.double_q_learning and rlax.huber_loss, which the loss replaced
PINNED = [
    (
        (0, 1.0),
        1.3524856567382812,
        [0.557914, 0.865828, -7.538966, -7.245158, 0.474482, -0.612543],
        0.15884529054164886,
        0.34286558628082275,
    ),
    (
        (1, 1.0),
        0.7605292201042175,
        [4.044925, 0.186939, -1.900485, 2.614233, 2.87394, 1.388341],
        -0.2443934679031372,
        0.4511669874191284,
    ),
    (
        (2, 10.0),
        4.571852207183838,
        [-4.353638, -3.505929, 2.901843, 3.945883, -2.271826, 7.230552],
        -0.5696322321891785,
        2.0288233757019043,
    ),
]


@pytest.mark.parametrize(("case", "loss", "td", "grad_sum", "grad_abs"), PINNED)
def test_double_q_loss_equals_the_pinned_rlax_values(
    case: tuple[int, float], loss: float, td: list[float], grad_sum: float, grad_abs: float
) -> None:
    seed, delta = case
    q, action, returns, bootstrap, q_target, selector, weights = (
        jnp.asarray(x) for x in _loss_batch(seed)
    )

    def of_q(q: jax.Array) -> tuple[jax.Array, jax.Array]:
        return dqn.double_q_loss(q, action, returns, bootstrap, q_target, selector, weights, delta)

    (got, got_td), grad = jax.value_and_grad(of_q, has_aux=True)(q)
    assert float(got) == pytest.approx(loss, rel=1e-6)
    np.testing.assert_allclose(np.asarray(got_td), td, rtol=1e-5, atol=1e-5)
    assert float(jnp.sum(grad)) == pytest.approx(grad_sum, rel=1e-5)
    assert float(jnp.sum(jnp.abs(grad))) == pytest.approx(grad_abs, rel=1e-5)

    # the target is held fixed: no gradient reaches the next position's values
    def of_target(t: jax.Array) -> jax.Array:
        return dqn.double_q_loss(q, action, returns, bootstrap, t, selector, weights, delta)[0]

    assert float(jnp.sum(jnp.abs(jax.grad(of_target)(q_target)))) == 0.0


def test_numpy_forward_equals_the_flax_network(tiny_run: tuple[Any, dict[str, Any]]) -> None:
    runner, _ = tiny_run
    x = np.random.default_rng(0).random((5, 337)).astype(np.float32)
    net = dqn.QNetwork(TINY.hidden, TINY.dropout)
    expected = np.asarray(net.apply(runner.params, x))
    np.testing.assert_allclose(
        network_numpy(jax.device_get(runner.params["params"]), x), expected, rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("dueling", [False, True])
def test_numpy_forward_equals_the_conv_network(dueling: bool) -> None:
    config = dataclasses.replace(TINY, network="conv", channels=8, conv_layers=2, dueling=dueling)
    net = dqn.make_network(config)
    x = np.random.default_rng(1).random((3, 337)).astype(np.float32)
    params = net.init(jax.random.key(0), jnp.asarray(x))
    expected = np.asarray(net.apply(params, x))
    got = np.stack([conv_numpy(jax.device_get(params["params"]), row) for row in x])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    # the per-square head: action 56 + 4*sq + d reads square sq
    probe = np.zeros((1, 337), np.float32)
    probe[0, 6 * 20 : 6 * 20 + 6] = 1.0  # a piece on square 20 only
    near = (
        np.asarray(net.apply(params, probe))
        - np.asarray(net.apply(params, np.zeros((1, 337), np.float32)))
    )[0]
    far_square = 55  # more than two conv layers away from square 20
    assert near[far_square] == pytest.approx(near[54], abs=1e-6)  # both see only the context


def test_the_dangers_planes_read_each_attacker_and_only_face_up_enemies() -> None:
    """A square next to an enemy Rat and an enemy Tiger: the worst of the two for each own
    rank (the Rat takes an Elephant, the Tiger ties a Tiger and cannot take a Lion); own
    pieces, empty squares and face-down pieces threaten nothing."""
    state = from_fen("8/8/8/8/8/tT6/1r6 0 0 0 - -")  # t a2, T b2 (own), r b1
    planes = danger_planes(state).reshape(56, 8)
    assert planes[0].tolist() == [1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0, 1.0]  # a1: r and t
    assert planes[2].tolist() == [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]  # c1: r only
    assert planes[16].tolist() == [1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0, 0.0]  # a3: t only
    assert not planes[10].any()  # c2: next to the own Tiger only
    table = danger_table(DARK)
    for player in (0, 1):
        threatless = [0, *range(player * 8 + 1, player * 8 + 9), HIDDEN, HIDDEN_P0, HIDDEN_P1]
        assert not table[player, threatless].any()


def test_the_planes_observations_equal_their_numpy_twins() -> None:
    """``spec+clock+fields+battles+dangers``: the JAX observation equals the numpy one the
    agent plays with along random games, and the conv network reading it equals its
    numpy forward pass."""
    env = make(DARK)
    name = "spec+clock+fields+battles+dangers"
    config = dataclasses.replace(TINY, network="conv", channels=8, conv_layers=2, observation=name)
    assert config.observation_size == 337 + 20 * 56
    observe = jax.jit(lambda s: dqn.observe(env, config, s))
    rng = np.random.default_rng(3)
    fields_seen = battles_seen = dangers_seen = 0
    for game in range(3):
        state = new_game(DARK, seed=game)
        while outcome(state) is None and state.ply < 120:
            extra = extra_inputs(state, name)
            expected = np.concatenate([observation(state).reshape(-1), extra])
            got = np.asarray(observe(env.from_state(state)))
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
            planes = extra[1:].reshape(56, 20)
            fields_seen += int(np.count_nonzero(planes[:, :8].max(axis=0)))
            battles_seen += int(np.count_nonzero(planes[:, 8:12]))
            dangers_seen += int(np.count_nonzero(planes[:, 12:]))
            assert np.array_equal(planes[:, :8].reshape(-1), enemy_fields(state))
            assert np.array_equal(planes[:, 12:].reshape(-1), danger_planes(state))
            actions = legal_actions(state)
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
    assert fields_seen > 500 and battles_seen > 20 and dangers_seen > 100  # all carry information
    net = dqn.make_network(config)
    x = np.random.default_rng(2).random((2, config.observation_size)).astype(np.float32)
    params = net.init(jax.random.key(0), jnp.asarray(x))
    got = np.stack(
        [conv_numpy(jax.device_get(params["params"]), row, square_planes=20) for row in x]
    )
    np.testing.assert_allclose(got, np.asarray(net.apply(params, x)), rtol=1e-5, atol=1e-5)
