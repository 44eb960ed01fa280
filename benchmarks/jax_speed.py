"""Steps per second of the JAX core: random play with auto-reset inside ``lax.scan``.

Each engine runs the same jitted loop: ``batch`` games side by side; per iteration, pick a
random legal action in every game, ``vmap(step)`` all games, and replace each finished
game by a fresh ``init`` (auto-reset), for ``steps`` iterations inside one ``lax.scan``.
Steps per second count every game's step (``batch * steps`` per call), timed as the best
of ``--repeats`` calls after a warm-up call; compile time (trace + XLA) is reported
separately. In the same run, with the ``bench`` extra (``pgx``), pgx's ``animal_shogi``
is measured with the very same loop, and the pure-Python core's random play (per ply:
``legal_actions``, ``step``, ``outcome``) gives the other reference.

    python benchmarks/jax_speed.py [--batch-sizes 256,4096,16384] [--steps 200]
        [--rules dark|dark_strict|classic] [--sampler hash|categorical] [--quick]

The random legal action (``--sampler``, the same for every engine):

- ``hash`` (default): the legal action with the highest pseudo-random priority, the
  priorities an integer hash (lowbias32) of a fresh per-game 32-bit ``jax.random`` word
  and the action index. Uniform over the legal actions up to the hash's quality, and
  cheap, so the loop measures the environments rather than the sampler.
- ``categorical``: ``jax.random.categorical`` over the masked logits (exactly uniform;
  on CPU it costs more than a DARK step, so it compresses the ratios).
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import jungle_core as jc
from jungle_core import jax_env

Sampler = Callable[[jax.Array, jax.Array], jax.Array]


def hash_sampler(key: jax.Array, mask: jax.Array) -> jax.Array:
    """``int32[B]``: a random legal action per row of ``mask: bool[B, A]`` (``A < 512``).

    >>> m = jnp.array([[False, True, False, True]])
    >>> int(hash_sampler(jax.random.key(0), m)[0]) in (1, 3)
    True
    """
    num_actions = mask.shape[-1]
    seed = jax.random.bits(key, mask.shape[:-1], jnp.uint32)
    index = jnp.arange(num_actions, dtype=jnp.uint32)
    x = seed[..., None] ^ (index * jnp.uint32(0x9E3779B9))
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    x = x ^ (x >> 16)
    priority = jnp.where(mask, (x & jnp.uint32(0xFFFFFE00)) | index, jnp.uint32(0))
    return (jnp.max(priority, axis=-1) & 0x1FF).astype(jnp.int32)


def categorical_sampler(key: jax.Array, mask: jax.Array) -> jax.Array:
    """``int32[B]``: a uniformly random legal action per row, by ``jax.random.categorical``.

    >>> m = jnp.array([[False, True, False, True]])
    >>> int(categorical_sampler(jax.random.key(0), m)[0]) in (1, 3)
    True
    """
    logits = jnp.where(mask, 0.0, -jnp.inf)
    return jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)


SAMPLERS: dict[str, Sampler] = {"hash": hash_sampler, "categorical": categorical_sampler}


def make_rollout(env: Any, batch: int, steps: int, sample: Sampler) -> Any:
    """A jitted ``rollout(key) -> finished games``: ``steps`` iterations of random play
    with auto-reset over ``batch`` games of ``env`` (any object with pgx-style ``init``,
    ``step`` and a state with ``legal_action_mask``, ``terminated``, ``truncated``)."""

    def rollout(key: jax.Array) -> jax.Array:
        key, first = jax.random.split(key)
        state = jax.vmap(env.init)(jax.random.split(first, batch))

        def body(carry: tuple[Any, jax.Array], _: None) -> tuple[tuple[Any, jax.Array], Any]:
            state, key = carry
            key, k_action, k_step, k_reset = jax.random.split(key, 4)
            action = sample(k_action, state.legal_action_mask)
            state = jax.vmap(env.step)(state, action, jax.random.split(k_step, batch))
            fresh = jax.vmap(env.init)(jax.random.split(k_reset, batch))
            done = state.terminated | state.truncated

            def reset(new: jax.Array, old: jax.Array) -> jax.Array:
                return jnp.where(done.reshape(done.shape + (1,) * (old.ndim - 1)), new, old)

            state = jax.tree.map(reset, fresh, state)
            return (state, key), jnp.sum(done, dtype=jnp.int32)

        _, finished = jax.lax.scan(body, (state, key), None, length=steps)
        return jnp.sum(finished)

    return jax.jit(rollout)


def measure(
    env: Any, batch: int, steps: int, repeats: int, sample: Sampler
) -> tuple[float, float, int]:
    """``(compile seconds, steps per second, games finished in one call)``."""
    rollout = make_rollout(env, batch, steps, sample)
    key = jax.random.key(0)
    start = time.perf_counter()
    compiled = rollout.lower(key).compile()
    compile_s = time.perf_counter() - start
    finished = int(compiled(jax.random.key(1)))  # warm-up
    best = float("inf")
    for i in range(repeats):
        start = time.perf_counter()
        compiled(jax.random.key(2 + i)).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return compile_s, batch * steps / best, finished


def pure_plies_per_second(rules: jc.Rules, seconds: float, seed: int = 0) -> float:
    """Random play through the pure core (``legal_actions`` + ``step`` + ``outcome``)."""
    pick = random.Random(seed)
    rng = np.random.default_rng(seed)
    plies = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = jc.new_game(rules, seed=games)
        while jc.outcome(state) is None:
            actions = jc.legal_actions(state)
            state = jc.step(state, actions[pick.randrange(len(actions))], rng)
            plies += 1
        games += 1
    return plies / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", default="256,4096,16384", help="comma-separated")
    parser.add_argument("--steps", type=int, default=200, help="scan length, JAX core")
    parser.add_argument("--pgx-steps", type=int, default=20, help="scan length, pgx")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls (best counts)")
    parser.add_argument("--rules", default="dark", help="dark, dark_strict or classic")
    parser.add_argument("--sampler", choices=sorted(SAMPLERS), default="hash")
    parser.add_argument("--pure-seconds", type=float, default=5.0)
    parser.add_argument("--no-pgx", action="store_true", help="skip pgx even if installed")
    parser.add_argument(
        "--quick", action="store_true", help="batch 256,4096; fewer steps, repeats, seconds"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.batch_sizes, args.steps, args.pgx_steps = "256,4096", 50, 5
        args.repeats, args.pure_seconds = 2, 1.0
    batches = [int(b) for b in args.batch_sizes.split(",") if b.strip()]
    rules = jc.rules_by_name(args.rules)
    sample = SAMPLERS[args.sampler]
    env = jax_env.make(rules)

    pgx_env = None
    if not args.no_pgx:
        try:
            import pgx

            pgx_env = pgx.make("animal_shogi")
        except ImportError:
            print("pgx not installed (pip install -e '.[bench]'): no pgx reference\n")

    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}, {platform.processor() or '?'}"
        f", python {platform.python_version()}; rules {rules.name}, sampler {args.sampler}"
    )
    pure = pure_plies_per_second(rules, args.pure_seconds)
    print(f"pure-Python core, random play: {pure:,.0f} plies/s\n")

    header = (
        f"{'engine':<22}{'batch':>7}{'compile s':>11}{'steps/s':>14}"
        f"{'games/call':>12}{'x pgx':>8}{'x pure':>9}"
    )
    print(header)
    print("-" * len(header))
    ratios: dict[int, float] = {}
    for batch in batches:
        c, ours, done = measure(env, batch, args.steps, args.repeats, sample)
        theirs = None
        if pgx_env is not None:
            pc, theirs, pdone = measure(pgx_env, batch, args.pgx_steps, args.repeats, sample)
        x_pgx = f"{ours / theirs:7.1f}x" if theirs else f"{'-':>8}"
        print(
            f"{'jungle ' + rules.name:<22}{batch:>7}{c:>11.1f}{ours:>14,.0f}{done:>12}"
            f"{x_pgx}{ours / pure:>8.0f}x"
        )
        if theirs:
            ratios[batch] = ours / theirs
            print(
                f"{'pgx animal_shogi':<22}{batch:>7}{pc:>11.1f}{theirs:>14,.0f}{pdone:>12}"
                f"{'1.0x':>8}{theirs / pure:>8.1f}x"
            )
        sys.stdout.flush()
    if 4096 in ratios:
        verdict = "meets" if ratios[4096] >= 10 else "MISSES"
        print(f"\nat batch 4096: {ratios[4096]:.1f}x pgx animal_shogi ({verdict} the 10x bar)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
