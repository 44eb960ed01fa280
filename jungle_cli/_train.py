"""The training sub-commands: ``jungle train KIND``, ``jungle plot``, ``jungle ablate gamma``.

The plots (matplotlib) are imported by the commands that draw them, not with the CLI:
matplotlib is most of the time ``import jungle_cli`` would otherwise take, which every
``jungle`` command pays at start; where it is not installed those commands say which
extra to install (:class:`jungle_core.MissingExtraError`).
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from jungle_cli._args import add_command
from jungle_cli._progress import TrainProgress, format_seconds
from jungle_core import import_optional
from jungle_train import KINDS, make_trainer, resolve_config, run_training
from jungle_train.common import distributed

__all__ = ["LEARNERS", "TrainProgress", "add_train_parsers"]


def _cmd_train(args: argparse.Namespace) -> int:
    config = resolve_config(args.kind, args.config, args.steps)
    steps = args.steps if args.steps is not None else getattr(config, "total_steps", None)
    if steps is None:
        raise ValueError(f"--steps is needed for {args.kind} (its config has no total_steps)")
    out = args.out or f"runs/{args.kind}"
    main = _join_processes(args)
    trainer = make_trainer(args.kind, config)
    bar = TrainProgress()
    if main:
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
    if not main:
        return 0
    print(
        f"trained {args.kind} to {steps:,} steps in {format_seconds(time.perf_counter() - start)}; "
        f"wrote {out}/agent.npz (play it: {args.kind}:path={out}/agent.npz), "
        f"{out}/run.npz, {out}/metrics.jsonl"
    )
    return 0


def _join_processes(args: argparse.Namespace) -> bool:
    """Join the other processes of a distributed run when asked (a flag, or the
    environment: ``JAX_COORDINATOR_ADDRESS``, a SLURM step of several tasks); whether
    this process is the one that writes (process 0)."""
    if not hasattr(args, "coordinator"):
        return True
    flags = (args.coordinator, args.num_processes, args.process_id)
    if not (args.distributed or distributed.wanted(*flags)):
        return True
    distributed.initialize(*flags, heartbeat_timeout_s=args.heartbeat)
    return distributed.is_main()


def _cmd_plot(args: argparse.Namespace) -> int:
    plots = import_optional("jungle_train.common._plots", "jungle plot")
    print(f"wrote {plots.plot_training(args.run, args.out)}")
    return 0


def _cmd_ablate(args: argparse.Namespace) -> int:
    ablate = import_optional("jungle_train.ablate", f"jungle ablate {args.what}")
    gammas = [float(g) for g in args.gammas.split(",") if g]
    kinds = [k for k in args.kinds.split(",") if k]
    steps = {}
    for item in (args.steps or "").split(","):
        if item:
            kind, _, value = item.partition("=")
            steps[kind] = int(value)
    ablate.ablate_gamma(
        args.out, kinds=kinds, gammas=gammas, steps=steps, seed=args.seed, eval_games=args.games
    )
    print(f"wrote {args.out}/results.md, results.csv, gamma.png")
    return 0


@dataclasses.dataclass(frozen=True)
class _Learner:
    """What ``jungle train KIND --help`` says of a learner kind."""

    summary: str
    description: str
    configs: tuple[str, ...]  # its named configs, the default first
    examples: tuple[str, ...]


_JAX_NOTE = "It runs on JAX: it needs the train extra (pip install 'dou-shou-qi[train]')."
_NUMPY_NOTE = "It runs on numpy alone (the bare install); --steps is needed."

LEARNERS = {
    "dqn": _Learner(
        "deep Q-network on the JAX core, thousands of games at once",
        "A deep Q-network for DARK: thousands of games played at once on the JAX core, "
        "their transitions in a prioritised replay, double-DQN n-step updates, the whole "
        "loop compiled. The cpu config is the shipped agent's run (about 30 minutes on two "
        "cores); league trains the same learner in a league of random, Greedy, a one-ply "
        "look-ahead and the network's own snapshots (under an hour on two cores); gpu plays "
        "16 times the cpu config's games on one GPU. " + _JAX_NOTE,
        ("cpu", "league", "spec", "gpu"),
        (
            "jungle train dqn --config cpu --out runs/dqn",
            "jungle train dqn --config gpu --steps 100000000 --out runs/dqn-gpu",
            "jungle train dqn --config gpu --out runs/dqn2 --coordinator 10.0.0.1:6000 "
            "--num-processes 2 --process-id 0  # and --process-id 1 on the second host",
        ),
    ),
    "qlearn": _Learner(
        "tabular Q-learning on the DARK rules",
        "Tabular Q-learning for DARK: Q(s, a) in a table keyed by the position, one-step "
        "updates, epsilon-greedy exploration with decay, a shaped reward. " + _NUMPY_NOTE,
        ("default",),
        ("jungle train qlearn --steps 120000 --seed 1 --out runs/qlearn",),
    ),
    "approxq": _Learner(
        "approximate Q-learning on 16 hand-made features",
        "Approximate Q-learning for DARK: Q(s, a) a linear function of 16 hand-made features "
        "of the position and the move, learned by one-step Q-learning from a replay buffer. "
        + _NUMPY_NOTE,
        ("default",),
        ("jungle train approxq --steps 200000 --seed 1 --out runs/approxq",),
    ),
    "value": _Learner(
        "a value network for search, from many games at once",
        "A value network for DARK search agents: positions from many games played at once "
        "on the JAX core, each labelled with its game's result, fitted by a small "
        "convolutional network; the value agent searches one ply on it. " + _JAX_NOTE,
        ("cpu", "tiny"),
        ("jungle train value --steps 6000000 --out runs/value --eval-every 2000000",),
    ),
    "azero": _Learner(
        "AlphaZero: self-play with mctx search, the true rules as the model",
        "AlphaZero: self-play games searched with mctx, the JAX core stepping the true rules "
        "inside the tree (chance nodes for the face-down pieces in DARK), a network giving "
        "the prior and the value; the measured runs' configs (CLASSIC among them) are TOML "
        "files in experiments/configs/. " + _JAX_NOTE,
        ("default", "tiny"),
        (
            "jungle train azero --config experiments/configs/azero-teacher-cpu.toml "
            "--out runs/azero-teacher --eval-games 0",
            "jungle train azero --config tiny --out runs/azero-tiny",
        ),
    ),
}
"""Each learner kind of ``jungle train``: its help and its named configs."""


def _add_train_kind(sub: argparse._SubParsersAction[argparse.ArgumentParser], kind: str) -> None:
    learner = LEARNERS[kind]
    configs = " | ".join(learner.configs)
    p = add_command(
        sub,
        kind,
        summary=learner.summary,
        description=learner.description,
        examples=[
            *learner.examples,
            f"jungle match {kind}:path=runs/{kind}/agent.npz greedy  # play the result",
        ],
    )
    named = (
        f"a named config: {configs} (default: {learner.configs[0]}); or "
        if len(learner.configs) > 1
        else ""
    )
    p.add_argument(
        "--config",
        default=None,
        metavar="NAME|FILE" if named else "FILE",
        help=f"{named}a .json or .toml file of config fields, the others keeping their "
        "defaults" + ("" if named else " (default: the built-in config)"),
    )
    has_total = kind in ("dqn", "value", "azero")
    p.add_argument(
        "--steps",
        type=int,
        default=None,
        metavar="N",
        help="learner decisions to train for"
        + (" (default: the config's total_steps)" if has_total else f" (needed by {kind})"),
    )
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the run")
    p.add_argument("--out", default=None, metavar="DIR", help=f"run folder (default: runs/{kind})")
    p.add_argument("--resume", action="store_true", help="continue the run in --out to --steps")
    p.add_argument(
        "--chunk",
        type=int,
        default=None,
        metavar="N",
        help="steps between checkpoints (default: the run cut into at least 8 chunks of "
        "at most 100,000 steps)",
    )
    p.add_argument(
        "--eval-every",
        type=int,
        default=0,
        metavar="N",
        help="steps between evaluations, 0 for one at the end (default: 0)",
    )
    p.add_argument(
        "--eval-games", type=int, default=20, metavar="N", help="games per evaluation opponent"
    )
    p.add_argument(
        "--eval-against",
        default="random,greedy",
        metavar="AGENTS",
        help="comma-separated agent specs to evaluate against",
    )
    if kind in ("dqn", "azero"):  # the learners that shard their games over processes
        _add_process_flags(p)
    p.set_defaults(func=_cmd_train)


def _add_process_flags(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "several processes or hosts (jax.distributed): the games shared out among all their devices"
    )
    group.add_argument(
        "--coordinator",
        default=None,
        metavar="HOST:PORT",
        help="process 0's address, the same for every process (default: "
        "$JAX_COORDINATOR_ADDRESS, or SLURM's first node)",
    )
    group.add_argument(
        "--num-processes",
        type=int,
        default=None,
        metavar="N",
        help="processes in all (default: $JAX_NUM_PROCESSES, or SLURM's tasks)",
    )
    group.add_argument(
        "--process-id",
        type=int,
        default=None,
        metavar="I",
        help="this process, 0..N-1; 0 writes the run folder (default: $JAX_PROCESS_ID, "
        "or SLURM's task id)",
    )
    group.add_argument(
        "--distributed",
        action="store_true",
        help="join a distributed run from what the environment says alone (SLURM, "
        "Open MPI, Kubernetes; implied by the flags above, $JAX_COORDINATOR_ADDRESS or "
        "a SLURM step of several tasks)",
    )
    group.add_argument(
        "--heartbeat",
        type=int,
        default=100,
        metavar="SECONDS",
        help="a process silent this long is declared dead and the others stop, "
        "to be resumed with --resume (default: 100)",
    )


def add_train_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``train`` (one sub-command per learner kind), ``plot`` and ``ablate`` to the
    ``jungle`` command's sub-parsers.

    >>> parser = argparse.ArgumentParser(prog="jungle")
    >>> add_train_parsers(parser.add_subparsers())
    >>> args = parser.parse_args(["train", "qlearn", "--steps", "60"])
    >>> args.kind, args.steps, args.chunk
    ('qlearn', 60, None)
    """
    train = add_command(
        sub,
        "train",
        summary="train a learning agent (dqn, qlearn, approxq, value, azero)",
        description="Train a learning agent and write its run folder: agent.npz (the "
        "agent: play it as KIND:path=DIR/agent.npz), run.npz (the checkpoint, written every "
        "--chunk steps, that --resume continues from) and metrics.jsonl (the curves jungle "
        "plot draws). Each learner kind is a sub-command with its own --help.",
        examples=[
            "jungle train qlearn --steps 120000 --out runs/qlearn",
            "jungle train qlearn --steps 240000 --out runs/qlearn --resume",
            "jungle train dqn --help",
        ],
    )
    kinds = train.add_subparsers(dest="kind", required=True, metavar="KIND", title="learners")
    for kind in sorted(KINDS, key=list(LEARNERS).index):
        _add_train_kind(kinds, kind)

    plot = add_command(
        sub,
        "plot",
        summary="draw a training run's curves as PNG",
        description="Draw the curves of a training run's metrics.jsonl (loss, exploration, "
        "reward, game length, steps per second, training and evaluation scores) into one "
        "PNG. It needs the plot extra (matplotlib).",
        examples=["jungle plot runs/qlearn", "jungle plot runs/dqn --out dqn-curves.png"],
    )
    plot.add_argument("run", help="a run folder (holds metrics.jsonl)")
    plot.add_argument(
        "--out", default=None, metavar="FILE", help="PNG file (default: RUN/curves.png)"
    )
    plot.set_defaults(func=_cmd_plot)

    ablate = add_command(
        sub,
        "ablate",
        summary="ablation studies of the learners: the discount factor",
        description="Ablation studies: train learners with one setting changed and compare "
        "their scores. Each study is a sub-command with its own --help.",
        examples=["jungle ablate gamma --kinds qlearn --gammas 0.9,0.99 --steps qlearn=20000"],
    )
    studies = ablate.add_subparsers(dest="what", required=True, metavar="STUDY", title="studies")
    gamma = add_command(
        studies,
        "gamma",
        summary="the discount factor's effect on each learner's score",
        description="Train each learner kind at each discount factor (gamma) with the same "
        "seed and budget, everything else as the kind's default config, score every result "
        "against random and greedy, and write results.csv, results.md and gamma.png (score "
        "against gamma) into --out. Each run keeps its own folder there, so an interrupted "
        "ablation resumes. It needs the plot extra, and the train extra for dqn.",
        examples=[
            "jungle ablate gamma --kinds dqn,qlearn --gammas 0.9,0.95,0.99",
            "jungle ablate gamma --kinds qlearn,approxq --steps qlearn=20000,approxq=20000 "
            "--games 50 --out results/gamma",
        ],
    )
    gamma.add_argument(
        "--kinds", default="dqn,qlearn", help="comma-separated learners: dqn, qlearn, approxq"
    )
    gamma.add_argument("--gammas", default="0.9,0.95,0.99", help="comma-separated discount factors")
    gamma.add_argument(
        "--steps",
        default=None,
        metavar="KIND=N,...",
        help="training steps per kind, e.g. dqn=500000,qlearn=20000 (default: dqn=500000, "
        "qlearn=20000, approxq=20000)",
    )
    gamma.add_argument(
        "--games", type=int, default=100, metavar="N", help="evaluation games per opponent"
    )
    gamma.add_argument("--seed", type=int, default=0, metavar="N", help="seed of every run")
    gamma.add_argument(
        "--out", default="results/ablate-gamma", metavar="DIR", help="folder of the results"
    )
    gamma.set_defaults(func=_cmd_ablate)
