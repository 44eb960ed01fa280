"""The arena's statistics: per-pair results, Elo ratings, and the running tally.

- :class:`PairResult`: agent A's results against agent B (W/D/L, score as first and
  second player, mean length, decision latency mean and 95th percentile, and how the
  games ended: A's W/D/L by end reason);
  :class:`TournamentResult`: every pair (both orders), Elo ratings and each agent's
  latency.
- :func:`summarize` computes them from a list of games at once (exact percentiles);
  :class:`Tally` builds the same summary one game at a time, in memory that does not grow
  with the number of games (its p95 within 0.1 %): what a match or tournament uses.
- :func:`fit_elo`: Elo ratings by maximum likelihood, with 95 % intervals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import attrs
import numpy as np
import numpy.typing as npt

from jungle_agents.arena._latency import LatencySketch
from jungle_agents.arena._records import GameResult
from jungle_core import Reason, Rules

__all__ = ["EloRating", "PairResult", "Tally", "TournamentResult", "fit_elo", "summarize"]


def _p95(values: Sequence[float]) -> float:
    return float(np.percentile(values, 95)) if len(values) else math.nan


_REASON_ORDER = {name: i for i, name in enumerate([r.value for r in Reason] + ["unfinished"])}

EndCounts = tuple[tuple[str, int, int, int], ...]
"""Per end reason, ``(reason, A's wins, draws, A's losses)``: see :attr:`PairResult.ends`."""


def _count_end(counts: dict[str, list[int]], game: GameResult) -> None:
    """Count one game under its end reason, in A's wins-draws-losses."""
    counts.setdefault(game.record.reason, [0, 0, 0])[game.column_a()] += 1


def _wdl(counts: dict[str, list[int]]) -> tuple[int, int, int]:
    """A's wins, draws and losses over every end reason."""
    return (
        sum(c[0] for c in counts.values()),
        sum(c[1] for c in counts.values()),
        sum(c[2] for c in counts.values()),
    )


def _ends(counts: dict[str, list[int]]) -> EndCounts:
    """The counts as :attr:`PairResult.ends`: reasons in :class:`jungle_core.Reason`'s
    order, then ``"unfinished"``, then any other by name."""
    order = sorted(counts, key=lambda r: (_REASON_ORDER.get(r, len(_REASON_ORDER)), r))
    return tuple((r, counts[r][0], counts[r][1], counts[r][2]) for r in order)


@attrs.frozen
class PairResult:
    """Agent A's results against agent B.

    - ``wins``, ``draws``, ``losses``: A's, over ``games``; ``score``: (wins + draws/2)/games.
    - ``score_first`` / ``score_second``: A's score in the games A moved first / second.
    - ``mean_plies``: mean game length in plies.
    - ``latency_a`` / ``latency_b``: (mean, 95th percentile) decision seconds of A / B
      (the percentile exact from :func:`summarize`, within 0.1 % from a :class:`Tally`,
      as :func:`round_robin` and :func:`play_match` give it).
    - ``ends``: how the games ended, ``(reason, A's wins, draws, A's losses)`` for each
      end reason met (a :class:`jungle_core.Reason` value, or ``"unfinished"`` for a
      game stopped at the arena's ``max_plies``), in ``Reason``'s order: where an agent's
      draws come from (the no-removal limit, or the last pieces removed together).

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena._records import GameRecord
    >>> games = [GameResult(("a", "b"), i, GameRecord(DARK, ("a", "b") if i % 2 == 0
    ...     else ("b", "a"), i, (), (), (), w, r)) for i, (w, r) in enumerate([
    ...     (0, "elimination"), (None, "no_removal_limit"), (None, "elimination")])]
    >>> summarize(games).pairs[("a", "b")].ends
    (('elimination', 1, 1, 0), ('no_removal_limit', 0, 1, 0))
    """

    a: str
    b: str
    games: int
    wins: int
    draws: int
    losses: int
    score_first: float
    score_second: float
    mean_plies: float
    latency_a: tuple[float, float]
    latency_b: tuple[float, float]
    games_first: int = 0
    games_second: int = 0
    ends: EndCounts = ()

    @property
    def score(self) -> float:
        """A's score: (wins + draws / 2) / games."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else math.nan

    def flipped(self) -> PairResult:
        """The same results from B's side."""
        return PairResult(
            self.b,
            self.a,
            self.games,
            self.losses,
            self.draws,
            self.wins,
            1.0 - self.score_second if self.games_second else math.nan,
            1.0 - self.score_first if self.games_first else math.nan,
            self.mean_plies,
            self.latency_b,
            self.latency_a,
            self.games_second,
            self.games_first,
            tuple((reason, lost, d, w) for reason, w, d, lost in self.ends),
        )


def _pair_result(a: str, b: str, games: Sequence[GameResult]) -> PairResult:
    first: list[float] = []
    second: list[float] = []
    times_a: list[float] = []
    times_b: list[float] = []
    plies = []
    ends: dict[str, list[int]] = {}
    for g in games:
        s = g.score_a()
        _count_end(ends, g)
        (first if g.a_first else second).append(s)
        side_a = 0 if g.a_first else 1
        times_a.extend(g.record.decision_times(side_a))  # a random opening's plies aside
        times_b.extend(g.record.decision_times(1 - side_a))
        plies.append(g.record.plies)
    wins, draws, losses = _wdl(ends)
    return PairResult(
        a,
        b,
        len(games),
        wins,
        draws,
        losses,
        float(np.mean(first)) if first else math.nan,
        float(np.mean(second)) if second else math.nan,
        float(np.mean(plies)) if plies else math.nan,
        (float(np.mean(times_a)) if times_a else math.nan, _p95(times_a)),
        (float(np.mean(times_b)) if times_b else math.nan, _p95(times_b)),
        len(first),
        len(second),
        _ends(ends),
    )


@attrs.frozen
class EloRating:
    """An Elo rating with its 95 % confidence interval half-width (``rating ± ci``)."""

    rating: float
    ci: float


@attrs.frozen
class TournamentResult:
    """Results of a round robin: per pair (both orders) and Elo ratings.

    ``pairs[(a, b)]`` is a :class:`PairResult` for every ordered pair that met;
    ``latency[spec]`` is an agent's (mean, p95) decision seconds over all its games.
    ``games``: the games, when they were kept (:func:`summarize`; :func:`round_robin`
    unless ``keep_games=False``), else ``()``; ``rules``: the games' rule set (None
    without games).
    """

    specs: tuple[str, ...]
    pairs: dict[tuple[str, str], PairResult]
    ratings: dict[str, EloRating]
    latency: dict[str, tuple[float, float]]
    games: tuple[GameResult, ...]
    rules: Rules | None = None


def summarize(games: Iterable[GameResult], specs: Sequence[str] | None = None) -> TournamentResult:
    """Per-pair results and Elo ratings of a set of games, computed from all of them at once
    (every decision time is held: the latency percentiles are exact). :class:`Tally` gives
    the same summary one game at a time in bounded memory.

    >>> summarize([], ["a", "b"]).pairs
    {}
    """
    games = list(games)
    if specs is None:
        seen: dict[str, None] = {}
        for g in games:
            seen.setdefault(g.pair[0])
            seen.setdefault(g.pair[1])
        specs = list(seen)
    by_pair: dict[tuple[str, str], list[GameResult]] = {}
    for g in games:
        by_pair.setdefault(g.pair, []).append(g)
    pairs: dict[tuple[str, str], PairResult] = {}
    for (a, b), gs in by_pair.items():
        result = _pair_result(a, b, gs)
        pairs[(a, b)] = result
        pairs[(b, a)] = result.flipped()
    times: dict[str, list[float]] = {s: [] for s in specs}
    for g in games:
        for player, spec in enumerate(g.record.players):
            times.setdefault(spec, []).extend(g.record.decision_times(player))
    latency = {s: (float(np.mean(t)) if t else math.nan, _p95(t)) for s, t in times.items()}
    scores = [(g.record.players[0], g.record.players[1], g.record.score(0)) for g in games]
    ratings = fit_elo(scores, list(specs)) if games else {}
    rules = games[0].record.rules if games else None
    return TournamentResult(tuple(specs), pairs, ratings, latency, tuple(games), rules=rules)


class _PairTally:
    """The running totals of one pair (A, B): counts and sums (A's wins, draws and losses
    per end reason), and A's and B's times."""

    __slots__ = (
        "ends",
        "first_games",
        "first_score",
        "games",
        "plies",
        "second_score",
        "times_a",
        "times_b",
    )

    def __init__(self) -> None:
        self.games = self.plies = 0
        self.first_games = 0
        self.first_score = self.second_score = 0.0
        self.times_a = LatencySketch()
        self.times_b = LatencySketch()
        self.ends: dict[str, list[int]] = {}

    def add(self, game: GameResult) -> None:
        s = game.score_a()
        self.games += 1
        _count_end(self.ends, game)
        if game.a_first:
            self.first_games += 1
            self.first_score += s
        else:
            self.second_score += s
        side_a = 0 if game.a_first else 1
        self.times_a.add(game.record.decision_times(side_a))  # a random opening's aside
        self.times_b.add(game.record.decision_times(1 - side_a))
        self.plies += game.record.plies

    def result(self, a: str, b: str) -> PairResult:
        second_games = self.games - self.first_games
        return PairResult(
            a,
            b,
            self.games,
            *_wdl(self.ends),
            self.first_score / self.first_games if self.first_games else math.nan,
            self.second_score / second_games if second_games else math.nan,
            self.plies / self.games if self.games else math.nan,
            (self.times_a.mean(), self.times_a.quantile(0.95)),
            (self.times_b.mean(), self.times_b.quantile(0.95)),
            self.first_games,
            second_games,
            _ends(self.ends),
        )


class Tally:
    """A tournament's summary built one game at a time, in memory that does not grow with
    the number of games: what :func:`round_robin` and :func:`play_match` use, so that a run
    of millions of games need not keep them.

    Per pair it keeps counts and sums (W/D/L, scores as first and second player, plies)
    and a :class:`jungle_agents.arena._latency.LatencySketch` of each side's decision times.
    :meth:`result` equals :func:`summarize` of the same games, except that each latency
    p95 is within 0.1 % of the exact one (``_latency.RELATIVE_ERROR``) and a mean may
    differ in its last bits (the sums are added in another order). An agent's overall
    latency merges its pairs' sketches; Elo is fitted to the per-pair scores, which are the
    same counts :func:`fit_elo` builds from the games.

    Memory: a few hundred bytes a pair plus the sketches' bins (at most one per 0.2 %
    step of decision time: about 7,000 from 1 µs to 1 s, a few kB each in practice).

    >>> from jungle_core import DARK
    >>> from jungle_agents import make_agent
    >>> from jungle_agents.arena import play_game
    >>> tally = Tally(["random", "greedy"])
    >>> for i in range(2):
    ...     first, second = ("random", "greedy") if i % 2 == 0 else ("greedy", "random")
    ...     record = play_game(DARK, make_agent(first, DARK), make_agent(second, DARK), i)
    ...     tally.add(GameResult(("random", "greedy"), i, record))
    >>> tally.games, tally.result().pairs[("random", "greedy")].games
    (2, 2)
    """

    def __init__(self, specs: Sequence[str] | None = None) -> None:
        self._specs = None if specs is None else list(specs)
        self._names: dict[str, None] = dict.fromkeys(specs or ())
        self._pairs: dict[tuple[str, str], _PairTally] = {}
        self.games = 0
        """The number of games added."""
        self.rules: Rules | None = None
        """The rules of the first game added."""

    def add(self, game: GameResult) -> None:
        """Count one game."""
        pair = self._pairs.get(game.pair)
        if pair is None:
            pair = self._pairs[game.pair] = _PairTally()
            self._names.setdefault(game.pair[0])
            self._names.setdefault(game.pair[1])
        pair.add(game)
        if self.rules is None:
            self.rules = game.record.rules
        self.games += 1

    def result(self, games: Sequence[GameResult] = ()) -> TournamentResult:
        """The summary of the games added so far; ``games`` become ``result.games`` (the
        tally does not keep them: pass them when you kept them yourself)."""
        specs = self._specs if self._specs is not None else list(self._names)
        names = list(self._names)
        order = {name: i for i, name in enumerate(names)}
        pairs: dict[tuple[str, str], PairResult] = {}
        for a, b in sorted(self._pairs, key=lambda p: (order[p[0]], order[p[1]])):
            result = self._pairs[(a, b)].result(a, b)
            pairs[(a, b)] = result
            pairs[(b, a)] = result.flipped()
        sketches: dict[str, list[LatencySketch]] = {name: [] for name in names}
        for (a, b), pair in self._pairs.items():
            sketches[a].append(pair.times_a)
            sketches[b].append(pair.times_b)
        latency: dict[str, tuple[float, float]] = {}
        for name in names:
            merged = LatencySketch.merged(sketches[name])
            latency[name] = (merged.mean(), merged.quantile(0.95))
        k = len(names)
        n = np.zeros((k, k))
        s = np.zeros((k, k))
        for (a, b), pair in self._pairs.items():
            i, j = order[a], order[b]
            n[i, j] += pair.games
            n[j, i] += pair.games
            wins, draws, losses = _wdl(pair.ends)
            s[i, j] += wins + 0.5 * draws
            s[j, i] += losses + 0.5 * draws
        ratings = _fit_elo(names, n, s, 2000.0) if self.games else {}
        return TournamentResult(
            tuple(specs), pairs, ratings, latency, tuple(games), rules=self.rules
        )


def fit_elo(
    results: Iterable[tuple[str, str, float]],
    players: Sequence[str] | None = None,
    *,
    prior_sd: float = 2000.0,
) -> dict[str, EloRating]:
    """Elo ratings fitted by maximum likelihood to game scores, with 95 % intervals.

    ``results`` are ``(player, opponent, player's score)`` triples (1, 0.5 or 0; a draw
    counts as half a win in the logistic model ``P(win) = 1 / (1 + 10 ** (-diff / 400))``).
    Ratings have mean 0. A very weak Gaussian prior (``prior_sd`` Elo) keeps ratings finite
    when an agent wins or loses every game; it moves ordinary ratings by well under one
    Elo point. Intervals come from the inverse Hessian of the log likelihood, centred.

    >>> r = fit_elo([("a", "b", 1.0)] * 3 + [("a", "b", 0.0)])
    >>> round(r["a"].rating - r["b"].rating)   # 3:1 means 10 ** (d / 400) = 3, d = 190.8
    190
    """
    results = list(results)
    names: list[str] = list(players) if players is not None else []
    for a, b, _ in results:
        for name in (a, b):
            if name not in names:
                names.append(name)
    k = len(names)
    index = {name: i for i, name in enumerate(names)}
    n = np.zeros((k, k))
    s = np.zeros((k, k))
    for a, b, score in results:
        i, j = index[a], index[b]
        n[i, j] += 1
        n[j, i] += 1
        s[i, j] += score
        s[j, i] += 1.0 - score
    return _fit_elo(names, n, s, prior_sd)


def _fit_elo(
    names: Sequence[str],
    n: npt.NDArray[np.float64],
    s: npt.NDArray[np.float64],
    prior_sd: float,
) -> dict[str, EloRating]:
    """:func:`fit_elo` of the game counts ``n: float64[k, k]`` (symmetric) and the scores
    ``s: float64[k, k]`` (``s[i, j]``: the points ``names[i]`` took from ``names[j]``)."""
    k = len(names)
    c = math.log(10) / 400.0
    r = np.zeros(k)
    prior = 1.0 / prior_sd**2
    hess = np.eye(k)
    for _ in range(100):
        diff = r[:, None] - r[None, :]
        p = 1.0 / (1.0 + np.exp(-c * diff))
        grad = c * (s - n * p).sum(axis=1) - prior * r
        w = c * c * n * p * (1.0 - p)
        hess = -np.diag(w.sum(axis=1)) + w - prior * np.eye(k)
        step = np.linalg.solve(hess, grad)
        r = r - step
        if np.max(np.abs(step)) < 1e-9:
            break
    r -= r.mean()
    centre = np.eye(k) - np.ones((k, k)) / k
    cov = centre @ np.linalg.inv(-hess) @ centre
    ci = 1.96 * np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return {name: EloRating(float(r[i]), float(ci[i])) for i, name in enumerate(names)}
