"""The arena on Ray: the same games as the process backend, on a cluster reached by its
address, and no game lost or repeated when a Ray worker dies mid-game.

Every cluster here runs on this machine's loopback address (the root conftest keeps Ray
there) and is stopped by the test that started it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jungle_agents.arena import GameResult, load_games, round_robin
from jungle_core import DARK

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="the ray extra is not installed"
)

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests._pool_agents"


def _rows(games: list[GameResult] | tuple[GameResult, ...]) -> list[tuple[object, ...]]:
    """Each game as (pair, index, actions, chance outcomes, winner, reason), sorted."""
    rows = [
        (g.pair, g.index, g.record.actions, g.record.outcomes, g.record.winner, g.record.reason)
        for g in games
    ]
    return sorted(rows, key=repr)


@pytest.fixture
def workers_import_the_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray's workers start from the raylet, which takes this process's environment."""
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{path}" if path else str(ROOT))


def test_ray_plays_the_process_backends_games_with_duplicate_deals(tmp_path: Path) -> None:
    specs = ["random", "greedy", "minimax:depth=1"]
    common = {"seed": 7, "max_plies": 60, "deals": "duplicate"}
    local = round_robin(DARK, specs, 4, workers=2, **common)  # type: ignore[arg-type]
    out = tmp_path / "games.jsonl"
    remote = round_robin(DARK, specs, 4, workers=2, backend="ray", out=out, **common)  # type: ignore[arg-type]
    assert _rows(remote.games) == _rows(local.games)
    header, games = load_games(out)
    assert header is not None and header.get("deals") == "duplicate"
    assert _rows(games) == _rows(local.games)


def test_a_ray_worker_killed_mid_game_leaves_every_game_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers_import_the_tests: None
) -> None:
    marker = tmp_path / "a-worker-died"
    monkeypatch.setenv("JUNGLE_CRASH_ONCE", str(marker))
    specs = ["crash_once", "greedy"]
    out = tmp_path / "games.jsonl"
    run = {"seed": 3, "max_plies": 40, "plugins": [PLUGIN]}
    round_robin(DARK, specs, 6, workers=2, backend="ray", out=out, **run)  # type: ignore[arg-type]
    assert marker.exists()  # a worker was killed in the middle of a game
    # Ray ran that game again (its task retries); the file holds each game once, the same
    # games as a run in which no worker died (the marker now exists: nothing dies)
    uninterrupted = round_robin(DARK, specs, 6, workers=1, **run)  # type: ignore[arg-type]
    _, games = load_games(out)
    assert len({(g.pair, g.index) for g in games}) == len(games) == 6
    assert _rows(games) == _rows(uninterrupted.games)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_the_cli_reaches_a_running_cluster_by_address_and_by_ray_address(tmp_path: Path) -> None:
    ray_cli = Path(sys.executable).with_name("ray")
    jungle = Path(sys.executable).with_name("jungle")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    head = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats", "--node-ip-address=127.0.0.1",
         '--resources={"this_test_cluster": 1}'],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    command = [str(jungle), "tournament", "--rules", "dark", "--agents", "random,greedy",
               "--games", "2", "--seed", "5", "--max-plies", "40", "--backend", "ray"]  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:  # the head takes some seconds to accept drivers
            first = subprocess.run(
                [*command, "--ray-address", address, "--out", str(tmp_path / "flag")],
                capture_output=True, text=True, timeout=180, check=False,
            )  # fmt: skip
            if first.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert first.returncode == 0, first.stderr[-2000:]
        second = subprocess.run(
            [*command, "--out", str(tmp_path / "env")],
            capture_output=True, text=True, timeout=180, check=False,
            env={**os.environ, "RAY_ADDRESS": address},
        )  # fmt: skip
        assert second.returncode == 0, second.stderr[-2000:]
        # the games ran on that cluster (it alone has this resource), not a local instance
        ray: Any = importlib.import_module("ray")

        seen: list[float] = []
        round_robin(
            DARK, ["random", "greedy"], 2, seed=5, backend="ray", ray_address=address,
            progress=lambda *_: seen.append(ray.cluster_resources().get("this_test_cluster", 0)),
        )  # fmt: skip
        assert seen == [1, 1]
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
    local = round_robin(DARK, ["random", "greedy"], 2, seed=5, workers=1, max_plies=40)
    for name in ("flag", "env"):
        _, games = load_games(tmp_path / name / "games.jsonl")
        assert _rows(games) == _rows(local.games)
