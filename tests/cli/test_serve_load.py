"""50 games at once against a live ``jungle serve`` on 127.0.0.1: every move lands, in
order, with no error. Bounded: each client plays at most ``MOVES`` moves of its own."""

from __future__ import annotations

import asyncio
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

pytest.importorskip("starlette", reason="jungle serve needs the serve extra")
httpx2 = pytest.importorskip("httpx2")

from jungle_agents.arena import GameRecord, replay  # noqa: E402
from property_tests.serve_soak import soak, verdict  # noqa: E402
from tests._live import live_server  # noqa: E402

GAMES = 50
MOVES = 12


async def one_game(client: Any, index: int, latencies: list[float]) -> tuple[int, int]:
    """Play one human seat against ``random``; returns (own moves, plies in the record)."""
    rng = random.Random(index)
    body = {"rules": "classic" if index % 5 == 0 else "dark", "agent": "random", "side": index % 2}
    response = await client.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    view = response.json()
    gid = view["id"]
    mine: list[tuple[int, int]] = []  # (ply, action)
    for _ in range(10 * MOVES):  # bounded: at most this many long polls and moves
        if view["result"] is not None or len(mine) >= MOVES:
            break
        if not view["legal"]:
            response = await client.get(f"/api/games/{gid}?after={view['version']}")
            assert response.status_code == 200, response.text
            view = response.json()
            continue
        action = rng.choice(view["legal"])["action"]
        ply = len(view["moves"])
        start = time.perf_counter()
        response = await client.post(f"/api/games/{gid}/move", json={"action": action, "ply": ply})
        latencies.append(time.perf_counter() - start)
        assert response.status_code == 200, response.text
        mine.append((ply, action))
        view = response.json()
    record = GameRecord.from_json((await client.get(f"/api/games/{gid}/record")).json())
    replay(record)
    for ply, action in mine:  # no move lost, none moved
        assert record.actions[ply] == action
    assert record.plies >= len(mine)
    return len(mine), record.plies


def test_fifty_concurrent_games_lose_no_move() -> None:
    latencies: list[float] = []

    async def main(base: str) -> list[tuple[int, int]]:
        limits = httpx2.Limits(max_connections=GAMES + 10)
        # a bound, not a latency check: under CI beside other work (a match on both cores)
        # one request of the fifty once waited more than 60 s
        async with httpx2.AsyncClient(base_url=base, timeout=180, limits=limits) as client:
            return await asyncio.gather(*(one_game(client, i, latencies) for i in range(GAMES)))

    with live_server(workers=2, max_games=GAMES + 10) as base:
        assert base.startswith("http://127.0.0.1:")
        start = time.perf_counter()
        # a thread of its own: Playwright's sync API may hold this thread's event loop
        with ThreadPoolExecutor(1) as thread:
            results = thread.submit(asyncio.run, main(base)).result()
        seconds = time.perf_counter() - start
    moves = sum(m for m, _ in results)
    plies = sum(p for _, p in results)
    latencies.sort()
    print(
        f"\n{GAMES} concurrent games: {moves} human moves, {plies} plies in all, "
        f"{seconds:.1f} s; move request median {1000 * latencies[len(latencies) // 2]:.0f} ms, "
        f"p95 {1000 * latencies[int(0.95 * len(latencies))]:.0f} ms, "
        f"max {1000 * latencies[-1]:.0f} ms"
    )
    assert len(results) == GAMES and moves >= GAMES


def test_a_short_soak_leaks_nothing() -> None:
    """``make soak-serve`` in small (30 games of every kind the soak plays, through a real
    ``jungle serve`` process): no error, no descriptor or process more than after the
    warm-up, nothing left running after the server."""
    figures = soak(games=30, clients=4, warmup=10, every=0.25, deadline_s=120)
    assert figures["games"] == 30
    assert verdict(figures, growth_mib=40.0) == [], figures
