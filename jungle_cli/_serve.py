"""``jungle serve``: play, watch and replay games in the browser.

A small ASGI app (Starlette, run by uvicorn) that serves one static page
(``jungle_cli/static``, no build step, nothing fetched from elsewhere) and a JSON API over
:class:`jungle_cli._games.ServedGame`:

=======================================  ==============================================
``GET  /api/agents``                     agent kinds, their parameters, rule sets, hint
``POST /api/games``                      a new game: rules, mode, seats, clock, hint, speed
``POST /api/games/load``                 a new game from an uploaded record
``GET  /api/games/{id}?after=V``         the game; waits (up to 10 s) for version > V
``GET  /api/games/{id}/ply/{n}``         the position after ``n`` plies (replay)
``POST /api/games/{id}/move``            ``{"move": "c1-c2"}`` or ``{"action": 3}``
``POST /api/games/{id}/undo|resign|hint``
``POST /api/games/{id}/watch``           ``{"delay": s, "paused": b}`` (agent vs agent)
``GET  /api/games/{id}/record``          the arena's JSON record (save)
=======================================  ==============================================

A hint is the move of the game's hint agent (``"hint"`` of a new game; else the server's,
by default :data:`jungle_cli._games.DEFAULT_HINT`), never the opponent's, and takes at most
``hint_time`` seconds, the wait for a free worker included.

Safety: every move, record and agent spec passes the core's (and the registry's) own
checks before anything changes; a refused request answers ``{"error": ...}`` with 400 /
404 / 409 / 413 / 503 and changes nothing. A game id is a ``secrets`` token, the only
handle on a game. No request names a server-side path. Games are bounded (idle ones are
dropped after ``idle_s``), as are the agent searches running at once (the decision pool's
workers) and request bodies.

>>> from starlette.testclient import TestClient
>>> with TestClient(make_app(workers=1)) as client:
...     game = client.post("/api/games", json={"mode": "human-human"}).json()
...     client.post(f"/api/games/{game['id']}/move", json={"move": "?d1"}).status_code
200
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

import jungle_core as jc
from jungle_agents import check_spec
from jungle_agents.arena import import_plugins
from jungle_cli._decisions import AgentFailedError, DecisionPool, DecisionTimeoutError
from jungle_cli._games import (
    DEFAULT_HINT,
    HUMAN,
    MODES,
    RULE_SETS,
    ServedGame,
    request_options,
    request_rules,
    request_seats,
)
from jungle_cli._views import (
    BadRequestError,
    ConflictError,
    ServeError,
    agents_view,
    field,
    json_loads,
    parse_record_text,
    position_view,
)

__all__ = ["GameStore", "make_app", "serve"]

BODY_LIMIT = 16_384
UPLOAD_LIMIT = 4_000_000
POLL_S = 10.0
STATIC = ("jungle_cli", "static")


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
    hint agent of games that name none, ``hint_time`` the seconds a hint may take.
    """

    def __init__(
        self,
        *,
        max_games: int = 200,
        idle_s: float = 3600.0,
        workers: int = 2,
        move_time: float = 10.0,
        hint: str = DEFAULT_HINT,
        hint_time: float = 5.0,
        plugins: Sequence[str] = (),
    ) -> None:
        self.max_games = max_games
        self.idle_s = idle_s
        self.move_time = move_time
        self.hint = hint
        self.hint_time = hint_time
        self.games: dict[str, ServedGame] = {}
        self.pool = DecisionPool(workers, plugins)
        self.executor = ThreadPoolExecutor(workers, thread_name_prefix="jungle-decide")
        # a thread for every hint that may run at once (one a game): no hint waits for a
        # thread, only (up to its deadline) for a worker; threads start only when needed
        self.hint_executor = ThreadPoolExecutor(max_games, thread_name_prefix="jungle-hint")
        self._events: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def close(self) -> None:
        """Stop agent turns and the worker processes."""
        for task in self._tasks.values():
            task.cancel()
        self.pool.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.hint_executor.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ games

    def add(self, game: ServedGame) -> ServedGame:
        """Keep a new game, dropping idle ones first; :class:`FullError` when full."""
        now = time.monotonic()
        for gid, old in list(self.games.items()):
            if now - old.touched > self.idle_s and not old.thinking:
                self.drop(gid)
        if len(self.games) >= self.max_games:
            raise FullError(f"the server holds {self.max_games} games already; try again later")
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
        of the call, waits included (a worker's first start aside): hints have threads of
        their own, never queued behind agent turns or other hints, and a hint that finds no
        free worker in time, or does not decide in time, raises
        :class:`DecisionTimeoutError`."""
        deadline = time.monotonic() + self.hint_time
        seed = int(game.agent_rng.integers(2**63))
        loop = asyncio.get_running_loop()
        decision = loop.run_in_executor(
            self.hint_executor,
            self.pool.decide,
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


# ------------------------------------------------------------------ requests


async def _json_body(request: Request, limit: int = BODY_LIMIT) -> dict[str, Any]:
    size = 0
    chunks = []
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLargeError(f"the request body is over {limit} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        data = json_loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise BadRequestError("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise BadRequestError("the request body must be a JSON object")
    return data


async def _disconnect(request: Request) -> None:
    """Return when the client has gone (a long poll then ends at once)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


Handler = Callable[[Request, GameStore], Awaitable[Any]]


def _endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        store: GameStore = request.app.state.store
        try:
            result = await handler(request, store)
        except ServeError as error:
            return JSONResponse({"error": str(error)}, status_code=error.status)
        if isinstance(result, Response):
            return result
        return JSONResponse(result, headers={"Cache-Control": "no-store"})

    return endpoint


async def _agents(request: Request, store: GameStore) -> Any:
    return {
        "agents": agents_view(),
        "rules": list(RULE_SETS),
        "modes": list(MODES),
        "hint": store.hint,
        "hint_time": store.hint_time,
    }


async def _new_game(request: Request, store: GameStore) -> Any:
    data = await _json_body(request)
    options = request_options(data, store.hint)
    game = ServedGame.create(request_rules(data), request_seats(data), **options)
    return store.add(game).view()


async def _load_game(request: Request, store: GameStore) -> Any:
    data = await _json_body(request, UPLOAD_LIMIT)
    text = field(data, "text", str, "")
    index = field(data, "index", int, 0)
    record, count = parse_record_text(text, index)
    options = request_options(data, store.hint)
    game = ServedGame.from_record(record, request_seats(data), **options)
    game.paused = True  # a loaded game waits at its end until the page says go on
    view = store.add(game).view()
    view["games_in_file"] = count
    return view


async def _get_game(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    after = request.query_params.get("after")
    if after is not None:
        if not after.lstrip("-").isdigit() or len(after) > 12:
            raise BadRequestError(f"after must be a version number, not {after[:20]!r}")
        await store.wait(game, int(after), lambda: _disconnect(request))
        game = store.get(game.id)
    version = game.version
    view = game.view()
    if game.version != version:
        store.notify(game)
    return view


async def _get_ply(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    text = request.path_params["ply"]
    if not text.isdigit() or int(text) > game.ply:
        raise BadRequestError(f"ply must be 0..{game.ply}, not {text[:20]!r}")
    ply = int(text)
    view = position_view(game.states[ply], game.last_move(ply))
    view["version"] = game.version
    return view


async def _move(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    data = await _json_body(request)
    expected = field(data, "ply", int, None)
    if expected is not None and expected != game.ply:
        raise ConflictError(f"the game is at ply {game.ply}, not {expected}: the position changed")
    if "action" in data:
        game.play(data["action"])
    elif "move" in data:
        game.play_text(data["move"])
    else:
        raise BadRequestError('a move needs "move" (e.g. "c1-c2") or "action" (an integer)')
    store.notify(game)
    store.kick(game)
    return game.view()


async def _undo(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    game.undo()
    store.notify(game)
    store.kick(game)
    return game.view()


async def _resign(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    game.resign()
    store.notify(game)
    return game.view()


async def _hint(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    if game.seat_to_move() is None:
        raise ConflictError("the game is over: no hint")
    if game.hinting:
        raise ConflictError("a hint is being computed for this game already")
    state = game.state
    game.hinting = True  # one hint search per game at a time: the searches stay bounded
    try:
        action = await store.decide_hint(game)
    except (DecisionTimeoutError, AgentFailedError) as error:
        raise ConflictError(f"no hint: {error}") from None
    finally:
        game.hinting = False
    if game.state is not state or action not in jc.legal_actions(state):
        raise ConflictError("no hint: the position changed while the agent thought")
    return {"action": action, "text": jc.action_to_str(state, action), "agent": game.hint}


async def _watch(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    data = await _json_body(request)
    delay = field(data, "delay", float, game.delay)
    if not 0 <= delay <= 60:
        raise BadRequestError(f"delay must be 0..60 seconds, not {delay}")
    game.delay = delay
    game.paused = field(data, "paused", bool, game.paused)
    game.turn_started = time.monotonic()
    game.changed()
    store.notify(game)
    store.kick(game)
    return game.view()


async def _record(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    label = re.sub(r"[^a-z0-9_]", "", game.rules.name.lower())[:24] or "game"  # a loaded name
    return JSONResponse(
        game.record().to_json(),
        headers={
            "Content-Disposition": f'attachment; filename="jungle-{label}-{game.ply}plies.json"',
            "Cache-Control": "no-store",
        },
    )


async def _delete(request: Request, store: GameStore) -> Any:
    store.drop(store.get(request.path_params["gid"]).id)
    return {"deleted": True}


SECURITY_HEADERS = {
    # everything the page needs is on this server: no script, style or image from elsewhere
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class _SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: Starlette) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    *((k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()),
                ]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def make_app(
    *,
    max_games: int = 200,
    idle_s: float = 3600.0,
    workers: int = 2,
    move_time: float = 10.0,
    hint: str = DEFAULT_HINT,
    hint_time: float = 5.0,
    plugins: Sequence[str] = (),
) -> _SecurityHeaders:
    """The ASGI app: the page, its static files and the JSON API (module docstring).

    ``workers`` bounds the agent searches running at once, ``max_games`` the games kept,
    ``move_time`` each agent decision (seconds); ``hint`` is the hint agent of games that
    name none and ``hint_time`` the seconds a hint may take. The ``plugins`` modules are
    imported here (their agents play in games and hints) and in every decision worker. A
    bad ``hint`` spec raises :class:`jungle_agents.AgentSpecError`, a bad time ``ValueError``.

    >>> from starlette.testclient import TestClient
    >>> with TestClient(make_app(workers=1)) as client:
    ...     client.post("/api/games", json={"agent": "minmax"}).json()["error"][:22]
    "unknown agent 'minmax'"
    """
    for name, seconds in (("move_time", move_time), ("hint_time", hint_time)):
        if not 0 < seconds < float("inf"):
            raise ValueError(f"{name} must be a number of seconds > 0, not {seconds}")
    import_plugins(plugins)
    check_spec(hint)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = GameStore(
            max_games=max_games,
            idle_s=idle_s,
            workers=workers,
            move_time=move_time,
            hint=hint,
            hint_time=hint_time,
            plugins=plugins,
        )
        app.state.store = store
        try:
            yield
        finally:
            store.close()

    static = StaticFiles(packages=[STATIC])

    async def page(request: Request) -> Response:
        path, _ = static.lookup_path("index.html")  # the page is one static file
        return FileResponse(path, headers={"Cache-Control": "no-cache"})

    def api(path: str, handler: Handler, methods: Sequence[str]) -> Route:
        return Route(path, _endpoint(handler), methods=list(methods))

    gid = "/api/games/{gid}"
    app = Starlette(
        routes=[
            Route("/", page),
            Mount("/static", static, name="static"),
            api("/api/agents", _agents, ["GET"]),
            api("/api/games", _new_game, ["POST"]),
            api("/api/games/load", _load_game, ["POST"]),
            api(gid, _get_game, ["GET"]),
            api(gid, _delete, ["DELETE"]),
            api(gid + "/ply/{ply}", _get_ply, ["GET"]),
            api(gid + "/move", _move, ["POST"]),
            api(gid + "/undo", _undo, ["POST"]),
            api(gid + "/resign", _resign, ["POST"]),
            api(gid + "/hint", _hint, ["POST"]),
            api(gid + "/watch", _watch, ["POST"]),
            api(gid + "/record", _record, ["GET"]),
        ],
        lifespan=lifespan,
    )

    return _SecurityHeaders(app)


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    **options: Any,
) -> None:
    """Run the app under uvicorn until Ctrl-C (``jungle serve``); ``options`` go to
    :func:`make_app`. Loopback by default: the page has no accounts, so anyone who can reach
    the port can start games."""
    uvicorn.run(make_app(**options), host=host, port=port, log_level="warning")
