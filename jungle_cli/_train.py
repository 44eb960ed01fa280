"""The training sub-commands: ``jungle train``, ``jungle plot``, ``jungle ablate``.

The plots (matplotlib) are imported by the commands that draw them, not with the CLI:
matplotlib is most of the time ``import jungle_cli`` would otherwise take, which every
``jungle`` command pays at start.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from jungle_cli._progress import format_seconds
from jungle_train._run import run_training
from jungle_train._trainers import KINDS, make_trainer, resolve_config

__all__ = ["TrainProgress", "add_train_parsers"]


class TrainProgress:
    """One line per chunk: steps, steps/s, the latest training and evaluation scores,
    ETA; redrawn in place on a terminal.

    >>> import io
    >>> out = io.StringIO()
    >>> bar = TrainProgress(out, clock=iter([0.0, 10.0]).__next__, tty=False)
    >>> bar.start(0)
    >>> bar(500, 1000, {"steps_per_second": 50.0, "score_random": 0.75, "eval": {"greedy": 0.5}})
    >>> print(out.getvalue().strip())  # doctest: +NORMALIZE_WHITESPACE
    [##########..........] 500/1,000 steps  50 steps/s  train: random 0.75
    eval: greedy 0.50  ETA 10s
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

    def start(self, already: int) -> None:
        """Begin timing; ``already`` steps were trained before (a resumed run)."""
        self._start = self.clock()
        self._already = already

    def __call__(self, done: int, total: int, line: dict[str, Any]) -> None:
        """:func:`jungle_train._run.run_training`'s progress callback."""
        self.eval.update(line.get("eval") or {})
        elapsed = self.clock() - self._start
        rate = (done - self._already) / elapsed if elapsed > 0 else float("nan")
        eta = (total - done) / rate if rate > 0 else float("nan")
        filled = int(self.width * min(done, total) / total)
        train = "  ".join(
            f"{o} {line[f'score_{o}']:.2f}"
            for o in ("random", "greedy", "self", "endgame")
            if f"score_{o}" in line
        )
        evals = "  ".join(f"{o} {s:.2f}" for o, s in self.eval.items())
        text = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {done:,}/{total:,} steps  "
            f"{line.get('steps_per_second', 0):,.0f} steps/s"
            + (f"  train: {train}" if train else "")
            + (f"  eval: {evals}" if evals else "")
            + f"  ETA {'-' if math.isnan(eta) else format_seconds(eta)}"
        )
        self.stream.write(("\r" + text) if self.tty else text + "\n")
        if self.tty and done >= total:
            self.stream.write("\n")
        self.stream.flush()


def _cmd_train(args: argparse.Namespace) -> int:
    config = resolve_config(args.kind, args.config, args.steps)
    steps = args.steps if args.steps is not None else getattr(config, "total_steps", None)
    if steps is None:
        raise ValueError(f"--steps is needed for {args.kind} (its config has no total_steps)")
    out = args.out or f"runs/{args.kind}"
    trainer = make_trainer(args.kind, config)
    bar = TrainProgress()
    bar.start(0)
    start = time.perf_counter()
    run_training(
        trainer,
        out,
        steps=steps,
        seed=args.seed,
        resume=args.resume,
        chunk_steps=args.chunk,
        eval_every=args.eval_every,
        eval_games=args.eval_games,
        eval_opponents=[o for o in args.eval_against.split(",") if o],
        progress=bar,
    )
    print(
        f"trained {args.kind} to {steps:,} steps in {format_seconds(time.perf_counter() - start)}; "
        f"wrote {out}/agent.npz (play it: {args.kind}:path={out}/agent.npz), "
        f"{out}/run.npz, {out}/metrics.jsonl"
    )
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from jungle_train._plots import plot_training

    print(f"wrote {plot_training(args.run, args.out)}")
    return 0


def _cmd_ablate(args: argparse.Namespace) -> int:
    from jungle_train.ablate import ablate_gamma

    gammas = [float(g) for g in args.gammas.split(",") if g]
    kinds = [k for k in args.kinds.split(",") if k]
    steps = {}
    for item in (args.steps or "").split(","):
        if item:
            kind, _, value = item.partition("=")
            steps[kind] = int(value)
    ablate_gamma(
        args.out, kinds=kinds, gammas=gammas, steps=steps, seed=args.seed, eval_games=args.games
    )
    print(f"wrote {args.out}/results.md, results.csv, gamma.png")
    return 0


def add_train_parsers(sub: Any) -> None:
    """Add ``train``, ``plot`` and ``ablate`` to the ``jungle`` command's sub-parsers."""
    train = sub.add_parser(
        "train", help="train a learning agent (dqn, qlearn, approxq, value, azero)"
    )
    train.add_argument("kind", choices=sorted(KINDS))
    train.add_argument(
        "--config",
        default=None,
        help="a named config (dqn: spec | cpu, the default | gpu; azero: cpu, the default | gpu | "
        "tiny | classic-cpu | teacher-cpu | teacher-gpu) or a .json/.toml file of fields",
    )
    train.add_argument("--steps", type=int, default=None, help="learner decisions to train for")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--out", default=None, help="run folder (default runs/KIND)")
    train.add_argument("--resume", action="store_true", help="continue the run in --out")
    train.add_argument("--chunk", type=int, default=100_000, help="steps between checkpoints")
    train.add_argument(
        "--eval-every", type=int, default=0, help="steps between evaluations (0: at the end)"
    )
    train.add_argument("--eval-games", type=int, default=20, help="games per evaluation opponent")
    train.add_argument(
        "--eval-against", default="random,greedy", help="comma-separated agent specs"
    )
    train.set_defaults(func=_cmd_train)

    plot = sub.add_parser("plot", help="draw a training run's curves as PNG")
    plot.add_argument("run", help="a run folder (holds metrics.jsonl)")
    plot.add_argument("--out", default=None, help="PNG file (default RUN/curves.png)")
    plot.set_defaults(func=_cmd_plot)

    ablate = sub.add_parser("ablate", help="ablations (SPEC §8): gamma")
    ablate.add_argument("what", choices=("gamma",))
    ablate.add_argument("--kinds", default="dqn,qlearn", help="learners to ablate")
    ablate.add_argument("--gammas", default="0.9,0.95,0.99")
    ablate.add_argument("--steps", default=None, help="per kind, e.g. dqn=500000,qlearn=20000")
    ablate.add_argument("--games", type=int, default=100, help="evaluation games per opponent")
    ablate.add_argument("--seed", type=int, default=0)
    ablate.add_argument("--out", default="results/ablate-gamma")
    ablate.set_defaults(func=_cmd_ablate)
