"""API tests of ``jungle serve`` with Starlette's TestClient: every request checked by the
core, refused requests change nothing, games kept apart and bounded."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="jungle serve needs the serve extra")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2")

from starlette.testclient import TestClient

import jungle_core as jc
from jungle_agents.arena import GameRecord, play_match, replay
from jungle_cli import build_parser, main
from jungle_cli._games import DEFAULT_HINT, ServedGame
from jungle_cli._serve import make_app
from jungle_cli._views import parse_record_text

STATIC = Path(__file__).resolve().parents[2] / "jungle_cli" / "static"


def local(app: Any) -> TestClient:
    """A client of ``app`` as the page is one: to 127.0.0.1, every body JSON."""
    return TestClient(
        app, base_url="http://127.0.0.1", headers={"content-type": "application/json"}
    )


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with local(make_app(workers=1, max_games=50, move_time=5.0)) as c:
        yield c


def new_game(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def settle(client: TestClient, view: dict[str, Any], plies: int) -> dict[str, Any]:
    """Wait (long polls, bounded) until the game has ``plies`` moves or is over."""
    for _ in range(50):
        if len(view["moves"]) >= plies or view["result"] is not None:
            return view
        view = client.get(f"/api/games/{view['id']}?after={view['version']}").json()
    raise AssertionError(f"the game did not reach {plies} plies: {view['moves']}")


def test_page_and_assets_are_local(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and '<svg id="board"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for name in ("app.js", "board.js", "style.css", "favicon.svg"):
        assert client.get(f"/static/{name}").status_code == 200
    for path in STATIC.iterdir():
        text = path.read_text()
        # the only absolute URL is the SVG namespace name, which is never fetched
        assert text.replace("http://www.w3.org/2000/svg", "").count("http") == 0, path
    agents = client.get("/api/agents").json()
    assert {"random", "greedy", "minimax"} <= {a["name"] for a in agents["agents"]}
    minimax = next(a for a in agents["agents"] if a["name"] == "minimax")
    assert any(p.startswith("depth=") for p in minimax["params"])


def test_human_against_random_plays_and_the_agent_answers(client: TestClient) -> None:
    view = new_game(client, rules="dark", mode="human-agent", agent="random", side=0)
    assert view["seats"] == ["human", "random"] and len(view["legal"]) == 16
    gid = view["id"]
    view = client.post(f"/api/games/{gid}/move", json={"move": "?d1", "ply": 0}).json()
    assert view["moves"][0]["text"].startswith("?d1=")
    view = settle(client, view, 2)
    assert len(view["moves"]) == 2 and view["position"]["to_move"] == 0
    record = GameRecord.from_json(client.get(f"/api/games/{gid}/record").json())
    assert replay(record)[-1] == jc.from_fen(view["position"]["fen"])
    assert record.players == ("human", "random")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"move": "d1-d2"}, "is not legal"),
        ({"move": "z9-z10"}, "square"),
        ({"move": "hello"}, "is not an action"),
        ({"action": 999}, "outside"),
        ({"action": 100}, "is not legal"),
        ({"action": "3"}, "integer"),
        ({"action": True}, "integer"),
        ({}, "needs"),
        ({"move": "?d1", "ply": 5}, "position changed"),
    ],
)
def test_bad_moves_are_refused_and_change_nothing(
    client: TestClient, body: dict[str, Any], words: str
) -> None:
    view = new_game(client, mode="human-human")
    response = client.post(f"/api/games/{view['id']}/move", json=body)
    assert response.status_code in (400, 409)
    assert words in response.json()["error"]
    after = client.get(f"/api/games/{view['id']}").json()
    assert after["moves"] == [] and after["version"] == view["version"]


def test_malformed_requests_are_refused(client: TestClient) -> None:
    gid = new_game(client, mode="human-human")["id"]
    bad = client.post(f"/api/games/{gid}/move", content=b"{not json")
    assert bad.status_code == 400 and "not JSON" in bad.json()["error"]
    assert client.post(f"/api/games/{gid}/move", json=[1, 2]).status_code == 400
    huge = client.post(f"/api/games/{gid}/move", content=b"x" * 20_000)
    assert huge.status_code == 413
    assert client.post("/api/games", json={"rules": "chess"}).status_code == 400
    assert client.post("/api/games", json={"mode": "solo"}).status_code == 400
    assert client.post("/api/games", json={"side": 2}).status_code == 400
    assert client.post("/api/games", json={"clock": "soon"}).status_code == 400
    assert client.get(f"/api/games/{gid}?after=abc").status_code == 400
    assert client.get(f"/api/games/{gid}/ply/7").status_code == 400


def test_unknown_agent_specs_are_refused_with_the_registry_message(client: TestClient) -> None:
    response = client.post("/api/games", json={"agent": "minmax"})
    assert response.status_code == 400
    assert "unknown agent 'minmax'" in response.json()["error"]
    response = client.post("/api/games", json={"agent": "greedy:depth=2"})
    assert "greedy takes no parameter 'depth'" in response.json()["error"]
    response = client.post("/api/games", json={"mode": "agent-agent", "agent1": "minimax:depth=x"})
    assert response.status_code == 400


def test_games_are_apart_and_ids_unguessable(client: TestClient) -> None:
    a = new_game(client, mode="human-human")
    b = new_game(client, mode="human-human")
    assert a["id"] != b["id"] and len(a["id"]) >= 22
    client.post(f"/api/games/{a['id']}/move", json={"move": "?a1"})
    assert client.get(f"/api/games/{b['id']}").json()["moves"] == []
    missing = client.get("/api/games/not-a-game")
    assert missing.status_code == 404 and "no game" in missing.json()["error"]
    assert client.post("/api/games/../move", json={"move": "?a1"}).status_code in (404, 405)


def test_undo_resign_and_hint(client: TestClient) -> None:
    view = new_game(client, rules="classic", mode="human-agent", agent="greedy", side=0)
    gid = view["id"]
    view = client.post(f"/api/games/{gid}/move", json={"move": "a3-a4"}).json()
    view = settle(client, view, 2)
    hint = client.post(f"/api/games/{gid}/hint").json()
    assert hint["agent"] == DEFAULT_HINT
    assert hint["action"] in [m["action"] for m in view["legal"]]
    view = client.post(f"/api/games/{gid}/undo").json()
    assert view["moves"] == [] and view["position"]["fen"] == jc.to_fen(jc.new_game(jc.CLASSIC))
    again = client.post(f"/api/games/{gid}/undo")
    assert again.status_code == 409 and "nothing to undo" in again.json()["error"]
    view = client.post(f"/api/games/{gid}/resign").json()
    assert view["result"]["reason"] == "resignation"
    assert view["result"]["text"] == "player 1 (greedy) wins: player 0 resigned"
    late = client.post(f"/api/games/{gid}/move", json={"move": "a3-a4"})
    assert late.status_code == 409 and "game is over" in late.json()["error"]


def test_agents_watched_to_the_end(client: TestClient) -> None:
    view = new_game(client, mode="agent-agent", agent="greedy", agent1="random", delay=0)
    for _ in range(400):
        if view["result"] is not None:
            break
        view = client.get(f"/api/games/{view['id']}?after={view['version']}").json()
    assert view["result"] is not None and view["result"]["text"]
    record = GameRecord.from_json(client.get(f"/api/games/{view['id']}/record").json())
    assert replay(record) and record.players == ("greedy", "random")
    ply = client.get(f"/api/games/{view['id']}/ply/3").json()
    assert ply["ply"] == 3 and ply["last"] is not None


def test_records_save_and_load_back(client: TestClient, tmp_path: Path) -> None:
    view = new_game(client, mode="human-human")
    gid = view["id"]
    for move in ("?d1", "?e7", "?a1"):
        client.post(f"/api/games/{gid}/move", json={"move": move})
    saved = client.get(f"/api/games/{gid}/record").json()
    loaded = client.post(
        "/api/games/load", json={"text": json.dumps(saved), "mode": "human-human"}
    ).json()
    assert loaded["id"] != gid and [m["text"] for m in loaded["moves"]] == [
        m["text"] for m in client.get(f"/api/games/{gid}").json()["moves"]
    ]
    assert loaded["games_in_file"] == 1
    # a games file of `jungle match`/`tournament`, header and all, and one entry of it
    out = tmp_path / "games.jsonl"
    play_match(jc.DARK, "random", "greedy", 2, workers=1, out=str(out), max_plies=30)
    text = out.read_text()
    second = client.post("/api/games/load", json={"text": text, "index": 1}).json()
    # the game's players are the record's; the seats that would play on are the form's
    assert second["games_in_file"] == 2 and second["names"] == ["greedy", "random"]
    assert second["seat_names"] == ["human", "random"]
    assert "greedy vs random" in second["title"]
    entry = text.splitlines()[1]
    assert client.post("/api/games/load", json={"text": entry}).status_code == 200
    beyond = client.post("/api/games/load", json={"text": text, "index": 2})
    assert "holds 2 games" in beyond.json()["error"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "not a game record"),
        ("hello", "not JSON"),
        ('{"format": "jungle-game/1"}', "lacks rules"),
        ("[1, 2]", "not a game record"),
        ("[" * 100_000, "not a game record"),
    ],
)
def test_bad_records_are_refused(client: TestClient, text: str, words: str) -> None:
    response = client.post("/api/games/load", json={"text": text})
    assert response.status_code == 400 and words in response.json()["error"], response.text


def test_a_record_that_does_not_replay_is_refused(client: TestClient) -> None:
    game = ServedGame.create(jc.DARK, ("human", "human"))
    game.play_text("?d1")
    data = game.record().to_json()
    data["actions"][0] = 100  # a move of an empty square
    response = client.post("/api/games/load", json={"text": json.dumps(data)})
    assert response.status_code == 400 and "does not replay" in response.json()["error"]
    data = game.record().to_json()
    data["outcomes"][0] = 99
    assert client.post("/api/games/load", json={"text": json.dumps(data)}).status_code == 400
    data = game.record().to_json()
    data["winner"] = 0
    with pytest.raises(ValueError, match="replays to"):
        parse_record_text(json.dumps(data))


def test_games_are_bounded() -> None:
    with local(make_app(workers=1, max_games=3)) as client:
        for _ in range(3):
            new_game(client, mode="human-human")
        full = client.post("/api/games", json={"mode": "human-human"})
        assert full.status_code == 503 and "3 unfinished games" in full.json()["error"]


def test_an_agent_over_its_move_time_loses_and_the_server_stays_free() -> None:
    with local(make_app(workers=1, move_time=0.3)) as client:
        view = new_game(client, rules="classic", mode="agent-agent", agent="minimax:depth=12")
        start = time.monotonic()
        for _ in range(50):
            if view["result"] is not None:
                break
            # the event loop answers at once while the search runs in a worker process
            assert client.get("/api/agents").status_code == 200
            view = client.get(f"/api/games/{view['id']}?after={view['version']}").json()
        assert view["result"]["reason"] == "move_limit"
        assert "overran its 0.3 s limit" in view["result"]["text"]
        assert time.monotonic() - start < 20
        # the replaced worker serves the next game
        other = new_game(client, mode="agent-agent", agent="random", agent1="random", delay=0)
        other = settle(client, other, 4)
        assert len(other["moves"]) >= 4, other["result"]


def test_the_clock_flag_falls() -> None:
    clock = [0.0]
    game = ServedGame.create(jc.DARK, ("human", "human"), clock="0.01", now=lambda: clock[0])
    game.play_text("?d1")
    clock[0] = 0.9
    game.check_flag()
    assert game.result() == (0, "time")
    assert "player 1 ran out of time" in game.result_text()


def test_serve_is_a_subcommand() -> None:
    args = build_parser().parse_args(["serve", "--port", "8123"])
    assert (args.host, args.port, args.workers) == ("127.0.0.1", 8123, 2)


def test_watching_at_a_chosen_speed_and_pausing(client: TestClient) -> None:
    view = new_game(client, mode="agent-agent", agent="random", agent1="random", delay=0.05)
    view = settle(client, view, 3)
    assert len(view["moves"]) >= 3  # moves keep coming with a delay between them
    view = client.post(f"/api/games/{view['id']}/watch", json={"paused": True}).json()
    assert view["paused"]
    time.sleep(0.3)
    before = client.get(f"/api/games/{view['id']}").json()
    time.sleep(0.3)
    after = client.get(f"/api/games/{view['id']}").json()
    assert len(after["moves"]) == len(before["moves"])
    view = client.post(f"/api/games/{view['id']}/watch", json={"paused": False}).json()
    assert len(settle(client, view, len(after["moves"]) + 2)["moves"]) > len(after["moves"])
    bad = client.post(f"/api/games/{view['id']}/watch", json={"delay": -1})
    assert bad.status_code == 400


def test_a_loaded_game_keeps_its_players_names() -> None:
    game = ServedGame.create(jc.DARK, ("human", "human"))
    for move in ("?d1", "?e7"):
        game.play_text(move)
    game.resign()  # the saved record stays unfinished (player 0 to move): play can go on
    record = GameRecord.of_play(
        game.state, ("random", "greedy"), game.seed, game.actions, game.outcomes, game.times
    )
    with local(make_app(workers=1)) as client:
        view = client.post(
            "/api/games/load",
            json={"text": json.dumps(record.to_json()), "mode": "human-human"},
        ).json()
        assert view["names"] == ["random", "greedy"] and view["seat_names"] == ["human", "human"]
        view = client.post(f"/api/games/{view['id']}/resign").json()
        assert view["result"]["text"] == "player 1 (greedy) wins: player 0 resigned"
        saved = GameRecord.from_json(client.get(f"/api/games/{view['id']}/record").json())
        assert saved.players == ("random", "greedy")
        # a seat taken over and played from is named for both who played it
        view = client.post(
            "/api/games/load",
            json={"text": json.dumps(record.to_json()), "mode": "human-human"},
        ).json()
        view = client.post(f"/api/games/{view['id']}/move", json={"move": "?a1"}).json()
        assert view["names"] == ["random, then human", "greedy"]


def test_the_hint_agent_is_apart_from_the_opponent(client: TestClient) -> None:
    assert client.get("/api/agents").json()["hint"] == DEFAULT_HINT
    view = new_game(client, mode="human-agent", agent="random")
    assert view["hint_agent"] == DEFAULT_HINT
    hint = client.post(f"/api/games/{view['id']}/hint")
    assert hint.status_code == 200 and hint.json()["agent"] == DEFAULT_HINT
    view = new_game(client, mode="human-agent", agent="random", hint="greedy")
    assert client.post(f"/api/games/{view['id']}/hint").json()["agent"] == "greedy"
    view = new_game(client, mode="human-human")
    assert view["hint_agent"] == DEFAULT_HINT
    bad = client.post("/api/games", json={"hint": "minimax:dept=2"})
    assert bad.status_code == 400 and "dept" in bad.json()["error"]
    with local(make_app(workers=1, hint="greedy")) as other:
        assert other.get("/api/agents").json()["hint"] == "greedy"
        view = new_game(other, mode="human-agent", agent="random")
        assert other.post(f"/api/games/{view['id']}/hint").json()["agent"] == "greedy"


def test_hints_are_bounded_in_time() -> None:
    with local(make_app(workers=1, move_time=5.0, hint_time=0.5)) as client:
        # a search far longer than the hint time: refused after it, the worker replaced
        view = new_game(client, mode="human-human", hint="minimax:depth=12")
        client.post(f"/api/games/{view['id']}/hint", json={})  # starts the worker
        start = time.monotonic()
        slow = client.post(f"/api/games/{view['id']}/hint")
        assert slow.status_code == 409 and "no hint" in slow.json()["error"]
        assert time.monotonic() - start < 3.0
        # the only agent worker busy with a long search: hints have workers of their own
        busy = new_game(client, rules="classic", mode="agent-agent", agent="minimax:depth=12")
        settle_thinking = client.get(f"/api/games/{busy['id']}?after={busy['version']}")
        assert settle_thinking.json()["thinking"]
        other = new_game(client, mode="human-human", hint="greedy")
        start = time.monotonic()
        hint = client.post(f"/api/games/{other['id']}/hint")
        assert hint.status_code == 200 and hint.json()["agent"] == "greedy"
        assert time.monotonic() - start < 3.0
        client.delete(f"/api/games/{busy['id']}")


def test_serve_help_shows_defaults_and_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    text = capsys.readouterr().out
    assert "browser" in text and "(default: 8000)" in text
    assert f"(default: {DEFAULT_HINT})" in text and "(default: 5.0)" in text
    assert "example:" in text and "jungle serve --port" in text
    args = build_parser().parse_args(["serve", "--hint", "greedy", "--hint-time", "2"])
    assert (args.hint, args.hint_time) == ("greedy", 2.0)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--hint-time", "0"])
    assert main(["serve", "--hint", "minmax"]) == 2  # refused before any server starts
    assert "unknown agent 'minmax'" in capsys.readouterr().err
