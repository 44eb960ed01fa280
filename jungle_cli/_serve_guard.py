"""The gate of ``jungle serve``: which requests reach the app at all (plain ASGI).

A server on loopback is still reachable from every web page its user visits: a page of
``evil.example`` may send requests to ``http://127.0.0.1:8000`` (cross-site request
forgery), or have its own name resolve to 127.0.0.1 and then read the answers as its own
(DNS rebinding). :class:`Guard` refuses both, before any handler runs:

- **Host** (DNS rebinding): the ``Host`` header must name the server: ``127.0.0.1``,
  ``localhost``, ``::1``, the address it listens on, or a name the operator allows
  (``--allow-host``). Anything else answers 421.
- **Origin** (cross-site requests): a request with an ``Origin`` header must come from the
  very origin it is sent to (``http://`` + its ``Host``); anything else answers 403.
- **Content type**: a ``POST`` must say ``Content-Type: application/json``, which a page
  of another origin cannot send without the browser asking first (a CORS preflight this
  server never grants); an HTML form or a ``text/plain`` beacon answers 415.
- **Token** (beyond loopback): with a ``token``, every request needs it, as the
  ``jungle_token`` cookie or an ``X-Jungle-Token`` header; opening ``/?token=...`` sets
  the cookie (``HttpOnly``, ``SameSite=Strict``). A wrong or missing token answers 403.

Every answer, refused or not, carries :data:`SECURITY_HEADERS`. A refusal is JSON,
``{"error": "..."}``, as every refusal of the API.

>>> guard = Guard(None, hosts=["box.lan"])  # type: ignore[arg-type]
>>> sorted(guard.hosts)
['127.0.0.1', '::1', 'box.lan', 'localhost']
>>> guard.host_name("[::1]:8000"), guard.host_name("LocalHost:80")
('::1', 'localhost')
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOOPBACK", "SECURITY_HEADERS", "TOKEN_COOKIE", "Guard"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
"""Host names a loopback server always answers to."""

TOKEN_COOKIE = "jungle_token"

SECURITY_HEADERS = {
    # everything the page needs is on this server: no script, style or image from elsewhere
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
_SECURITY = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]


class Guard:
    """ASGI middleware: the checks of the module docstring around ``app``. ``hosts``: the
    host names allowed beside :data:`LOOPBACK` (the listening address, ``--allow-host``);
    ``token``: the per-start token every request needs, or None for none."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str] = (), token: str | None = None):
        self.app = app
        self.hosts = frozenset(h.strip("[]").lower() for h in (*LOOPBACK, *hosts))
        self.token = token

    @staticmethod
    def host_name(host: str) -> str:
        """The name part of a ``Host`` header (no port, no IPv6 brackets), lower case."""
        host = host.strip().lower()
        if host.startswith("["):
            return host[1 : host.find("]")] if "]" in host else host
        return host.rsplit(":", 1)[0] if host.count(":") == 1 else host

    def refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        """``(status, message)`` of a request the gate refuses, None for one it lets in."""
        host = headers.get("host", "")
        if self.host_name(host) not in self.hosts:
            return 421, (
                f"this server does not answer to the host {host[:60]!r} (its operator may "
                f"allow a name with --allow-host)"
            )
        origin = headers.get("origin")
        if origin is not None and origin.lower() != f"http://{host}".lower():
            return 403, f"requests from another site ({origin[:60]!r}) are refused"
        if scope["method"] == "POST":
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                return 415, "a POST must send Content-Type: application/json"
        if self.token is not None and not self._has_token(scope, headers):
            return 403, (
                "this server needs its token: open the address with ?token= that it printed "
                "at start"
            )
        return None

    def _has_token(self, scope: Scope, headers: dict[str, str]) -> bool:
        assert self.token is not None
        given = headers.get("x-jungle-token")
        if given is None:
            cookie: SimpleCookie = SimpleCookie()
            try:
                cookie.load(headers.get("cookie", ""))
            except Exception:
                return False
            morsel = cookie.get(TOKEN_COOKIE)
            given = morsel.value if morsel is not None else None
        return given is not None and secrets.compare_digest(given.encode(), self.token.encode())

    def _opens_with_token(self, scope: Scope) -> bool:
        if self.token is None or scope["path"] != "/":
            return False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.get("token", [""])[0]
        return secrets.compare_digest(given.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        extra = list(_SECURITY)
        refused = None
        if self._opens_with_token(scope):
            assert self.token is not None
            cookie = f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            extra.append((b"set-cookie", cookie.encode()))
            if self.host_name(headers.get("host", "")) not in self.hosts:
                refused = self.refusal(scope, headers)
        else:
            refused = self.refusal(scope, headers)
        if refused is not None:
            status, message = refused
            body = json.dumps({"error": message}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"cache-control", b"no-store"),
                        *_SECURITY,
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
