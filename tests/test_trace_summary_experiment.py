"""``experiments/trace_summary.py``: the device operations of a real profiler trace, summed
by name."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from tests._scripts import load_experiment


def test_a_traced_program_is_summed_by_operation(tmp_path: Path) -> None:
    script = load_experiment("trace_summary")
    program = jax.jit(lambda x: jnp.tanh(x @ x).sum())
    x = jnp.ones((256, 256))
    program(x).block_until_ready()  # compiled outside the trace
    with jax.profiler.trace(str(tmp_path), create_perfetto_trace=True):
        for _ in range(3):
            program(x).block_until_ready()
    text = script.summarize(script.newest_trace(str(tmp_path)), top=5)
    lines = text.splitlines()
    assert lines[0].startswith("trace ") and lines[0].endswith("perfetto_trace.json.gz")
    assert any(line.startswith("-- ") and " ms busy over " in line for line in lines)
    rows = [line for line in lines[1:] if not line.startswith("-- ")]
    assert 1 <= len(rows) <= 5
    # the largest is one of the program's operations, run once a call at least
    assert int(rows[0].split(" x ")[0].split()[-1]) >= 3, rows
    with pytest.raises(FileNotFoundError, match="no perfetto_trace"):
        script.newest_trace(str(tmp_path / "nothing"))
