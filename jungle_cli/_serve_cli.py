"""The ``jungle serve`` sub-command's options; the server itself (:mod:`jungle_cli._serve`)
needs the ``serve`` extra and is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import importlib

__all__ = ["add_serve_parser"]


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        server = importlib.import_module("jungle_cli._serve")
    except ImportError as error:
        raise OSError(
            f"jungle serve needs the serve extra: pip install 'jungle[serve]' ({error})"
        ) from None
    print(f"jungle serve: http://{args.host}:{args.port}/  (Ctrl-C stops)")
    server.serve(
        args.host,
        args.port,
        max_games=args.max_games,
        workers=args.workers,
        move_time=args.move_time,
        plugins=args.plugin,
    )
    return 0


def add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``jungle serve`` on the ``jungle`` command's sub-parsers.

    >>> parser = argparse.ArgumentParser()
    >>> add_serve_parser(parser.add_subparsers())
    >>> parser.parse_args(["serve"]).port
    8000
    """
    serve = sub.add_parser("serve", help="play, watch and replay games in the browser")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: loopback only)"
    )
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--max-games", type=int, default=200, help="games kept at once")
    serve.add_argument("--workers", type=int, default=2, help="agent searches at once")
    serve.add_argument(
        "--move-time", type=float, default=10.0, help="seconds an agent may think per move"
    )
    serve.add_argument(
        "--plugin", action="append", default=[], help="a module that registers more agents"
    )
    serve.set_defaults(func=_cmd_serve)
