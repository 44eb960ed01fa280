"""Plain-text progress lines for matches, tournaments and training runs (no dependency).

Their time left comes from :class:`Eta`, which leaves the warm-up out of the pace: the
first game or chunk of a run carries JAX's compiling and the first set-up, often more
than the whole rest of a short run.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from jungle_agents.arena import GameResult

__all__ = ["Eta", "ProgressBar", "TrainProgress", "format_seconds"]


def format_seconds(seconds: float) -> str:
    """A short duration: ``42s``, ``3m07s``, ``2h05m``.

    >>> format_seconds(42.4), format_seconds(187), format_seconds(7500)
    ('42s', '3m07s', '2h05m')
    """
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Eta:
    """Seconds left of a job, from its pace since the first report.

    :meth:`start` marks the beginning; each :meth:`left` reports the work done at a time
    and answers the seconds left. The first report closes the warm-up (compiling, the
    first chunk's set-up), and the pace is measured from it on, so the warm-up never
    counts. At the first report there is no such pace yet: the time left is then unknown
    (NaN), or with ``guess_first`` estimated from the pace so far, warm-up included. A
    finished job has 0 seconds left.

    >>> eta = Eta()
    >>> eta.start(0.0, 0)
    >>> eta.left(60.0, 100, 1000)  # the first chunk: 55 s of it compiling
    nan
    >>> eta.left(65.0, 200, 1000)  # 100 steps in 5 s: 800 steps left take 40 s
    40.0
    """

    def __init__(self, *, guess_first: bool = False) -> None:
        self.guess_first = guess_first
        self._start = (0.0, 0)
        self._warm: tuple[float, int] | None = None

    def start(self, now: float, done: int = 0) -> None:
        """Begin at time ``now`` with ``done`` units already done (a resumed job)."""
        self._start = (now, done)
        self._warm = None

    def left(self, now: float, done: int, total: int) -> float:
        """The seconds left at time ``now`` with ``done`` of ``total`` units done."""
        if done >= total:
            return 0.0
        if self._warm is None:
            self._warm = (now, done)
            if not self.guess_first:
                return math.nan
            since, before = self._start
        else:
            since, before = self._warm
        if done <= before or now <= since:
            return math.nan
        return (total - done) * (now - since) / (done - before)


def _eta_text(seconds: float) -> str:
    return "-" if math.isnan(seconds) else format_seconds(seconds)


class ProgressBar:
    """Games done, the latest game's pair with A's wins-draws-losses so far (the form of
    the results table's "W-D-L (A)"), and the time left.

    On a terminal the line is redrawn in place; otherwise a line is printed at most every
    ``every`` seconds (and at the end), so logs stay short. The time left is the pace
    after the first game (:class:`Eta`; after the first game alone, the pace so far).

    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressBar(out, clock=iter(range(0, 100, 10)).__next__, tty=False, every=0)
    >>> bar.start(4, already=0)
    >>> from jungle_agents.arena import GameRecord, GameResult
    >>> from jungle_core import DARK
    >>> rec = GameRecord(DARK, ("a", "b"), 0, (), (), (), 0, "elimination")
    >>> bar(1, 4, GameResult(("a", "b"), 0, rec))
    >>> print(out.getvalue().strip())
    [#####...............]  1/4 games  a vs b W-D-L 1-0-0  ETA 30s
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        tty: bool | None = None,
        every: float = 10.0,
        width: int = 20,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.tty = self.stream.isatty() if tty is None else tty
        self.every = every
        self.width = width
        self.results: dict[tuple[str, str], list[int]] = {}
        self._eta = Eta(guess_first=True)
        self._last_print = -1e18
        self._line = ""

    def start(self, total: int, already: int = 0) -> None:
        """Begin timing; ``already`` games were played before (a resumed run)."""
        self._eta.start(self.clock(), already)
        self.total = total

    def add(self, game: GameResult) -> list[int]:
        """Count a game in its pair's W-D-L (of A); returns that pair's counts."""
        wdl = self.results.setdefault(game.pair, [0, 0, 0])
        wdl[game.column_a()] += 1
        return wdl

    def __call__(self, done: int, total: int, game: GameResult) -> None:
        """The arena's progress callback."""
        wdl = self.add(game)
        now = self.clock()
        eta = self._eta.left(now, done, total)
        filled = int(self.width * done / total) if total else self.width
        a, b = game.pair
        score = f"{a} vs {b} W-D-L {wdl[0]}-{wdl[1]}-{wdl[2]}"
        width = len(str(total))
        line = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {done:>{width}}/{total} games  "
            f"{score}  ETA {_eta_text(eta)}"
        )
        if self.tty:
            pad = " " * max(0, len(self._line) - len(line))
            self.stream.write("\r" + line + pad)
            if done == total:
                self.stream.write("\n")
            self.stream.flush()
        elif done == total or now - self._last_print >= self.every:
            self.stream.write(line + "\n")
            self.stream.flush()
            self._last_print = now
        self._line = line


class TrainProgress:
    """One line per chunk of a training run: steps, decisions per second, the latest
    training scores (``train_score/<opponent>``) and evaluation scores
    (``score/<opponent>``), and the time left, measured after the first chunk (which
    holds the compiling; :class:`Eta`). Redrawn in place on a terminal.

    >>> import io
    >>> out = io.StringIO()
    >>> bar = TrainProgress(out, clock=iter([0.0, 30.0, 35.0]).__next__, tty=False)
    >>> bar.start(0)
    >>> bar(250, 1000, {"decisions_per_s": 50.0, "train_score/random": 0.75})
    >>> bar(500, 1000, {"decisions_per_s": 50.0, "score/greedy": 0.5})
    >>> print(out.getvalue().strip())  # doctest: +NORMALIZE_WHITESPACE
    [#####...............] 250/1,000 steps  50 decisions/s  train: random 0.75  ETA -
    [##########..........] 500/1,000 steps  50 decisions/s  eval: greedy 0.50  ETA 10s
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        tty: bool | None = None,
        width: int = 20,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.tty = self.stream.isatty() if tty is None else tty
        self.width = width
        self.eval: dict[str, float] = {}
        """The latest evaluation score against each opponent."""
        self._eta = Eta()

    def start(self, already: int) -> None:
        """Begin timing; ``already`` steps were trained before (a resumed run)."""
        self._eta.start(self.clock(), already)

    def __call__(self, done: int, total: int, line: dict[str, Any]) -> None:
        """:func:`jungle_train.common._run.run_training`'s progress callback."""
        eta = self._eta.left(self.clock(), done, total)
        self.eval.update(
            {k[len("score/") :]: float(v) for k, v in line.items() if k.startswith("score/")}
        )
        filled = int(self.width * min(done, total) / total) if total else self.width
        train = "  ".join(
            f"{k[len('train_score/') :]} {float(v):.2f}"
            for k, v in line.items()
            if k.startswith("train_score/") and isinstance(v, int | float)
        )
        evals = "  ".join(f"{o} {s:.2f}" for o, s in self.eval.items())
        rate = line.get("decisions_per_s")
        text = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {done:,}/{total:,} steps  "
            + (f"{rate:,.0f} decisions/s" if isinstance(rate, int | float) else "")
            + (f"  train: {train}" if train else "")
            + (f"  eval: {evals}" if evals else "")
            + f"  ETA {_eta_text(eta)}"
        )
        self.stream.write(("\r" + text) if self.tty else text + "\n")
        if self.tty and done >= total:
            self.stream.write("\n")
        self.stream.flush()
