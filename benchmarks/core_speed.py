"""Plies per second of random play through the pure-Python core, against OpenSpiel's banqi.

Each engine plays fresh games of uniformly random actions until its time is up, driven
from Python the same way: per ply, the legal actions, one step (sampling the chance
outcome of a reveal), and the game-over test. The reference is OpenSpiel's ``banqi``
(C++, a face-down flip game like DARK), measured in the same run when the ``bench``
extra (``open-spiel``) is installed.

``--python PYTHON`` (repeatable) also plays the pure core, this checkout's source, under
another interpreter such as PyPy (``--python pypy3.11``), in a child process kept for the
whole run and played between the other engines of each round, so that its ratio to banqi
is of the same run too. The child needs ``attrs`` and ``numpy``; it times its own games,
so its start-up is not counted; a JIT's warm-up falls in its first round, as the
in-process engines' own does, and the median over the rounds discounts it.

    python benchmarks/core_speed.py [--seconds 2] [--rounds 5] [--python PYTHON ...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
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


def interpreter_name() -> str:
    """The running interpreter, as a table names it: ``CPython 3.11.7``, ``PyPy 7.3.19``.

    >>> interpreter_name().split()[0] in ("CPython", "PyPy", "GraalVM")
    True
    """
    implementation = platform.python_implementation()
    pypy = getattr(sys, "pypy_version_info", None)
    if pypy is not None:
        return f"{implementation} {pypy.major}.{pypy.minor}.{pypy.micro}"
    return f"{implementation} {platform.python_version()}"


class Child:
    """The pure core played under another interpreter ``python`` (a command or a path): a
    child process that imports this checkout's ``jungle_core`` and is kept for the whole
    run, so that it warms up (a JIT compiles its loops) as the in-process engines do.

    Use as a context manager; :meth:`plies` raises :class:`RuntimeError` naming ``python``
    when the child cannot be started or fails (the last lines of its error output in the
    message).
    """

    def __init__(self, python: str) -> None:
        root = Path(__file__).resolve().parent.parent
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *([path] if path else [])])}
        self.python = python
        try:
            self._process = subprocess.Popen(
                [python, str(Path(__file__).resolve()), "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        except OSError as error:
            raise RuntimeError(f"--python {python}: cannot start it ({error})") from error

    def plies(self, rules: jc.Rules, seconds: float, seed: int = 0) -> tuple[float, str]:
        """:func:`jungle_plies` in the child: (plies/s, the child's :func:`interpreter_name`)."""
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            request = {"rules": rules.name, "seconds": seconds, "seed": seed}
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            record = json.loads(process.stdout.readline())
            return float(record["plies_per_second"]), str(record["interpreter"])
        except (OSError, KeyError, TypeError, ValueError):
            process.kill()
            _, err = process.communicate()
            tail = err.strip().splitlines()[-2:]
            raise RuntimeError(
                f"--python {self.python} failed (exit {process.returncode}) playing"
                f" {rules.name}; it needs attrs and numpy: {' | '.join(tail) or 'no output'}"
            ) from None

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process.poll() is None:
            self._process.communicate(input="", timeout=60)


def serve() -> None:
    """The child's side of :class:`Child`: one JSON request a line on standard input
    (``{"rules": "DARK", "seconds": 2.0, "seed": 0}``), one JSON answer a line on standard
    output, until standard input closes."""
    for line in sys.stdin:
        request = json.loads(line)
        rules = jc.rules_by_name(request["rules"])
        rate, games = jungle_plies(rules, float(request["seconds"]), int(request["seed"]))
        answer = {"plies_per_second": rate, "games": games, "interpreter": interpreter_name()}
        print(json.dumps(answer), flush=True)


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


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print plies per second and the ratio to banqi (0), or say
    why an interpreter of ``--python`` could not play (2).

    The engines take turns, one short run each per round, and the ratio is the median of
    the rounds' ratios: a load that drifts during the run then affects both alike.
    """
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per run")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (median reported)")
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="PYTHON",
        help="also play the pure core under this interpreter (repeatable), e.g. pypy3.11",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random play")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve()
        return 0
    if not args.seconds > 0 or args.rounds < 1:
        parser.error("--seconds must be > 0 and --rounds >= 1")
    with contextlib.ExitStack() as stack:
        try:
            children = [stack.enter_context(Child(python)) for python in args.python]
            return _run(args.rounds, args.seconds, args.seed, children)
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 2


def _run(rounds: int, seconds: float, seed: int, children: list[Child]) -> int:
    """The rounds of :func:`main`, and its table."""
    try:
        import pyspiel  # noqa: F401

        have_banqi = True
    except ImportError:
        have_banqi = False
    rates: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    for _ in range(rounds):
        round_rates = {
            f"jungle_core {rules.name}": jungle_plies(rules, seconds, seed)[0]
            for rules in (jc.DARK, jc.CLASSIC)
        }
        for child in children:
            for rules in (jc.DARK, jc.CLASSIC):
                rate, name = child.plies(rules, seconds, seed)
                round_rates[f"jungle_core {rules.name}, {name}"] = rate
        if have_banqi:
            round_rates["OpenSpiel banqi (C++)"] = banqi_plies(seconds, seed)[0]
        for name, rate in round_rates.items():
            rates.setdefault(name, []).append(rate)
            if have_banqi:
                ratios.setdefault(name, []).append(rate / round_rates["OpenSpiel banqi (C++)"])

    width = max(26, *(len(name) + 2 for name in rates))
    print(f"random play, {rounds} rounds of {seconds:g} s per engine (medians)")
    print(f"{'engine':<{width}}{'plies/s':>12}{'ratio to banqi':>16}")
    for name, values in rates.items():
        ratio = f"{statistics.median(ratios[name]):.2f}" if have_banqi else "n/a"
        print(f"{name:<{width}}{statistics.median(values):>12,.0f}{ratio:>16}")
    if not have_banqi:
        print("(install the bench extra, pip install -e '.[bench]', to measure OpenSpiel banqi)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
