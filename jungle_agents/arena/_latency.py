"""Decision times in bounded memory: a log-binned histogram with a known relative error.

A tournament's report gives each agent's mean and 95th-percentile decision time. An
exact percentile needs every time (a long run of cheap agents makes millions of
decisions), so the arena's running summary keeps a :class:`LatencySketch` instead: the
count, the sum, the minimum and the maximum exactly, and a count per bin of
logarithmically spaced width. Bin ``k`` holds the times in ``(γ^(k-1), γ^k]`` with
``γ = (1 + α) / (1 - α)`` and stands for ``2γ^k / (γ + 1)``, which is within ``α`` of
every time in it, relatively; zero times have a bin of their own. With ``α`` =
:data:`RELATIVE_ERROR` (0.1 %) that is one bin per 0.2 % step of time: at most 6,900 bins
from 1 µs to 1 s, 11,000 to an hour, whatever the number of times; cheap agents whose
times span 10 µs to 1 ms use about 2,300.

A quantile is read as ``numpy.percentile`` reads one (linear interpolation between the
two order statistics around rank ``(n - 1) q``), each order statistic replaced by its
bin's value clamped to ``[min, max]``; so the estimate is within ``α`` of the exact
percentile of the same times, relatively.

>>> sketch = LatencySketch()
>>> sketch.add([0.010, 0.020, 0.030, 0.040])
>>> sketch.count, round(sketch.mean(), 6)
(4, 0.025)
>>> import numpy as np
>>> exact = float(np.percentile([0.010, 0.020, 0.030, 0.040], 95))
>>> abs(sketch.quantile(0.95) - exact) <= RELATIVE_ERROR * exact
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["RELATIVE_ERROR", "LatencySketch"]

RELATIVE_ERROR = 1e-3
"""``α``: a quantile read from a :class:`LatencySketch` is within this fraction of the
exact one."""

_GAMMA = (1.0 + RELATIVE_ERROR) / (1.0 - RELATIVE_ERROR)
_LOG_GAMMA = math.log(_GAMMA)


class LatencySketch:
    """Times (seconds ≥ 0) summarised in memory bounded by their range, not their number.

    ``count``, ``total`` (their sum), ``low`` and ``high`` (min and max) are kept exactly;
    :meth:`mean` is ``total / count``; :meth:`quantile` is within :data:`RELATIVE_ERROR`
    of ``numpy.percentile(times, 100 q)``. Sketches of disjoint sets of times combine with
    :meth:`merge`.
    """

    __slots__ = ("_bins", "_zeros", "count", "high", "low", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.low = math.inf
        self.high = -math.inf
        self._zeros = 0
        self._bins: dict[int, int] = {}

    def __repr__(self) -> str:
        return (
            f"<LatencySketch {self.count} times, mean {self.mean():.6g} s, "
            f"{len(self._bins) + (self._zeros > 0)} bins>"
        )

    def add(self, times: Sequence[float]) -> None:
        """Count each of ``times`` (finite seconds ≥ 0, as a game record holds them)."""
        if not len(times):
            return
        t = np.asarray(times, dtype=np.float64)
        self.count += int(t.size)
        self.total += math.fsum(times)
        self.low = min(self.low, float(t.min()))
        self.high = max(self.high, float(t.max()))
        positive = t[t > 0.0]
        self._zeros += int(t.size - positive.size)
        keys, counts = np.unique(
            np.ceil(np.log(positive) / _LOG_GAMMA).astype(np.int64), return_counts=True
        )
        bins = self._bins
        for key, n in zip(keys.tolist(), counts.tolist(), strict=True):
            bins[key] = bins.get(key, 0) + n

    def merge(self, other: LatencySketch) -> None:
        """Count the times of ``other`` here as well."""
        self.count += other.count
        self.total += other.total
        self.low = min(self.low, other.low)
        self.high = max(self.high, other.high)
        self._zeros += other._zeros
        for key, n in other._bins.items():
            self._bins[key] = self._bins.get(key, 0) + n

    @classmethod
    def merged(cls, sketches: Iterable[LatencySketch]) -> LatencySketch:
        """A new sketch of the times of all of ``sketches``."""
        out = cls()
        for sketch in sketches:
            out.merge(sketch)
        return out

    def mean(self) -> float:
        """The mean time (NaN when there are none)."""
        return self.total / self.count if self.count else math.nan

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (0 ≤ q ≤ 1), read as ``numpy.percentile`` reads it, within
        :data:`RELATIVE_ERROR` of the exact value; NaN when there are no times."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"a quantile is in 0..1, not {q!r}")
        if not self.count:
            return math.nan
        rank = (self.count - 1) * q
        below = math.floor(rank)
        fraction = rank - below
        lo, hi = self._order_statistics(below, min(below + 1, self.count - 1))
        return lo + fraction * (hi - lo) if fraction else lo

    def _order_statistics(self, first: int, second: int) -> tuple[float, float]:
        """The estimated values of the times of ranks ``first`` ≤ ``second`` (0-based)."""
        found: list[float] = []
        seen = self._zeros
        ranks = [first, second]
        while ranks and ranks[0] < seen:
            found.append(0.0)
            ranks.pop(0)
        for key in sorted(self._bins):
            if not ranks:
                break
            seen += self._bins[key]
            value = 2.0 * _GAMMA**key / (_GAMMA + 1.0)
            while ranks and ranks[0] < seen:
                found.append(min(max(value, self.low), self.high))
                ranks.pop(0)
        return found[0], found[1]
