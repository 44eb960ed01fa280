"""Engines talk to engines: the engine protocol, both ways.

- :func:`serve` / :class:`EngineServer`: any agent of the registry served over the
  protocol on standard input and output (``jungle engine AGENT``), so GUIs, tournament
  managers and other engines can play it.
- :class:`EngineAgent`: any engine that speaks the protocol played as a jungle agent
  (the ``engine:`` agent kind: ``engine:cmd=PATH,go=depth 6``), in matches, tournaments,
  ``jungle play`` and the browser. A failing engine raises :class:`EngineError`, and the
  arena records the game as its side's forfeit.

The protocol, its DARK extension and a transcript: docs/engine.md.

>>> lines: list[str] = []
>>> from jungle_core import CLASSIC
>>> server = EngineServer("random", CLASSIC, lines.append)
>>> _ = server.handle("position fen l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/1C3D1/T5L w - - 0 1")
>>> _ = server.handle("perft 2")
>>> lines
['perft 2 576']
"""

from jungle_agents._base import Param, register_agent
from jungle_agents.engine._client import EngineAgent, EngineError, make_engine_agent
from jungle_agents.engine._protocol import Limits, parse_go, parse_position, position_line
from jungle_agents.engine._server import RNG_OPTION, EngineServer, serve

__all__ = [
    "RNG_OPTION",
    "EngineAgent",
    "EngineError",
    "EngineServer",
    "Limits",
    "parse_go",
    "parse_position",
    "position_line",
    "register_engine_agent",
    "serve",
]

_PARAMS = {
    "cmd": Param(str, "", "the engine's command line (required)"),
    "go": Param(
        str, "", "the go command's arguments, e.g. 'depth 6' (default: from movetime/depth)"
    ),
    "movetime": Param(int, 0, "milliseconds a move (go movetime); 0: not used"),
    "depth": Param(int, 0, "search depth (go depth); 0: not used"),
    "options": Param(str, "", "engine options sent with setoption, NAME=VALUE;NAME=VALUE"),
    "start_timeout": Param(float, 10.0, "seconds the engine has to start and shake hands"),
    "move_timeout": Param(float, 60.0, "seconds for a move without movetime"),
    "margin": Param(float, 1.0, "seconds allowed past movetime before the engine forfeits"),
    "handshake": Param(str, "jcei", "the first command", ("jcei", "uci")),
}


def register_engine_agent() -> None:
    """Register the ``engine:`` agent kind (done when :mod:`jungle_agents` is imported)."""
    register_agent(
        "engine",
        make_engine_agent,
        _PARAMS,
        "an external engine speaking the engine protocol (docs/engine.md)",
        replace=True,
    )
