"""Training curves from a run's metrics file, as a PNG (``jungle plot DIR``)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from jungle_train._checkpoint import atomic_write
from jungle_train._metrics import read_metrics

__all__ = ["plot_training"]

_PANELS = (
    ("loss", "loss"),
    ("epsilon", "ε"),
    ("reward", "mean reward per decision"),
    ("episode_length", "episode length (learner decisions)"),
    ("steps_per_second", "steps per second"),
)


def plot_training(run: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Draw the curves of ``run/metrics.jsonl`` (loss, ε, reward, episode length,
    steps/s, training scores per opponent, evaluation scores) into ``out`` (default
    ``run/curves.png``) and return its path.

    >>> import tempfile, json, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with open(os.path.join(d, "metrics.jsonl"), "w") as f:
    ...         for s in (1, 2):
    ...             _ = f.write(json.dumps({"step": s, "time": s, "loss": 1 / s,
    ...                                     "eval": {"random": 0.5 + s / 10}}) + "\\n")
    ...     plot_training(d).name
    'curves.png'
    """
    folder = Path(run)
    lines = read_metrics(folder / "metrics.jsonl")
    if not lines:
        raise ValueError(f"{folder / 'metrics.jsonl'}: no metrics to plot")
    target = Path(out) if out is not None else folder / "curves.png"
    fig, axes = plt.subplots(2, 4, figsize=(16, 7))
    flat = list(axes.reshape(-1))
    steps = [m["step"] for m in lines]

    def series(name: str) -> tuple[list[Any], list[float]]:
        xs, ys = [], []
        for s, m in zip(steps, lines, strict=True):
            value = m.get(name)
            if isinstance(value, int | float):
                xs.append(s)
                ys.append(float(value))
        return xs, ys

    for ax, (name, title) in zip(flat, _PANELS, strict=False):
        xs, ys = series(name)
        ax.plot(xs, ys)
        ax.set_title(title)
        ax.set_xlabel("learner decisions")
    ax = flat[len(_PANELS)]
    for opp in ("random", "greedy", "self", "endgame"):
        xs, ys = series(f"score_{opp}")
        if xs:
            ax.plot(xs, ys, label="endgame starts" if opp == "endgame" else f"vs {opp}")
    ax.set_title("score in training games")
    ax.set_ylim(0, 1)
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    ax = flat[len(_PANELS) + 1]
    opponents = sorted({o for m in lines for o in (m.get("eval") or {})})
    for opp in opponents:
        xs = [m["step"] for m in lines if opp in (m.get("eval") or {})]
        ys = [m["eval"][opp] for m in lines if opp in (m.get("eval") or {})]
        ax.plot(xs, ys, marker="o", label=f"vs {opp}")
    ax.set_title("evaluation score (arena games)")
    ax.set_ylim(0, 1)
    if opponents:
        ax.legend()
    flat[-1].axis("off")
    fig.suptitle(str(folder))
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    image = io.BytesIO()
    fig.savefig(image, dpi=80, format="png")
    plt.close(fig)
    atomic_write(target, image.getvalue())
    return target
