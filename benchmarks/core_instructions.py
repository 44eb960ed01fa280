"""Instructions a ply of random play through the pure core and OpenSpiel's banqi: a count
that the machine's load does not move.

``core_speed.py`` times random play; on this project's 2-core machine its figures drift
by up to 1.7x within a day, so a change worth a few per cent cannot be told from noise
in one run (experiments/core-speed-log.md dropped several changes for that reason). This script
counts instead. Each engine plays the same random games as ``core_speed.py`` (its
``jungle_game`` / ``banqi_game``, the same seeds) in a child Python under valgrind's
callgrind, once with few games and once with more; the difference of the two
instruction totals over the difference of their plies is the cost of one ply, with the
interpreter's start-up, the imports and the tables' construction cancelled out.
``PYTHONHASHSEED=0`` in the children; the address-space layout still moves a process's
total a little, so two runs of the same code differ by a few hundred thousand
instructions in all: 0.6 % a ply over 2,504 plies (``--games 2,12``, measured twice);
the default's 50,000 plies spread that over twenty times as many (not measured twice).

Instructions are not seconds: a ratio of counts is not a ratio of speeds (C++ and the
interpreter retire instructions at different rates; ``core_speed.py`` measures the
speed). Use the counts to compare two versions of the core, old against new.

    python benchmarks/core_instructions.py [--games 40,240] [--rules dark,classic] [--no-banqi]

Needs ``valgrind`` on the PATH (Debian's package); banqi needs the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ENGINES = ("dark", "classic", "banqi")
"""What a child can play: the pure core's DARK and CLASSIC, and OpenSpiel's banqi."""


@dataclass(frozen=True)
class Run:
    """One child under callgrind: ``games`` games of ``engine``, their ``plies``, and the
    ``instructions`` the whole process executed."""

    engine: str
    games: int
    plies: int
    instructions: int


def play(engine: str, games: int, seed: int = 0) -> int:
    """The plies of ``games`` random games of ``engine`` (one of :data:`ENGINES`), played
    as ``core_speed.py`` plays them: game ``i`` from ``new_game(rules, seed=i)``, the
    actions picked by one ``random.Random(seed)``, the chance outcomes by one
    ``numpy.random.default_rng(seed)`` (banqi's by the same ``random.Random``)."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import core_speed  # a sibling script, not a package: imported here, in the child

    pick = random.Random(seed)
    if engine == "banqi":
        import pyspiel

        game = pyspiel.load_game("banqi")
        return sum(core_speed.banqi_game(game, pick) for _ in range(games))
    import numpy as np

    import jungle_core as jc

    rules = {"dark": jc.DARK, "classic": jc.CLASSIC}[engine]
    rng = np.random.default_rng(seed)
    return sum(core_speed.jungle_game(rules, i, pick, rng) for i in range(games))


def count(engine: str, games: int, valgrind: str, seed: int = 0) -> Run:
    """Run ``games`` games of ``engine`` in a child Python under callgrind.

    Raises :class:`RuntimeError` naming the engine when the child fails or prints no count.
    """
    command = [
        valgrind,
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        engine,
        str(games),
        "--seed",
        str(seed),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    plies = re.search(r"^plies (\d+)$", done.stdout, re.MULTILINE)
    total = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or plies is None or total is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{engine}, {games} games under callgrind failed: {' | '.join(tail)}")
    return Run(engine, games, int(plies.group(1)), int(total.group(1)))


def per_ply(small: Run, large: Run) -> float:
    """Instructions a ply: the two runs' difference of instructions over their
    difference of plies.

    >>> per_ply(Run("dark", 1, 100, 5_000_000), Run("dark", 3, 300, 13_000_000))
    40000.0
    """
    if large.plies <= small.plies:
        raise ValueError(
            f"the larger run of {large.engine} ({large.games} games) played no more plies"
            f" ({large.plies}) than the smaller ({small.games} games, {small.plies})"
        )
    return (large.instructions - small.instructions) / (large.plies - small.plies)


def main(argv: list[str] | None = None) -> int:
    """Count and print instructions a ply for each engine (0), or say why not (2)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", default="40,240", help="the two runs' games, small,large")
    parser.add_argument("--rules", default="dark,classic", help="pure-core rule sets")
    parser.add_argument("--no-banqi", action="store_true", help="skip OpenSpiel's banqi")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random play")
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "GAMES"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        engine, games = args.child
        if engine not in ENGINES:
            parser.error(f"engine must be one of {ENGINES}, not {engine!r}")
        print(f"plies {play(engine, int(games), args.seed)}")
        return 0
    try:
        small, large = (int(g) for g in args.games.split(","))
    except ValueError:
        parser.error(f"--games must be two counts, small,large: not {args.games!r}")
    if not 0 <= small < large:
        parser.error(f"--games must be small,large with 0 <= small < large: not {args.games!r}")
    engines = [r.strip().lower() for r in args.rules.split(",") if r.strip()]
    if bad := [e for e in engines if e not in ENGINES[:2]]:
        parser.error(f"--rules must name dark and/or classic, not {', '.join(bad)}")
    if not args.no_banqi:
        try:
            import pyspiel  # noqa: F401
        except ImportError:
            print("(OpenSpiel not installed: pip install -e '.[bench]' to count banqi too)")
        else:
            engines.append("banqi")
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("valgrind is not on the PATH (Debian: apt-get install valgrind)")
        return 2
    start = time.perf_counter()
    rates: dict[str, tuple[int, float]] = {}
    for engine in engines:
        runs = count(engine, small, valgrind, args.seed), count(engine, large, valgrind, args.seed)
        rates[engine] = (runs[1].plies - runs[0].plies, per_ply(*runs))
    print(f"random play, instructions a ply ({small} and {large} games under callgrind)")
    print(f"{'engine':<26}{'plies':>10}{'instructions':>14}{'x banqi':>9}")
    for engine, (plies, rate) in rates.items():
        name = "OpenSpiel banqi (C++)" if engine == "banqi" else f"jungle_core {engine.upper()}"
        ratio = f"{rate / rates['banqi'][1]:.2f}" if "banqi" in rates else "n/a"
        print(f"{name:<26}{plies:>10,}{rate:>14,.0f}{ratio:>9}")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
