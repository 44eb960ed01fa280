"""Ablations of the learners: the discount factor's effect on score.

:func:`ablate_gamma` trains each learner kind at each γ with the same seed and budget
(everything else as the kind's shipped config), evaluates every result against the
same opponents through the arena's game loop, and writes ``results.csv``, ``results.md``
and ``gamma.png`` (score against γ, one line per kind and opponent) into ``out``.
Each run keeps its own folder (``out/<kind>-gamma<γ>/``, resumable), so an interrupted
ablation continues where it stopped.
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jungle_core import import_optional
from jungle_train._trainers import make_trainer, resolve_config
from jungle_train.common import SCORE, atomic_write, evaluate, run_training

_WHAT = "jungle ablate (its plot)"
matplotlib = import_optional("matplotlib", _WHAT)
matplotlib.use("Agg")
plt = import_optional("matplotlib.pyplot", _WHAT)

__all__ = ["GAMMA_FIELD", "ablate_gamma"]

GAMMA_FIELD = {"dqn": "gamma", "qlearn": "discount", "approxq": "discount"}
"""The config field that holds each kind's discount factor."""


def ablate_gamma(
    out: str | os.PathLike[str],
    *,
    kinds: Sequence[str] = ("dqn", "qlearn"),
    gammas: Sequence[float] = (0.9, 0.95, 0.99),
    steps: dict[str, int] | None = None,
    seed: int = 0,
    eval_games: int = 100,
    opponents: Sequence[str] = ("random", "greedy"),
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Train every ``kind`` at every ``γ`` for ``steps[kind]`` steps, score each against
    ``opponents`` in ``eval_games`` games, write the table and plot; return the rows
    (``kind``, ``gamma``, ``steps``, ``score/<opponent>``...)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    budget = {"dqn": 500_000, "qlearn": 20_000, "approxq": 20_000, **(steps or {})}
    rows = []
    for kind in kinds:
        base = resolve_config(kind, None, budget[kind])
        field = GAMMA_FIELD[kind]
        for gamma in gammas:
            config = dataclasses.replace(base, **{field: float(gamma)})
            trainer = make_trainer(kind, config)
            run = folder / f"{kind}-gamma{gamma:g}"
            log(f"{kind} γ={gamma:g}: training {budget[kind]} steps into {run}")
            state = run_training(
                trainer,
                run,
                steps=budget[kind],
                seed=seed,
                resume=True,
                eval_games=0,
                eval_opponents=(),
            )
            trainer.save_agent(state, str(run / "agent.npz"))
            agent = trainer.agent(str(run / "agent.npz"))
            row: dict[str, Any] = {"kind": kind, "gamma": float(gamma), "steps": budget[kind]}
            for opp in opponents:
                row[SCORE + opp] = evaluate(agent, opp, eval_games, seed=seed)["score"]
            log("  " + ", ".join(f"{k} {v:.3f}" for k, v in row.items() if k.startswith(SCORE)))
            rows.append(row)
    _write_tables(rows, opponents, folder, eval_games)
    _plot(rows, opponents, folder / "gamma.png")
    return rows


def _write_tables(
    rows: list[dict[str, Any]], opponents: Sequence[str], folder: Path, games: int
) -> None:
    head = ["kind", "gamma", "steps", *[SCORE + o for o in opponents]]
    csv = (
        ",".join(head)
        + "\n"
        + "".join(
            ",".join(str(r[h]) if not isinstance(r[h], float) else f"{r[h]:.4g}" for h in head)
            + "\n"
            for r in rows
        )
    )
    atomic_write(folder / "results.csv", csv.encode())
    md = [
        f"Score against each opponent ({games} games, half each side first) by discount factor.",
        "",
        "| learner | γ | steps | " + " | ".join(f"vs {o}" for o in opponents) + " |",
        "|---|---:|---:|" + "---:|" * len(opponents),
    ]
    for r in rows:
        scores = " | ".join(f"{r[SCORE + o]:.3f}" for o in opponents)
        md.append(f"| {r['kind']} | {r['gamma']:g} | {r['steps']} | {scores} |")
    atomic_write(folder / "results.md", ("\n".join(md) + "\n").encode())


def _plot(rows: list[dict[str, Any]], opponents: Sequence[str], target: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 4))
    for kind in sorted({r["kind"] for r in rows}):
        mine = [r for r in rows if r["kind"] == kind]
        for opp in opponents:
            ax.plot(
                [r["gamma"] for r in mine],
                [r[SCORE + opp] for r in mine],
                marker="o",
                label=f"{kind} vs {opp}",
            )
    ax.set_xlabel("discount factor γ")
    ax.set_ylabel("score")
    ax.set_ylim(0, 1)
    ax.legend()
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, dpi=80, format="png")
    plt.close(fig)
    atomic_write(target, image.getvalue())
