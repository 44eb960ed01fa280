"""The ``jungle`` command: a thin layer over library functions.

It sits at the top of the dependency graph (it may import every package), so it lives in
a module of its own. Each sub-command is a function that tests call directly.

Sub-commands: ``demo`` (one random game), ``perft``, ``show``, ``endgame`` (the exact
value of a face-up DARK endgame), ``agents`` (the agent kinds and their parameters),
``match``, ``tournament``, ``compare``, ``report`` (one report and Elo list over several
games files), ``play`` (a human against an agent), ``replay``, ``serve`` (the browser
page); the training commands ``train``, ``plot`` and ``ablate`` live in
:mod:`jungle_cli._train`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

import numpy as np

import jungle_core as jc
from jungle_agents import AgentSpecError, check_spec, describe_agents
from jungle_agents.arena import (
    DEALS,
    compare_runs,
    format_comparison,
    format_report,
    import_plugins,
    iter_resumable_games,
    load_games,
    load_runs,
    plot_heatmap,
    round_robin,
    summarize,
    write_csv,
    write_markdown,
)
from jungle_cli._args import int_in
from jungle_cli._play import PlaySession, load_any_record, parse_clock, replay_session
from jungle_cli._progress import ProgressBar
from jungle_cli._serve_cli import add_serve_parser
from jungle_cli._train import add_train_parsers

__all__ = ["build_parser", "main", "play_random_game", "split_agent_specs"]


def play_random_game(rules: jc.Rules = jc.DARK, seed: int = 0, *, show: bool = True) -> jc.State:
    """Play one game of uniformly random actions, printing each move when ``show``.

    >>> final = play_random_game(seed=1, show=False)
    >>> jc.outcome(final) is not None
    True
    """
    rng = np.random.default_rng(seed)
    state = jc.new_game(rules, seed=seed)
    if show:
        print(jc.render(state))
    while (result := jc.outcome(state)) is None:
        actions = jc.legal_actions(state)
        action = actions[int(rng.integers(len(actions)))]
        text = jc.action_to_str(state, action)
        mover = state.to_move
        state = jc.step(state, action, rng)
        if show:
            print(f"\nply {state.ply}: player {mover} plays {text}")
            print(jc.render(state))
    if show:
        who = "draw" if result.winner is None else f"player {result.winner} wins"
        print(f"\ngame over after {state.ply} plies: {who} ({result.reason.value})")
    return state


def split_agent_specs(text: str) -> list[str]:
    """Split ``--agents`` on commas, keeping a spec's own ``key=value`` parameters with it.

    >>> split_agent_specs("random,greedy,minimax:depth=3,tt=0,minimax:depth=2")
    ['random', 'greedy', 'minimax:depth=3,tt=0', 'minimax:depth=2']
    """
    specs: list[str] = []
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            continue
        if "=" in part and ":" not in part and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def _cmd_demo(args: argparse.Namespace) -> int:
    play_random_game(jc.rules_by_name(args.rules), args.seed)
    return 0


def _cmd_perft(args: argparse.Namespace) -> int:
    rules = jc.rules_by_name(args.rules)
    state = jc.from_fen(args.fen, rules) if args.fen else jc.new_game(rules)
    for depth in range(1, args.depth + 1) if args.all else (args.depth,):
        start = time.perf_counter()
        count = jc.perft(state, depth)
        elapsed = time.perf_counter() - start
        print(f"perft({depth}) = {count}  ({elapsed:.2f} s)")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    rules = jc.rules_by_name(args.rules)
    print(jc.render(jc.from_fen(args.fen, rules) if args.fen else jc.new_game(rules)))
    return 0


def _cmd_endgame(args: argparse.Namespace) -> int:
    from jungle_agents.endgame import EndgameTables

    state = jc.from_fen(args.fen, jc.rules_by_name(args.rules))
    tables = EndgameTables(args.pieces)
    probe = tables.probe(state)
    values = tables.action_values(state)
    if probe is None or values is None:
        raise ValueError(
            f"the endgame tables cover DARK positions with every piece face up and at most "
            f"{args.pieces} pieces, the game not over: not {args.fen!r}"
        )
    words = {1: "win", 0: "draw", -1: "loss"}
    plies = f" in {probe.plies} plies to the removal" if probe.result else ""
    print(jc.render(state))
    print(f"player {state.to_move} to move: {words[probe.result]}{plies}")
    ranked = sorted(
        values.items(), key=lambda item: (-item[1].result, item[1].plies * item[1].result)
    )
    for action, value in ranked:
        detail = f" ({value.plies} plies)" if value.result else ""
        print(f"  {jc.action_to_str(state, action):7} {words[value.result]}{detail}")
    return 0


def _cmd_agents(args: argparse.Namespace) -> int:
    print(describe_agents())
    return 0


def _progress_for(
    args: argparse.Namespace, rules: jc.Rules, specs: Sequence[str], out: str | None
) -> ProgressBar:
    # what the run would refuse (a plugin, an unknown agent or parameter, a games file of
    # another run) is refused before anything is printed; the agents are built once, by
    # the run (which checks their values before it writes the file); "resuming" counts
    # only the games this run keeps
    import_plugins(args.plugin)
    for spec in specs:
        check_spec(spec)
    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1 :]]
    bar = ProgressBar()
    already = 0
    if out is not None:
        # read one game at a time: a file of millions of games is never held whole
        for game in iter_resumable_games(
            out, rules, pairs, args.games, args.seed, args.max_plies, args.deals
        ):
            bar.add(game)
            already += 1
    if already:
        print(f"resuming: {already} games already in {out}", file=sys.stderr)
    bar.start(len(pairs) * args.games, already=already)
    return bar


def _cmd_match(args: argparse.Namespace) -> int:
    rules = jc.rules_by_name(args.rules)
    bar = _progress_for(args, rules, [args.a, args.b], args.out)
    # a match is the round robin of two: the same games, seeds and files as play_match
    result = round_robin(
        rules,
        [args.a, args.b],
        args.games,
        args.seed,
        args.workers,
        out=args.out,
        progress=bar,
        max_plies=args.max_plies,
        backend=args.backend,
        plugins=args.plugin,
        deals=args.deals,
        keep_games=False,  # the games are in the file; the tables need only the tally
    )
    print(format_report(result))
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    _, x = load_games(args.x)
    _, y = load_games(args.y)
    for path, games in ((args.x, x), (args.y, y)):
        if not games:
            raise jc.JungleError(f"{path}: no games")
    print(format_comparison(compare_runs(x, y), args.x, args.y))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    games = load_runs(args.files)
    print(f"{len(games)} games from {len(args.files)} file(s)")
    print(format_report(summarize(games), markdown=args.markdown))
    return 0


def _cmd_tournament(args: argparse.Namespace) -> int:
    rules = jc.rules_by_name(args.rules)
    specs = [s for group in args.agents for s in split_agent_specs(group)]
    out = Path(args.out) if args.out else None
    games_file = str(out / "games.jsonl") if out else None
    bar = _progress_for(args, rules, specs, games_file)
    result = round_robin(
        rules,
        specs,
        args.games,
        args.seed,
        args.workers,
        out=games_file,
        progress=bar,
        max_plies=args.max_plies,
        backend=args.backend,
        plugins=args.plugin,
        deals=args.deals,
        keep_games=False,  # the games are in the file; the tables need only the tally
    )
    print(format_report(result))
    if out is not None:
        write_csv(result, out / "results.csv")
        write_markdown(result, out / "results.md")
        plot_heatmap(result, out / "heatmap.png")
        print(
            f"\nwrote {games_file}, {out / 'results.csv'}, {out / 'results.md'}, "
            f"{out / 'heatmap.png'}"
        )
    return 0


def _cmd_play(
    args: argparse.Namespace,
    input_fn: Callable[[str], str] = input,
    output: Callable[[str], None] = print,
    clock_fn: Callable[[], float] = time.monotonic,
) -> int:
    rules = jc.rules_by_name(args.rules)
    clock = parse_clock(args.clock) if args.clock else None
    session = PlaySession(
        rules,
        args.opponent,
        args.side,
        seed=args.seed,
        clock=clock,
        hint=args.hint,
        input_fn=input_fn,
        output=output,
        clock_fn=clock_fn,
    )
    session.run()
    return 0


def _cmd_replay(
    args: argparse.Namespace,
    input_fn: Callable[[str], str] = input,
    output: Callable[[str], None] = print,
) -> int:
    record = load_any_record(args.file, args.game)
    interactive = not args.all and sys.stdin.isatty() if args.interactive is None else True
    replay_session(record, interactive=interactive, input_fn=input_fn, output=output)
    return 0


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="dark", help="dark | dark_strict | classic")
    p.add_argument("--seed", type=int_in(0, 2**63 - 1), default=0, help="seed of the whole run")
    p.add_argument(
        "--workers", type=int_in(1, 4096), default=None, help="processes (default: all cores)"
    )
    p.add_argument(
        "--max-plies", type=int_in(1, 2**31 - 1), default=None, help="stop longer games unfinished"
    )
    p.add_argument("--backend", default="process", choices=("process", "ray"))
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        help="a module that registers more agents (imported by every worker)",
    )
    p.add_argument(
        "--deals",
        default="independent",
        choices=DEALS,
        help="duplicate: game i hides the same pieces under the same squares in every run "
        "of this seed, whatever the agents (for paired comparisons: jungle compare)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``jungle`` command."""
    parser = argparse.ArgumentParser(
        prog="jungle", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="play and print one random game")
    demo.add_argument("--rules", default="dark", help="dark | dark_strict | classic")
    demo.add_argument("--seed", type=int_in(0, 2**63 - 1), default=0)
    demo.set_defaults(func=_cmd_demo)

    perft = sub.add_parser("perft", help="count action sequences (move-generator test)")
    perft.add_argument("--rules", default="dark", help="dark | dark_strict | classic")
    perft.add_argument("--depth", type=int_in(0, 64), default=3)
    perft.add_argument("--fen", default=None, help="start from this position string")
    perft.add_argument("--all", action="store_true", help="print every depth up to --depth")
    perft.set_defaults(func=_cmd_perft)

    show = sub.add_parser("show", help="print a position as an ASCII board")
    show.add_argument("--rules", default="dark")
    show.add_argument("--fen", default=None)
    show.set_defaults(func=_cmd_show)

    endgame = sub.add_parser(
        "endgame", help="exact value of a face-up DARK endgame and of each of its moves"
    )
    endgame.add_argument("fen", help="position string, every piece face up")
    endgame.add_argument("--rules", default="dark", help="dark | dark_strict")
    endgame.add_argument("--pieces", type=int_in(2, 4), default=3, help="largest table (4: slow)")
    endgame.set_defaults(func=_cmd_endgame)

    agents = sub.add_parser("agents", help="list the agent kinds and their parameters")
    agents.set_defaults(func=_cmd_agents)

    match = sub.add_parser("match", help="play agent A against agent B")
    match.add_argument("a", help="agent spec, e.g. minimax:depth=3")
    match.add_argument("b", help="agent spec, e.g. greedy")
    match.add_argument(
        "--games", type=int_in(1, 2**31 - 1), default=200, help="games (half with A first)"
    )
    match.add_argument("--out", default=None, help="JSON Lines games file (resumes)")
    _add_run_options(match)
    match.set_defaults(func=_cmd_match)

    tour = sub.add_parser("tournament", help="round robin of several agents")
    tour.add_argument(
        "--agents", action="append", required=True, help="comma-separated agent specs (repeatable)"
    )
    tour.add_argument("--games", type=int_in(1, 2**31 - 1), default=200, help="games per pair")
    tour.add_argument(
        "--out",
        default=None,
        help="directory for games.jsonl (resumes), results.csv/.md, heatmap.png",
    )
    _add_run_options(tour)
    tour.set_defaults(func=_cmd_tournament)

    compare = sub.add_parser(
        "compare",
        help="A's score in one match file against A's in another (paired by deal where "
        "both were played with --deals duplicate and one seed)",
    )
    compare.add_argument("x", help="games file of the run to test (one pair)")
    compare.add_argument("y", help="games file of the baseline run (one pair)")
    compare.set_defaults(func=_cmd_compare)

    report = sub.add_parser(
        "report",
        help="one report over the games of several games files: every pair's results and "
        "one Elo list fitted to all of them (matches played apart, joined by the agents "
        "they share)",
    )
    report.add_argument("files", nargs="+", help="games files (JSON Lines) of one rule set")
    report.add_argument("--markdown", action="store_true", help="Markdown tables")
    report.set_defaults(func=_cmd_report)

    play = sub.add_parser("play", help="play against an agent in the terminal")
    play.add_argument("--rules", default="dark", help="dark | dark_strict | classic")
    play.add_argument("--opponent", default="minimax:depth=3", help="agent spec")
    play.add_argument("--side", type=int, default=0, choices=(0, 1), help="0 moves first")
    play.add_argument("--clock", default=None, help="MIN+INC, e.g. 5+3")
    play.add_argument(
        "--seed", type=int_in(0, 2**63 - 1), default=0, help="seed of the chance outcomes"
    )
    play.add_argument("--hint", default="minimax:depth=2", help="agent spec giving hints")
    play.set_defaults(func=_cmd_play)

    rep = sub.add_parser("replay", help="step through a saved game")
    rep.add_argument("file", help="a saved game (JSON) or a games file (JSON Lines)")
    rep.add_argument(
        "--game", type=int_in(0, 2**31 - 1), default=0, help="which game of a games file (0-based)"
    )
    rep.add_argument("--all", action="store_true", help="print every ply without stopping")
    rep.add_argument(
        "--interactive",
        action="store_const",
        const=True,
        default=None,
        help="step with Enter even when input is not a terminal",
    )
    rep.set_defaults(func=_cmd_replay)
    add_train_parsers(sub)
    add_serve_parser(sub)
    return parser


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jungle`` console script."""
    args = build_parser().parse_args(argv)
    # a `kill` stops a long run as Ctrl-C does: finished games stay in the games file
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.func(args))
    except (jc.JungleError, AgentSpecError, ValueError, OSError) as error:
        print(f"jungle: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\njungle: interrupted; finished games are kept (rerun to resume)", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
