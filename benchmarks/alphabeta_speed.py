"""Speed of the CLASSIC ``alphabeta`` search, and what each exact enhancement saves.

Positions: every 10th ply of the recorded CLASSIC games in ``--games`` (by default the
200 games of ``azero:simulations=8192`` against the CLASSIC minimax in ``docs/games/``),
the first ``--positions`` of them that are unfinished. Two tables:

1. The enhancements that leave a fixed-depth search's value unchanged (transposition
   table, principal variation search, killers, history): the
   ``alphabeta`` defaults to ``--depth`` plies, then with one of them switched off: total
   nodes and seconds, and each as a ratio to the defaults in the same run.
2. Against the reference, ``minimax:time=T,depth=30,quiescence=1`` (the ``minimax``
   agent's search through the core's immutable states): the median depth each completes
   in ``--time`` seconds a move, and the nodes per second.

    .venv/bin/python benchmarks/alphabeta_speed.py            # about 4 minutes
    .venv/bin/python benchmarks/alphabeta_speed.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from jungle_agents import AlphaBetaConfig, AlphaBetaSearch, SearchConfig, Searcher
from jungle_agents.arena import load_games, replay
from jungle_core import CLASSIC, State, outcome

DEFAULT_GAMES = (
    Path(__file__).parent.parent / "docs/games/azero-8192-classic-vs-minimax-0.25s.jsonl"
)

EXACT_LEVERS: dict[str, tuple[str, Any]] = {
    "transposition table": ("tt", False),
    "principal variation search": ("pvs", False),
    "killer moves": ("killers", False),
    "history heuristic": ("history", False),
}
"""Each exact enhancement: the field and the value that turns it off."""


def positions(path: Path, count: int, every: int = 10) -> list[State]:
    """The first ``count`` unfinished positions at every ``every``-th ply of the games."""
    _, games = load_games(path)
    out: list[State] = []
    for game in games:
        for state in replay(game.record)[every::every]:
            if outcome(state) is None:
                out.append(state)
                if len(out) == count:
                    return out
    return out


def fixed_depth(states: list[State], config: AlphaBetaConfig) -> tuple[int, float]:
    """Total nodes and seconds of searching every state to ``config.depth``."""
    search = AlphaBetaSearch(CLASSIC, config)
    nodes = 0
    start = time.perf_counter()
    for state in states:
        nodes += search.search(state).nodes
    return nodes, time.perf_counter() - start


def exact_table(states: list[State], depth: int) -> None:
    base = AlphaBetaConfig(time=0.0, depth=depth)
    print(f"\n{len(states)} positions, alphabeta to depth {depth} (time=0)")
    print(f"{'configuration':38} {'nodes':>10} {'seconds':>8} {'nodes x':>8} {'time x':>7}")
    ref_nodes, ref_seconds = fixed_depth(states, base)
    print(f"{'defaults (reference)':38} {ref_nodes:>10,} {ref_seconds:>8.2f} {1:>8.2f} {1:>7.2f}")
    for label, (field, off) in EXACT_LEVERS.items():
        if getattr(base, field) == off:
            continue  # already off in the defaults
        nodes, seconds = fixed_depth(states, attrs.evolve(base, **{field: off}))
        print(
            f"{'without ' + label:38} {nodes:>10,} {seconds:>8.2f} "
            f"{nodes / ref_nodes:>8.2f} {seconds / ref_seconds:>7.2f}"
        )


def timed_table(states: list[State], budget: float) -> None:
    print(f"\n{len(states)} positions, {budget:g} s a move (medians)")
    print(f"{'search':46} {'depth':>6} {'nodes/s':>9}")
    ab = AlphaBetaSearch(CLASSIC, AlphaBetaConfig(time=budget))
    rows = []
    for state in states:
        info = ab.search(state)
        rows.append((info.depth, info.nodes / info.seconds))
    print(
        f"{'alphabeta:time=' + format(budget, 'g'):46} {statistics.median(r[0] for r in rows):>6} "
        f"{statistics.median(r[1] for r in rows):>9,.0f}"
    )
    rows = []
    config = SearchConfig(time=budget, depth=30, quiescence=True)
    for state in states:
        ref = Searcher(CLASSIC, state.to_move, config).search(state, np.random.default_rng(0))
        rows.append((ref.depth, ref.nodes / ref.seconds))
    label = f"minimax:time={budget:g},depth=30,quiescence=1"
    print(
        f"{label:46} {statistics.median(r[0] for r in rows):>6} "
        f"{statistics.median(r[1] for r in rows):>9,.0f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=DEFAULT_GAMES)
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--time", type=float, default=0.25)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 positions, small")
    args = parser.parse_args(argv)
    if args.quick:
        args.positions, args.depth, args.time = 3, 2, 0.02
    states = positions(args.games, args.positions)
    exact_table(states, args.depth)
    timed_table(states, args.time)


if __name__ == "__main__":
    main()
