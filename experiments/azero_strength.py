"""Strength of the AlphaZero agent against its time per move (DARK), resumable.

For each simulation count, plays ``azero:simulations=S`` (the shipped checkpoint, or
``--path``) against each opponent, half the games with each first, appending every game
to ``<out>/<pair>.jsonl`` (rerun the same command to resume). Prints W-D-L, score and
the agent's decision time (mean, 95th percentile), writes ``<out>/results.csv`` and
plots score against mean seconds per decision, one line per opponent
(``<out>/strength_vs_time.png``). The ``azero`` agent joins the registry through the
installed package's entry point (``pip install -e '.[train]'``).

    .venv/bin/python experiments/azero_strength.py --out results/azero-strength \\
        --simulations 16,64,256 --opponents random,greedy --games 20
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from jungle_agents.arena import play_match
from jungle_core import rules_by_name


def _file(out: str, a: str, b: str) -> str:
    return f"{out}/{re.sub(r'[^A-Za-z0-9]+', '_', a)}__vs__{re.sub(r'[^A-Za-z0-9]+', '_', b)}.jsonl"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="results/azero-strength")
    parser.add_argument("--simulations", default="16,64,256")
    parser.add_argument("--opponents", default="random,greedy")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="processes (each compiles once)")
    parser.add_argument("--rules", default="dark")
    parser.add_argument("--path", default="", help="checkpoint (default: the shipped one)")
    parser.add_argument("--heuristic", type=float, default=-1.0)
    parser.add_argument(
        "--params", default="", help="more agent parameters, e.g. prior_mix=1,afterstate=parent"
    )
    args = parser.parse_args(argv)
    rules = rules_by_name(args.rules)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    rows = []
    for sims in [int(s) for s in args.simulations.split(",") if s]:
        params = [f"simulations={sims}"]
        if args.path:
            params.append(f"path={args.path}")
        if args.heuristic >= 0:
            params.append(f"heuristic={args.heuristic:g}")
        params += [p for p in args.params.split(",") if p]
        agent = "azero:" + ",".join(params)
        for opponent in [o for o in args.opponents.split(",") if o]:
            r = play_match(
                rules,
                agent,
                opponent,
                args.games,
                args.seed,
                args.workers,
                out=_file(args.out, agent, opponent),
            )
            rows.append(
                {
                    "simulations": sims,
                    "opponent": opponent,
                    "games": r.games,
                    "wins": r.wins,
                    "draws": r.draws,
                    "losses": r.losses,
                    "score": round(r.score, 4),
                    "seconds_mean": round(r.latency_a[0], 4),
                    "seconds_p95": round(r.latency_a[1], 4),
                    "opponent_seconds_mean": round(r.latency_b[0], 4),
                }
            )
            print(
                f"{agent} vs {opponent}: {r.wins}-{r.draws}-{r.losses} of {r.games}, "
                f"score {r.score:.3f}, {r.latency_a[0]:.3f} s/decision (p95 "
                f"{r.latency_a[1]:.3f}), opponent {r.latency_b[0]:.3f} s",
                flush=True,
            )
    with open(f"{args.out}/results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    fig, ax = plt.subplots(figsize=(6, 4))
    for opponent in dict.fromkeys(row["opponent"] for row in rows):
        mine = [row for row in rows if row["opponent"] == opponent]
        ax.plot(
            [row["seconds_mean"] for row in mine],
            [row["score"] for row in mine],
            marker="o",
            label=f"vs {opponent}",
        )
        for row in mine:
            ax.annotate(str(row["simulations"]), (row["seconds_mean"], row["score"]), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("mean seconds per decision (labels: simulations)")
    ax.set_ylabel("score (wins + draws/2) / games")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"azero on {rules.name}: strength vs time per move ({rows[0]['games']} games)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{args.out}/strength_vs_time.png", dpi=120)
    print(f"wrote {args.out}/results.csv, strength_vs_time.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
