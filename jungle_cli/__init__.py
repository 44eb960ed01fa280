"""The ``jungle`` command: a thin layer over library functions.

It sits at the top of the dependency graph (it may import every package), so it lives in
a package of its own. Each sub-command is a function of the parsed arguments
(``_cmd_match(args)`` ...) that returns the exit status; :func:`main` parses, runs it and
turns the library's typed errors into one line on stderr and exit status 2. The
training commands ``train``, ``plot`` and ``ablate`` are in :mod:`jungle_cli._train`,
``serve`` in :mod:`jungle_cli._serve_cli`.

>>> main(["show", "--rules", "classic"]) == 0  # doctest: +ELLIPSIS
    a b c d e f g
...
True
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import numpy as np

import jungle_core as jc
from jungle_agents import AgentSpecError, check_spec, describe_agents
from jungle_agents.arena import (
    DEALS,
    MAX_OPENINGS,
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
from jungle_cli._args import HelpFormatter, add_command, add_rules, int_in
from jungle_cli._engine_cli import add_engine_parser
from jungle_cli._play import add_play_parsers
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
            out, rules, pairs, args.games, args.seed, args.max_plies, args.deals, args.openings
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
        ray_address=args.ray_address,
        plugins=args.plugin,
        deals=args.deals,
        openings=args.openings,
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
        ray_address=args.ray_address,
        plugins=args.plugin,
        deals=args.deals,
        openings=args.openings,
        keep_games=False,  # the games are in the file; the tables need only the tally
    )
    print(format_report(result))
    if out is not None:
        write_csv(result, out / "results.csv")
        write_markdown(result, out / "results.md")
        written = [games_file, out / "results.csv", out / "results.md"]
        try:
            plot_heatmap(result, out / "heatmap.png")
            written.append(out / "heatmap.png")
        except jc.MissingExtraError as error:  # the tables are the result; the plot is extra
            print(f"jungle: no heat map: {error}", file=sys.stderr)
        print("\nwrote " + ", ".join(str(path) for path in written))
    return 0


def _add_run_options(p: argparse.ArgumentParser) -> None:
    add_rules(p)
    p.add_argument(
        "--seed", type=int_in(0, 2**63 - 1), default=0, metavar="N", help="seed of the whole run"
    )
    p.add_argument(
        "--workers",
        type=int_in(1, 4096),
        default=None,
        metavar="N",
        help="processes playing games at once (default: all cores)",
    )
    p.add_argument(
        "--max-plies",
        type=int_in(1, 2**31 - 1),
        default=None,
        metavar="N",
        help="stop a game unfinished after N plies (default: no limit but the rules')",
    )
    p.add_argument(
        "--backend",
        default="process",
        choices=("process", "ray"),
        help="run the games in local processes, or on a Ray cluster (the ray extra)",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="with --backend ray, the cluster to run on, e.g. 10.0.0.5:6379 or ray://HOST:10001 "
        "(default: the RAY_ADDRESS environment variable, else a local Ray for this run)",
    )
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module that registers more agents, imported by every worker (repeatable)",
    )
    p.add_argument(
        "--deals",
        default="independent",
        choices=DEALS,
        help="duplicate: game i hides the same pieces under the same squares in every run "
        "of this seed, whatever the agents (for paired comparisons: jungle compare)",
    )
    p.add_argument(
        "--openings",
        type=int_in(0, MAX_OPENINGS),
        default=0,
        metavar="N",
        help="start each game after N random plies, each opening played once with each "
        "colour (default: 0)",
    )


_GROUPS = {
    "play and watch": ("play", "replay", "serve", "demo", "engine"),
    "matches and tournaments": ("agents", "match", "tournament", "report", "compare"),
    "rules tools": ("show", "perft", "endgame"),
    "training": ("train", "plot", "ablate"),
}

_DESCRIPTION = """\
jungle plays Jungle chess (Dou Shou Qi), the Chinese animal game, and its face-down
variant DARK: against you in the terminal or the browser, and between agents (random,
greedy, minimax, learned networks, AlphaZero) in matches and tournaments with results
tables and Elo ratings. It also trains the learning agents. Each command below has its
own --help with its options, their defaults and examples."""

_EPILOG = """\
examples:
  jungle play --opponent minimax:depth=4          # you against minimax, in the terminal
  jungle match minimax:depth=3 greedy --games 100 --out games.jsonl
  jungle tournament --agents random,greedy,minimax:depth=2 --games 50 --out results
  jungle serve                                    # the browser page, http://127.0.0.1:8000/

Documentation: the project's docs (getting started, rules, agents, arena, training,
browser); in a source checkout `mkdocs serve` shows them as a site."""


def _command_list(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> str:
    # the sub-commands by group, each with its one-line summary (from its own parser,
    # so a command added elsewhere, as serve is, is listed with its own words)
    summary = {a.dest: a.help or "" for a in sub._choices_actions}
    rest = [name for name in summary if all(name not in g for g in _GROUPS.values())]
    groups = [*_GROUPS.items(), *([("other", tuple(rest))] if rest else [])]
    width = max(map(len, summary)) + 2
    lines = []
    for title, names in groups:
        lines.append(f"{title}:")
        lines += [f"  {n:<{width}}{summary[n]}" for n in names if n in summary]
        lines.append("")
    return "commands:\n\n" + "\n".join(lines).rstrip()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``jungle`` command.

    >>> build_parser().parse_args(["match", "greedy", "random"]).games
    200
    """
    parser = argparse.ArgumentParser(
        prog="jungle",
        usage="jungle [-h] [--version] COMMAND [OPTIONS]",
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"jungle {jc.__version__} ({jc.DISTRIBUTION})"
    )
    # the commands are listed by group in the description, not as argparse's flat list
    sub = parser.add_subparsers(
        prog="jungle", dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS
    )

    demo = add_command(
        sub,
        "demo",
        summary="play and print one game of random moves",
        description="Play one game in which both players choose uniformly among their legal "
        "moves, printing the board after every ply and the result at the end: a quick look "
        "at the rules in action.",
        examples=["jungle demo --rules classic --seed 7"],
    )
    add_rules(demo)
    demo.add_argument(
        "--seed", type=int_in(0, 2**63 - 1), default=0, metavar="N", help="seed of the game"
    )
    demo.set_defaults(func=_cmd_demo)

    perft = add_command(
        sub,
        "perft",
        summary="count the action sequences from a position (move-generator test)",
        description="Count the sequences of legal actions of a given length from a position "
        "(the start by default), each chance outcome of a reveal its own branch and a "
        "finished game one leaf. The counts check a move generator: another implementation "
        "of the same rules must give the same numbers.",
        examples=["jungle perft --depth 3 --all", "jungle perft --rules classic --depth 4"],
    )
    add_rules(perft)
    perft.add_argument(
        "--depth", type=int_in(0, 64), default=3, metavar="N", help="length of the sequences"
    )
    perft.add_argument(
        "--fen", default=None, help="start from this position string (default: the start)"
    )
    perft.add_argument("--all", action="store_true", help="print every depth up to --depth")
    perft.set_defaults(func=_cmd_perft)

    show = add_command(
        sub,
        "show",
        summary="print a position as a text board",
        description="Print a position as a text board, with the player to move, the ply "
        "counters and the face-down pieces: the start of a rule set, or a position string "
        "(FEN) given with --fen.",
        examples=[
            "jungle show --rules classic",
            "jungle show --fen '8/8/8/3e4/8/2E1R3/8 0 0 0 - -'",
        ],
    )
    add_rules(show)
    show.add_argument(
        "--fen", default=None, help="the position string to show (default: the start)"
    )
    show.set_defaults(func=_cmd_show)

    endgame = add_command(
        sub,
        "endgame",
        summary="the exact value of a face-up DARK endgame and of each of its moves",
        description="Solve a DARK endgame with every piece face up and at most --pieces "
        "pieces: print whether the player to move wins, draws or loses with best play, in "
        "how many plies, and the same for each legal move, the best first. The tables are "
        "built on first use.",
        examples=["jungle endgame '8/8/8/3e4/8/2E1R3/8 0 0 0 - -'"],
    )
    endgame.add_argument("fen", help="the position string, every piece face up")
    add_rules(endgame, "dark | dark_strict")
    endgame.add_argument(
        "--pieces",
        type=int_in(2, 4),
        default=3,
        metavar="N",
        help="largest table, in pieces on the board (4 is slow and takes gigabytes)",
    )
    endgame.set_defaults(func=_cmd_endgame)

    agents = add_command(
        sub,
        "agents",
        summary="list the agent kinds and their parameters",
        description="List every agent kind the other commands accept, with each parameter, "
        "its default and what it does. An agent is named by a spec, KIND or "
        "KIND:key=value,key=value, such as minimax:depth=3,tt=0.",
        examples=["jungle agents"],
    )
    agents.set_defaults(func=_cmd_agents)

    match = add_command(
        sub,
        "match",
        summary="play agent A against agent B",
        description="Play --games games between two agents, each moving first in half of "
        "them, in parallel processes, and print the results: A's wins, draws and losses, "
        "its score first and second, how the games ended, and both agents' Elo. With "
        "--out every game is appended to a JSON Lines games file as it ends; rerunning the "
        "same command resumes from that file.",
        examples=[
            "jungle match minimax:depth=3 greedy --games 100",
            "jungle match value random --games 400 --out value-random.jsonl --workers 4",
        ],
    )
    match.add_argument("a", help="agent spec of A, e.g. minimax:depth=3 (see jungle agents)")
    match.add_argument("b", help="agent spec of B, e.g. greedy")
    match.add_argument(
        "--games",
        type=int_in(1, 2**31 - 1),
        default=200,
        metavar="N",
        help="games to play, half with A first",
    )
    match.add_argument(
        "--out", default=None, metavar="FILE", help="JSON Lines games file (resumes)"
    )
    _add_run_options(match)
    match.set_defaults(func=_cmd_match)

    tour = add_command(
        sub,
        "tournament",
        summary="round robin of several agents",
        description="Play every pair of the given agents --games times (each moving first "
        "in half of them) and print the results table of every pair and one Elo list. With "
        "--out the folder gets games.jsonl (resumable), results.csv, results.md and "
        "heatmap.png (the heat map needs the plot extra).",
        examples=[
            "jungle tournament --agents random,greedy,minimax:depth=2 --games 50",
            "jungle tournament --agents greedy --agents minimax:depth=2,tt=0 --out results",
        ],
    )
    tour.add_argument(
        "--agents",
        action="append",
        required=True,
        metavar="AGENTS",
        help="comma-separated agent specs (repeatable); a spec keeps its key=value "
        "parameters: minimax:depth=2,tt=0,greedy is two agents",
    )
    tour.add_argument(
        "--games", type=int_in(1, 2**31 - 1), default=200, metavar="N", help="games per pair"
    )
    tour.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="folder for games.jsonl (resumes), results.csv, results.md, heatmap.png",
    )
    _add_run_options(tour)
    tour.set_defaults(func=_cmd_tournament)

    compare = add_command(
        sub,
        "compare",
        summary="compare A's score in two match files (paired by deal where possible)",
        description="Compare agent A's score in one match's games file with A's score in "
        "another's: the difference with its 95 % interval and the games whose result "
        "changed. Where both runs were played with --deals duplicate and one seed, game i "
        "of each hid the same pieces under the same squares, and the comparison is paired "
        "game by game, which needs far fewer games to see a difference.",
        examples=[
            "jungle compare new.jsonl baseline.jsonl",
        ],
    )
    compare.add_argument("x", help="games file of the run to test (one pair)")
    compare.add_argument("y", help="games file of the baseline run (one pair)")
    compare.set_defaults(func=_cmd_compare)

    report = add_command(
        sub,
        "report",
        summary="one report and Elo list over several games files",
        description="Read the games of several games files (of one rule set) and print one "
        "report: every pair's results and one Elo list fitted to all of them, so that "
        "matches played apart are joined by the agents they share.",
        examples=["jungle report a-vs-b.jsonl b-vs-c.jsonl --markdown"],
    )
    report.add_argument("files", nargs="+", help="games files (JSON Lines) of one rule set")
    report.add_argument("--markdown", action="store_true", help="print Markdown tables")
    report.set_defaults(func=_cmd_report)

    add_play_parsers(sub)
    add_train_parsers(sub)
    add_serve_parser(sub)
    add_engine_parser(sub)
    parser.description = f"{_DESCRIPTION}\n\n{_command_list(sub)}"
    parser.epilog = _EPILOG
    return parser


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jungle`` console script: run the command ``argv`` (default:
    the process's arguments) and return its exit status.

    A library error (bad input, a missing file, an optional dependency not installed) is
    printed as one line on stderr with status 2; Ctrl-C or a ``kill`` gives 130, the
    finished games kept in the games file.
    """
    args = build_parser().parse_args(argv)
    # a `kill` stops a long run as Ctrl-C does: finished games stay in the games file
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.func(args))
    except jc.MissingExtraError as error:
        # one line naming the feature, the missing package and the install command
        print(f"jungle: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (`jungle agents | head`): stop quietly, and point stdout
        # at /dev/null so that the interpreter's last flush does not fail again
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
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
