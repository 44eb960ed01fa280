"""``jungle engine AGENT``: an agent of the registry served over the engine protocol.

The protocol (docs/engine.md) is the line protocol chess-style Jungle engines, GUIs and
tournament managers speak on standard input and output; :mod:`jungle_agents.engine`
implements it.
"""

from __future__ import annotations

import argparse

from jungle_agents import check_spec
from jungle_agents.engine import serve
from jungle_cli._args import add_command
from jungle_core import rules_by_name

__all__ = ["add_engine_parser"]

_DESCRIPTION = """\
Serve an agent as an engine on standard input and output, speaking the engine protocol
of chess-style Jungle engines: the 'jcei' (or 'uci') handshake, 'position startpos | fen
FEN moves ...', 'go depth N | movetime MS | wtime MS btime MS | infinite', 'stop',
'bestmove', and the debugging commands 'perft N', 'moves' and 'd'. CLASSIC speaks the
common dialect (the interchange FEN, moves like a3a4); DARK adds flips ('d1', and 'd1=E'
with the piece shown). The protocol is described in the docs' Engine protocol page.
"""


def add_engine_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``jungle engine`` on the ``jungle`` command's sub-parsers.

    >>> parser = argparse.ArgumentParser()
    >>> add_engine_parser(parser.add_subparsers())
    >>> parser.parse_args(["engine", "minimax:depth=3", "--rules", "classic"]).rules
    'classic'
    """
    engine = add_command(
        sub,
        "engine",
        summary="serve an agent over the engine protocol (for GUIs and other engines)",
        description=_DESCRIPTION,
        examples=[
            "jungle engine minimax:time=0.25,depth=30,quiescence=1 --rules classic",
            "printf 'jcei\\nposition startpos\\ngo movetime 200\\nquit\\n' | jungle engine greedy",
        ],
    )
    engine.add_argument(
        "spec", metavar="AGENT", help="the agent to serve, as a spec (see `jungle agents`)"
    )
    engine.add_argument(
        "--rules", default="classic", metavar="RULES", help="rule set: classic | dark"
    )
    engine.add_argument("--seed", type=int, default=0, help="seed of the agent's random generator")
    engine.set_defaults(func=_cmd_engine)


def _cmd_engine(args: argparse.Namespace) -> int:
    check_spec(args.spec)
    return serve(args.spec, rules_by_name(args.rules), seed=args.seed)
