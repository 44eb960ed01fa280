"""``benchmarks/train_speed.py``'s round measurements on a tiny DQN config.

Its figures are not asserted (tests never assert on wall-clock time); this checks that
the three numbers it derives from one pair of timings agree with each other.
"""

from __future__ import annotations

import pytest

from tests._dqn import LIGHT
from tests._scripts import load_benchmark


def test_updates_share_and_round_rate_agree() -> None:
    bench = load_benchmark("train_speed")
    ups, share, rate = bench.updates_per_second(LIGHT, 0.05)
    assert ups > 0 and 0 < share <= 1 and rate > 0
    # rate = decisions per round / round time; ups = updates / update time; share =
    # update time / round time: so rate = decisions · share · ups / updates
    want = LIGHT.steps_per_round * share * ups / LIGHT.updates_per_rollout
    assert rate == pytest.approx(want, rel=1e-9)
