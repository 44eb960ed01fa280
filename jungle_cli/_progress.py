"""A plain-text progress bar for matches and tournaments (no dependency)."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import TextIO

from jungle_agents.arena import GameResult

__all__ = ["ProgressBar", "format_seconds"]


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


class ProgressBar:
    """Games done, the latest game's pair with A's wins-draws-losses so far (the form of
    the results table's "W-D-L (A)"), and the time left.

    On a terminal the line is redrawn in place; otherwise a line is printed at most every
    ``every`` seconds (and at the end), so logs stay short.

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
        self._start = 0.0
        self._already = 0
        self._last_print = -1e18
        self._line = ""

    def start(self, total: int, already: int = 0) -> None:
        """Begin timing; ``already`` games were played before (a resumed run)."""
        self._start = self.clock()
        self._already = already
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
        played = done - self._already
        elapsed = now - self._start
        eta = elapsed / played * (total - done) if played > 0 else float("nan")
        filled = int(self.width * done / total) if total else self.width
        a, b = game.pair
        score = f"{a} vs {b} W-D-L {wdl[0]}-{wdl[1]}-{wdl[2]}"
        eta_text = "-" if math.isnan(eta) else format_seconds(eta)
        width = len(str(total))
        line = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {done:>{width}}/{total} games  "
            f"{score}  ETA {eta_text}"
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
