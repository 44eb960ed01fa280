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

Safety: a request from another site or for another host name is refused before any
handler runs (:mod:`jungle_cli._serve_guard`); every move, record and agent spec passes the
core's (and the registry's) own checks, and the server's bounds
(:mod:`jungle_cli._serve_specs`), before anything changes; a refused request answers
``{"error": ...}`` with a 4xx status (503 when the server is full) and changes nothing. A
game id is a ``secrets`` token, the only handle on a game. No request names a server-side
path, and no agent is built in the server process (the decision workers build them).
Games are bounded (:mod:`jungle_cli._serve_store`), as are the agent searches running at
once, request bodies, connections and their timeouts (:func:`server_config`).

>>> from starlette.testclient import TestClient
>>> with TestClient(make_app(workers=1), base_url="http://127.0.0.1") as client:
...     game = client.post("/api/games", json={"mode": "human-human"}).json()
...     client.post(f"/api/games/{game['id']}/move", json={"move": "?d1"}).status_code
200
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from uvicorn.protocols.http.h11_impl import H11Protocol

import jungle_core as jc
from jungle_agents import check_spec
from jungle_agents.arena import import_plugins
from jungle_cli._decisions import AgentFailedError, DecisionTimeoutError
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
from jungle_cli._serve_guard import Guard
from jungle_cli._serve_specs import SpecPolicy
from jungle_cli._serve_store import GameStore, TooLargeError
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

__all__ = ["GameStore", "make_app", "serve", "server_config"]

BODY_LIMIT = 16_384
UPLOAD_LIMIT = 4_000_000
STATIC = ("jungle_cli", "static")
_VERSION = re.compile(r"-?[0-9]{1,12}")
_PLY = re.compile(r"[0-9]{1,9}")
_log = logging.getLogger("jungle.serve")


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
        except Exception:  # a defect of the server: an answer all the same, and a log line
            _log.exception("jungle serve: %s %s failed", request.method, request.url.path)
            return JSONResponse({"error": "the server failed on this request"}, status_code=500)
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
    store.make_room()  # a full server answers before anything is parsed
    data = await _json_body(request)
    options = request_options(data, store.hint)
    policy: SpecPolicy = request.app.state.policy
    game = ServedGame.create(request_rules(data), request_seats(data), policy=policy, **options)
    return store.add(game).view()


async def _load_game(request: Request, store: GameStore) -> Any:
    store.make_room()
    data = await _json_body(request, UPLOAD_LIMIT)
    text = field(data, "text", str, "")
    index = field(data, "index", int, 0)
    if not 0 <= index < 1_000_000:
        raise BadRequestError(f"index must be 0..999999, not {index}")
    record, count = parse_record_text(text, index)
    options = request_options(data, store.hint)
    policy: SpecPolicy = request.app.state.policy
    game = ServedGame.from_record(record, request_seats(data), policy=policy, **options)
    game.paused = True  # a loaded game waits at its end until the page says go on
    view = store.add(game).view()
    view["games_in_file"] = count
    return view


async def _get_game(request: Request, store: GameStore) -> Any:
    game = store.get(request.path_params["gid"])
    after = request.query_params.get("after")
    if after is not None:
        if not _VERSION.fullmatch(after):
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
    if not _PLY.fullmatch(text) or int(text) > game.ply:
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
    seat = game.seat_to_move()
    if seat is None:
        raise ConflictError("the game is over: no hint")
    if seat != HUMAN:
        raise ConflictError(f"{seat} is to move: a hint is for a human's turn")
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


async def _http_error(request: Request, error: Exception) -> Response:
    """Starlette's own refusals (no such route, wrong method) as JSON, as every refusal."""
    status = error.status_code if isinstance(error, HTTPException) else 500
    detail = error.detail if isinstance(error, HTTPException) else "the server failed"
    return JSONResponse({"error": f"{request.method} {request.url.path[:80]}: {detail}"}, status)


def make_app(
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
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
    allowed_agents: Sequence[str] = (),
    token: str | None = None,
) -> Guard:
    """The ASGI app: the page, its static files and the JSON API (module docstring),
    behind :class:`jungle_cli._serve_guard.Guard`.

    ``workers`` bounds the agent searches running at once and ``hint_workers`` the hint
    searches (processes apart), ``max_games`` the games kept (``idle_s``: seconds an idle
    game is kept, ``finished_s`` a finished one), ``move_time`` each agent decision
    (seconds); ``hint`` is the hint agent of games that name none and ``hint_time`` the
    seconds a hint may take. ``host`` (the listening address) and ``allowed_hosts`` are the
    host names the server answers to beside loopback's; ``allowed_agents`` are specs the
    operator allows whole (file parameters included, as ``hint`` is); ``token``, when given,
    is needed by every request. The ``plugins`` modules are imported here (their agents
    play in games and hints) and in every decision worker. A bad ``hint`` or allowed spec
    raises :class:`jungle_agents.AgentSpecError`, a bad time ``ValueError``.

    >>> from starlette.testclient import TestClient
    >>> with TestClient(make_app(workers=1), base_url="http://127.0.0.1") as client:
    ...     client.post("/api/games", json={"agent": "minmax"}).json()["error"][:22]
    "unknown agent 'minmax'"
    """
    for name, seconds in (("move_time", move_time), ("hint_time", hint_time)):
        if not 0 < seconds < float("inf"):
            raise ValueError(f"{name} must be a number of seconds > 0, not {seconds}")
    import_plugins(plugins)
    for spec in (hint, *allowed_agents):
        check_spec(spec)  # the operator's own specs: any parameter, in or out of range
    policy = SpecPolicy([*allowed_agents, hint])

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = GameStore(
            max_games=max_games,
            idle_s=idle_s,
            finished_s=finished_s,
            workers=workers,
            hint_workers=hint_workers,
            move_time=move_time,
            hint=hint,
            hint_time=hint_time,
            plugins=plugins,
        )
        app.state.store = store
        app.state.policy = policy
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
        exception_handlers={HTTPException: _http_error},
    )
    unspecified = host in ("0.0.0.0", "::", "")
    return Guard(app, hosts=[*allowed_hosts, *([] if unspecified else [host])], token=token)


def _timed_protocol(header_timeout: float) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request headers are not
    whole ``header_timeout`` seconds after it opened or after its last answer: uvicorn's
    keep-alive timeout only covers a connection that sends nothing after an answer, not
    one that never sends a request or trickles its headers a byte at a time."""

    class TimedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def _arm(self) -> None:
            cycle = self.cycle

            def expire() -> None:
                if self.cycle is cycle and not self.transport.is_closing():
                    self.transport.close()  # no new request began: headers too slow

            self.loop.call_later(header_timeout, expire)

    return TimedH11Protocol


def server_config(
    app: Guard,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    header_timeout: float = 10.0,
    keep_alive: int = 5,
    max_connections: int = 256,
    log_level: str = "warning",
) -> uvicorn.Config:
    """uvicorn's configuration of the server: an idle connection is closed after
    ``keep_alive`` seconds, one whose request headers take over ``header_timeout`` seconds
    too; beyond ``max_connections`` connections (or requests in progress) a request gets
    503 at once; request headers at most 16 KiB (h11's limit)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        http=_timed_protocol(header_timeout),
        timeout_keep_alive=keep_alive,
        limit_concurrency=max_connections,
        h11_max_incomplete_event_size=16_384,
        timeout_graceful_shutdown=1,  # pages keep a long poll open
    )


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    header_timeout: float = 10.0,
    keep_alive: int = 5,
    max_connections: int = 256,
    **options: Any,
) -> None:
    """Run the app under uvicorn until Ctrl-C (``jungle serve``); ``options`` go to
    :func:`make_app`, the timeouts to :func:`server_config`. Loopback by default: the page
    has no accounts, so anyone who can reach the port can start games."""
    app = make_app(host=host, **options)
    config = server_config(
        app,
        host,
        port,
        header_timeout=header_timeout,
        keep_alive=keep_alive,
        max_connections=max_connections,
    )
    uvicorn.Server(config).run()
