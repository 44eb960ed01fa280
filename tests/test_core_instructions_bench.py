"""``benchmarks/core_instructions.py``: instructions a ply under callgrind.

The count itself is not asserted beyond a wide band (it belongs to the interpreter and
the machine); the tests check that the children play exactly ``core_speed.py``'s games,
that a ply's count is the difference of two runs, and that a real run under valgrind
prints one (skipped, saying so, where valgrind is missing).
"""

from __future__ import annotations

import random
import shutil
from types import ModuleType

import numpy as np
import pytest

import jungle_core as jc
from tests._scripts import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("core_instructions")


def test_a_child_plays_core_speeds_games(bench: ModuleType) -> None:
    speed = load_benchmark("core_speed")
    pick, rng = random.Random(3), np.random.default_rng(3)
    expected = sum(speed.jungle_game(jc.DARK, i, pick, rng) for i in range(4))
    assert bench.play("dark", 4, seed=3) == expected
    # and a seed is a seed: another gives other games
    assert bench.play("dark", 4, seed=4) != expected


def test_a_ply_is_the_difference_of_two_runs(bench: ModuleType) -> None:
    small = bench.Run("classic", 2, 500, 7_000_000)
    large = bench.Run("classic", 6, 1_500, 9_500_000)
    assert bench.per_ply(small, large) == 2_500.0
    with pytest.raises(ValueError, match=r"classic \(2 games\) played no more plies \(500\)"):
        bench.per_ply(large, small)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--games", "40"], "two counts"),
        (["--games", "9,3"], "0 <= small < large"),
        (["--rules", "dark,chess"], "not chess"),
        (["--child", "go", "1"], "engine must be one of"),
    ],
)
def test_bad_arguments_are_refused(
    bench: ModuleType, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        bench.main(argv)
    assert refused.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_run_under_callgrind_prints_a_count(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--rules", "dark", "--games", "0,1", "--no-banqi"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("jungle_core DARK"))
    plies, instructions = (int(x.replace(",", "")) for x in row.split()[2:4])
    assert plies == bench.play("dark", 1)
    # a ply of the pure core is thousands of instructions, not a handful nor millions
    assert 5_000 < instructions < 500_000, row
