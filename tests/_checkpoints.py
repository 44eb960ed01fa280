"""Shared check for the learners' run checkpoints: damage is refused with CheckpointError."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jungle_train.common._errors import CheckpointError


def assert_damage_refused(
    load: Callable[[str], Any], path: Path, marker: bytes, cut: float, offset: int
) -> None:
    """A copy of ``path`` cut to ``cut`` of its length, and one with a bit flipped
    ``offset`` bytes after ``marker`` (inside an array's data), both raise."""
    data = path.read_bytes()
    truncated = path.with_name("cut.npz")
    truncated.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(CheckpointError):
        load(str(truncated))
    i = data.index(marker) + offset
    flipped = path.with_name("bad.npz")
    flipped.write_bytes(data[:i] + bytes([data[i] ^ 1]) + data[i + 1 :])
    with pytest.raises(CheckpointError):
        load(str(flipped))
