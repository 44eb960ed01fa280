"""Training speed of the DQN: the jitted trainer against the way a user would do it.

Side by side in one run, with the same network (the config's MLP) and the same opponent:

- **jitted collection**: environment steps per second of the trainer's data collection
  (``jungle_train.dqn``: act with the network for every game, the opponent's reply, the
  step with auto-reset, storing into the prioritised replay), ``num_envs`` games at once
  inside one jitted ``lax.scan`` (updates switched off);
- **Python loop** (the reference): one game at a time through the Gymnasium adapter
  (``jungle/Dark-v0`` against the pure-core opponent), the same network's forward pass
  jitted at batch 1, the transition appended to a Python list;
- **updates per second** of the trainer's gradient update (sample, double-DQN loss,
  Adam, new priorities), and the share of a training round's wall time spent in updates;
- **samplers**: random play's steps/s when the uniform legal action is drawn with the
  trainer's integer hash against ``jax.random.categorical`` over ``[B, 280]``.

    python benchmarks/train_speed.py [--config cpu|spec|FILE] [--envs 256] [--seconds 20]
        [--opponents random,greedy] [--quick]

``--config``: a named DQN config or a ``.toml`` / ``.json`` file of its fields
(``jungle train dqn --config`` reads the same), e.g. ``experiments/configs/dqn-gpu.toml``.

Prints one table; ratios are jitted / Python loop, measured in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import platform
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jungle_core import DARK
from jungle_core.jax_env import make
from jungle_train import dqn, resolve_config
from jungle_train.jitted import uniform_legal
from jungle_train.players import extra_inputs


def _wait(tree: Any) -> Any:
    """``jax.block_until_ready`` (untyped in jax's stubs) over every array of ``tree``."""
    return jax.tree.map(lambda leaf: leaf.block_until_ready(), tree)


def jitted_collection(config: dqn.Config, seconds: float) -> float:
    """Learner decisions per second of collection only (no updates)."""
    config = dataclasses.replace(config, updates_per_rollout=0)
    trainer = dqn.DQNTrainer(config)
    state = trainer.init(0)
    state, _ = trainer.advance(state, config.steps_per_round)  # compile
    _wait(state.params)
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds or done == 0:
        state, _ = trainer.advance(state, config.steps_per_round)
        done += config.steps_per_round
    _wait(state.params)
    return done / (time.perf_counter() - start)


def python_loop(config: dqn.Config, opponent: str, seconds: float) -> float:
    """Learner decisions per second, one game at a time through Gymnasium."""
    import gymnasium

    from jungle_agents.envs import JungleEnv

    env = gymnasium.make("jungle_agents.envs:jungle/Dark-v0", opponent=opponent)
    network = dqn.make_network(config)
    params = network.init(jax.random.key(0), jnp.zeros((1, config.observation_size)))
    forward = jax.jit(network.apply)
    replay: list[tuple[Any, ...]] = []
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)

    def features(o: dict[str, Any]) -> np.ndarray[Any, Any]:
        # the clock and planes the config's observation adds, as the agent computes them
        jungle_env = env.unwrapped
        assert isinstance(jungle_env, JungleEnv)
        extra = extra_inputs(jungle_env.jungle_state, config.observation)
        return np.concatenate([o["observation"].reshape(-1), extra])[None].astype(np.float32)

    x = features(obs)
    forward(params, x).block_until_ready()
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        q = np.asarray(forward(params, x))[0]
        mask = obs["action_mask"].astype(bool)
        if rng.random() < 0.1:
            action = int(rng.choice(np.flatnonzero(mask)))
        else:
            action = int(np.argmax(np.where(mask, q, -np.inf)))
        obs, reward, terminated, truncated, _ = env.step(action)
        x_next = features(obs)
        replay.append((x, action, reward, x_next, terminated))
        x = x_next
        done += 1
        if terminated or truncated:
            obs, _ = env.reset()
            x = features(obs)
    return done / (time.perf_counter() - start)


def updates_per_second(config: dqn.Config, seconds: float) -> tuple[float, float, float]:
    """``(updates/s, share of a round's time in updates, decisions/s of whole rounds)``,
    after the buffer is warm."""
    trainer = dqn.DQNTrainer(config)
    collect = dqn.DQNTrainer(dataclasses.replace(config, updates_per_rollout=0))
    state = trainer.init(0)
    while trainer.steps_done(state) < config.min_buffer + config.steps_per_round:
        state, _ = trainer.advance(state, config.steps_per_round)
    _wait(state.params)
    rounds, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds or rounds == 0:
        state, _ = trainer.advance(state, config.steps_per_round)
        rounds += 1
    _wait(state.params)
    per_round = (time.perf_counter() - start) / rounds
    c_state = collect.init(0)
    c_state, _ = collect.advance(c_state, config.steps_per_round)
    _wait(c_state.params)
    c_rounds, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds / 2 or c_rounds == 0:
        c_state, _ = collect.advance(c_state, config.steps_per_round)
        c_rounds += 1
    _wait(c_state.params)
    per_collect = (time.perf_counter() - start) / c_rounds
    update_time = max(per_round - per_collect, 1e-9)
    return (
        config.updates_per_rollout / update_time,
        update_time / per_round,
        config.steps_per_round / per_round,
    )


def sampler_speed(batch: int, steps: int) -> tuple[float, float]:
    """Random play's steps/s with the hash sampler and with ``jax.random.categorical``."""
    env = make(DARK)
    results = []
    for use_hash in (True, False):

        def body(
            carry: tuple[Any, jax.Array], _: None, use_hash: bool = use_hash
        ) -> tuple[tuple[Any, jax.Array], None]:
            state, key = carry
            key, k_a, k_s = jax.random.split(key, 3)
            mask = state.legal_action_mask
            if use_hash:
                action = uniform_legal(jax.random.bits(k_a, (batch,), jnp.uint32), mask)
            else:
                action = jax.random.categorical(k_a, jnp.where(mask, 0.0, -jnp.inf), axis=-1)
            state = jax.vmap(env.step)(state, action, jax.random.split(k_s, batch))
            fresh = jax.vmap(env.init)(jax.random.split(k_s, batch))
            done = state.terminated
            state = jax.tree.map(
                lambda f, s: jnp.where(done.reshape(done.shape + (1,) * (s.ndim - 1)), f, s),
                fresh,
                state,
            )
            return (state, key), None

        @jax.jit
        def rollout(key: jax.Array) -> Any:
            state = jax.vmap(env.init)(jax.random.split(key, batch))
            (state, _), _ = jax.lax.scan(body, (state, key), None, length=steps)
            return state.ply

        _wait(rollout(jax.random.key(0)))
        start = time.perf_counter()
        _wait(rollout(jax.random.key(1)))
        results.append(batch * steps / (time.perf_counter() - start))
    return results[0], results[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--config", default="cpu", help=f"{'|'.join(sorted(dqn.CONFIGS))} or a config file"
    )
    parser.add_argument(
        "--envs", type=int, default=None, help="games at once (default: the config's)"
    )
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--opponents", default="random,greedy")
    parser.add_argument("--quick", action="store_true", help="2 s per measurement, tiny sizes")
    args = parser.parse_args()
    config: dqn.Config = resolve_config("dqn", args.config, None)
    seconds = 2.0 if args.quick else args.seconds
    if args.envs:
        config = dataclasses.replace(
            config,
            num_envs=args.envs,
            buffer_size=max(config.buffer_size // args.envs, 8) * args.envs,
        )
    if args.quick:
        config = dataclasses.replace(
            config, num_envs=32, buffer_size=32 * 64, min_buffer=512, batch_size=64
        )
    print(
        f"# DQN training speed: {platform.processor() or platform.machine()}, "
        f"{jax.device_count()} {jax.default_backend()} device(s), config {args.config}: "
        f"{config.network} network, {config.num_envs} games, batch {config.batch_size}"
    )
    print(
        "| opponent | jitted collection (decisions/s) "
        "| Python loop via Gymnasium (decisions/s) | ratio |"
    )
    print("|---|---:|---:|---:|")
    for opponent in [o for o in args.opponents.split(",") if o]:
        c = dataclasses.replace(config, opponents=opponent, phase1_fraction=0.0)
        fast = jitted_collection(c, seconds)
        if importlib.util.find_spec("gymnasium") is None:  # a GPU image without the extra
            print(f"| {opponent} | {fast:,.0f} | n/a (no gymnasium) | |", flush=True)
            continue
        slow = python_loop(c, opponent, seconds / 2)
        print(f"| {opponent} | {fast:,.0f} | {slow:,.0f} | {fast / slow:.1f}x |", flush=True)
    ups, share, rate = updates_per_second(config, seconds)
    print(
        f"\nupdates/s (batch {config.batch_size}, {config.opponents}): {ups:,.1f}; "
        f"share of a round's time in updates ({config.updates_per_rollout} per "
        f"{config.steps_per_round} decisions): {share:.0%}"
    )
    print(f"training rounds (collection and updates): {rate:,.0f} decisions/s")
    batch = 256 if args.quick else 4096
    fast, slow = sampler_speed(batch, 20 if args.quick else 100)
    print(
        f"random play at B={batch}: hash sampler {fast:,.0f} steps/s, "
        f"jax.random.categorical {slow:,.0f} steps/s ({fast / slow:.1f}x)"
    )


if __name__ == "__main__":
    main()
