"""The metrics file of a training run: JSON Lines, one object per line, each line
flushed and fsynced, readable while the run goes on and after a kill.

Each line has at least ``step`` (environment steps so far) and ``time`` (seconds of
training wall time so far); training lines add the learner's metrics (``loss``,
``epsilon``, ``reward``, ``episode_length``, ``steps_per_second``, ...), evaluation lines
an ``eval`` object mapping each opponent to the learner's score.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     log = MetricsLog(os.path.join(d, "metrics.jsonl"))
...     log.append({"step": 10, "time": 1.0, "loss": 0.5})
...     log.append({"step": 20, "time": 2.0, "loss": 0.25})
...     log.close()
...     log.truncate_after(10)
...     [m["step"] for m in read_metrics(os.path.join(d, "metrics.jsonl"))]
[10]
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from jungle_train._checkpoint import atomic_write

__all__ = ["MetricsLog", "read_metrics"]


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def read_metrics(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete line of a metrics file (a line torn by a kill is skipped)."""
    p = Path(path)
    if not p.exists():
        return []
    out = []
    for line in p.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


class MetricsLog:
    """Append-only metrics file; see the module docstring."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():  # cut a line torn by a kill
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                atomic_write(self.path, data[: data.rfind(b"\n") + 1])
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def append(self, entry: dict[str, Any]) -> None:
        """Write one line (non-finite floats become null)."""
        self._file.write(json.dumps(_clean(entry), separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def truncate_after(self, step: int) -> None:
        """Drop the lines of steps after ``step`` (those a resumed run plays again)."""
        self._file.close()
        keep = [m for m in read_metrics(self.path) if int(m.get("step", 0)) <= step]
        atomic_write(
            self.path, "".join(json.dumps(m, separators=(",", ":")) + "\n" for m in keep).encode()
        )
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def close(self) -> None:
        """Close the file."""
        self._file.close()
