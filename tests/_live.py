"""A live ``jungle serve`` app under uvicorn on 127.0.0.1 (an OS-chosen port), in a thread,
for the load and browser tests. Loopback only; it stops when the block ends."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from jungle_cli._serve import make_app, server_config


@contextlib.contextmanager
def live_server(
    *, header_timeout: float = 10.0, keep_alive: int = 5, **options: Any
) -> Iterator[str]:
    """Yield the base URL of a running server built by ``make_app(**options)`` and
    configured as ``jungle serve`` configures it (:func:`server_config`)."""
    config = server_config(
        make_app(**options), "127.0.0.1", 0, header_timeout=header_timeout, keep_alive=keep_alive
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
