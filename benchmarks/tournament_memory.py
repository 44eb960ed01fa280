"""Memory of a long tournament: resident memory at the start and the end of a run of
cheap agents with every worker busy (``make tournament-memory``).

A round robin of ``--agents`` (default ``random,random2``: one pair of uniformly random
agents, ``random2`` registered here as a second name of ``random``) plays ``--games``
games a pair on ``--workers`` processes (default: every core) into a games file, as
``jungle tournament`` does. A sampler thread reads, every ``--every`` seconds, the
resident set size (RSS, from ``/proc``) of the parent and of each worker; the script
prints the peak over the first and the last tenth of the games, per process, and the
parent's peak over the whole run (``ru_maxrss``). The run keeps no game in memory
(``round_robin(..., keep_games=False)``, as ``jungle tournament`` runs it: the tables are
tallied as the games finish), so steady memory means the end is no higher than the start.

    python benchmarks/tournament_memory.py [--games 10000] [--agents random,random2]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

from jungle_agents import RandomAgent, register_agent
from jungle_agents.arena import GameResult, round_robin
from jungle_core import rules_by_name

# a second name for the cheapest agent, so that one pair of random agents can meet; the
# workers know it because they are forked (this script imports no JAX, so the arena forks)
register_agent("random2", RandomAgent, {}, "random, under a second name", replace=True)


def rss_mib(pid: int) -> float:
    """The resident set size of a process in MiB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (the pool's workers)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000, help="games a pair")
    parser.add_argument("--agents", default="random,random2", help="comma-separated specs")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rules", default="dark")
    parser.add_argument("--every", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("--out", default=None, help="games file (default: a temporary one)")
    args = parser.parse_args(argv)
    specs = args.agents.split(",")
    total = args.games * len(specs) * (len(specs) - 1) // 2
    me = os.getpid()
    samples: list[tuple[int, float, dict[int, float]]] = []  # (games done, parent, workers)
    done = [0]
    plies = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            workers = {pid: rss_mib(pid) for pid in children(me)}
            samples.append((done[0], rss_mib(me), workers))
            stop.wait(args.every)

    def progress(n: int, of: int, game: GameResult) -> None:
        done[0] = n
        plies[0] += game.record.plies

    start = time.perf_counter()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with tempfile.TemporaryDirectory() as folder:
        out = args.out or str(Path(folder) / "games.jsonl")
        result = round_robin(
            rules_by_name(args.rules),
            specs,
            args.games,
            workers=args.workers,
            out=out,
            progress=progress,
            keep_games=False,
        )
        size = Path(out).stat().st_size
    stop.set()
    sampler.join()
    seconds = time.perf_counter() - start
    tenth = max(total // 10, 1)
    first = [s for s in samples if 0 < s[0] <= tenth]
    last = [s for s in samples if s[0] >= total - tenth]

    def peaks(group: list[tuple[int, float, dict[int, float]]]) -> tuple[float, float]:
        parent = max((s[1] for s in group), default=0.0)
        worker = max((max(s[2].values(), default=0.0) for s in group), default=0.0)
        return parent, worker

    (p0, w0), (p1, w1) = peaks(first), peaks(last)
    games = sum(pr.games for (a, b), pr in result.pairs.items() if a < b)  # each pair once
    print(
        f"{games:,} games ({plies[0]:,} plies) of {', '.join(specs)} on "
        f"{args.workers} workers in {seconds:.0f} s; games file {size / 2**20:.1f} MiB"
    )
    print(f"peak RSS, first tenth of the games: parent {p0:.0f} MiB, largest worker {w0:.0f} MiB")
    print(f"peak RSS, last tenth of the games:  parent {p1:.0f} MiB, largest worker {w1:.0f} MiB")
    print(
        f"parent peak over the run (ru_maxrss): "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; "
        f"games kept in memory: {len(result.games)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
