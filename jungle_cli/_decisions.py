"""Agent decisions off the server's event loop: a small pool of worker processes.

``jungle serve`` must stay responsive while a search thinks, and a search must not run
past its time limit. A thread cannot be stopped, and ``concurrent.futures`` pools cannot
cancel a task that has started, so each slot of :class:`DecisionPool` is one worker process
of its own, spoken to over a pipe: a decision that overruns its limit gets the process
killed and replaced, and its slot is free again. The number of slots bounds the searches
running at once; callers beyond it wait for a slot.

Workers are started with ``spawn`` (safe in a process that already runs threads) and import
the ``plugins`` modules, as the arena's workers do, so agents registered by other packages
play here too. A worker ends with its parent, even one killed by SIGKILL
(:func:`jungle_agents.arena._schedule.die_with_parent`).

Agents are built in the workers, never in the caller's process: building one may load a
checkpoint or compile a search (seconds, hundreds of MB). A worker keeps the last
:data:`AGENT_CACHE` agents it built, and ends itself once its memory passes
``max_rss`` bytes (it is replaced on the next decision), so neither many distinct specs
nor a search library's caches grow a worker without bound. Building has a limit of its
own (:data:`BUILD_S`), apart from the decision's thinking time.

>>> from jungle_core import DARK, new_game, legal_actions
>>> pool = DecisionPool(workers=1)
>>> action, seconds = pool.decide(DARK, "random", new_game(), seed=0, timeout=60)
>>> action in legal_actions(new_game())
True
>>> pool.close()
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import queue
import resource
import signal
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import numpy as np

from jungle_agents import Agent, make_agent
from jungle_agents.arena import die_with_parent
from jungle_core import Rules, State

__all__ = ["AgentFailedError", "DecisionPool", "DecisionTimeoutError"]


STARTUP_S = 60.0
BUILD_S = 60.0
"""Seconds a worker may take to build an agent (load its checkpoint, compile its search)."""
AGENT_CACHE = 4
"""Agents a worker keeps built (an AlphaZero agent holds tens of MB)."""
MAX_RSS = 2 << 30
"""A worker ends itself once its resident memory passes this (bytes), after answering;
the pool starts another for the next decision."""


def _rss() -> int:
    """This process's resident memory now, in bytes: ``/proc/self/statm`` on Linux; else
    the peak (``ru_maxrss``). Not the peak on Linux: a spawned worker inherits its parent's
    peak across ``execve``, so a worker of a large process would look full from the start.

    >>> 0 < _rss() < 1 << 40
    True
    """
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)


class DecisionTimeoutError(RuntimeError):
    """An agent did not decide within its time limit (its worker was replaced)."""


class AgentFailedError(RuntimeError):
    """An agent raised an error while deciding; the message names the agent and the error."""


def _worker_main(conn: Connection, plugins: Sequence[str], parent: int, max_rss: int) -> None:
    die_with_parent(parent)  # no worker outlives the server, even one killed by SIGKILL
    # Ctrl-C and `kill` are the server's to handle; it stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module in plugins:
        importlib.import_module(module)
    conn.send(("ready", 0, 0.0))  # imports done: decisions are timed from here
    agents: OrderedDict[tuple[Rules, str], Agent] = OrderedDict()
    while True:
        try:
            rules, spec, state, seed = conn.recv()
        except (EOFError, OSError):
            return
        try:
            agent = agents.get((rules, spec))
            if agent is None:
                agent = make_agent(spec, rules)
                while len(agents) >= AGENT_CACHE:
                    agents.popitem(last=False)
                agents[rules, spec] = agent
            agents.move_to_end((rules, spec))
            conn.send(("built", 0, 0.0))  # thinking is timed from here
            start = time.perf_counter()
            action = int(agent.act(state, np.random.default_rng(seed)))
            reply: tuple[str, int | str, float] = ("ok", action, time.perf_counter() - start)
        except Exception as error:
            reply = ("error", f"{type(error).__name__}: {error}", 0.0)
        retiring = _rss() > max_rss
        if retiring:  # said before the answer, so the pool never sends this worker more
            conn.send(("retiring", 0, 0.0))
        conn.send(reply)
        if retiring:
            return  # the pool starts a fresh worker for the next decision


class _Worker:
    def __init__(self, plugins: Sequence[str], max_rss: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process: BaseProcess = ctx.Process(
            target=_worker_main,
            args=(child, tuple(plugins), os.getpid(), max_rss),
            daemon=True,
        )
        self.process.start()
        child.close()
        # a fresh interpreter takes a second or so to import; that is not thinking time
        try:
            ready = self.conn.poll(STARTUP_S) and self.conn.recv()[0] == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.stop()
            raise AgentFailedError(
                f"a decision worker did not start within {STARTUP_S} s (a --plugin that "
                f"fails to import?)"
            )

    def stop(self) -> None:
        self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)


class DecisionPool:
    """``workers`` processes that run agent decisions, each under a time limit.

    :meth:`decide` blocks its calling thread (the server calls it from a thread pool);
    at most ``workers`` decisions run at once, others wait for a free worker. Workers start
    on first use.
    """

    def __init__(
        self, workers: int = 2, plugins: Sequence[str] = (), max_rss: int = MAX_RSS
    ) -> None:
        if workers < 1:
            raise ValueError(f"a decision pool needs at least one worker, not {workers}")
        self.workers = workers
        self.plugins = tuple(plugins)
        self.max_rss = max_rss
        self._idle: queue.Queue[_Worker | None] = queue.Queue()
        for _ in range(workers):
            self._idle.put(None)  # a slot whose worker starts when first needed
        self._lock = threading.Lock()
        self._all: list[_Worker] = []
        self._closed = False

    def _start(self) -> _Worker:
        worker = _Worker(self.plugins, self.max_rss)
        with self._lock:
            self._all.append(worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        worker.stop()
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)

    def decide(
        self,
        rules: Rules,
        spec: str,
        state: State,
        seed: int,
        timeout: float,
        deadline: float | None = None,
    ) -> tuple[int, float]:
        """The action the agent ``spec`` chooses in ``state`` and its thinking seconds.

        Raises :class:`DecisionTimeoutError` when no answer came within ``timeout``
        seconds of the agent being ready (built within :data:`BUILD_S` seconds; the worker
        is then killed and replaced), and :class:`AgentFailedError` when the agent raised
        (a spec the agent's own checks refuse included). Legality is the caller's to check.
        With a ``deadline`` (a :func:`time.monotonic` instant), the answer or the error
        comes by then, the wait for a free worker included (a worker's first start, a
        second or so, is not counted); without one, the call waits for a free worker as
        long as it takes.
        """
        if self._closed:
            raise RuntimeError("the decision pool is closed")
        try:
            worker = self._idle.get(
                timeout=None if deadline is None else max(deadline - time.monotonic(), 0.0)
            )
        except queue.Empty:
            raise DecisionTimeoutError("no decision worker came free in time; try again") from None
        retiring = False
        try:
            if self._closed:
                raise AgentFailedError("the decision pool is closed")
            if worker is None or not worker.process.is_alive():
                if worker is not None:
                    self._retire(worker)
                started = time.monotonic()
                worker = self._start()
                if deadline is not None:
                    deadline += time.monotonic() - started
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    raise DecisionTimeoutError(f"{spec}: no time left to decide in")
            worker.conn.send((rules, spec, state, seed))
            build = BUILD_S if deadline is None else max(deadline - time.monotonic(), 0.0)
            for limit, what in ((build, "build"), (timeout, "decide")):
                status = "retiring"
                while status == "retiring":  # the worker ends after this answer
                    if not worker.conn.poll(max(limit, 0.0)):
                        self._retire(worker)
                        worker = None
                        raise DecisionTimeoutError(f"{spec} did not {what} within {limit:.1f} s")
                    try:
                        status, value, seconds = worker.conn.recv()
                    except (EOFError, OSError) as error:
                        self._retire(worker)
                        worker = None
                        raise AgentFailedError(
                            f"{spec}: its worker process died ({error!r})"
                        ) from None
                    retiring = retiring or status == "retiring"
                if status != "built":
                    break
                if deadline is not None:
                    timeout = min(timeout, deadline - time.monotonic())
        finally:
            if retiring and worker is not None:
                self._retire(worker)
                worker = None  # its slot starts a fresh worker when next needed
            self._idle.put(worker)
        if status != "ok":
            raise AgentFailedError(f"{spec} failed: {value}")
        return int(value), float(seconds)

    def close(self) -> None:
        """Stop every worker process (decisions in flight fail)."""
        self._closed = True
        with self._lock:
            workers, self._all = self._all, []
        for worker in workers:
            worker.stop()

    def __enter__(self) -> DecisionPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
