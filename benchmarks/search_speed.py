"""Search speed of the Minimax agent: plain expectiminimax against the enhanced search.

For each position set it prints, per configuration, the nodes searched per second and the
depth completed within 1 s per move (iterative deepening), as a median over the
positions, and the ratio to plain minimax measured in the same run. Then the CLASSIC
ladder from the start: the time to complete plain minimax depth 4, alpha-beta + ordering
depth 6, and the full search (+ transposition table, iterative deepening, quiescence)
depth 6, median of ``--repeats`` runs.

    .venv/bin/python benchmarks/search_speed.py            # about 3 minutes
    .venv/bin/python benchmarks/search_speed.py --quick    # a smoke run

Positions: DARK openings (the start and after 2 and 4 random plies: many face-down
pieces, so most actions are chance nodes), DARK middlegames (after 30-60 random plies),
and the CLASSIC start. Positions are seeded; nodes are positions expanded or evaluated.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from jungle_agents import SearchConfig, Searcher
from jungle_core import CLASSIC, DARK, Rules, State, legal_actions, new_game, outcome, step

_PLAIN = SearchConfig(alphabeta=False, ordering=False, tt=False, star1=False)
CONFIGS = [
    # (label, configuration, incremental DARK frontier)
    ("plain minimax (reference)", _PLAIN, False),
    ("plain + incremental frontier", _PLAIN, True),
    ("alpha-beta", SearchConfig(ordering=False, tt=False, star1=False), True),
    ("alpha-beta + ordering", SearchConfig(tt=False, star1=False), True),
    ("alpha-beta + ordering + TT", SearchConfig(star1=False), True),
    ("full (+ Star1)", SearchConfig(), True),
    ("full + quiescence", SearchConfig(quiescence=True), True),
]


def dark_positions(plies: list[int], seed: int) -> list[State]:
    """Unfinished DARK positions after the given numbers of random plies."""
    rng = np.random.default_rng(seed)
    out = []
    for n in plies:
        while True:
            state = new_game(DARK)
            for _ in range(n):
                if outcome(state) is not None:
                    break
                actions = legal_actions(state)
                state = step(state, actions[int(rng.integers(len(actions)))], rng)
            if outcome(state) is None:
                out.append(state)
                break
    return out


def one_second(
    rules: Rules, state: State, config: SearchConfig, budget: float, incremental: bool
) -> tuple[int, float]:
    """(depth completed, nodes per second) of an iterative-deepening search in ``budget``."""
    cfg = SearchConfig(
        depth=30,
        alphabeta=config.alphabeta,
        ordering=config.ordering,
        tt=config.tt,
        star1=config.star1,
        quiescence=config.quiescence,
        time=budget,
    )
    searcher = Searcher(rules, state.to_move, cfg, incremental=incremental)
    info = searcher.search(state, np.random.default_rng(0))
    return info.depth, info.nodes / max(info.seconds, 1e-9)


def table(name: str, rules: Rules, states: list[State], budget: float) -> None:
    print(f"\n{name}: {len(states)} positions, {budget:g} s per move (medians)")
    print(f"  {'configuration':<30} {'depth':>6} {'nodes/s':>10} {'vs reference':>13}")
    reference = None
    for label, config, incremental in CONFIGS:
        if not rules.is_dark and label == "plain + incremental frontier":
            continue  # the same search as the reference on CLASSIC
        depths, rates = [], []
        for state in states:
            d, r = one_second(rules, state, config, budget, incremental)
            depths.append(d)
            rates.append(r)
        depth = statistics.median(depths)
        rate = statistics.median(rates)
        if reference is None:
            reference = (depth, rate)
        print(
            f"  {label:<30} {depth:>6g} {rate:>10.0f} {f'{depth - reference[0]:+g} plies':>13}",
            flush=True,
        )


def time_to_depth(
    rules: Rules, state: State, config: SearchConfig, depth: int, repeats: int
) -> list[float]:
    """Seconds to complete ``depth`` (with iterative deepening when ``config.time``)."""
    times = []
    for r in range(repeats):
        cfg = SearchConfig(
            depth=depth,
            alphabeta=config.alphabeta,
            ordering=config.ordering,
            tt=config.tt,
            star1=config.star1,
            quiescence=config.quiescence,
            time=config.time,
        )
        start = time.perf_counter()
        info = Searcher(rules, state.to_move, cfg).search(state, np.random.default_rng(r))
        times.append(time.perf_counter() - start)
        assert info.depth == depth, (info, depth)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer positions, shorter budgets")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per move")
    args = parser.parse_args(argv)
    budget = 0.2 if args.quick else args.budget
    repeats = 1 if args.quick else args.repeats
    openings = dark_positions([0, 2, 4] if not args.quick else [0], seed=1)
    middles = dark_positions([30, 40, 50, 60] if not args.quick else [40], seed=2)
    table("DARK openings", DARK, openings, budget)
    table("DARK middlegames", DARK, middles, budget)
    table("CLASSIC start", CLASSIC, [new_game(CLASSIC)], budget)

    start = new_game(CLASSIC)
    print(f"\nCLASSIC ladder from the start: seconds to complete the depth (median of {repeats})")
    ladder = [
        (
            "plain minimax depth 4",
            SearchConfig(alphabeta=False, ordering=False, tt=False, star1=False),
            4,
        ),
        ("alpha-beta + ordering depth 6", SearchConfig(tt=False, star1=False), 6),
        ("+ TT + iterative deepening depth 6", SearchConfig(time=1e9), 6),
        ("full + quiescence depth 6", SearchConfig(time=1e9, quiescence=True), 6),
    ]
    for name, config, full_depth in ladder:
        depth = min(full_depth, 4) if args.quick else full_depth
        label = (
            name.replace(f"depth {full_depth}", f"depth {depth} (quick)") if args.quick else name
        )
        times = time_to_depth(CLASSIC, start, config, depth, repeats)
        median = statistics.median(times)
        print(
            f"  {label:<36} {median:8.3f} s  (min {min(times):.3f}, max {max(times):.3f})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
