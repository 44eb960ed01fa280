"""Two runs of one agent pairing compared: is agent X's score above agent Y's?

A screen of a new setting is a run of it against the opponent its baseline met; the
question is whether its score differs. :func:`compare_runs` pairs the games of the two
runs that were dealt the same way, the same game seed with the same seat for A (runs
played with ``deals="duplicate"`` and one seed share every game's seed, and the game
then hides the same pieces under the same squares: :data:`jungle_agents.arena._game_loop.DEALS`),
and takes the mean of the differences of A's scores over those pairs with its 95 %
interval. Runs that share no seed (independent deals: each game's seed depends on the
pair's names) are compared unpaired, by the difference of their means.

For paired runs it also says how far the two games of each deal went alike: a setting
that acts only once every piece is face up (a ``*_face_down`` knob left at the
baseline's) plays the baseline's games move for move through the last reveal, so the
deals whose results differ are the setting's own doing, and it lists them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from jungle_agents.arena._records import GameRecord, GameResult
from jungle_core import JungleError

__all__ = ["RunComparison", "compare_runs", "format_comparison"]

_Z95 = 1.959963984540054


@attrs.frozen
class RunComparison:
    """Agent A of run X against agent A of run Y, over the games compared.

    - ``x``, ``y``: the two runs' pairs ``(A, B)``;
    - ``paired``: True when the games compared share their deals one to one (the same
      game seed and A on the same seat); False when the runs share none, and every game
      of each is compared by the mean;
    - ``wdl_x``, ``wdl_y``: A's wins, draws and losses over the games compared;
    - ``difference``: A's mean score in X less its mean in Y; ``interval``: the 95 %
      interval's half-width (1.96 standard errors: of the paired differences, or of
      the two means' difference); ``unpaired_interval``: the half-width the same games
      would give compared unpaired (what the pairing saves; ``interval`` itself when
      the runs are unpaired);
    - ``same_through_chance``, ``same_to_end``: of the paired deals, those whose two games
      played the same actions and chance outcomes through the last chance outcome of
      either (the last reveal, in DARK), and to the end (0 when unpaired);
    - ``changed``: the paired deals where A's result differs, as ``(game index in X,
      A's score in X, A's score in Y)``, by index.

    >>> c = RunComparison(("n", "o"), ("d", "o"), True, (3, 1, 0), (2, 1, 1), 0.25, 0.3, 0.4)
    >>> c.games_x, c.score_x, c.score_y
    (4, 0.875, 0.625)
    """

    x: tuple[str, str]
    y: tuple[str, str]
    paired: bool
    wdl_x: tuple[int, int, int]
    wdl_y: tuple[int, int, int]
    difference: float
    interval: float
    unpaired_interval: float
    same_through_chance: int = 0
    same_to_end: int = 0
    changed: tuple[tuple[int, float, float], ...] = ()

    @property
    def games_x(self) -> int:
        """Games of X compared."""
        return sum(self.wdl_x)

    @property
    def games_y(self) -> int:
        """Games of Y compared."""
        return sum(self.wdl_y)

    @property
    def score_x(self) -> float:
        """A's score in X's games compared."""
        return (self.wdl_x[0] + 0.5 * self.wdl_x[1]) / self.games_x

    @property
    def score_y(self) -> float:
        """A's score in Y's games compared."""
        return (self.wdl_y[0] + 0.5 * self.wdl_y[1]) / self.games_y


def _one_pair(games: Sequence[GameResult], which: str) -> tuple[str, str]:
    pairs = {g.pair for g in games}
    if len(pairs) != 1:
        raise JungleError(
            f"run {which} must hold the games of one pair, not {len(pairs)}"
            + (f": {sorted(pairs)}" if pairs else "")
        )
    return pairs.pop()


def _wdl(scores: Sequence[float]) -> tuple[int, int, int]:
    return (
        sum(1 for s in scores if s == 1.0),
        sum(1 for s in scores if s == 0.5),
        sum(1 for s in scores if s == 0.0),
    )


def _alike(a: GameRecord, b: GameRecord) -> tuple[bool, bool]:
    """Whether two games played the same actions and chance outcomes through the last
    chance outcome of either (False when neither has one, unless they are the same
    game), and whether they are the same game to the end.

    >>> from jungle_core import DARK
    >>> def game(actions, outcomes):
    ...     return GameRecord(DARK, ("a", "b"), 0, actions, outcomes, (), None, "x")
    >>> _alike(game((1, 2, 3), (5, -1, -1)), game((1, 2, 4), (5, -1, -1)))
    (True, False)
    >>> _alike(game((1, 2, 3), (5, -1, 6)), game((1, 2, 4), (5, -1, -1)))
    (False, False)
    """
    plies_a = list(zip(a.actions, a.outcomes, strict=True))
    plies_b = list(zip(b.actions, b.outcomes, strict=True))
    if plies_a == plies_b:
        return True, True
    last = max(
        (i for record in (a, b) for i, outcome in enumerate(record.outcomes) if outcome >= 0),
        default=-1,
    )
    return last >= 0 and plies_a[: last + 1] == plies_b[: last + 1], False


def _mean_var(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else math.nan
    return mean, var


def compare_runs(x: Sequence[GameResult], y: Sequence[GameResult]) -> RunComparison:
    """Compare A's score in run ``x`` with A's score in run ``y`` (each the games of one
    pair, as :func:`jungle_agents.arena.load_games` reads them).

    Games are paired by their seed and A's seat; when at least one pair exists only
    paired games count, else every game counts and the comparison is unpaired.

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena._records import GameRecord
    >>> def games(a, results):   # A's result (winner 0: the first mover) in games 0, 1, ...
    ...     return [GameResult((a, "o"), i, GameRecord(DARK, (a, "o") if i % 2 == 0
    ...         else ("o", a), 100 + i, (), (), (), w, "elimination"))
    ...         for i, w in enumerate(results)]
    >>> c = compare_runs(games("new", [0, 0, 0, 1]), games("old", [0, None, 1, 1]))
    >>> c.paired, c.wdl_x, c.wdl_y, c.difference
    (True, (3, 0, 1), (2, 1, 1), 0.125)
    >>> c.changed   # (game, A's score in x, in y)
    ((1, 0.0, 0.5), (2, 1.0, 0.0))
    """
    pair_x, pair_y = _one_pair(x, "x"), _one_pair(y, "y")
    by_deal = {(g.record.seed, g.a_first): g for g in y}
    deals = [
        (g, by_deal[g.record.seed, g.a_first]) for g in x if (g.record.seed, g.a_first) in by_deal
    ]
    matched = [(g.score_a(), h.score_a()) for g, h in deals]
    alike = [_alike(g.record, h.record) for g, h in deals]
    changed = sorted(
        (g.index, a, b) for (g, _), (a, b) in zip(deals, matched, strict=True) if a != b
    )
    if matched:
        scores_x, scores_y = [a for a, _ in matched], [b for _, b in matched]
    else:
        scores_x, scores_y = [g.score_a() for g in x], [g.score_a() for g in y]
    mean_x, var_x = _mean_var(scores_x)
    mean_y, var_y = _mean_var(scores_y)
    unpaired = _Z95 * math.sqrt(var_x / len(scores_x) + var_y / len(scores_y))
    if matched:
        _, var = _mean_var([a - b for a, b in matched])
        interval = _Z95 * math.sqrt(var / len(matched))
    return RunComparison(
        pair_x,
        pair_y,
        bool(matched),
        _wdl(scores_x),
        _wdl(scores_y),
        mean_x - mean_y,
        interval if matched else unpaired,
        unpaired,
        sum(through for through, _ in alike),
        sum(whole for _, whole in alike),
        tuple(changed),
    )


def format_comparison(c: RunComparison, name_x: str = "x", name_y: str = "y") -> str:
    """The comparison as the ``jungle compare`` command prints it (``name_x`` and
    ``name_y``: what the runs are called, their files there).

    >>> print(format_comparison(RunComparison(("n", "o"), ("d", "o"), True, (3, 1, 0),
    ...     (2, 1, 1), 0.25, 0.3, 0.4, 3, 1, ((1, 1.0, 0.5), (2, 1.0, 0.0)))))
    x = x: n vs o
    y = y: d vs o
    paired on 4 deals (the same game seed, A on the same seat)
      x  3-1-0 = 0.875
      y  2-1-1 = 0.625
      x - y = +0.250 +- 0.300 (95 %; unpaired, the same games: +- 0.400)
      the same play through the last chance outcome on 3 of 4 deals (1 to the end)
      A's result differs on 2: better in x on 2 (games 1, 2), in y on 0
    """
    how = (
        f"paired on {c.games_x} deals (the same game seed, A on the same seat)"
        if c.paired
        else f"unpaired (no deal in common): {c.games_x} games against {c.games_y}"
    )
    better_x = [str(i) for i, sx, sy in c.changed if sx > sy]
    better_y = [str(i) for i, sx, sy in c.changed if sx < sy]
    paired_lines = (
        (
            f"  the same play through the last chance outcome on {c.same_through_chance} of "
            f"{c.games_x} deals ({c.same_to_end} to the end)",
            f"  A's result differs on {len(c.changed)}: better in x on {len(better_x)}"
            + (f" (games {', '.join(better_x)})" if better_x else "")
            + f", in y on {len(better_y)}"
            + (f" (games {', '.join(better_y)})" if better_y else ""),
        )
        if c.paired
        else ()
    )
    return "\n".join(
        (
            f"x = {name_x}: {c.x[0]} vs {c.x[1]}",
            f"y = {name_y}: {c.y[0]} vs {c.y[1]}",
            how,
            f"  x  {'-'.join(map(str, c.wdl_x))} = {c.score_x:.3f}",
            f"  y  {'-'.join(map(str, c.wdl_y))} = {c.score_y:.3f}",
            f"  x - y = {c.difference:+.3f} +- {c.interval:.3f} (95 %"
            + (f"; unpaired, the same games: +- {c.unpaired_interval:.3f})" if c.paired else ")"),
            *paired_lines,
        )
    )
