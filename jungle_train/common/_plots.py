"""Training curves from a run's metrics file, as a PNG (``jungle plot DIR``).

The figure has one panel per metric the run wrote (at least one finite value), the
common ones first (evaluation score per opponent, loss, decisions per second), then the
learner's own in the order of :data:`jungle_train.common._metrics.TITLES`, then any other name
alphabetically. A family of names (``score/random``, ``score/greedy``, ...) shares a
panel, one line per member. No panel is left empty, whichever learner wrote the file,
and files of older runs plot under today's names (:func:`jungle_train.common._metrics.upgrade`).
Needs the ``plot`` extra (matplotlib).
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jungle_core import JungleError, import_optional
from jungle_train.common._checkpoint import atomic_write
from jungle_train.common._metrics import COMPILE_S, SCORE, TITLES, read_metrics

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_WHAT = "jungle plot (training curves)"
matplotlib = import_optional("matplotlib", _WHAT)
matplotlib.use("Agg")
plt = import_optional("matplotlib.pyplot", _WHAT)

__all__ = ["panels", "plot_training", "training_figure"]

_NOT_DRAWN = frozenset({"step", "time", COMPILE_S})
_VERSUS = frozenset({SCORE, "train_score/", "win_rate/"})
"""Families whose members are opponents (labelled "vs <opponent>")."""
_SHARES = frozenset(
    {SCORE, "train_score/", "win_rate/", "recent_score", "first_win_rate", "draw_rate"}
)
"""Panels of shares in [0, 1] (drawn on that range)."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def panels(lines: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """The panels a run's metrics lines fill: ``(panel key, [metric names])`` in the
    order they are drawn. A panel's key is the metric's name, or for a family
    (``score/random``...) the part up to and with the ``/``.

    >>> panels([{"step": 1, "time": 0.5, "loss": None, "decisions_per_s": 3.0},
    ...         {"step": 2, "time": 1.0, "loss": 0.2, "score/random": 0.5, "zeta": 1}])
    ... # doctest: +NORMALIZE_WHITESPACE
    [('score/', ['score/random']), ('loss', ['loss']),
     ('decisions_per_s', ['decisions_per_s']), ('zeta', ['zeta'])]
    """
    members: dict[str, list[str]] = {}
    for line in lines:
        for name, value in line.items():
            if name in _NOT_DRAWN or _number(value) is None:
                continue
            key = name[: name.index("/") + 1] if "/" in name else name
            family = members.setdefault(key, [])
            if name not in family:
                family.append(name)
    order = {key: i for i, key in enumerate(TITLES)}
    keys = sorted(members, key=lambda k: (order.get(k, len(order)), k))
    return [(k, sorted(members[k])) for k in keys]


def training_figure(run: str | os.PathLike[str]) -> Figure:
    """The figure of ``run/metrics.jsonl`` (module docstring); the caller closes it
    (``matplotlib.pyplot.close(figure)``). A :class:`jungle_core.JungleError` names the
    file when it holds no metrics."""
    folder = Path(run)
    lines = read_metrics(folder / "metrics.jsonl")
    chosen = panels(lines)
    if not chosen:
        raise JungleError(f"{folder / 'metrics.jsonl'}: no metrics to plot")
    cols = min(4, len(chosen))
    rows = math.ceil(len(chosen) / cols)
    fig: Figure
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.5 * rows), squeeze=False)
    flat = list(axes.reshape(-1))
    for ax in flat[len(chosen) :]:
        fig.delaxes(ax)
    for ax, (key, names) in zip(flat, chosen, strict=False):
        for name in names:
            points = [(m["step"], _number(m.get(name))) for m in lines if "step" in m]
            xs = [x for x, y in points if y is not None]
            ys = [y for _, y in points if y is not None]
            label = f"vs {name[len(key) :]}" if key in _VERSUS else name
            marker = "o" if key == SCORE or len(xs) < 30 else None
            ax.plot(xs, ys, marker=marker, markersize=3, label=label)
        ax.set_title(TITLES.get(key, key))
        ax.set_xlabel("steps")
        if key in _SHARES:
            ax.set_ylim(-0.02, 1.02)
        if key.endswith("/"):
            ax.legend(fontsize="small")
    fig.suptitle(str(folder))
    fig.tight_layout()
    return fig


def plot_training(run: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Draw :func:`training_figure` of ``run`` into the PNG ``out`` (default
    ``run/curves.png``, written atomically) and return its path.

    >>> import tempfile, json, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with open(os.path.join(d, "metrics.jsonl"), "w") as f:
    ...         for s in (1, 2):
    ...             _ = f.write(json.dumps({"step": s, "time": s, "loss": 1 / s,
    ...                                     "score/random": 0.5 + s / 10}) + "\\n")
    ...     plot_training(d).name
    'curves.png'
    """
    folder = Path(run)
    target = Path(out) if out is not None else folder / "curves.png"
    fig = training_figure(folder)
    try:
        image = io.BytesIO()
        fig.savefig(image, dpi=80, format="png")
    finally:
        plt.close(fig)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, image.getvalue())
    return target
