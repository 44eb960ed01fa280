"""Endgame conversion on DARK: how many of the endgames that games drew can an agent win?

Collects, from arena game files (JSON Lines, e.g. ``benchmarks/strength.py``'s results),
the final positions of the drawn games in which every piece is face up and one side has
more pieces than the other. Each position is played again from a reset no-removal count:
the agent under test takes the side with more pieces, the opponent (Greedy by default)
the other, to the end of the game. Prints, per agent, the endgames won, drawn and lost.

    .venv/bin/python benchmarks/endgames.py --games 'results/strength/*.jsonl' \\
        minimax:depth=2 minimax:depth=3 minimax:depth=3,reply=0

The game files must have been played (the arena's seeds make them reproducible); each
endgame's seed is its index, so every agent meets the same positions and chance draws.
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor

import attrs
import numpy as np

from jungle_agents import make_agent
from jungle_agents.arena import load_games, piece_counts, replay
from jungle_core import DARK, from_fen, outcome, step, to_fen


def drawn_endgames(paths: Iterable[str]) -> list[tuple[str, int]]:
    """``(position string, side ahead)`` of each drawn game's final position with every
    piece face up and unequal piece counts (:func:`jungle_agents.arena.piece_counts`),
    sorted and without repeats."""
    found: set[tuple[str, int]] = set()
    for path in paths:
        _, games = load_games(path)
        for game in games:
            if game.record.winner is not None or game.record.rules != DARK:
                continue
            last = replay(game.record)[-1]
            counts = piece_counts(last)
            if last.face_down_mask or counts[0] == counts[1]:
                continue
            found.add((to_fen(last), 0 if counts[0] > counts[1] else 1))
    return sorted(found)


def play_endgame(fen: str, side: int, spec: str, opponent: str, seed: int) -> float:
    """The score (1, 1/2, 0) of ``spec`` playing ``side`` of ``fen`` against
    ``opponent``, the no-removal count reset to 0.

    >>> play_endgame("8/8/8/8/8/8/Ew6 0 0 9 - -", 0, "minimax:depth=1", "greedy", 0)
    1.0
    """
    state = attrs.evolve(from_fen(fen, DARK), plies_since_removal=0)
    agents = {side: make_agent(spec, DARK), 1 - side: make_agent(opponent, DARK)}
    rng = np.random.default_rng(seed)
    while (result := outcome(state)) is None:
        state = step(state, agents[state.to_move].act(state, rng), rng)
    if result.winner is None:
        return 0.5
    return 1.0 if result.winner == side else 0.0


def _play(task: tuple[str, int, str, str, int]) -> float:
    return play_endgame(*task)


def conversion(
    spec: str, endgames: Sequence[tuple[str, int]], opponent: str, workers: int
) -> tuple[int, int, int]:
    """``(won, drawn, lost)`` of ``spec`` over ``endgames`` (seed = the endgame's index)."""
    tasks = [(fen, side, spec, opponent, i) for i, (fen, side) in enumerate(endgames)]
    if workers <= 1:
        scores = [_play(t) for t in tasks]
    else:
        with ProcessPoolExecutor(workers) as pool:
            scores = list(pool.map(_play, tasks, chunksize=4))
    return scores.count(1.0), scores.count(0.5), scores.count(0.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="+", help="agent specs to test")
    parser.add_argument("--games", default="results/strength/*.jsonl", help="glob of files")
    parser.add_argument("--opponent", default="greedy")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    paths = sorted(glob.glob(args.games))
    endgames = drawn_endgames(paths)
    print(f"{len(endgames)} endgames from the drawn games of {len(paths)} files")
    print(f"{'agent':<40}{'won':>6}{'drawn':>7}{'lost':>6}{'seconds':>9}")
    for spec in args.agents:
        start = time.perf_counter()
        won, drawn, lost = conversion(spec, endgames, args.opponent, args.workers)
        seconds = time.perf_counter() - start
        print(f"{spec:<40}{won:>6}{drawn:>7}{lost:>6}{seconds:>9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
