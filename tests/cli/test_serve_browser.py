"""End-to-end tests of ``jungle serve`` in a real headless Chromium (Playwright).

The browser is the system's ``chromium`` (Debian's package; ``.ci/run`` installs it), driven
through ``executable_path``: Playwright's own browser download cannot work here. Without a
``chromium`` on PATH (or ``JUNGLE_CHROMIUM``) every test here is skipped, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="jungle serve needs the serve extra")
pytest.importorskip("pytest_playwright", reason="the browser tests need pytest-playwright")

from playwright.sync_api import Page, expect

import jungle_core as jc
from jungle_agents.arena import GameRecord, play_match, replay
from jungle_cli._games import DEFAULT_HINT
from tests._live import live_server

CHROMIUM = os.environ.get("JUNGLE_CHROMIUM") or shutil.which("chromium")


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict[str, Any]:
    """Launch the system Chromium, headless."""
    if CHROMIUM is None:
        pytest.skip(
            "no chromium on PATH (apt-get install chromium, or set JUNGLE_CHROMIUM): "
            "browser tests skipped"
        )
    return {"executable_path": CHROMIUM, "headless": True}


@pytest.fixture(scope="session")
def base_url() -> str | None:
    """No base URL: every ``page.goto`` here names the live server's whole address. (This
    replaces pytest-playwright's own fallback fixture, an instance method that pytest
    deprecates.)"""
    return None


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with live_server(workers=2, max_games=50, hint_time=3.0) as base:
        yield base


@pytest.fixture(scope="module")
def long_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GameRecord]:
    """A games file of one long DARK game between two agents that one of them won (random
    against greedy: over a hundred plies), and its record."""
    folder = tmp_path_factory.mktemp("long")
    for seed in range(1, 20):  # bounded: nearly every seed gives such a game
        out = folder / f"games-{seed}.jsonl"
        play_match(jc.DARK, "random", "greedy", 1, seed=seed, workers=1, out=str(out))
        line = next(x for x in out.read_text().splitlines() if '"record"' in x)
        record = GameRecord.from_json(json.loads(line)["record"])
        if record.winner is not None and record.plies >= 100:
            return out, record
    raise AssertionError("no decisive long game in 19 seeds")


@pytest.fixture
def app(page: Page, server: str) -> Page:
    """The page, loaded, with its first game (human vs random on DARK) ready."""
    # generous: a wait is not a speed test, and on the 2-core CI machine under another
    # job's load (a match beside it) one click's round trip once took over 15 s
    page.set_default_timeout(60_000)
    page.goto(server + "/")
    wait_human(page)
    return page


def game(page: Page) -> dict[str, Any]:
    return dict(page.evaluate("() => S.game"))


def wait_human(page: Page) -> None:
    """Until the human is to move or the game is over."""
    page.wait_for_function(
        "() => S.game && !S.game.thinking && (S.game.legal.length > 0 || S.game.result)"
    )


def start(page: Page, rules: str, mode: str = "human-agent", agent: str = "random") -> None:
    page.select_option("#rules", rules)
    page.select_option("#mode", mode)
    page.select_option("#agent-kind", agent)
    old = game(page)["id"]
    page.click("#start")
    page.wait_for_function("old => S.game && S.game.id !== old", arg=old)
    if mode != "agent-agent":
        wait_human(page)


def center(page: Page, square: str) -> tuple[float, float]:
    box = page.locator(f'#board rect[data-square="{square}"]').bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def click_square(page: Page, square: str) -> None:
    page.mouse.click(*center(page, square))


def name(page: Page, sq: int) -> str:
    return str(page.evaluate("sq => squareName(sq)", sq))


def play_by_clicks(page: Page, move: dict[str, Any]) -> None:
    """Play a legal move of the page's list with the mouse: a reveal is one click on the
    piece; a move clicks the piece, then its destination."""
    plies = len(game(page)["moves"])
    if move["action"] < len(game(page)["position"]["squares"]):
        click_square(page, name(page, move["from"]))
    else:
        click_square(page, name(page, move["from"]))
        expect(page.locator(".dot").first).to_be_visible()
        click_square(page, name(page, move["to"]))
    page.wait_for_function("n => S.game.moves.length > n", arg=plies)


def test_page_loads_its_files_without_errors(page: Page, server: str) -> None:
    """Every file the page names (its scripts, style sheet and icon) is served, and loading
    it and starting the first game logs no error: a script split across files that reads
    another's name too early, or a missing icon, shows here."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(60_000)
    page.goto(server + "/")
    wait_human(page)
    statuses = page.evaluate(
        """() => Promise.all(
            [...document.querySelectorAll('script[src], link[href]')]
              .map((n) => n.src || n.href)
              .map((url) => fetch(url).then((r) => [url, r.status])))"""
    )
    names = {url.rsplit("/", 1)[1] for url, _ in statuses}
    assert {"board.js", "app.js", "style.css", "favicon.svg"} <= names
    assert all(status == 200 for _, status in statuses), statuses
    assert errors == []


def test_a_full_game_by_clicks_against_random(app: Page) -> None:
    start(app, "classic")
    den_row, den_col = 8, 3  # d9, the den player 0 makes for
    for _ in range(150):  # bounded: the march on the den ends the game long before
        wait_human(app)
        view = game(app)
        if view["result"] is not None:
            break

        def distance(sq: int) -> int:
            row, col = divmod(sq, 7)
            return abs(row - den_row) + abs(col - den_col)

        move = min(view["legal"], key=lambda m: (distance(m["to"]), -distance(m["from"])))
        play_by_clicks(app, move)
    view = game(app)
    assert view["result"] is not None, "the game did not end"
    expect(app.locator("#banner")).to_be_visible()
    expect(app.locator("#banner")).to_contain_text(view["result"]["text"])
    record = GameRecord.from_json(
        app.evaluate(f"() => fetch('/api/games/{view['id']}/record').then(r => r.json())")
    )
    assert replay(record)[-1] == jc.from_fen(view["position"]["fen"], jc.CLASSIC)


def test_dark_reveal_shows_probabilities_and_turns_up(app: Page) -> None:
    start(app, "dark")
    down = app.locator('#board .piece.down[data-square="d1"]')
    down.hover()
    expect(app.locator("#probe")).to_contain_text("d1: face down")
    expect(app.locator("#probe")).to_contain_text("E Elephant 6.3%")
    assert "e Elephant 6.3%" in (down.locator("title").text_content() or "")
    click_square(app, "d1")
    app.wait_for_function("() => S.game.moves.length >= 1")
    first = app.locator("#moves button").first
    expect(first).to_have_text(__import__("re").compile(r"\?d1=[ELTPWDCRletpwdcr]"))
    expect(app.locator('#board .piece.down[data-square="d1"]')).to_have_count(0)
    wait_human(app)
    # the revealed piece stands on d1, face up, unless the reply moved it or took it
    replies = app.locator("#moves button").all_inner_texts()[1:]
    if not any("d1" in text for text in replies):
        expect(app.locator('#board .piece[data-square="d1"] .name')).to_have_count(1)
    # each piece still face down is any one of them: 14 after two reveals (7.1%), 15 when
    # the reply was a move (6.7%)
    still_down = app.locator("#board .piece.down").count()
    app.locator("#board .piece.down").first.hover()
    expect(app.locator("#probe")).to_contain_text(f"{100 / still_down:.1f}%")


def test_drag_to_move_last_move_and_flip(app: Page) -> None:
    start(app, "classic")
    expect(app.locator("#board rect.water")).to_have_count(12)
    expect(app.locator("#board rect.trap")).to_have_count(6)
    expect(app.locator("#board rect.den")).to_have_count(2)
    x0, y0 = center(app, "a3")
    x1, y1 = center(app, "a4")
    app.mouse.move(x0, y0)
    app.mouse.down()
    app.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=4)
    app.mouse.move(x1, y1, steps=4)
    app.mouse.up()
    app.wait_for_function("() => S.game.moves.length >= 1")
    expect(app.locator("#moves button").first).to_have_text("a3-a4")
    wait_human(app)
    last = game(app)["position"]["last"]  # the agent's answer
    for sq in (last["from"], last["to"]):
        rect = app.locator(f'#board rect[data-square="{name(app, sq)}"]')
        assert "last" in (rect.get_attribute("class") or "")
    _, before = center(app, "a1")
    app.click("#flip")
    expect(app.locator("#board")).to_have_attribute("data-flipped", "1")
    _, after = center(app, "a1")
    assert after < before  # a1 is now at the top
    app.click("#flip")
    expect(app.locator("#board")).to_have_attribute("data-flipped", "0")


def test_undo_goes_back_before_the_humans_move(app: Page) -> None:
    start(app, "dark")
    click_square(app, "a1")
    app.wait_for_function("() => S.game.moves.length >= 2")
    wait_human(app)
    app.click("#undo")
    app.wait_for_function("() => S.game.moves.length === 0")
    expect(app.locator("#moves button")).to_have_count(0)
    expect(app.locator("#board .piece.down")).to_have_count(16)
    expect(app.locator("#undo")).to_be_disabled()
    app.click("#hint")
    expect(app.locator("#hint-text")).to_contain_text(f"hint ({DEFAULT_HINT}): ?")
    expect(app.locator("#board rect.hinted")).to_have_count(1)  # a reveal: one square
    app.click("#resign")
    expect(app.locator("#banner")).to_have_text("player 1 (random) wins: player 0 resigned")
    expect(app.locator("#resign")).to_be_disabled()


def test_save_then_replay_the_record(app: Page, tmp_path: Path) -> None:
    start(app, "dark")
    for square in ("a1", "b1", "c1"):
        wait_human(app)
        legal = game(app)["legal"]
        reveal = next((m for m in legal if m["text"] == f"?{square}"), legal[0])
        play_by_clicks(app, reveal)
    wait_human(app)
    plies = len(game(app)["moves"])
    with app.expect_download() as download:
        app.click("#save")
    path = tmp_path / "saved.json"
    download.value.save_as(path)
    record = GameRecord.from_json(json.loads(path.read_text()))
    assert record.plies == plies and replay(record)
    texts = [m["text"] for m in game(app)["moves"]]
    app.set_input_files("#load", str(path))
    app.wait_for_function("() => S.game.title.includes('loaded')")
    expect(app.locator("#status")).to_contain_text(f"viewing ply 0 of {plies}")
    assert [m["text"] for m in game(app)["moves"]] == texts
    app.keyboard.press("ArrowRight")
    app.keyboard.press("ArrowRight")
    expect(app.locator("#status")).to_contain_text(f"viewing ply 2 of {plies}")
    expect(app.locator("#moves button.current")).to_have_text(texts[1])
    app.keyboard.press("ArrowLeft")
    expect(app.locator("#ply-label")).to_have_text(f"ply 1 / {plies}")
    app.locator("#moves button").nth(2).click()
    expect(app.locator("#slider")).to_have_value("3")
    app.locator("#slider").fill("0")
    expect(app.locator("#board .piece.down")).to_have_count(16)
    app.keyboard.press("End")
    expect(app.locator("#status")).not_to_contain_text("viewing")


def test_a_tournament_games_file_loads_and_picks_a_game(app: Page, tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    play_match(jc.DARK, "random", "greedy", 2, workers=1, out=str(out), max_plies=20)
    app.set_input_files("#load", str(out))
    expect(app.locator("#load-index-label")).to_be_visible()
    expect(app.locator("#title")).to_contain_text("random vs greedy")
    app.fill("#load-index", "1")
    app.locator("#load-index").dispatch_event("change")
    expect(app.locator("#title")).to_contain_text("greedy vs random")
    expect(app.locator("#moves button")).to_have_count(20)


def test_bad_moves_and_bad_records_are_refused_on_the_page(app: Page, tmp_path: Path) -> None:
    start(app, "classic")
    app.fill("#move-text", "a3-a5")
    app.press("#move-text", "Enter")
    expect(app.locator("#error-text")).to_contain_text("a3-a5")
    expect(app.locator("#error")).to_be_visible()
    app.fill("#move-text", "hello")
    app.press("#move-text", "Enter")
    expect(app.locator("#error-text")).to_contain_text("is not an action")
    # dragged onto a square no legal move reaches: the server's refusal is shown
    x0, y0 = center(app, "a3")
    x1, y1 = center(app, "c5")
    app.mouse.move(x0, y0)
    app.mouse.down()
    app.mouse.move(x1, y1, steps=6)
    app.mouse.up()
    expect(app.locator("#error-text")).to_contain_text("a3-c5")
    assert game(app)["moves"] == []
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "jungle-game/1", "actions": [1]}')
    app.set_input_files("#load", str(bad))
    expect(app.locator("#error-text")).to_contain_text("a game record lacks rules")
    assert game(app)["moves"] == [] and "loaded" not in game(app)["title"]


def test_watch_two_agents_to_the_end(app: Page) -> None:
    app.fill("#clock", "")
    start(app, "dark", mode="agent-agent", agent="greedy")
    expect(app.locator("#watch")).to_be_visible()
    app.locator("#delay").fill("0")  # the speed: no pause between moves
    app.wait_for_function("() => S.game.result !== null", timeout=60_000)
    expect(app.locator("#banner")).to_be_visible()
    assert len(game(app)["moves"]) > 10


def test_clocks_count_down_for_the_player_to_move(app: Page) -> None:
    app.fill("#clock", "1+2")
    start(app, "dark")
    expect(app.locator("#clock-bottom")).to_be_visible()
    expect(app.locator("#clock-bottom")).to_have_class("clock running")
    expect(app.locator("#clock-bottom")).to_contain_text("player 0  0:5")  # 0:59 .. 0:50
    expect(app.locator("#clock-top")).to_have_text("player 1  1:00")
    click_square(app, "a1")
    app.wait_for_function("() => S.game.moves.length >= 2")
    expect(app.locator("#clock-top")).to_contain_text("player 1  1:0")  # + 2 s increment


def test_a_loaded_games_banner_names_its_own_agents(
    app: Page, long_game: tuple[Path, GameRecord]
) -> None:
    path, record = long_game
    assert record.winner is not None
    start(app, "dark", agent="random")  # the form's seats (human, random) are not the game's
    app.set_input_files("#load", str(path))
    app.wait_for_function("() => S.game.title.includes('loaded')")
    app.keyboard.press("End")
    winner = record.players[record.winner]
    expect(app.locator("#banner")).to_be_visible()
    expect(app.locator("#banner")).to_contain_text(f"player {record.winner} ({winner}) wins")
    expect(app.locator("#banner")).not_to_contain_text("human")
    assert game(app)["names"] == list(record.players)


def test_the_move_list_is_rows_of_move_pairs_scrolling_in_its_box(
    app: Page, long_game: tuple[Path, GameRecord]
) -> None:
    path, record = long_game
    app.set_input_files("#load", str(path))
    app.wait_for_function("() => S.game.title.includes('loaded')")
    texts = [m["text"] for m in game(app)["moves"]]
    rows = app.locator("#moves tbody tr")
    expect(rows).to_have_count((record.plies + 1) // 2)
    for index in (0, 1, (record.plies - 1) // 2):  # a number, then each player's move
        pair = texts[2 * index : 2 * index + 2]
        expected = [f"{index + 1}.", *pair, *[""] * (2 - len(pair))]
        assert rows.nth(index).locator("td").all_inner_texts() == expected
    expect(app.locator("#moves thead th")).to_have_text(["#", *record.players])
    app.keyboard.press("End")
    expect(app.locator("#moves button.current")).to_have_text(texts[-1])
    box = app.evaluate(
        """() => {
        const box = document.getElementById("moves"), outer = box.getBoundingClientRect();
        const cut = [...box.querySelectorAll("td, th")].filter((c) => {
            const r = c.getBoundingClientRect();
            return c.scrollWidth > c.clientWidth || r.left < outer.left - 0.5
                || r.right > outer.right + 0.5;
        }).map((c) => c.textContent);
        const current = box.querySelector(".current").getBoundingClientRect();
        return {cut, sideways: box.scrollWidth > box.clientWidth,
                scrolls: box.scrollHeight > box.clientHeight,
                height: outer.height, currentInside:
                current.top >= outer.top && current.bottom <= outer.bottom + 0.5};
        }"""
    )
    assert box["cut"] == [] and not box["sideways"], box  # no column cut, nothing sideways
    assert box["scrolls"] and box["height"] <= 330, box  # it scrolls within its own box
    assert box["currentInside"], box  # the last move was scrolled into view in the box
    app.keyboard.press("Home")  # back to the start: the list scrolls back to its top
    app.wait_for_function("() => document.getElementById('moves').scrollTop === 0")


def test_a_new_game_clears_the_hover_hint_and_error_text(app: Page) -> None:
    start(app, "dark")
    app.locator('#board .piece.down[data-square="d1"]').hover()
    expect(app.locator("#probe")).to_contain_text("d1: face down")
    app.locator("#hint").focus()
    app.keyboard.press("Enter")  # keys, not the mouse: the pointer stays on d1
    expect(app.locator("#hint-text")).to_contain_text("hint (")
    expect(app.locator("#board rect.hinted")).not_to_have_count(0)
    app.locator("#move-text").fill("a1-a7")
    app.locator("#move-text").press("Enter")
    expect(app.locator("#error")).to_be_visible()
    app.select_option("#rules", "classic")  # no face-down piece will be under the pointer
    old = game(app)["id"]
    app.locator("#start").focus()
    app.keyboard.press("Enter")
    app.wait_for_function("old => S.game && S.game.id !== old", arg=old)
    wait_human(app)
    expect(app.locator("#probe")).to_have_text("")
    expect(app.locator("#hint-text")).to_have_text("")
    expect(app.locator("#error")).to_be_hidden()
    expect(app.locator("#board rect.hinted")).to_have_count(0)
    # a hint still being searched when a new game starts says nothing in the new game
    app.select_option("#rules", "dark")
    app.select_option("#hint-kind", "minimax")
    app.fill("#hint-params", "depth=12")  # a search far longer than the hint time
    start(app, "dark")
    with app.expect_response(lambda r: r.url.endswith("/hint")) as answer:
        app.click("#hint")
        expect(app.locator("#hint-text")).to_have_text("thinking…")
        start(app, "dark")
    assert answer.value.status == 409  # the search ran out of its hint time
    app.wait_for_timeout(200)
    expect(app.locator("#hint-text")).to_have_text("")
    expect(app.locator("#error")).to_be_hidden()


def test_the_hint_comes_from_the_hint_agent_not_the_opponent(app: Page) -> None:
    start(app, "dark", agent="random")
    expect(app.locator("#hint-kind")).to_have_value(DEFAULT_HINT.split(":")[0])
    assert game(app)["hint_agent"] == DEFAULT_HINT
    app.click("#hint")
    expect(app.locator("#hint-text")).to_contain_text(f"hint ({DEFAULT_HINT}): ")
    app.select_option("#hint-kind", "greedy")
    expect(app.locator("#hint-params")).to_have_value("")
    start(app, "dark", agent="random")
    app.click("#hint")
    expect(app.locator("#hint-text")).to_contain_text("hint (greedy): ")
    # between two humans the hint box is the only agent choice shown
    app.select_option("#mode", "human-human")
    expect(app.locator("#agent-box")).to_be_hidden()
    expect(app.locator("#hint-box")).to_be_visible()


def test_the_page_gives_its_games_back(app: Page, server: str) -> None:
    """A new game releases the page's previous one, and closing the page its last: their
    slots are free at once, not after the idle time."""
    first = game(app)["id"]
    start(app, "dark")
    second = game(app)["id"]

    def status(gid: str) -> int:
        return app.request.get(f"{server}/api/games/{gid}").status

    for _ in range(50):  # bounded: the release is a request of its own
        if status(first) == 404:
            break
        app.wait_for_timeout(100)
    assert status(first) == 404 and status(second) == 200
    app.goto("about:blank")  # the page goes away
    for _ in range(50):
        if status(second) == 404:
            break
        time.sleep(0.1)
    assert status(second) == 404


def test_the_page_sends_only_json_posts(app: Page) -> None:
    """The server refuses a POST that is not JSON (a cross-site form's): every button of
    the page still works."""
    start(app, "dark", agent="random")
    app.click("#hint")
    expect(app.locator("#hint-text")).to_contain_text("hint (")
    app.locator("#move-text").fill("?d1")
    app.locator("#move-text").press("Enter")
    app.wait_for_function("() => S.game.moves.length >= 1")
    wait_human(app)
    app.click("#undo")
    app.wait_for_function("() => S.game.moves.length === 0")
    app.click("#resign")
    expect(app.locator("#banner")).to_contain_text("resigned")
    expect(app.locator("#error")).to_be_hidden()
