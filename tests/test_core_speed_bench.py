"""``benchmarks/core_speed.py``: random play timed, and ``--python`` for another interpreter.

Rates are not asserted (they belong to the machine); the tests check that a child
interpreter plays the pure core and names itself, that its rows join the table of the
same run, and that an interpreter that cannot play is named with the reason.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

import jungle_core as jc
from tests._scripts import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("core_speed")


def test_a_child_plays_the_pure_core_and_names_its_interpreter(bench: ModuleType) -> None:
    with bench.Child(sys.executable) as child:
        for rules in (jc.DARK, jc.CLASSIC):
            rate, name = child.plies(rules, 0.05, seed=1)
            assert rate > 0
            assert name == bench.interpreter_name()
    assert re.fullmatch(r"(CPython|PyPy|GraalVM) \d+\.\d+\.\d+\S*", bench.interpreter_name())


def test_the_childs_rows_join_the_same_runs_table(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--rounds", "2", "--seconds", "0.05", "--python", sys.executable]
    assert bench.main(argv) == 0
    rows = {line.rsplit(None, 2)[0] for line in capsys.readouterr().out.splitlines()[2:]}
    name = bench.interpreter_name()
    for rules in ("DARK", "CLASSIC"):
        assert f"jungle_core {rules}" in rows
        assert f"jungle_core {rules}, {name}" in rows


def test_an_interpreter_that_cannot_play_is_named_with_its_error(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "python-without-numpy"
    broken.write_text(
        "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'numpy'\" >&2\nexit 1\n"
    )
    broken.chmod(0o755)
    assert bench.main(["--rounds", "1", "--seconds", "0.01", "--python", str(broken)]) == 2
    err = capsys.readouterr().err
    assert f"--python {broken} failed (exit 1) playing DARK" in err
    assert "No module named 'numpy'" in err

    missing = tmp_path / "no-such-python"
    assert bench.main(["--rounds", "1", "--seconds", "0.01", "--python", str(missing)]) == 2
    assert f"--python {missing}: cannot start it" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--seconds", "0"], ["--rounds", "0"]])
def test_bad_arguments_are_refused(
    bench: ModuleType, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        bench.main(argv)
    assert refused.value.code == 2
    assert "--seconds must be > 0 and --rounds >= 1" in capsys.readouterr().err
