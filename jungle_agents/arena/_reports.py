"""The arena's reports: a tournament's tables as text or Markdown, CSV, and a heat map.

:func:`pair_rows` gives one row per pair (the CSV columns); :func:`format_report` the
tables (per pair, how each pair's games ended, the score matrix as first/second player,
Elo ratings);
:func:`write_csv`, :func:`write_markdown` and :func:`plot_heatmap` write them, each file
atomically (:func:`jungle_core.atomic_write`).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from jungle_agents.arena._stats import TournamentResult
from jungle_core import atomic_write, import_optional

__all__ = ["format_report", "pair_rows", "plot_heatmap", "write_csv", "write_markdown"]


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.0f}"


def _ms(x: float) -> str:
    return "-" if math.isnan(x) else f"{1000 * x:.1f}"


def _ends_text(ends: Sequence[tuple[str, int, int, int]]) -> str:
    """``"elimination 3-1-0; no_removal_limit 0-2-0"``: A's W-D-L per end reason."""
    return "; ".join(f"{reason} {w}-{d}-{lost}" for reason, w, d, lost in ends)


def pair_rows(result: TournamentResult) -> list[dict[str, Any]]:
    """One row per pair (A before B in the tournament's order): the CSV columns.

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import round_robin
    >>> t = round_robin(DARK, ["greedy", "random"], 2, workers=1)
    >>> [(r["a"], r["b"], r["games"]) for r in pair_rows(t)]
    [('greedy', 'random', 2)]

    ``ends`` is A's W-D-L per end reason as text, e.g. ``"elimination 2-0-0"``.
    """
    rows = []
    specs = result.specs
    for i, a in enumerate(specs):
        for b in specs[i + 1 :]:
            pr = result.pairs.get((a, b))
            if pr is None:
                continue
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "games": pr.games,
                    "wins": pr.wins,
                    "draws": pr.draws,
                    "losses": pr.losses,
                    "score": round(pr.score, 4),
                    "score_first": round(pr.score_first, 4),
                    "score_second": round(pr.score_second, 4),
                    "mean_plies": round(pr.mean_plies, 1),
                    "latency_a_mean_s": round(pr.latency_a[0], 5),
                    "latency_a_p95_s": round(pr.latency_a[1], 5),
                    "latency_b_mean_s": round(pr.latency_b[0], 5),
                    "latency_b_p95_s": round(pr.latency_b[1], 5),
                    "ends": _ends_text(pr.ends),
                }
            )
    return rows


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(
        [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
        + [fmt.format(*r) for r in rows]
    )


def format_report(result: TournamentResult, *, markdown: bool = False) -> str:
    """The tables of a tournament: per pair, how each pair's games ended, the score matrix,
    and Elo ratings.

    The end table reads "A's W-D-L by end reason" (a :class:`jungle_core.Reason` value
    or ``unfinished``); the matrix "row agent's score vs column agent, first/second (%)".

    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import round_robin
    >>> t = round_robin(DARK, ["greedy", "random"], 2, workers=1)
    >>> print(format_report(t))  # doctest: +ELLIPSIS
    Pairs (A's results)
    A       B       games  W-D-L (A) ...
    """
    specs = result.specs
    rows = pair_rows(result)
    pair_header = [
        "A",
        "B",
        "games",
        "W-D-L (A)",
        "score A",
        "A first",
        "A second",
        "plies",
        "A ms mean/p95",
        "B ms mean/p95",
    ]
    pair_table = []
    for row in rows:
        pair_table.append(
            [
                row["a"],
                row["b"],
                str(row["games"]),
                f"{row['wins']}-{row['draws']}-{row['losses']}",
                f"{row['score']:.3f}",
                _pct(row["score_first"]),
                _pct(row["score_second"]),
                f"{row['mean_plies']:.0f}",
                f"{_ms(row['latency_a_mean_s'])}/{_ms(row['latency_a_p95_s'])}",
                f"{_ms(row['latency_b_mean_s'])}/{_ms(row['latency_b_p95_s'])}",
            ]
        )
    reasons: dict[str, None] = {}
    for row in rows:
        for reason, *_ in result.pairs[(row["a"], row["b"])].ends:
            reasons.setdefault(reason)
    ends_table = []
    for row in rows:
        pair = result.pairs[(row["a"], row["b"])]
        counts = {reason: wdl for reason, *wdl in pair.ends}
        cells = [row["a"], row["b"]]
        cells += ["-".join(map(str, counts[r])) if r in counts else "" for r in reasons]
        ends_table.append(cells)
    matrix = []
    for a in specs:
        cells = [a]
        for b in specs:
            pr = result.pairs.get((a, b))
            cells.append("" if pr is None else f"{_pct(pr.score_first)}/{_pct(pr.score_second)}")
        matrix.append(cells)
    elo = sorted(result.ratings.items(), key=lambda kv: -kv[1].rating)
    elo_rows = [
        [
            spec,
            f"{r.rating:+.0f}",
            f"±{r.ci:.0f}",
            _ms(result.latency.get(spec, (math.nan, math.nan))[0]),
            _ms(result.latency.get(spec, (math.nan, math.nan))[1]),
        ]
        for spec, r in elo
    ]
    title = "#### " if markdown else ""
    parts = [
        f"{title}Pairs (A's results)",
        _table(pair_header, pair_table, markdown),
        "",
        f"{title}How the games ended (A's W-D-L by end reason)",
        _table(["A", "B", *reasons], ends_table, markdown),
        "",
        f"{title}Row agent's score vs column agent, first/second (%)",
        _table(["", *specs], matrix, markdown),
        "",
        f"{title}Elo (maximum likelihood, 95 % interval)",
        _table(["agent", "Elo", "95 %", "ms mean", "ms p95"], elo_rows, markdown),
    ]
    return "\n".join(parts)


def write_csv(result: TournamentResult, path: str | os.PathLike[str]) -> None:
    """Write the per-pair rows (:func:`pair_rows`) as CSV, atomically.

    >>> import tempfile, os
    >>> from jungle_core import DARK
    >>> from jungle_agents.arena import round_robin
    >>> t = round_robin(DARK, ["greedy", "random"], 2, workers=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_csv(t, os.path.join(d, "r.csv"))
    ...     write_markdown(t, os.path.join(d, "r.md"))
    ...     plot_heatmap(t, os.path.join(d, "h.png"))
    ...     open(os.path.join(d, "r.csv")).readline().split(",")[:3]
    ['a', 'b', 'games']
    """
    rows = pair_rows(result)
    buf = io.StringIO()
    columns = list(rows[0]) if rows else ["a", "b", "games"]
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, buf.getvalue().encode())


def write_markdown(result: TournamentResult, path: str | os.PathLike[str]) -> None:
    """Write :func:`format_report` as Markdown, atomically."""
    atomic_write(path, (format_report(result, markdown=True) + "\n").encode())


def plot_heatmap(result: TournamentResult, path: str | os.PathLike[str]) -> None:
    """A PNG heat map of the pairwise scores (row agent vs column agent), atomically.

    Needs matplotlib (the ``plot`` extra); without it, raises
    :class:`jungle_core.MissingExtraError` naming ``plot``, before anything is written.
    """
    # imported here, not with the module: matplotlib is heavy, optional, and only this needs it
    matplotlib = import_optional("matplotlib", "the tournament's heat map")
    matplotlib.use("Agg")
    plt = import_optional("matplotlib.pyplot", "the tournament's heat map")

    specs = result.specs
    k = len(specs)
    grid = np.full((k, k), np.nan)
    for i, a in enumerate(specs):
        for j, b in enumerate(specs):
            pr = result.pairs.get((a, b))
            if pr is not None:
                grid[i, j] = pr.score
    fig, ax = plt.subplots(figsize=(2.0 + 1.1 * k, 1.5 + 0.9 * k))
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(k), specs, rotation=30, ha="right")
    ax.set_yticks(range(k), specs)
    for i in range(k):
        for j in range(k):
            if not math.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=9)
    ax.set_title(f"score of row vs column ({result.rules.name if result.rules else ''})")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
