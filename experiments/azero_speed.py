"""Speed of the ``azero`` agent's search (DARK, the shipped DQN as its prior), one game
at a time as the agent plays: the plain tree layout with mctx's default ``threefry``
key (the reference), against compact nodes, then an ``rbg`` key, then the tree's action
axis in slots of the legal actions (``SearchConfig.slots``; all three: the agent's
search), measured in the same run, each compiled with XLA's defaults.

    .venv/bin/python experiments/azero_speed.py                  # about 4 minutes
    .venv/bin/python experiments/azero_speed.py --simulations 256 --repeats 1   # smoke
    .venv/bin/python experiments/azero_speed.py --batch 8 --simulations 24,256  # self-play

With ``--train tiny,experiments/configs/azero-cpu.toml`` (named configs or config files):
the AlphaZero trainer's self-play rounds (search, play, updates;
``jungle_train.azero.AZeroTrainer``) with the full action axis (the reference) against
slots (``azero.Config.slots``), decisions a second over
``--rounds`` rounds after a compiling one, the two alternated ``--repeats`` times in one
process (3–7 minutes a config at ``--repeats 2 --rounds 2`` on this project's CPU).

With ``--batch B``: a batch of ``B`` games (the positions after 20 to 120 random plies)
searched at once, as self-play does, vectorized (one mctx search over the batch) against
sequential (``lax.map`` over the games; ``SearchConfig.batching``), with the agent's
search otherwise; it prints the median seconds per batched search and decisions a second.
``--batching vectorized`` times the vectorized search alone (for a large batch on a GPU,
where the sequential reference would search thousands of games one after another).
``--slots`` searches in slots of the legal actions, as the agent and the trainer do;
``--evaluator dqn,zero`` times each with the agent's evaluation and with none (uniform
prior, values 0: the rules and the tree alone), to tell the network's share of the time
from the search's; ``--dirichlet`` sets the root noise's share (self-play's 0.25; 0 by
default, as the agent plays). ``--batch`` takes a list of sizes (each timed in turn).
``--profile DIR`` then traces one more search of each variant into ``DIR``
(``jax.profiler``) and prints the device operations that took its time
(``experiments/trace_summary.py``): how the GPU's slow search was found.

    .venv/bin/python experiments/azero_speed.py --batch 64 --batching vectorized \
        --simulations 64,256 --repeats 2       # about 4 minutes
    .venv/bin/python experiments/azero_speed.py --batch 1024 --batching vectorized --slots \
        --dirichlet 0.25 --simulations 64 --repeats 1 --profile /tmp/p

Earlier versions of this script also timed a batched backward pass and a root noise
drawn at once against mctx's own (``--backward``, ``--noise``), and XLA's copy insertion
with region analysis; the search now uses mctx's own backward pass and root noise and
XLA's defaults, and those switches are gone (experiments/readme-azero.md keeps the
measurements).

Positions: seeded random play, after 20, 60 and 120 plies (restarted when a game ends).
For each simulation count and variant it prints the median seconds per search over
``--repeats`` rounds of every position (the variants interleaved, each round with its
own key), and the ratio of the reference's median to it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

from jungle_core import DARK, State
from jungle_core.jax_env import JaxState, make
from jungle_train.azero import calibration_position, dqn_guide
from jungle_train.azero.search import SearchConfig, make_search, zero_evaluator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trace_summary import newest_trace, summarize  # a sibling script (not a package)

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    # (label, SearchConfig fields)
    ("plain nodes, threefry key (reference)", {"compact": False, "rng": "threefry"}),
    ("compact nodes, threefry key", {"compact": True, "rng": "threefry"}),
    ("compact nodes, rbg key", {"compact": True, "rng": "rbg"}),
    ("... and slots (the agent's)", {"slots": True}),
]


def positions(plies: tuple[int, ...], seed: int) -> list[State]:
    """The positions after ``plies`` random plies, each its own seeded game (restarted
    when it ends): the agent's own calibration middlegames."""
    return [calibration_position(DARK, plies=count, seed=seed + count) for count in plies]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--simulations", default="1024,2048")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--batch", default="", help="games searched at once (a list: each size in turn)"
    )
    parser.add_argument(
        "--batching",
        default="vectorized,sequential",
        help="--batch: the batchings timed (a large batch on a GPU: vectorized alone; "
        "the sequential reference searches the games one after another)",
    )
    parser.add_argument(
        "--dirichlet", type=float, default=0.0, help="--batch: the root noise's share"
    )
    parser.add_argument("--slots", action="store_true", help="--batch: search in slots")
    parser.add_argument(
        "--evaluator",
        default="dqn",
        help="--batch: the evaluations timed (dqn: the agent's, the DQN prior and the "
        "hand-made value; zero: uniform prior, values 0, the rules and the tree alone)",
    )
    parser.add_argument(
        "--profile",
        default="",
        help="--batch: a folder; after timing, trace one more search of each variant "
        "there (jax.profiler) and print its device operations (experiments/trace_summary.py)",
    )
    parser.add_argument("--train", default="", help="azero training configs to time")
    parser.add_argument("--rounds", type=int, default=2, help="--train: rounds timed")
    args = parser.parse_args()
    if args.train:
        for name in args.train.split(","):
            train_speed(name, args.repeats, args.rounds)
        return

    env = make(DARK)
    evaluate, params = dqn_guide(env)
    if args.batch:
        for size in [int(x) for x in args.batch.split(",")]:
            batch_speed(env, evaluate, params, size, args)
        return
    states = positions((20, 60, 120), args.seed)
    batches: list[JaxState] = [jax.tree.map(lambda x: x[None], env.from_state(s)) for s in states]
    print(
        f"DARK, {len(states)} positions (after 20, 60, 120 random plies), "
        f"median of {args.repeats} runs x positions, interleaved; jax {jax.__version__}, "
        f"{jax.devices()[0].platform}"
    )
    for simulations in [int(x) for x in args.simulations.split(",")]:
        searches = []
        for _, knobs in VARIANTS:
            search_config = SearchConfig(simulations=simulations, afterstate="parent", **knobs)
            search = jax.jit(make_search(env, evaluate, search_config))
            search(params, jax.random.key(0), batches[0]).action.block_until_ready()
            searches.append(search)
        # interleaved: every round times each variant on each position once, so that a
        # machine slowing down or speeding up meanwhile touches every variant alike
        times: list[list[float]] = [[] for _ in VARIANTS]
        for repeat in range(args.repeats):
            for batch in batches:
                for k, search in enumerate(searches):
                    begin = time.perf_counter()
                    search(params, jax.random.key(repeat), batch).action.block_until_ready()
                    times[k].append(time.perf_counter() - begin)
        reference = statistics.median(times[0])
        for (label, _), measured in zip(VARIANTS, times, strict=True):
            median = statistics.median(measured)
            low, high = min(measured), max(measured)
            print(
                f"{simulations:5d} simulations  {label:44s} {median:7.3f} s "
                f"(min {low:.3f}, max {high:.3f})  x{reference / median:.2f}",
                flush=True,
            )


def train_speed(name: str, repeats: int, rounds: int) -> None:
    """Self-play decisions a second of the azero config ``name``, full action axis
    against slots (see the docstring)."""
    from jungle_train import azero, resolve_config

    measured: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeats):
        for slots in (False, True):
            named: azero.Config = resolve_config("azero", name, None)
            config = dataclasses.replace(named, slots=slots)
            trainer = azero.AZeroTrainer(config)
            state = trainer.init(0)
            state, _ = trainer.advance(state, config.steps_per_round)  # compiles
            jax.tree.map(lambda leaf: leaf.block_until_ready(), state.params)
            begin = time.perf_counter()
            state, _ = trainer.advance(state, rounds * config.steps_per_round)
            jax.tree.map(lambda leaf: leaf.block_until_ready(), state.params)
            seconds = time.perf_counter() - begin
            measured[slots].append(rounds * config.steps_per_round / seconds)
    reference = statistics.median(measured[False])
    for slots, rates in measured.items():
        label = "slots" if slots else "all actions (reference)"
        rate = statistics.median(rates)
        print(
            f"azero --config {name:12s} {label:24s} {rate:7.0f} decisions/s "
            f"({', '.join(f'{r:.0f}' for r in rates)})  x{rate / reference:.2f}",
            flush=True,
        )


def batch_speed(env: Any, evaluate: Any, params: Any, size: int, args: argparse.Namespace) -> None:
    """Vectorized against sequential search of ``size`` games (see the docstring)."""
    plies = [20 + (100 * i) // max(size - 1, 1) for i in range(size)]
    states = [env.from_state(s) for s in positions(tuple(plies), args.seed)]
    batch: JaxState = jax.tree.map(lambda *x: jnp.stack(x), *states)
    print(
        f"DARK, a batch of {size} games (after {plies[0]}..{plies[-1]} random plies), "
        f"{'slots' if args.slots else 'all actions'}, median of {args.repeats} runs; "
        f"jax {jax.__version__}, {jax.devices()[0].platform}"
    )
    evaluators = {"dqn": (evaluate, params), "zero": (zero_evaluator(env.num_actions), None)}
    chosen = [
        (batching, name)
        for batching in args.batching.split(",")
        if batching
        for name in args.evaluator.split(",")
        if name
    ]
    for simulations in [int(x) for x in args.simulations.split(",")]:
        times: dict[str, list[float]] = {}
        searches = {}  # label: (jitted search, its evaluation's parameters)
        for batching, name in chosen:
            search_config = SearchConfig(
                simulations=simulations,
                afterstate="parent",
                batching=batching,
                dirichlet_fraction=args.dirichlet,
                slots=args.slots,
            )
            evaluation, weights = evaluators[name]
            search = jax.jit(make_search(env, evaluation, search_config))
            search(weights, jax.random.key(0), batch).action.block_until_ready()
            label = f"{batching}/{name}"
            searches[label], times[label] = (search, weights), []
        for repeat in range(args.repeats):
            for label, (search, weights) in searches.items():
                begin = time.perf_counter()
                search(weights, jax.random.key(repeat), batch).action.block_until_ready()
                times[label].append(time.perf_counter() - begin)
        reference = statistics.median(times["/".join(chosen[0])])
        for label, measured in times.items():
            median = statistics.median(measured)
            print(
                f"{simulations:5d} simulations  {label:33s} {median:7.3f} s a batch, "
                f"{size / median:8.1f} decisions/s  x{reference / median:.2f}",
                flush=True,
            )
        for label, (search, weights) in searches.items() if args.profile else ():
            folder = os.path.join(args.profile, f"{size}-{simulations}-{label.replace('/', '-')}")
            with jax.profiler.trace(folder, create_perfetto_trace=True):
                search(weights, jax.random.key(1), batch).action.block_until_ready()
            print(summarize(newest_trace(folder), top=30), flush=True)


if __name__ == "__main__":
    main()
