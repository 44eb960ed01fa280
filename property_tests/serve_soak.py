"""``jungle serve`` under a long load (``make soak-serve``): games played through the HTTP
API on loopback by concurrent clients, with the server's memory, open files, threads and
processes sampled as they go.

The server runs as ``jungle serve`` does (:func:`jungle_cli._serve.serve`) in a process of
its own on 127.0.0.1 and an OS-free port. ``--clients`` clients play ``--games`` games in
all, a mix of what the page does:

- agent against agent on CLASSIC (300 plies at most), watched to the end without delay:
  ``random``, ``greedy`` and ``minimax:depth=1`` in turn;
- a human (the client, playing uniformly random legal moves) against ``random`` or
  ``greedy`` on DARK, with a hint now and then, resigning after ``HUMAN_MOVES`` moves;
- two humans: a few moves, an undo, a resignation;
- an uploaded record, replayed ply by ply (the page's slider), played on, resigned.

Like the page, a client gives a game back (``DELETE``) when it is done with it, except
every third game, left for the server to evict. Every answer must be the one expected
(200, or 409 for a hint that ran out of time): any other is an error and ends the run.

The server keeps at most ``--max-games`` games (60: full after some 180 games, since one
game in three is left to it), so from the warm-up (``--warmup`` games, 300) on it holds as
many games as it ever will, and its memory must stay flat. Sampled every ``--every``
seconds: the server's resident memory (RSS, MiB) and its workers', its open file
descriptors, threads and child processes. The figures reported: the server's RSS every
tenth of the run, the figures after the warm-up, at the end, the peak, and whether any
child process outlived the server (stopped with SIGTERM, then checked in ``/proc``). Exit
status 1 on an error, memory growth after warm-up over ``--growth`` MiB, descriptors or
processes above their warm-up count, or a leaked process.

    python -m property_tests.serve_soak [--games 1000] [--clients 8] [--json out.json]

Loopback only; every loop is bounded in count (``--games``, moves per game) and time
(``--deadline`` seconds for the whole run, a timeout on every request).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HUMAN_MOVES = 30
AGENTS = ("random", "greedy", "minimax:depth=1")


# ------------------------------------------------------------------ /proc


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid``."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {c for c, p in parents.items() if p in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _status(pid: int, key: str) -> int:
    """A number of ``/proc/PID/status`` (``VmRSS`` in KiB, ``Threads``); 0 when gone."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def sample(pid: int) -> dict[str, float]:
    """The server's figures now: RSS (MiB) of itself and of its children, fds, threads,
    children."""
    children = _children(pid)
    fds = 0
    with contextlib.suppress(OSError):
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    return {
        "server_rss_mib": _status(pid, "VmRSS") / 1024,
        "workers_rss_mib": sum(_status(c, "VmRSS") for c in children) / 1024,
        "fds": fds,
        "threads": _status(pid, "Threads"),
        "children": len(children),
    }


# ------------------------------------------------------------------ clients


class SoakError(RuntimeError):
    """An answer the soak did not expect."""


async def _ask(client: Any, method: str, path: str, ok: tuple[int, ...] = (200,), **kw: Any) -> Any:
    response = await client.request(method, path, **kw)
    if response.status_code not in ok:
        raise SoakError(f"{method} {path}: {response.status_code} {response.text[:200]}")
    return response.json()


async def _until_over(client: Any, view: dict[str, Any], deadline: float) -> dict[str, Any]:
    """Long polls until the game is over (or a human is to move)."""
    for _ in range(2000):
        if view["result"] is not None or view["legal"] or time.monotonic() > deadline:
            return view
        view = await _ask(client, "GET", f"/api/games/{view['id']}?after={view['version']}")
    return view


async def _agents(client: Any, index: int, deadline: float) -> dict[str, Any]:
    a, b = AGENTS[index % 3], AGENTS[(index // 3) % 3]
    body = {"rules": "classic", "mode": "agent-agent", "agent": a, "agent1": b, "delay": 0}
    view = await _ask(client, "POST", "/api/games", json=body)
    return await _until_over(client, view, deadline)


async def _human(client: Any, index: int, deadline: float, rng: random.Random) -> dict[str, Any]:
    body = {"rules": "dark", "agent": AGENTS[index % 2], "side": index % 2, "hint": "greedy"}
    view = await _ask(client, "POST", "/api/games", json=body)
    gid = view["id"]
    for move in range(HUMAN_MOVES):
        view = await _until_over(client, view, deadline)
        if view["result"] is not None or time.monotonic() > deadline:
            return view
        if move % 10 == 3:
            await _ask(client, "POST", f"/api/games/{gid}/hint", (200, 409), json={})
        action = rng.choice(view["legal"])["action"]
        body = {"action": action, "ply": len(view["moves"])}
        view = await _ask(client, "POST", f"/api/games/{gid}/move", json=body)
    view = await _until_over(client, view, deadline)
    if view["result"] is None:
        view = await _ask(client, "POST", f"/api/games/{gid}/resign", json={})
    return dict(view)


async def _humans(client: Any, rng: random.Random) -> dict[str, Any]:
    view = await _ask(client, "POST", "/api/games", json={"mode": "human-human"})
    gid = view["id"]
    for _ in range(6):
        action = rng.choice(view["legal"])["action"]
        view = await _ask(client, "POST", f"/api/games/{gid}/move", json={"action": action})
    await _ask(client, "POST", f"/api/games/{gid}/undo", json={})
    return dict(await _ask(client, "POST", f"/api/games/{gid}/resign", json={}))


async def _upload(client: Any, text: str, rng: random.Random) -> dict[str, Any]:
    view = await _ask(client, "POST", "/api/games/load", json={"text": text, "mode": "human-human"})
    gid = view["id"]
    for ply in range(0, len(view["moves"]) + 1, 7):
        await _ask(client, "GET", f"/api/games/{gid}/ply/{ply}")
    await _ask(client, "GET", f"/api/games/{gid}/record")
    if view["result"] is None and view["legal"]:
        action = rng.choice(view["legal"])["action"]
        view = await _ask(client, "POST", f"/api/games/{gid}/move", json={"action": action})
    if view["result"] is None:  # every game ends: only unfinished games keep a slot
        view = await _ask(client, "POST", f"/api/games/{gid}/resign", json={})
    return dict(view)


async def _client(
    base: str, counter: list[int], games: int, deadline: float, record: str, seed: int
) -> None:
    import httpx2

    rng = random.Random(seed)
    async with httpx2.AsyncClient(base_url=base, timeout=60) as client:
        while counter[0] < games and time.monotonic() < deadline:
            index = counter[0]
            counter[0] += 1
            kind = index % 10
            if kind < 4:
                view = await _agents(client, index, deadline)
            elif kind < 8:
                view = await _human(client, index, deadline, rng)
            elif kind == 8:
                view = await _humans(client, rng)
            else:
                view = await _upload(client, record, rng)
            if index % 3:
                await _ask(client, "DELETE", f"/api/games/{view['id']}")
            counter[1] += 1


def _record_text() -> str:
    """A short DARK game's record, to upload."""
    import jungle_core as jc
    from jungle_agents.arena import GameRecord
    from jungle_cli._games import ServedGame

    game = ServedGame.create(jc.DARK, ("human", "human"))
    rng = random.Random(5)
    for _ in range(40):
        if game.result() is not None:
            break
        game.play(rng.choice(jc.legal_actions(game.state)))
    record = GameRecord.of_play(
        game.state, ("random", "random"), game.seed, game.actions, game.outcomes, game.times
    )
    return json.dumps(record.to_json())


# ------------------------------------------------------------------ the run


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def soak(
    games: int = 1000,
    clients: int = 8,
    warmup: int = 100,
    every: float = 1.0,
    deadline_s: float = 3600.0,
    workers: int = 2,
    max_games: int = 60,
) -> dict[str, Any]:
    """Run the soak (module docstring); returns its figures and ``"errors"``."""
    port = _free_port()
    code = (
        "from jungle_cli._serve import serve; "
        f"serve('127.0.0.1', {port}, workers={workers}, max_games={max_games}, "
        "move_time=10.0, hint_time=2.0)"
    )
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    server = subprocess.Popen([sys.executable, "-c", code], env=env)
    samples: list[tuple[int, dict[str, float]]] = []
    errors: list[str] = []
    counter = [0, 0]  # games started, games done
    stop = threading.Event()

    def sampler() -> None:
        while not stop.wait(every):
            samples.append((counter[1], sample(server.pid)))

    base = f"http://127.0.0.1:{port}"
    start = time.monotonic()
    try:
        _wait_up(base)
        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        record = _record_text()
        deadline = time.monotonic() + deadline_s

        async def main() -> None:
            await asyncio.gather(
                *(_client(base, counter, games, deadline, record, i) for i in range(clients))
            )

        def run_clients() -> None:
            # in a thread of its own: asyncio.run refuses to start where an event loop
            # already runs (as a test process's may, e.g. Playwright's)
            try:
                asyncio.run(main())
            except Exception as error:
                errors.append(f"{type(error).__name__}: {error}")

        clients_thread = threading.Thread(target=run_clients)
        clients_thread.start()
        clients_thread.join()
        stop.set()
        thread.join(5)
        end = sample(server.pid)
        children = _children(server.pid)
    finally:
        stop.set()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
    seconds = time.monotonic() - start
    time.sleep(1.0)
    leaked = sorted(p for p in children if _alive(p))
    if counter[1] < games:
        errors.append(f"only {counter[1]} of {games} games done in {deadline_s:.0f} s")
    warm = [s for done, s in samples if done >= warmup] or [end]
    after_warmup = warm[0]
    peak = {k: max(s[k] for _, s in samples) if samples else end[k] for k in end}
    step = max(games // 10, 1)
    by_games = {  # the server's RSS (MiB) as the games go by, every tenth of the run
        str(n): round(next((s for done, s in samples if done >= n), end)["server_rss_mib"], 1)
        for n in range(step, games + 1, step)
    }
    return {
        "games": counter[1],
        "clients": clients,
        "max_games": max_games,
        "seconds": round(seconds, 1),
        "server_rss_mib_by_games": by_games,
        "after_warmup": after_warmup,
        "end": end,
        "peak": peak,
        "leaked_processes": leaked,
        "errors": errors,
    }


def _wait_up(base: str) -> None:
    import httpx2

    for _ in range(300):  # up to 30 s for the server to start
        with contextlib.suppress(httpx2.TransportError):
            if httpx2.get(base + "/api/agents", timeout=5).status_code == 200:
                return
        time.sleep(0.1)
    raise SoakError("the server did not start")


def verdict(figures: dict[str, Any], growth_mib: float) -> list[str]:
    """What went wrong, if anything: errors, memory growth after warm-up over
    ``growth_mib``, more descriptors or processes than after warm-up, a leaked process."""
    problems = list(figures["errors"])
    warm, end = figures["after_warmup"], figures["end"]
    grew = end["server_rss_mib"] - warm["server_rss_mib"]
    if grew > growth_mib:
        problems.append(f"server RSS grew {grew:.1f} MiB after warm-up")
    for key in ("fds", "children"):
        if end[key] > warm[key]:
            problems.append(f"{key}: {warm[key]:.0f} after warm-up, {end[key]:.0f} at the end")
    if figures["leaked_processes"]:
        problems.append(f"processes left after the server: {figures['leaked_processes']}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--warmup", type=int, default=300, help="games before the baseline (the store full)"
    )
    parser.add_argument("--max-games", type=int, default=60, help="the server's --max-games")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    parser.add_argument("--deadline", type=float, default=3600.0, help="seconds at most")
    parser.add_argument("--growth", type=float, default=16.0, help="MiB of RSS growth allowed")
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args(argv)
    figures = soak(
        args.games, args.clients, args.warmup, args.every, args.deadline, max_games=args.max_games
    )
    problems = verdict(figures, args.growth)
    figures["problems"] = problems
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:  # atomically: a reader never sees half a file
        out = Path(args.json)
        partial = out.with_name(out.name + ".partial")
        partial.write_text(text + "\n")
        partial.replace(out)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
