"""Fixtures shared by the test modules under ``tests/``: the DQN trainer's tiny run,
compiled and trained once per module that asks for it (``tests/train/test_dqn_learning.py``,
``tests/train/test_dqn_runs.py``)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def tiny_train() -> Any:
    """``jungle_train.dqn.make_train`` of the tiny config (:data:`tests._dqn.TINY`)."""
    from jungle_train import dqn
    from tests._dqn import TINY

    return dqn.make_train(TINY)


@pytest.fixture(scope="module")
def tiny_run(tiny_train: Any) -> tuple[Any, dict[str, Any]]:
    """The tiny config trained from key 0: ``(runner state, metrics)``."""
    import jax

    runner, metrics = tiny_train(jax.random.key(0))
    return runner, metrics
