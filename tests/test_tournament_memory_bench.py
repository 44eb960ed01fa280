"""Smoke test of ``benchmarks/tournament_memory.py`` at a tiny size."""

from __future__ import annotations

import pytest

from tests._scripts import load_benchmark


def test_tournament_memory_reports_start_and_end(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_benchmark("tournament_memory")
    # random2 reaches forked workers only; with JAX loaded (as in the test run) the arena
    # spawns them, so the smoke test uses two built-in kinds
    argv = ["--games", "6", "--workers", "2", "--every", "0.01", "--agents", "random,greedy"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "6 games" in out and "first tenth" in out and "last tenth" in out
