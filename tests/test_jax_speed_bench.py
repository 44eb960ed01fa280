"""Smoke test of ``benchmarks/jax_speed.py`` with a tiny budget, and its random sampler.

The benchmark's numbers are not asserted (tests never assert on wall-clock time); this
checks that the script runs end to end and that the ``hash`` sampler it uses by default
picks legal actions, each about equally often.
"""

from __future__ import annotations

from types import ModuleType

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tests._scripts import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("jax_speed")


def test_the_benchmark_runs_with_a_tiny_budget(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--batch-sizes", "8", "--steps", "3", "--repeats", "1"]
    argv += ["--pure-seconds", "0.05", "--no-pgx"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "plies/s" in out and "jungle DARK" in out and "steps/s" in out


@pytest.mark.parametrize("sampler", ["hash", "categorical"])
def test_the_samplers_pick_legal_actions_uniformly(bench: ModuleType, sampler: str) -> None:
    sample = bench.SAMPLERS[sampler]
    rng = np.random.default_rng(0)
    mask = np.zeros((4, 280), dtype=bool)
    for row, count in enumerate((1, 5, 16, 40)):
        mask[row, rng.choice(280, count, replace=False)] = True
    draws = 4000
    keys = jax.random.split(jax.random.key(1), draws)
    picks = np.asarray(jax.jit(jax.vmap(sample, in_axes=(0, None)))(keys, jnp.asarray(mask)))
    for row in range(4):
        legal = np.flatnonzero(mask[row])
        counts = np.bincount(picks[:, row], minlength=280)
        assert counts[~mask[row]].sum() == 0
        expected = draws / len(legal)
        # fixed keys: deterministic; a loose band around the uniform count
        assert np.all(np.abs(counts[legal] - expected) < 5 * np.sqrt(expected) + 1)
