"""Smoke test of ``benchmarks/alphabeta_speed.py``: positions from a games file, both
tables on a tiny budget."""

from __future__ import annotations

import pytest

from jungle_core import outcome
from tests._scripts import load_benchmark


def test_quick_run_prints_both_tables(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_benchmark("alphabeta_speed")
    states = bench.positions(bench.DEFAULT_GAMES, 4)
    assert len(states) == 4 and all(outcome(s) is None for s in states)
    bench.main(["--quick"])
    out = capsys.readouterr().out
    assert "without principal variation search" in out
    assert "minimax:time=0.02,depth=30,quiescence=1" in out
