"""The ``jungle`` command: a thin layer over library functions.

It sits at the top of the dependency graph (it may import every package), so it lives in
a module of its own. Each sub-command is a function that tests call directly.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

import jungle_core as jc

__all__ = ["main", "play_random_game"]


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``jungle`` command."""
    parser = argparse.ArgumentParser(prog="jungle", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="play and print one random game")
    demo.add_argument("--rules", default="dark", help="dark | dark_strict | classic")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_cmd_demo)

    perft = sub.add_parser("perft", help="count action sequences (move-generator test)")
    perft.add_argument("--rules", default="dark", help="dark | dark_strict | classic")
    perft.add_argument("--depth", type=int, default=3)
    perft.add_argument("--fen", default=None, help="start from this position string")
    perft.add_argument("--all", action="store_true", help="print every depth up to --depth")
    perft.set_defaults(func=_cmd_perft)

    show = sub.add_parser("show", help="print a position as an ASCII board")
    show.add_argument("--rules", default="dark")
    show.add_argument("--fen", default=None)
    show.set_defaults(func=_cmd_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jungle`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except jc.JungleError as error:
        print(f"jungle: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
