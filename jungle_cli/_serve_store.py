"""The games of one ``jungle serve`` and their agent turns: :class:`GameStore`.

Plain asyncio over :class:`jungle_cli._games.ServedGame` (no web framework), used by
:mod:`jungle_cli._serve`'s request handlers on the server's event loop.

Bounds kept here:

- at most ``max_games`` games; a game untouched for ``idle_s`` seconds is dropped, a
  finished one after ``finished_s``, and when the store is full the oldest finished game
  gives its slot to a new one (only unfinished games make the server answer 503);
- agent turns run in a :class:`jungle_cli._decisions.DecisionPool` of their own
  (``workers`` processes) and hints in another (``hint_workers``), so no hint, however
  slow, makes a game's own agent wait; a hint takes at most ``hint_time`` seconds, the
  wait for a worker included, and is refused while an agent is to move.

>>> import asyncio
>>> from jungle_core import DARK
>>> async def demo():
...     store = GameStore(workers=1, max_games=1)
...     try:
...         game = store.add(ServedGame.create(DARK, ("human", "human")))
...         game.resign()
...         return store.add(ServedGame.create(DARK, ("human", "human"))) is not game
...     finally:
...         store.close()
>>> asyncio.run(demo())  # the finished game gave its slot
True
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jungle_core as jc
from jungle_cli._decisions import AgentFailedError, DecisionPool, DecisionTimeoutError
from jungle_cli._games import DEFAULT_HINT, HUMAN, ServedGame
from jungle_cli._views import ServeError

__all__ = ["POLL_S", "FullError", "GameStore", "NotFoundError", "TooLargeError"]

POLL_S = 10.0


class NotFoundError(ServeError):
    """No game with this id (never made, finished and dropped, or someone else's guess)."""

    status = 404


class FullError(ServeError):
    """The server holds as many games as it may (HTTP 503)."""

    status = 503


class TooLargeError(ServeError):
    """A request body over the limit (HTTP 413)."""

    status = 413


class GameStore:
    """The games of one server, their agent turns, and the waits for their changes.

    Runs on the server's event loop: every change of a game happens here, between awaits;
    agent decisions go to the :class:`DecisionPool` through a thread pool. ``hint`` is the
    hint agent of games that name none, ``hint_time`` the seconds a hint may take; the
    other bounds are in the module docstring.
    """

    def __init__(
        self,
        *,
        max_games: int = 200,
        idle_s: float = 3600.0,
        finished_s: float = 300.0,
        workers: int = 2,
        hint_workers: int = 1,
        move_time: float = 10.0,
        hint: str = DEFAULT_HINT,
        hint_time: float = 5.0,
        plugins: Sequence[str] = (),
    ) -> None:
        self.max_games = max_games
        self.idle_s = idle_s
        self.finished_s = finished_s
        self.move_time = move_time
        self.hint = hint
        self.hint_time = hint_time
        self.games: dict[str, ServedGame] = {}
        self.pool = DecisionPool(workers, plugins)
        self.hint_pool = DecisionPool(hint_workers, plugins)
        self.executor = ThreadPoolExecutor(workers, thread_name_prefix="jungle-decide")
        # a thread for every hint that may run at once (one a game): no hint waits for a
        # thread, only (up to its deadline) for a hint worker; threads start when needed
        self.hint_executor = ThreadPoolExecutor(max_games, thread_name_prefix="jungle-hint")
        self._events: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def close(self) -> None:
        """Stop agent turns and the worker processes."""
        for task in self._tasks.values():
            task.cancel()
        self.pool.close()
        self.hint_pool.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.hint_executor.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ games

    def make_room(self) -> None:
        """Drop idle and long-finished games, then, if the store is full, the finished game
        touched longest ago; :class:`FullError` when every slot holds an unfinished game.
        Called before a new game is even parsed: a full server answers at once."""
        now = time.monotonic()
        finished: list[tuple[float, str]] = []
        for gid, old in list(self.games.items()):
            if old.thinking:
                continue
            over = old.result() is not None
            if now - old.touched > (self.finished_s if over else self.idle_s):
                self.drop(gid)
            elif over:
                finished.append((old.touched, gid))
        finished.sort()
        while len(self.games) >= self.max_games and finished:
            self.drop(finished.pop(0)[1])
        if len(self.games) >= self.max_games:
            raise FullError(
                f"the server holds {self.max_games} unfinished games already; try again later"
            )

    def add(self, game: ServedGame) -> ServedGame:
        """Keep a new game (:meth:`make_room` first) and start its agent's turn."""
        self.make_room()
        self.games[game.id] = game
        self.kick(game)
        return game

    def get(self, gid: str) -> ServedGame:
        """The game with id ``gid``, or :class:`NotFoundError`."""
        game = self.games.get(gid)
        if game is None:
            raise NotFoundError(f"no game {gid[:40]!r} on this server (start a new game)")
        game.touched = time.monotonic()
        return game

    def drop(self, gid: str) -> None:
        """Forget a game (its agent turn stops)."""
        self.games.pop(gid, None)
        task = self._tasks.pop(gid, None)
        if task is not None:
            task.cancel()
        event = self._events.pop(gid, None)
        if event is not None:
            event.set()

    # ---------------------------------------------------------- changes

    def notify(self, game: ServedGame) -> None:
        """Wake the requests waiting for a change of ``game``."""
        event = self._events.pop(game.id, None)
        if event is not None:
            event.set()

    async def wait(
        self, game: ServedGame, after: int, gone: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """Return once ``game.version > after``, after at most :data:`POLL_S` seconds
        (sooner when a clock may fall), or when ``gone()`` returns (the client left)."""
        if game.version > after:
            return
        timeout = POLL_S
        clock = game.clock_view()
        if clock is not None and clock["running"] is not None:
            timeout = min(timeout, max(clock["remaining"][clock["running"]], 0.0) + 0.05)
        event = self._events.setdefault(game.id, asyncio.Event())
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(event.wait())]
        if gone is not None:
            waits.append(asyncio.ensure_future(gone()))
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()

    def kick(self, game: ServedGame) -> None:
        """Start the agent turns of ``game`` if an agent is to move and none runs yet."""
        task = self._tasks.get(game.id)
        if task is not None and not task.done():
            return
        if game.seat_to_move() in (None, HUMAN) or game.paused:
            return
        self._tasks[game.id] = asyncio.get_running_loop().create_task(self._agent_turns(game))

    async def decide(self, game: ServedGame, spec: str, timeout: float) -> tuple[int, float]:
        """Run one agent decision of ``spec`` in the game's position off the event loop
        (:meth:`DecisionPool.decide`, ``timeout`` seconds to think once a worker is free)."""
        seed = int(game.agent_rng.integers(2**63))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.executor, self.pool.decide, game.rules, spec, game.state, seed, timeout
        )

    async def decide_hint(self, game: ServedGame) -> int:
        """The hint agent's action in the game's position, within :attr:`hint_time` seconds
        of the call, waits included (a worker's first start aside): hints have threads and
        worker processes of their own, never queued behind agent turns, and a hint that
        finds no free hint worker in time, or does not decide in time, raises
        :class:`DecisionTimeoutError`."""
        deadline = time.monotonic() + self.hint_time
        seed = int(game.agent_rng.integers(2**63))
        loop = asyncio.get_running_loop()
        decision = loop.run_in_executor(
            self.hint_executor,
            self.hint_pool.decide,
            game.rules,
            game.hint,
            game.state,
            seed,
            self.hint_time,
            deadline,
        )
        action, _ = await decision
        return action

    async def _agent_turns(self, game: ServedGame) -> None:
        moved = False
        while game.id in self.games:
            spec = game.seat_to_move()
            if spec is None or spec == HUMAN or game.paused:
                return
            if moved and game.delay > 0:
                moved = False
                await asyncio.sleep(game.delay)
                continue  # the position may have changed while we slept: look again
            generation, state = game.generation, game.state
            limit = self.move_time
            clock = game.clock_view()
            if clock is not None:
                limit = min(limit, max(clock["remaining"][state.to_move], 0.0))
            game.thinking = True
            game.changed()
            self.notify(game)
            try:
                action, seconds = await self.decide(game, spec, limit)
            except (DecisionTimeoutError, AgentFailedError) as error:
                if generation == game.generation:
                    timed_out = isinstance(error, DecisionTimeoutError)
                    game.message = (
                        f"{spec} (player {state.to_move}) overran its {limit:.1f} s limit"
                        + (" (its clock)" if clock is not None and limit < self.move_time else "")
                        if timed_out
                        else str(error)
                    )
                    reason = "move_limit" if timed_out else "agent_failure"
                    if timed_out and clock is not None and limit < self.move_time:
                        reason = "time"
                    game.ended = (1 - state.to_move, reason)
                    game.generation += 1
                return
            finally:
                game.thinking = False
                game.changed()
                self.notify(game)
            if generation != game.generation or game.state is not state:
                moved = False
                continue  # undone, loaded or ended while it thought: the answer is stale
            if action not in jc.legal_actions(state):
                game.message = f"{spec} returned the illegal action {action}"
                game.ended = (1 - state.to_move, "agent_failure")
                game.changed()
                self.notify(game)
                return
            game.play(action, seconds, human=False)
            self.notify(game)
            moved = True
