"""Where the arena's games are played: tasks, worker processes, and the bounded loop.

- A :class:`Task` is one game of a run; :func:`run_task` plays it wherever it runs (this
  process, a worker process, a Ray task) and returns its games-file entry. A process makes
  each agent once (:func:`agent`) and keeps it for the games that follow.
- :func:`run_bounded` is the one submission loop of every backend: it keeps at most
  ``limit`` games in flight on a :class:`Runner` (:class:`ProcessPool` here, Ray tasks in
  :mod:`jungle_agents.arena._ray`), draws the tasks from a lazy iterator as games finish (a run
  of millions of games never holds its tasks), and stops every game in flight at once when
  it is interrupted (Ctrl-C), a game fails or the caller's ``finished`` raises: the games
  already written stay, the ones in flight are played again on resume.
- :class:`ProcessPool`: worker processes on this machine, and why it is not a standard
  library pool.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkContext, SpawnContext
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Any, Protocol

import attrs
import numpy as np

from jungle_agents._base import Agent, make_agent
from jungle_agents.arena._game_loop import play_game_as
from jungle_agents.arena._records import GameResult
from jungle_core import JungleError, Rules

__all__ = [
    "ProcessPool",
    "RemoteTraceback",
    "Runner",
    "Task",
    "agent",
    "die_with_parent",
    "game_seed",
    "import_plugins",
    "init_worker",
    "run_bounded",
    "run_task",
]

Finished = Callable[[dict[str, Any]], None]
"""``finished(entry)``: called with each game's games-file entry as the game finishes."""


def game_seed(seed: int, a: str, b: str, index: int, deals: str = "independent") -> int:
    """The seed of game ``index`` between specs ``a`` and ``b`` in a run seeded ``seed``:
    one of its own for each pair, or with ``deals="duplicate"`` the same for every pair
    (so that two runs of one seed, with any agents, play game ``index`` from the same
    hidden layout: :data:`jungle_agents.arena._game_loop.DEALS`).

    >>> game_seed(0, "random", "greedy", 0) == game_seed(0, "random", "greedy", 0)
    True
    >>> game_seed(0, "random", "greedy", 0) == game_seed(0, "greedy", "minimax", 0)
    False
    >>> game_seed(0, "random", "greedy", 0, "duplicate") == game_seed(0, "a", "b", 0, "duplicate")
    True
    """
    if deals == "duplicate":
        return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])
    pair = zlib.crc32(f"{a}\x00{b}".encode())
    return int(np.random.SeedSequence([seed, pair, index]).generate_state(1)[0])


@attrs.frozen
class Task:
    """One game of a run: ``pair`` (A, B) as the run lists them, game ``index`` (A moves
    first when it is even), its ``seed`` (:func:`game_seed`), ``max_plies``, how its
    chance is dealt (``deals``, :data:`jungle_agents.arena._game_loop.DEALS`), and its
    random opening: ``openings`` plies drawn from ``opening_seed`` (the run gives games
    ``2k`` and ``2k + 1``, the same two agents with the colours swapped, one opening seed:
    :func:`jungle_agents.arena.play_game`)."""

    rules: Rules
    pair: tuple[str, str]
    index: int
    seed: int
    max_plies: int | None
    deals: str = "independent"
    openings: int = 0
    opening_seed: int | None = None


@functools.cache
def agent(rules: Rules, spec: str) -> Agent:
    """The agent of ``spec`` under ``rules``, made once per process and kept for every game
    the process plays after (making one may load a checkpoint)."""
    return make_agent(spec, rules)


def run_task(task: Task) -> dict[str, Any]:
    """Play a task's game and return its games-file entry (:meth:`GameResult.to_json`),
    the players recorded by their specs. A game that fails raises ``RuntimeError`` naming
    the game, the pair, who moved first and the seed."""
    a, b = task.pair
    first, second = (a, b) if task.index % 2 == 0 else (b, a)
    try:
        record = play_game_as(
            (first, second),
            task.rules,
            agent(task.rules, first),
            agent(task.rules, second),
            task.seed,
            max_plies=task.max_plies,
            deals=task.deals,
            openings=task.openings,
            opening_seed=task.opening_seed,
        )
    except Exception as error:
        raise RuntimeError(
            f"game {task.index} of {a} vs {b} ({first} first, seed {task.seed}) failed: "
            f"{type(error).__name__}: {error}"
        ) from error
    return GameResult(task.pair, task.index, record).to_json()


def import_plugins(plugins: Sequence[str]) -> None:
    """Import each plugin module (it registers agent kinds); one that cannot be imported
    raises :class:`jungle_core.JungleError` naming it."""
    for module in plugins:
        try:
            importlib.import_module(module)
        except Exception as error:  # a plugin's own code may raise anything on import
            raise JungleError(
                f"plugin {module!r} cannot be imported: {type(error).__name__}: {error}"
            ) from None


def init_worker(plugins: Sequence[str]) -> None:
    """Set up a worker process: Ctrl-C is the parent's to handle (it stops the workers and
    keeps the finished games), SIGTERM ends the worker at once (a forked worker inherits
    its parent's handlers, and ``jungle`` turns SIGTERM into Ctrl-C), and the plugins are
    imported (they register agent kinds)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for module in plugins:
        importlib.import_module(module)


def die_with_parent(
    parent: int | None = None, poll_s: float = 0.25, *, pdeathsig: bool = True
) -> None:
    """Make this worker process end when its parent dies, even by SIGKILL or the
    out-of-memory killer (which run no clean-up): a worker in the middle of a search would
    otherwise run on at full CPU, holding its resource tracker, with nobody to answer.

    Call it first thing in the worker process itself. Two mechanisms: on Linux, with
    ``pdeathsig``, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (immediate; but it fires when the
    *thread* that started the worker ends, so the parent asks for it only from a thread
    that outlives its workers); everywhere, a daemon thread that ends the process
    (``os._exit``) within ``poll_s`` seconds of the parent's pid changing (the orphan is
    re-parented). With ``parent`` (the pid the parent passed down), a worker whose parent
    died before this call ends at once.

    >>> def worker_main(conn):  # the target of a worker process
    ...     die_with_parent()
    ...     while (task := conn.recv()) is not None:
    ...         conn.send(run_task(task))
    """
    if parent is None:
        parent = os.getppid()
    if pdeathsig and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PDEATHSIG
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="jungle-parent-watch", daemon=True).start()


# ------------------------------------------------------------ the bounded loop


class Runner(Protocol):
    """Somewhere games run: a backend of :func:`run_bounded`."""

    def submit(self, task: Task) -> None:
        """Start a game (the loop never has more than its ``limit`` in flight)."""

    def next_result(self) -> dict[str, Any]:
        """Wait for a game in flight to finish and return its entry, or raise what the
        game raised."""

    def stop(self) -> None:
        """Abandon every game in flight, now (it may be called more than once)."""


def run_bounded(tasks: Iterable[Task], runner: Runner, limit: int, finished: Finished) -> None:
    """Play ``tasks`` on ``runner``, at most ``limit`` at a time, calling ``finished(entry)``
    as each game finishes (in the order they finish).

    The tasks are drawn one at a time as games finish, so a run of millions holds
    ``limit`` of them. A game's successor starts before ``finished`` writes it (an fsync),
    so no worker waits on the disk. Any exception (Ctrl-C, a game that failed, ``finished``
    raising, a runner that broke) stops the runner before it propagates: the games
    ``finished`` took stay taken, the ones in flight are lost (a resumed run plays them).

    >>> class Here:  # a runner that plays each game when it is submitted
    ...     def __init__(self): self.done = []
    ...     def submit(self, task): self.done.append(task.index)
    ...     def next_result(self): return {"game": self.done.pop(0)}
    ...     def stop(self): pass
    >>> from jungle_core import DARK
    >>> seen = []
    >>> tasks = (Task(DARK, ("a", "b"), i, 0, None) for i in range(5))
    >>> run_bounded(tasks, Here(), 2, lambda entry: seen.append(entry["game"]))
    >>> seen
    [0, 1, 2, 3, 4]
    """
    queue = iter(tasks)
    in_flight = 0
    try:
        for task in queue:
            runner.submit(task)
            in_flight += 1
            if in_flight >= limit:
                break
        while in_flight:
            entry = runner.next_result()
            in_flight -= 1
            successor = next(queue, None)
            if successor is not None:
                runner.submit(successor)
                in_flight += 1
            finished(entry)
    except BaseException:
        runner.stop()
        raise


# ----------------------------------------------------------- worker processes


class RemoteTraceback(Exception):
    """The traceback of an error raised in a worker process: the ``__cause__`` of the
    error the parent raises again, so the report shows where it happened."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text}"""'


def _serve(
    conn: Connection,
    plugins: tuple[str, ...],
    parent_ends: Sequence[Connection],
    parent: int,
    pdeathsig: bool,
) -> None:
    """A worker process's loop: play each task the parent sends, send back ``(True,
    entry, "")`` or ``(False, error, traceback)``; end at ``None`` or when the parent is
    gone (:func:`die_with_parent`, even in the middle of a game). ``parent_ends``: the
    parent's ends of the pipes, which a forked worker inherits; closed here, so that a
    worker sees the end of its pipe when the parent dies. ``parent``: the parent's pid;
    ``pdeathsig``: whether it started the worker from its main thread."""
    die_with_parent(parent, pdeathsig=pdeathsig)
    for end in parent_ends:
        end.close()
    init_worker(plugins)
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        try:
            reply: tuple[bool, Any, str] = (True, run_task(task), "")
        except BaseException as raised:  # the parent raises it again, as a pool's future does
            reply = (False, raised, traceback.format_exc())
        try:
            conn.send(reply)  # pickled whole before a byte is written
        except OSError:  # the parent is gone
            return
        except Exception:
            ok, error, text = reply
            if ok:
                raise
            # an error that cannot be pickled: send what it said
            conn.send((ok, RuntimeError(f"{type(error).__name__}: {error}"), text))


@attrs.define
class _Worker:
    process: BaseProcess
    conn: Connection
    busy: bool = False


class ProcessPool:
    """Worker processes on this machine, each given one game at a time through a pipe of its
    own; a :class:`Runner` of at most ``size`` games in flight. Use it in a ``with``
    block: a normal exit lets the workers end, an exception stops them.

    Two guarantees of a run, and why neither standard pool keeps both through its public
    API (on Python 3.11):

    - *Stopping is immediate.* Ctrl-C, a failed game or a failing write ends every worker
      at once (``Process.terminate``), not after the games in flight, which may take
      minutes: the finished games are in the games file, the ones in flight are played
      again on resume. :class:`concurrent.futures.ProcessPoolExecutor` cannot stop a
      running worker before Python 3.14 (``terminate_workers``); the arena used to reach
      into its private ``_processes`` for this.
    - *A dead worker is an error, not a hang.* A worker that dies (killed by the
      out-of-memory killer, a crash in native code, a stray ``kill``) fails the run at
      once with :class:`concurrent.futures.process.BrokenProcessPool` naming its exit
      code, as the executor did. :class:`multiprocessing.pool.Pool` (``imap_unordered``,
      ``terminate``) replaces a dead worker and waits for ever for the game it held
      (https://github.com/python/cpython/issues/66587); a worker killed while it waits
      for a task leaves the task queue's lock held
      (https://github.com/python/cpython/issues/96062), and ``terminate`` then blocks on it.

    Here no lock is shared between processes (a pipe per worker), and the parent waits on
    every busy worker's pipe and every worker's sentinel together
    (:func:`multiprocessing.connection.wait`), so it sees a result and a death alike as
    they happen; all of it is :mod:`multiprocessing`'s documented API. A worker's game
    starts as soon as the parent has its last result, before that result is written.

    Workers are forked (they start at once, and the calling script needs no ``if __name__
    == "__main__"`` guard), except when JAX is loaded: forking a process that has started
    JAX's threads can deadlock, so they are spawned fresh (and the script needs the guard).
    """

    def __init__(self, size: int, plugins: Sequence[str]) -> None:
        spawn = "jax" in sys.modules
        context: SpawnContext | ForkContext = (
            multiprocessing.get_context("spawn") if spawn else multiprocessing.get_context("fork")
        )
        self.size = size
        self._workers: list[_Worker] = []
        self._stopped = False
        # a parent-death signal follows the starting thread: only the main one outlives all
        main = threading.current_thread() is threading.main_thread()
        try:
            for _ in range(size):
                here, there = context.Pipe()
                # a forked worker holds copies of the parent's ends: it closes them
                inherited = [] if spawn else [*(w.conn for w in self._workers), here]
                process = context.Process(
                    target=_serve, args=(there, tuple(plugins), inherited, os.getpid(), main)
                )
                try:
                    process.start()
                finally:
                    there.close()  # the worker has its own copy of its end
                self._workers.append(_Worker(process, here))
        except BaseException:
            self.stop()
            raise

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.stop()

    def submit(self, task: Task) -> None:
        """Give the task to an idle worker."""
        worker = next((w for w in self._workers if not w.busy), None)
        if worker is None:
            raise RuntimeError(f"all {self.size} workers are busy: no room for another game")
        try:
            worker.conn.send(task)
        except OSError:
            raise self._broken(worker) from None
        worker.busy = True

    def next_result(self) -> dict[str, Any]:
        """The entry of the next game to finish (what it raised, raised again);
        :class:`BrokenProcessPool` when a worker has died."""
        busy = {w.conn: w for w in self._workers if w.busy}
        ends = {w.process.sentinel: w for w in self._workers}
        ready = wait([*busy, *ends])
        replies = [busy[r] for r in ready if isinstance(r, Connection)]
        if not replies:  # only sentinels: a worker ended
            raise self._broken(ends[next(r for r in ready if isinstance(r, int))])
        worker = replies[0]
        try:
            ok, value, text = worker.conn.recv()
        except (EOFError, OSError):  # the worker ended before its reply was whole
            raise self._broken(worker) from None
        worker.busy = False
        if not ok:
            raise value from RemoteTraceback(text)
        entry: dict[str, Any] = value
        return entry

    def _broken(self, worker: _Worker) -> BrokenProcessPool:
        worker.process.join(1.0)  # its exit code, once the system has it
        return BrokenProcessPool(
            f"a worker process (pid {worker.process.pid}) ended unexpectedly (exit code "
            f"{worker.process.exitcode}); the games in flight are lost"
        )

    def stop(self) -> None:
        """End every worker now: SIGTERM, then SIGKILL for one still there a second later."""
        self._stopped = True
        for w in self._workers:
            w.process.terminate()
        for w in self._workers:
            w.process.join(1.0)
            if w.process.exitcode is None:
                w.process.kill()
                w.process.join()
            w.conn.close()

    def close(self) -> None:
        """Let the workers end (each after its game in flight: none, after a full run)."""
        if self._stopped:
            return
        for w in self._workers:
            with contextlib.suppress(OSError):  # it has ended already
                w.conn.send(None)
        for w in self._workers:
            w.process.join()
            w.conn.close()
