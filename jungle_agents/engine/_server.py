"""An agent of the registry served over the engine protocol (``jungle engine AGENT``).

:class:`EngineServer` reads one command line at a time and writes its answers through a
callback; :func:`serve` runs it on standard input and output. The agent searches in a
thread, so ``isready``, ``stop`` and ``quit`` are answered while it thinks. A line it
cannot use is answered ``info string error ...`` and changes nothing: no input crashes it
or leaves it waiting.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any, ClassVar

import numpy as np

from jungle_agents._base import Agent, Param, expand_preset, kind_params, make_agent
from jungle_agents.engine._protocol import Limits, parse_go, position_fen, position_states
from jungle_core import (
    CLASSIC,
    DARK,
    JungleError,
    Rules,
    State,
    __version__,
    is_chance_action,
    legal_actions,
    move_text,
    new_game,
    outcome,
    perft,
    render,
    step_outcome,
)

__all__ = ["RNG_OPTION", "EngineServer", "serve"]

RNG_OPTION = "JungleRng"
"""The option through which a client hands the server its random generator's state for
the next ``go`` (a JSON object, numpy's ``bit_generator.state``); the server answers the
state after the search in ``info string jungle-rng ...``. With it, an agent played through
the protocol draws exactly the random numbers it would draw in process."""

MAX_LINE = 1 << 20
"""Longer command lines are refused (a position of a million characters is no game)."""

MAX_PERFT = {"classic": 4, "dark": 3}
"""The deepest ``perft`` the server counts, by variant (each about a second here; one
ply deeper takes minutes in Python, which a client could otherwise ask for)."""

_RULES = {"classic": CLASSIC, "dark": DARK}


class EngineServer:
    """The protocol's engine side for one agent spec.

    ``write(line)`` receives every answer line (without its newline).

    >>> lines: list[str] = []
    >>> server = EngineServer("greedy", CLASSIC, lines.append)
    >>> for command in ("jcei", "position startpos moves a3a4", "go", "quit"):
    ...     _ = server.handle(command)
    >>> server.wait()
    >>> lines[-1].startswith("bestmove ")
    True
    >>> "jceiok" in lines and "readyok" not in lines
    True
    """

    def __init__(
        self, spec: str, rules: Rules, write: Callable[[str], None], seed: int = 0
    ) -> None:
        self.name, self._params = expand_preset(spec)  # a preset serves its spec
        self._kind_params: dict[str, Param] = kind_params(self.name)
        self._rules = rules
        self._write_line = write
        self._lock = threading.Lock()
        self._agents: dict[str, Agent] = {}
        self._rng = np.random.default_rng(seed)
        self._start: State = new_game(rules)
        self._state: State = self._start
        self._earlier: list[State] = []  # the positions of the game before ``_state``
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        make_agent(spec, rules)  # a bad spec fails here, before the first command

    # ------------------------------------------------------------------ output

    def _write(self, line: str) -> None:
        with self._lock:
            self._write_line(line)

    def _error(self, message: str) -> None:
        self._write(f"info string error {' '.join(message.split())[:400]}")

    # ------------------------------------------------------------------ commands

    def handle(self, line: str) -> bool:
        """Answer one command line; ``False`` once it was ``quit``."""
        if len(line) > MAX_LINE:
            self._error(f"a line of {len(line)} characters is longer than {MAX_LINE}")
            return True
        words = line.split()
        if not words:
            return True
        command, args = words[0], words[1:]
        try:
            if command == "quit":
                self._stop.set()
                return False
            handler = self._HANDLERS.get(command)
            if handler is None:
                self._error(f"unknown command {command[:40]!r}")
            else:
                handler(self, args)
        except (JungleError, ValueError, TypeError) as error:
            self._error(str(error))
        return True

    def _hello(self, args: list[str]) -> None:
        self._write(f"id name jungle {__version__} {self._spec()}")
        self._write("id author the jungle authors")
        rule_names = " ".join(f"var {name}" for name in _RULES)
        current = self._rules.variant
        self._write(f"option name Rules type combo default {current} {rule_names}")
        self._write(f"option name {RNG_OPTION} type string default <empty>")
        for key, param in self._kind_params.items():
            self._write(_option_line(key, param, self._params.get(key)))

    def _jcei(self, args: list[str]) -> None:
        self._hello(args)
        self._write("jceiok")

    def _uci(self, args: list[str]) -> None:
        self._hello(args)
        self._write("uciok")

    def _isready(self, args: list[str]) -> None:
        self._wait_search()
        self._write("readyok")

    def _newgame(self, args: list[str]) -> None:
        self._wait_search()
        self._start = self._state = new_game(self._rules)
        self._earlier = []

    def _setoption(self, args: list[str]) -> None:
        if not args or args[0] != "name":
            raise JungleError("write 'setoption name NAME [value VALUE]'")
        cut = args.index("value") if "value" in args else len(args)
        name, value = " ".join(args[1:cut]), " ".join(args[cut + 1 :])
        self._wait_search()
        if name.lower() == "rules":
            rules = _RULES.get(value.lower())
            if rules is None:
                raise JungleError(f"option Rules is one of {sorted(_RULES)}, not {value[:40]!r}")
            self._rules, self._agents = rules, {}
            self._start = self._state = new_game(rules)
            self._earlier = []
        elif name == RNG_OPTION:
            self._rng = _generator(value)
        elif name.lower() in self._kind_params:
            key = name.lower()
            trial = dict(self._params, **{key: value})
            make_agent(_spec(self.name, trial), self._rules)  # refuse a bad value now
            self._params, self._agents = trial, {}
        else:
            raise JungleError(f"no option {name[:40]!r}")

    def _position(self, args: list[str]) -> None:
        self._wait_search()
        positions, _ = position_states(self._rules, args)
        self._start, self._state, self._earlier = positions[0], positions[-1], positions[:-1]

    def _go(self, args: list[str]) -> None:
        self._wait_search()
        limits = parse_go(args, self._state.to_move)
        state = self._state
        if outcome(state) is not None:
            raise JungleError(f"the game is over in {position_fen(state)!r}: no move to search")
        agent = self._agent(limits)
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._search, args=(agent, state, limits, self._earlier), daemon=True
        )
        self._thread.start()

    def _search(self, agent: Agent, state: State, limits: Limits, earlier: list[State]) -> None:
        try:
            remember = getattr(agent, "remember", None)
            if callable(remember):  # the game's positions before this one, from 'position'
                remember(earlier)
            action = agent.act(state, self._rng)
            if action not in legal_actions(state):
                raise JungleError(f"the agent chose the illegal action {action!r}")
            info = getattr(agent, "last", None)
            text = move_text(state, int(action))
            if info is not None:
                mate = getattr(info, "mate", None)
                score = f"mate {mate}" if mate is not None else f"cp {round(100 * info.value)}"
                self._write(
                    f"info depth {info.depth} score {score} "
                    f"nodes {info.nodes} time {round(1000 * info.seconds)} "
                    f"pv {_pv_text(state, int(action), getattr(info, 'pv', ()))}"
                )
            state_json = json.dumps(self._rng.bit_generator.state, separators=(",", ":"))
            self._write(f"info string jungle-rng {state_json}")
            if limits.infinite:
                self._stop.wait()
            self._write(f"bestmove {text}")
        except Exception as error:  # the engine must answer, whatever the agent did
            self._error(f"{type(error).__name__}: {error}")
            self._write("bestmove (none)")

    def _stop_search(self, args: list[str]) -> None:
        self._stop.set()
        self._wait_search()

    def _perft(self, args: list[str]) -> None:
        if len(args) != 1 or not args[0].isascii() or not args[0].isdigit():
            raise JungleError("write 'perft N' with a whole number N")
        limit = MAX_PERFT[self._rules.variant]
        depth = int(args[0][:3])
        if not 0 <= depth <= limit or len(args[0]) > 3:
            raise JungleError(f"perft depth must be in 0..{limit}, not {args[0][:12]}")
        self._wait_search()
        self._write(f"perft {depth} {perft(self._state, depth)}")

    def _moves(self, args: list[str]) -> None:
        self._wait_search()
        state = self._state
        self._write("moves " + " ".join(move_text(state, a) for a in legal_actions(state)))

    def _display(self, args: list[str]) -> None:
        self._wait_search()
        for row in render(self._state).splitlines():
            self._write(f"info string {row}")
        self._write(f"info string fen {position_fen(self._state)}")

    _HANDLERS: ClassVar[dict[str, Callable[[EngineServer, list[str]], None]]] = {
        "jcei": _jcei,
        "uci": _uci,
        "isready": _isready,
        "jceinewgame": _newgame,
        "ucinewgame": _newgame,
        "setoption": _setoption,
        "position": _position,
        "go": _go,
        "stop": _stop_search,
        "perft": _perft,
        "moves": _moves,
        "d": _display,
    }

    # ------------------------------------------------------------------ helpers

    def _spec(self, overrides: dict[str, str] | None = None) -> str:
        return _spec(self.name, dict(self._params, **(overrides or {})))

    def _agent(self, limits: Limits) -> Agent:
        overrides: dict[str, str] = {}
        if limits.depth is not None and "depth" in self._kind_params:
            overrides["depth"] = str(limits.depth)
            if limits.movetime is None and "time" in self._kind_params:
                overrides["time"] = "0"  # ``go depth N`` searches to depth N, untimed
        if limits.movetime is not None and "time" in self._kind_params:
            overrides["time"] = f"{limits.movetime / 1000:g}"
        spec = self._spec(overrides)
        agent = self._agents.get(spec)
        if agent is None:
            agent = self._agents[spec] = make_agent(spec, self._rules)
        return agent

    def _wait_search(self) -> None:
        thread = self._thread
        if thread is not None:
            thread.join()
            self._thread = None

    def wait(self) -> None:
        """Wait for a search in progress to end (after ``stop`` for ``go infinite``)."""
        self._wait_search()


def _spec(name: str, params: dict[str, str]) -> str:
    return name + (":" + ",".join(f"{k}={v}" for k, v in params.items()) if params else "")


def _option_line(key: str, param: Param, given: str | None) -> str:
    default = given if given is not None else param.default
    if param.kind is bool:
        shown = "true" if str(default).lower() in ("1", "true", "yes", "on") else "false"
        return f"option name {key} type check default {shown}"
    if param.kind is int:
        return f"option name {key} type spin default {default} min -2147483648 max 2147483647"
    return f"option name {key} type string default {default}"


def _generator(text: str) -> np.random.Generator:
    """A generator in the state a client sent (numpy's ``bit_generator.state`` as JSON)."""
    try:
        state: Any = json.loads(text)
        bit_generator = getattr(np.random, str(state["bit_generator"]))()
        bit_generator.state = state
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise JungleError(f"{RNG_OPTION} is not a generator state: {error}") from None
    return np.random.Generator(bit_generator)


def serve(
    spec: str,
    rules: Rules,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    *,
    seed: int = 0,
) -> int:
    """Serve ``spec`` on ``stdin``/``stdout`` until ``quit`` or the end of the input; 0.
    ``seed`` seeds the agent's generator (a client may send its own, see
    :data:`RNG_OPTION`)."""
    source = sys.stdin if stdin is None else stdin
    sink = sys.stdout if stdout is None else stdout

    def write(line: str) -> None:
        sink.write(line + "\n")
        sink.flush()

    server = EngineServer(spec, rules, write, seed)
    for line in source:
        if not server.handle(line):
            break
    server.wait()
    return 0


def _pv_text(state: State, action: int, pv: Sequence[int]) -> str:
    """The principal variation an agent reports (``pv``, its chosen ``action`` first),
    as far as its moves are legal and without chance; else the chosen move alone."""
    line = list(pv) if pv and pv[0] == action else [action]
    texts = []
    for a in line:
        if outcome(state) is not None or a not in legal_actions(state):
            break
        if is_chance_action(state, a):
            texts.append(move_text(state, a))
            break
        texts.append(move_text(state, a))
        state = step_outcome(state, a, -1)
    return " ".join(texts)
