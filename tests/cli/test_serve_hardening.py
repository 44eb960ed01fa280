"""Regression tests of ``jungle serve`` against a hostile client on loopback: each test
reproduces one defect a probe found (bare 500s, a request that hangs the server, a
file-system oracle, agents built on the event loop, memory kept, orphaned workers, slots
never freed, cross-site requests and DNS rebinding, idle connections kept, hints starving
agents) and checks the server's answer now. Loopback only; every loop bounded."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="jungle serve needs the serve extra")
httpx2 = pytest.importorskip("httpx2")

from starlette.testclient import TestClient  # noqa: E402

import jungle_core as jc  # noqa: E402
from jungle_agents import Param, agent_kinds, register_agent  # noqa: E402
from jungle_agents._simple import RandomAgent  # noqa: E402
from jungle_agents.arena import GameRecord  # noqa: E402
from jungle_cli._games import ServedGame  # noqa: E402
from jungle_cli._serve import make_app  # noqa: E402
from tests._live import live_server  # noqa: E402

LOCAL = "http://127.0.0.1"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    app = make_app(workers=1, max_games=40, move_time=5.0)
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as c:
        yield c


def new_game(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def refused(response: Any, status: int = 400) -> str:
    """The error message of a refusal with ``status``."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    message = response.json()["error"]
    assert isinstance(message, str) and message
    return message


# ------------------------------------------------------------------ 1. bare 500s


def test_numbers_out_of_range_are_refused_not_a_500(client: TestClient) -> None:
    gid = new_game(client, mode="agent-agent", agent="random")["id"]
    client.post(f"/api/games/{gid}/watch", json={"paused": True})
    huge = b'{"delay": 1' + b"0" * 400 + b"}"
    headers = {"content-type": "application/json"}
    refused(client.post("/api/games", content=huge, headers=headers))
    refused(client.post(f"/api/games/{gid}/watch", content=huge, headers=headers))
    for ply in ("%C2%B2", "1" * 5000, "-1", "%EF%BC%91"):  # '²', 5,000 digits, '１'
        refused(client.get(f"/api/games/{gid}/ply/{ply}"))
    for after in ("--5", "%C2%B2", "1" * 40, "-"):
        refused(client.get(f"/api/games/{gid}?after={after}"))
    for spec in (
        "azero:simulations=1000000000000",
        "minimax:depth=999999999",
        "minimax:qdepth=-5",
        "greedy:safety=1e300",
        "random:" + ",".join(f"x{i}=1" for i in range(3)),
    ):
        refused(client.post("/api/games", json={"agent": spec}))
        refused(client.post("/api/games", json={"mode": "human-human", "hint": spec}))


# ------------------------------------------------------ 2, 3. server-side paths


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    yield path
    with contextlib.suppress(OSError):  # frees a server (before the fix) blocked on it
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_no_request_names_a_server_path_and_none_blocks_the_server(fifo: Path) -> None:
    paths = [str(fifo), "/dev/stdin", "/etc/shadow", "/etc/hostname", "/nonexistent/x", "/tmp"]
    specs = [
        *(f"{kind}:path={p}" for kind in ("dqn", "qlearn", "approxq", "value") for p in paths),
        *(f"minimax:eval=value,value_path={p}" for p in paths),
        *(f"azero:path={p}" for p in paths),
        "engine:cmd=/bin/sleep 100",
    ]
    messages: dict[str, set[str]] = {}
    with live_server(workers=1, max_games=10) as base, httpx2.Client(base_url=base, timeout=5) as c:
        for spec in specs:
            start = time.monotonic()
            response = c.post("/api/games", json={"mode": "human-agent", "agent": spec})
            assert time.monotonic() - start < 2.0, spec
            message, family = refused(response), spec
            for p in paths:
                message, family = message.replace(p, "PATH"), family.replace(p, "PATH")
            messages.setdefault(family, set()).add(message)
            hint = c.post("/api/games", json={"mode": "human-human", "hint": spec})
            refused(hint)
        assert c.get("/api/agents").status_code == 200  # still answering
    # the same answer whatever the path is: no oracle of what exists or is readable
    assert all(len(texts) == 1 for texts in messages.values()), messages


# ------------------------------------------- 4. agents are built off the server


BUILT: list[int] = []


class _SlowToBuild(RandomAgent):
    def __init__(self, rules: jc.Rules, seconds: float) -> None:
        BUILT.append(os.getpid())
        time.sleep(seconds)
        super().__init__()


@pytest.fixture
def slow_kind() -> Iterator[str]:
    register_agent("slowbuild", _SlowToBuild, {"seconds": Param(float, 3.0)}, "slow", replace=True)
    BUILT.clear()
    try:
        yield "slowbuild"
    finally:
        from jungle_agents import _base

        _base._REGISTRY.pop("slowbuild", None)
        assert "slowbuild" not in agent_kinds()


def test_agents_are_not_built_in_the_server_process(slow_kind: str) -> None:
    app = make_app(workers=1, max_games=2, move_time=5.0)
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as c:
        start = time.monotonic()
        game = c.post("/api/games", json={"mode": "human-agent", "agent": slow_kind})
        assert game.status_code == 200 and time.monotonic() - start < 1.0
        c.post("/api/games", json={"mode": "human-human"})
        # full: the answer is 503 at once, before any agent is looked at
        start = time.monotonic()
        refused(c.post("/api/games", json={"agent": "azero", "hint": "azero"}), 503)
        assert time.monotonic() - start < 1.0
    assert os.getpid() not in BUILT


# ------------------------------------------------------------- 5. memory kept


def record_text(players: tuple[str, str] = ("random", "greedy")) -> str:
    game = ServedGame.create(jc.DARK, ("human", "human"))
    for move in ("?d1", "?e7", "?c1"):
        game.play_text(move)
    record = GameRecord.of_play(
        game.state, players, game.seed, game.actions, game.outcomes, game.times
    )
    return json.dumps(record.to_json())


def test_uploads_keep_no_cache_and_no_long_names(client: TestClient) -> None:
    from jungle_core import _tables

    base = json.loads(record_text())
    before = _tables.tables.cache_info().currsize
    for i in range(20):
        data = json.loads(json.dumps(base))
        data["rules"]["name"] = f"DARK{i}"
        response = client.post("/api/games/load", json={"text": json.dumps(data)})
        assert response.status_code in (200, 400), response.text
        if response.status_code == 200:
            assert response.json()["board"]["name"] in ("DARK", "CLASSIC", "DARK_STRICT")
            client.delete(f"/api/games/{response.json()['id']}")
    assert _tables.tables.cache_info().currsize == before
    other = json.loads(json.dumps(base))
    other["rules"]["no_removal_limit"] = 0  # rules of its own: a cache entry of its own
    refused(client.post("/api/games/load", json={"text": json.dumps(other)}))
    long_name = record_text(("x" * 3_000_000, "greedy"))
    response = client.post("/api/games/load", json={"text": long_name})
    if response.status_code == 200:
        assert max(len(n) for n in response.json()["names"]) <= 100
    else:
        assert "name" in refused(response)


# -------------------------------------------------------- 6. orphaned workers


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {c for c, p in parents.items() if p in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    live = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z":
                live.add(pid)
    return live


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _kill_and_watch(process: subprocess.Popen[bytes], workers: set[int]) -> set[int]:
    """SIGKILL ``process``; the ``workers`` still alive 5 s later (then killed)."""
    process.kill()
    process.wait(10)
    deadline = time.monotonic() + 5
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _alive(workers)
    for pid in left:  # our own test's strays, each by its id
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_decision_workers_die_with_a_killed_server() -> None:
    port = _free_port()
    code = (
        "import sys; from jungle_cli._serve import serve; "
        f"serve('127.0.0.1', {port}, workers=2, move_time=120.0)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", code], env=env)
    workers: set[int] = set()
    try:
        with httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            for _ in range(200):
                with contextlib.suppress(httpx2.TransportError):
                    if c.get("/api/agents").status_code == 200:
                        break
                time.sleep(0.1)
            spec = "minimax:depth=30,alphabeta=0,tt=0"
            view = c.post("/api/games", json={"mode": "agent-agent", "agent": spec}).json()
            for _ in range(100):  # until the search runs in a worker
                if view.get("thinking"):
                    break
                time.sleep(0.1)
                view = c.get(f"/api/games/{view['id']}").json()
            time.sleep(3.0)  # the worker has started and searches
            workers = _children(process.pid)
        assert workers, "no worker process started"
    finally:
        left = _kill_and_watch(process, workers)
    assert not left, f"workers {left} outlived the server"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_arena_workers_die_with_a_killed_parent() -> None:
    code = (
        "import jungle_core as jc\n"
        "from jungle_agents.arena._schedule import ProcessPool, Task\n"
        "with ProcessPool(2, ()) as pool:\n"
        "    for i in range(2):\n"
        "        pool.submit(Task(jc.DARK, ('minimax:depth=30,alphabeta=0,tt=0', 'random'),"
        " 0, i, None))\n"
        "    print('started', flush=True)\n"
        "    pool.next_result()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE)
    workers: set[int] = set()
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == b"started"
        time.sleep(1.0)
        workers = _children(process.pid)
        assert workers
    finally:
        left = _kill_and_watch(process, workers)
    assert not left, f"workers {left} outlived their parent"


# ------------------------------------------------------------ 7. slots freed


def test_finished_games_give_their_slot_to_a_new_one() -> None:
    app = make_app(workers=1, max_games=3)
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as c:
        first = [new_game(c, mode="human-human")["id"] for _ in range(3)]
        refused(c.post("/api/games", json={"mode": "human-human"}), 503)  # none finished
        for gid in first[:2]:
            assert c.post(f"/api/games/{gid}/resign", json={}).status_code == 200
        for _ in range(5):  # each evicts the oldest finished game, then a fresh one's
            gid = new_game(c, mode="human-human")["id"]
            assert c.post(f"/api/games/{gid}/resign", json={}).status_code == 200
        assert c.get(f"/api/games/{first[2]}").status_code == 200  # unfinished: kept
        refused(c.get(f"/api/games/{first[0]}"), 404)


# ----------------------------------------------------- 8. CSRF, DNS rebinding


def test_cross_site_requests_and_foreign_hosts_are_refused(client: TestClient) -> None:
    plain = {"content-type": "text/plain"}
    body = json.dumps({"mode": "human-human"})
    refused(client.post("/api/games", content=body, headers=plain), 415)
    refused(client.post("/api/games", content=body), 415)  # no content type at all
    evil = {"content-type": "application/json", "origin": "http://evil.example"}
    refused(client.post("/api/games", content=body, headers=evil), 403)
    gid = new_game(client, mode="human-human")["id"]
    refused(client.delete(f"/api/games/{gid}", headers={"origin": "http://evil.example"}), 403)
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example"):
        refused(client.get("/api/agents", headers={"host": host}), 421)
        refused(client.get("/", headers={"host": host}), 421)
    for host in ("127.0.0.1:8000", "localhost:8000", "localhost", "[::1]:8000"):
        assert client.get("/api/agents", headers={"host": host}).status_code == 200
    same = {"content-type": "application/json", "origin": LOCAL}
    assert client.post("/api/games", content=body, headers=same).status_code == 200


def test_another_host_is_opt_in_and_needs_the_token() -> None:
    app = make_app(workers=1, host="0.0.0.0", allowed_hosts=["box.lan"], token="s3cret")
    with TestClient(app, base_url="http://box.lan", raise_server_exceptions=False) as c:
        refused(c.get("/api/agents"), 403)
        page = c.get("/?token=s3cret")
        assert page.status_code == 200 and "jungle_token" in page.headers["set-cookie"]
        assert c.get("/api/agents").status_code == 200  # the cookie now
        refused(c.get("/api/agents", headers={"host": "evil.example"}), 421)
    with TestClient(app, base_url="http://box.lan") as c:
        assert c.get("/api/agents", headers={"x-jungle-token": "s3cret"}).status_code == 200
        refused(c.get("/api/agents", headers={"x-jungle-token": "guess"}), 403)


# ------------------------------------------------------- 9. connection timeouts


def test_idle_and_slow_header_connections_are_closed() -> None:
    with live_server(workers=1, header_timeout=1.0, keep_alive=1) as base:
        port = int(base.rsplit(":", 1)[1])
        idle = socket.create_connection(("127.0.0.1", port))
        slow = socket.create_connection(("127.0.0.1", port))
        try:
            idle.settimeout(0.2)
            slow.settimeout(0.2)
            slow.sendall(b"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            closed: dict[str, float] = {}
            start = time.monotonic()
            while len(closed) < 2 and time.monotonic() - start < 6:
                for name, sock in (("idle", idle), ("slow", slow)):
                    if name in closed:
                        continue
                    if name == "slow":
                        with contextlib.suppress(OSError):
                            sock.sendall(b"X")  # a header that never ends
                    try:
                        if sock.recv(1024) == b"":
                            closed[name] = time.monotonic() - start
                    except TimeoutError:
                        pass
                    except OSError:
                        closed[name] = time.monotonic() - start
            assert set(closed) == {"idle", "slow"}, closed
            assert max(closed.values()) < 4.0, closed
        finally:
            idle.close()
            slow.close()


# ------------------------------------------------------------ 10. hints


def test_hints_never_delay_a_games_own_agent() -> None:
    server = live_server(workers=1, max_games=10, hint_time=3.0)
    with server as base, httpx2.Client(base_url=base, timeout=30) as c:
        slow = "minimax:depth=30,alphabeta=0,tt=0"
        hinted = [
            c.post("/api/games", json={"mode": "human-human", "hint": slow}).json()["id"]
            for _ in range(3)
        ]
        game = c.post("/api/games", json={"agent": "random", "side": 0}).json()
        # an agent to move: no hint then
        agents = c.post("/api/games", json={"mode": "agent-agent", "agent": "random"}).json()
        assert c.post(f"/api/games/{agents['id']}/hint", json={}).status_code == 409
        threads = [
            threading.Thread(target=c.post, args=(f"/api/games/{g}/hint",), kwargs={"json": {}})
            for g in hinted
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.3)  # the hints are searching
        start = time.monotonic()
        view = c.post(f"/api/games/{game['id']}/move", json={"move": "?d1"}).json()
        for _ in range(40):
            if len(view["moves"]) >= 2:
                break
            view = c.get(f"/api/games/{game['id']}?after={view['version']}").json()
        seconds = time.monotonic() - start
        for thread in threads:
            thread.join(30)
    assert len(view["moves"]) >= 2 and seconds < 2.0, seconds


def test_a_worker_over_its_memory_cap_is_replaced_and_no_decision_fails() -> None:
    """A worker past ``max_rss`` answers, says it is retiring, and ends; the next decision
    gets a fresh worker. With a cap of one byte every worker retires after one answer,
    and five decisions in a row still all succeed (a worker's memory is its current
    resident size: a spawned worker inherits its parent's peak across exec, which made
    workers of a large test process look full from the start)."""
    from jungle_cli._decisions import DecisionPool

    state = jc.new_game(jc.DARK)
    with DecisionPool(workers=1, max_rss=1) as pool:
        pids: list[int | None] = []
        start = pool._start

        def counted() -> Any:
            worker = start()
            pids.append(worker.process.pid)
            return worker

        pool._start = counted  # type: ignore[method-assign]
        for seed in range(5):
            action, _ = pool.decide(jc.DARK, "random", state, seed, timeout=30.0)
            assert action in jc.legal_actions(state)
        assert len(set(pids)) == 5  # a fresh worker for each decision
