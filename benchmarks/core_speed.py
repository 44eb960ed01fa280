"""Plies per second of random play through the pure-Python core, against OpenSpiel's banqi.

Each engine plays fresh games of uniformly random actions until its time is up, driven
from Python the same way: per ply, the legal actions, one step (sampling the chance
outcome of a reveal), and the game-over test. The reference is OpenSpiel's ``banqi``
(C++, a face-down flip game like DARK), measured in the same run when the ``bench``
extra (``open-spiel``) is installed.

    python benchmarks/core_speed.py [--seconds 2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

import numpy as np

import jungle_core as jc


def jungle_game(rules: jc.Rules, index: int, pick: random.Random, rng: np.random.Generator) -> int:
    """One game of random play through ``legal_actions`` + ``step`` + ``outcome``, from
    ``new_game(rules, seed=index)``; its plies.

    >>> jungle_game(jc.CLASSIC, 0, random.Random(0), np.random.default_rng(0)) > 0
    True
    """
    state = jc.new_game(rules, seed=index)
    plies = 0
    while jc.outcome(state) is None:
        actions = jc.legal_actions(state)
        state = jc.step(state, actions[pick.randrange(len(actions))], rng)
        plies += 1
    return plies


def banqi_game(game: Any, pick: random.Random) -> int:
    """One game of OpenSpiel's banqi (``game``, a ``pyspiel.Game``) driven the same way,
    its chance nodes sampled in Python and not counted; its plies."""
    state = game.new_initial_state()
    plies = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            r, acc = pick.random(), 0.0
            for action, prob in outcomes:  # noqa: B007 (used after the loop)
                acc += prob
                if r < acc:
                    break
            state.apply_action(action)
            continue
        actions = state.legal_actions()
        state.apply_action(actions[pick.randrange(len(actions))])
        plies += 1
    return plies


def jungle_plies(rules: jc.Rules, seconds: float, seed: int = 0) -> tuple[float, int]:
    """Random play through ``legal_actions`` + ``step`` + ``outcome``: (plies/s, games)."""
    pick = random.Random(seed)
    rng = np.random.default_rng(seed)
    plies = games = 0
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        plies += jungle_game(rules, games, pick, rng)
        games += 1
    return plies / (time.perf_counter() - start), games


def banqi_plies(seconds: float, seed: int = 0) -> tuple[float, int]:
    """OpenSpiel's banqi driven the same way (chance nodes sampled in Python)."""
    import pyspiel

    game = pyspiel.load_game("banqi")
    pick = random.Random(seed)
    plies = games = 0
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        plies += banqi_game(game, pick)
        games += 1
    return plies / (time.perf_counter() - start), games


def main() -> None:
    """Run the benchmark and print plies per second and the ratio to banqi.

    The engines take turns, one short run each per round, and the ratio is the median of
    the rounds' ratios: a load that drifts during the run then affects both alike.
    """
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per run")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (median reported)")
    args = parser.parse_args()

    try:
        import pyspiel  # noqa: F401

        have_banqi = True
    except ImportError:
        have_banqi = False
    rates: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        round_rates = {
            f"jungle_core {rules.name}": jungle_plies(rules, args.seconds)[0]
            for rules in (jc.DARK, jc.CLASSIC)
        }
        if have_banqi:
            round_rates["OpenSpiel banqi (C++)"] = banqi_plies(args.seconds)[0]
        for name, rate in round_rates.items():
            rates.setdefault(name, []).append(rate)
            if have_banqi:
                ratios.setdefault(name, []).append(rate / round_rates["OpenSpiel banqi (C++)"])

    print(f"random play, {args.rounds} rounds of {args.seconds:g} s per engine (medians)")
    print(f"{'engine':<26}{'plies/s':>12}{'ratio to banqi':>16}")
    for name, values in rates.items():
        ratio = f"{statistics.median(ratios[name]):.2f}" if have_banqi else "n/a"
        print(f"{name:<26}{statistics.median(values):>12,.0f}{ratio:>16}")
    if not have_banqi:
        print("(install the bench extra, pip install -e '.[bench]', to measure OpenSpiel banqi)")


if __name__ == "__main__":
    main()
