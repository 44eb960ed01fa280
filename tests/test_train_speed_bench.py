"""``benchmarks/train_speed.py``'s round measurements on a tiny DQN config.

Its figures are not asserted (tests never assert on wall-clock time); this checks that
the three numbers it derives from one pair of timings agree with each other.
"""

from __future__ import annotations

import pytest

from jungle_train import dqn
from tests._scripts import load_benchmark

TINY = dqn.Config(
    total_steps=256,
    num_envs=8,
    rollout_length=2,
    updates_per_rollout=3,
    hidden=(16,),
    dropout=0.0,
    batch_size=8,
    buffer_size=64,
    min_buffer=16,
    opponents="random",
)


def test_updates_share_and_round_rate_agree() -> None:
    bench = load_benchmark("train_speed")
    ups, share, rate = bench.updates_per_second(TINY, 0.05)
    assert ups > 0 and 0 < share <= 1 and rate > 0
    # rate = decisions per round / round time; ups = updates / update time; share =
    # update time / round time: so rate = decisions · share · ups / updates
    want = TINY.steps_per_round * share * ups / TINY.updates_per_rollout
    assert rate == pytest.approx(want, rel=1e-9)
