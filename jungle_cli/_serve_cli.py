"""The ``jungle serve`` sub-command's options; the server itself (:mod:`jungle_cli._serve`)
needs the ``serve`` extra and is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import secrets

import jungle_core as jc
from jungle_cli._args import add_command, int_in
from jungle_cli._games import DEFAULT_HINT

__all__ = ["add_serve_parser"]

_DESCRIPTION = """\
Serve a page to play Jungle in the browser: against any agent, human against human on one
screen, or two agents watched move by move; save a game as a JSON record, load one (or a
games file of jungle match / tournament) to replay it and play on from its end.

A hint is the move of the hint agent (--hint, or the one chosen in the page's New-game
form), never the opponent's; the default is minimax depth 3 with a one-second budget, the
strongest measured agent that answers fast. Agents think in --workers worker processes, so
the page stays responsive; one over --move-time loses the game on the move limit.

The page has no accounts: anyone who can reach the port can start games, so the server
listens on loopback (127.0.0.1) unless --host says otherwise. It answers only requests
for its own host names (loopback's, --host, --allow-host) and from its own page (no other
site's), refuses agent parameters that name server files (--allow-agent allows a whole
spec), and beyond loopback needs a token made at each start (the address it prints).
Needs the serve extra (pip install 'dou-shou-qi[serve]')."""


def _seconds(text: str) -> float:
    """An argparse ``type``: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:30]!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text[:30]!r} is not a number of seconds > 0")
    return value


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _cmd_serve(args: argparse.Namespace) -> int:
    server = jc.import_optional("jungle_cli._serve", "jungle serve", "serve")
    # beyond loopback, every request needs a token made now (as Jupyter's): the address
    # printed below carries it, and the page keeps it in a cookie
    token = None if args.host in LOOPBACK else secrets.token_urlsafe(24)
    app_options = {
        "max_games": args.max_games,
        "workers": args.workers,
        "hint_workers": args.hint_workers,
        "move_time": args.move_time,
        "hint": args.hint,
        "hint_time": args.hint_time,
        "plugins": args.plugin,
        "allowed_hosts": args.allow_host,
        "allowed_agents": args.allow_agent,
        "token": token,
    }
    # a bad --hint, --allow-agent or --plugin is refused before the banner
    server.make_app(host=args.host, **app_options)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    query = "" if token is None else f"?token={token}"
    print(f"jungle serve: http://{shown}:{args.port}/{query}  (Ctrl-C stops)")
    server.serve(args.host, args.port, max_connections=args.max_connections, **app_options)
    return 0


def add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``jungle serve`` on the ``jungle`` command's sub-parsers.

    >>> parser = argparse.ArgumentParser()
    >>> add_serve_parser(parser.add_subparsers())
    >>> args = parser.parse_args(["serve", "--hint", "greedy"])
    >>> args.port, args.hint
    (8000, 'greedy')
    """
    serve = add_command(
        sub,
        "serve",
        summary="play, watch and replay games in the browser",
        description=_DESCRIPTION,
        examples=[
            "jungle serve --port 8080 --hint minimax:depth=4,time=2   # then open the page",
        ],
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface)",
    )
    serve.add_argument("--port", type=int_in(0, 65535), default=8000, help="port to listen on")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name the server answers to, e.g. the machine's name on the "
        "network (repeatable; beside 127.0.0.1, localhost, ::1 and --host)",
    )
    serve.add_argument(
        "--allow-agent",
        action="append",
        default=[],
        metavar="SPEC",
        help="an agent spec requests may use although it names a server file, e.g. "
        "dqn:path=mine.npz (repeatable; exactly this spec)",
    )
    serve.add_argument(
        "--max-connections",
        type=int_in(8, 10_000),
        default=256,
        help="connections at once; beyond them a request gets 503",
    )
    serve.add_argument(
        "--max-games", type=int_in(1, 100_000), default=200, help="games the server keeps at once"
    )
    serve.add_argument(
        "--workers", type=int_in(1, 256), default=2, help="agent searches running at once"
    )
    serve.add_argument(
        "--hint-workers",
        type=int_in(1, 64),
        default=1,
        help="hint searches running at once (processes apart from the agents')",
    )
    serve.add_argument(
        "--move-time",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="seconds an agent may think per move",
    )
    serve.add_argument(
        "--hint",
        default=DEFAULT_HINT,
        metavar="SPEC",
        help="agent spec of the hint agent, for games whose New-game form names none",
    )
    serve.add_argument(
        "--hint-time",
        type=_seconds,
        default=5.0,
        metavar="S",
        help="seconds a hint may take, the wait for a free worker included",
    )
    serve.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module that registers more agents (repeatable)",
    )
    serve.set_defaults(func=_cmd_serve)
