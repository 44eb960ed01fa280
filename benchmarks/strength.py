"""Strength of the built-in agents on DARK (seeded matches, docs/arena.md), resumable.

Plays the pairs the project's targets name, 200 games a pair by default (half with each
agent first), appending every game to ``<out>/<pair>.jsonl``; rerun the same command to
resume an interrupted run. Prints W/D/L, scores, game length and decision latency (mean,
median, 95th percentile) per pair, and the Elo fit over all games.

    .venv/bin/python benchmarks/strength.py --out results/strength --games 200 --workers 2
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import time

import numpy as np

from jungle_agents.arena import GameResult, format_report, load_games, play_match, summarize
from jungle_core import rules_by_name

PAIRS = [
    ("greedy", "random"),
    ("minimax:depth=2", "greedy"),
    ("minimax:depth=3", "random"),
    ("minimax:depth=3", "greedy"),
    # ablations of the search's own defaults beyond the plain expectiminimax (each against
    # Greedy):
    # no answer to a threat at the horizon; and no contempt either (the previous default)
    ("minimax:depth=3,reply=0", "greedy"),
    ("minimax:depth=3,contempt=0,reply=0", "greedy"),
    ("minimax:depth=2,contempt=0", "greedy"),
    # the plain search: a draw is 0, only exactly equal moves are ties, chosen at random
    ("minimax:depth=3,margin=0,tiebreak=random,contempt=0,reply=0", "random"),
    ("minimax:depth=3,margin=0,tiebreak=random,contempt=0,reply=0", "greedy"),
]


# the learned agents' shipped checkpoints (jungle_train), against the reference agents
LEARNED_PAIRS = [
    ("dqn", "random"),
    ("dqn", "greedy"),
    ("dqn", "minimax:depth=3"),
    ("qlearn", "random"),
    ("approxq", "random"),
    ("qlearn", "greedy"),
    ("approxq", "greedy"),
]


def _file(out: str, a: str, b: str) -> str:
    return f"{out}/{re.sub(r'[^A-Za-z0-9]+', '_', a)}__vs__{re.sub(r'[^A-Za-z0-9]+', '_', b)}.jsonl"


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    # `kill` stops the run as Ctrl-C does: the games played so far stay in the files
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="results/strength")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="dark")
    parser.add_argument("--report-only", action="store_true", help="summarise the files only")
    parser.add_argument("--pairs", default=None, help="indices into the pair list, e.g. 0,3")
    parser.add_argument(
        "--learned", action="store_true", help="the learned agents' pairs instead of the built-in"
    )
    args = parser.parse_args(argv)
    rules = rules_by_name(args.rules)
    listed = LEARNED_PAIRS if args.learned else PAIRS
    pairs = listed if args.pairs is None else [listed[int(i)] for i in args.pairs.split(",")]
    for a, b in pairs:
        if args.report_only:
            continue
        start = time.time()

        def progress(
            done: int, total: int, game: GameResult, a: str = a, b: str = b, start: float = start
        ) -> None:
            print(f"  {a} vs {b}: {done}/{total} games ({time.time() - start:.0f} s)", flush=True)

        print(f"{a} vs {b}", flush=True)
        play_match(
            rules,
            a,
            b,
            args.games,
            args.seed,
            args.workers,
            out=_file(args.out, a, b),
            progress=progress,
        )
    games: list[GameResult] = []
    for a, b in pairs:
        _, found = load_games(_file(args.out, a, b))
        games.extend(g for g in found if g.index < args.games)
    specs: list[str] = []
    for a, b in pairs:
        specs += [s for s in (a, b) if s not in specs]
    result = summarize(games, specs)
    print(format_report(result))
    print("\nDecision time per agent and pair (seconds): median / mean / p95 / max, decisions")
    for a, b in pairs:
        for spec, other in ((a, b), (b, a)):
            times = [
                t
                for g in games
                if g.pair in ((a, b), (b, a))
                for side, s in enumerate(g.record.players)
                if s == spec
                for t in g.record.decision_times(side)
            ]
            if times:
                print(
                    f"  {spec} vs {other}: {np.median(times):.3f} / {np.mean(times):.3f} / "
                    f"{np.percentile(times, 95):.3f} / {max(times):.3f}, {len(times)}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
