"""An external engine played as a jungle agent (the ``engine:`` agent kind).

:class:`EngineAgent` starts the engine's command, shakes hands (``jcei``, or ``uci`` when
asked), and for each decision sends the game so far (``position ... moves ...``) and a
``go`` command, then reads ``bestmove``. Every way an engine can fail — it does not start,
does not answer in time, exits, or answers a malformed or illegal move — raises
:class:`EngineError` naming the engine, the move and the position; the arena records that
game as a forfeit by the engine's side and goes on. The engine process is always reaped:
closed with the agent, at interpreter exit, and killed by the kernel if this process dies
(Linux's parent-death signal).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
import weakref
from typing import Any

import numpy as np

from jungle_agents._base import AgentFailure
from jungle_agents.engine._protocol import position_fen, position_line
from jungle_agents.engine._server import RNG_OPTION
from jungle_core import (
    JungleError,
    Rules,
    State,
    chance_outcomes,
    legal_actions,
    move_text,
    parse_move,
    step_outcome,
)

__all__ = ["EngineAgent", "EngineError"]


class EngineError(AgentFailure):
    """An external engine failed to give a move: the message names the engine, what it
    did (or did not do), the move and the position."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Ask Linux to kill this child when its parent dies (PR_SET_PDEATHSIG)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)


_LIVE: weakref.WeakSet[EngineAgent] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for agent in list(_LIVE):
        agent.close()


class EngineAgent:
    """An engine speaking the engine protocol, as a jungle agent.

    - ``command``: the engine's command line (split like a shell would).
    - ``go``: the ``go`` command's arguments, e.g. ``depth 6`` or ``movetime 250``; by
      default ``movetime`` when ``movetime`` is given, else ``depth`` when ``depth`` is.
    - ``options``: ``NAME=VALUE`` pairs separated by ``;``, sent as ``setoption``.
    - ``start_timeout``: seconds for the handshake; ``move_timeout``: seconds for a move
      without ``movetime`` (with it: the movetime plus ``margin``).
    - ``handshake``: ``jcei`` or ``uci``.

    >>> import sys
    >>> from jungle_core import CLASSIC, new_game, legal_actions
    >>> command = f"{sys.executable} -m jungle_cli engine greedy --rules classic"
    >>> agent = EngineAgent(CLASSIC, command)
    >>> agent.act(new_game(CLASSIC), np.random.default_rng(0)) in legal_actions(new_game(CLASSIC))
    True
    >>> agent.close()
    """

    def __init__(
        self,
        rules: Rules,
        command: str,
        *,
        go: str = "",
        movetime: int = 0,
        depth: int = 0,
        options: str = "",
        start_timeout: float = 10.0,
        move_timeout: float = 60.0,
        margin: float = 1.0,
        handshake: str = "jcei",
        name: str = "",
    ) -> None:
        if handshake not in ("jcei", "uci"):
            raise JungleError(f"handshake must be 'jcei' or 'uci', not {handshake!r}")
        if start_timeout <= 0 or move_timeout <= 0 or margin < 0 or movetime < 0 or depth < 0:
            raise JungleError("timeouts must be > 0 s, margin, movetime and depth >= 0")
        self.rules = rules
        self.command = command
        self.name = name or f"engine:{command}"
        self._argv = shlex.split(command)
        if not self._argv:
            raise JungleError("the engine command is empty")
        self._go = go or (f"movetime {movetime}" if movetime else f"depth {depth}" if depth else "")
        self._movetime = movetime
        self._options = _options(options)
        self._start_timeout = start_timeout
        self._move_timeout = move_timeout
        self._margin = margin
        self._handshake = handshake
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._engine_options: set[str] = set()
        self._start: State | None = None
        self._moves: list[str] = []
        self._last: State | None = None
        self._sent: int | None = None
        self.start()

    # ------------------------------------------------------------------ process

    def start(self) -> None:
        """Start the engine and shake hands; :class:`EngineError` if it does not answer."""
        try:
            self._process = subprocess.Popen(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                bufsize=1,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
            )
        except OSError as error:
            raise EngineError(f"engine {self.command!r} did not start: {error}") from None
        _LIVE.add(self)
        self._lines = queue.Queue()
        threading.Thread(target=self._read, args=(self._process, self._lines), daemon=True).start()
        deadline = time.monotonic() + self._start_timeout
        self._send(self._handshake)
        while True:
            line = self._next(deadline, f"the '{self._handshake}' handshake")
            if line.startswith("option name "):
                self._engine_options.add(_option_name(line))
            if line in ("jceiok", "uciok"):
                break
        for key, value in self._options:
            self._send(f"setoption name {key} value {value}")
        self._send("isready")
        while self._next(deadline, "'isready'") != "readyok":
            pass

    @staticmethod
    def _read(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\r\n"))
        lines.put(None)

    def _send(self, line: str) -> None:
        process = self._process
        try:
            assert process is not None and process.stdin is not None
            process.stdin.write(line + "\n")
            process.stdin.flush()
        except (OSError, ValueError, AssertionError):
            raise EngineError(
                f"engine {self.command!r} exited{self._exit_code()} before {line[:80]!r}"
            ) from None

    def _next(self, deadline: float, waiting_for: str) -> str:
        try:
            line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            self.close()
            raise EngineError(
                f"engine {self.command!r} did not answer {waiting_for} in time"
            ) from None
        if line is None:
            code = self._exit_code()
            self.close()
            raise EngineError(f"engine {self.command!r} exited{code} while {waiting_for}")
        return line

    def _exit_code(self) -> str:
        process = self._process
        if process is None:
            return ""
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.2)
        return "" if process.returncode is None else f" with code {process.returncode}"

    def close(self) -> None:
        """Ask the engine to quit, kill it if it does not, and reap it."""
        process, self._process = self._process, None
        _LIVE.discard(self)
        if process is None:
            return
        with contextlib.suppress(OSError, ValueError):
            assert process.stdin is not None
            process.stdin.write("quit\n")
            process.stdin.close()
        try:
            process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    # ------------------------------------------------------------------ playing

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The engine's move in ``state``; :class:`EngineError` if it fails to give one."""
        if self._process is None:
            self.start()
        self._follow(state)
        assert self._start is not None
        fen = position_fen(state)
        self._send(position_line(self._start, self._moves))
        if RNG_OPTION in self._engine_options:
            state_json = json.dumps(rng.bit_generator.state, separators=(",", ":"))
            self._send(f"setoption name {RNG_OPTION} value {state_json}")
        self._send(f"go {self._go}".strip())
        budget = self._movetime / 1000 + self._margin if self._movetime else self._move_timeout
        deadline = time.monotonic() + budget
        while True:
            line = self._next(deadline, f"'go' in {fen!r}")
            if line.startswith("info string jungle-rng "):
                with contextlib.suppress(ValueError, TypeError, KeyError):
                    rng.bit_generator.state = json.loads(line.split(" ", 3)[3])
            elif line.startswith("bestmove"):
                break
        words = line.split()
        move = words[1] if len(words) > 1 else ""
        try:
            action, _ = parse_move(state, move)
        except (JungleError, TypeError) as error:
            raise EngineError(
                f"engine {self.command!r} answered {line[:80]!r} in {fen!r}: {error}"
            ) from None
        if action not in legal_actions(state):  # pragma: no cover - parse_move checks
            raise EngineError(f"engine {self.command!r} played the illegal {move!r} in {fen!r}")
        self._last, self._sent = state, action
        return action

    def _follow(self, state: State) -> None:
        """Extend the game's move list to ``state``, or start a new game at it."""
        if self._last is not None and self._sent is not None:
            path = _bridge(self._last, self._sent, state)
            if path is not None:
                self._moves += path
                return
        self._start, self._moves = state, []


def _bridge(before: State, sent: int, after: State) -> list[str] | None:
    """The moves (with flips' outcomes) that lead from ``before``, where ``sent`` was
    played, to ``after`` in two plies (ours, then the opponent's) or one (ours, when the
    opponent had no move); None when no such moves exist (a new game)."""
    for mine, first in _steps(before, sent, after):
        if first == after:
            return [mine]
        if first.ply >= after.ply:
            continue
        for action in legal_actions(first):
            for theirs, second in _steps(first, action, after):
                if second == after:
                    return [mine, theirs]
    return None


def _steps(state: State, action: int, target: State) -> list[tuple[str, State]]:
    """Each way ``action`` can turn out in ``state``: its move text and the next state;
    for a flip, the outcome ``target`` shows at that square first."""
    outcomes = [o for o, p in chance_outcomes(state, action) if p > 0 or o < 0]
    square = action if action < len(state.board) else -1
    if square >= 0 and target.board[square] > 0:
        shown = target.board[square]
        outcomes.sort(key=lambda o: o < 0 or (o // 8, o % 8 + 1) != _owner_rank(shown))
    out = []
    for o in outcomes:
        text = move_text(state, action, o)
        out.append((text, step_outcome(state, action, o)))
    return out


def _owner_rank(code: int) -> tuple[int, int]:
    from jungle_core import piece_owner, piece_rank

    return piece_owner(code), piece_rank(code)


def _options(text: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(";"):
        if not item.strip():
            continue
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise JungleError(f"engine option {item.strip()!r} is not NAME=VALUE")
        pairs.append((key.strip(), value.strip()))
    return pairs


def _option_name(line: str) -> str:
    words = line.split()
    cut = words.index("type") if "type" in words else len(words)
    return " ".join(words[2:cut])


def make_engine_agent(rules: Rules, **params: Any) -> EngineAgent:
    """The ``engine:`` kind's factory: ``engine:cmd=COMMAND,go=depth 6,...``."""
    command = str(params.pop("cmd"))
    if not command.strip():
        raise JungleError("engine: needs cmd=COMMAND (the engine's command line)")
    agent = EngineAgent(
        rules,
        command,
        go=str(params["go"]),
        movetime=int(params["movetime"]),
        depth=int(params["depth"]),
        options=str(params["options"]),
        start_timeout=float(params["start_timeout"]),
        move_timeout=float(params["move_timeout"]),
        margin=float(params["margin"]),
        handshake=str(params["handshake"]),
    )
    return agent
