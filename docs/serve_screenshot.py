"""Take the README's screenshot of ``jungle serve`` (docs/serve.png): a DARK game against
Greedy, mid-game, with the hint agent's suggestion, the move list in move pairs and the
probabilities of a face-down piece shown.

    .venv/bin/python docs/serve_screenshot.py [--chromium /usr/bin/chromium]

Needs the serve extra, playwright and a system Chromium; runs a server on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests._live import live_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chromium", default=shutil.which("chromium"))
    parser.add_argument("--out", default=str(Path(__file__).with_name("serve.png")))
    parser.add_argument("--plies", type=int, default=16)
    args = parser.parse_args()
    rng = random.Random(3)
    with live_server() as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, headless=True)
        page = browser.new_page(viewport={"width": 1060, "height": 700})
        page.goto(base + "/")
        page.wait_for_function("() => S.game && S.game.legal.length > 0")
        page.select_option("#agent-kind", "greedy")
        page.click("#start")
        page.wait_for_function("() => S.game && S.game.names[1] === 'greedy'")
        for _ in range(200):  # bounded
            page.wait_for_function(
                "() => !S.game.thinking && (S.game.legal.length > 0 || S.game.result)"
            )
            view = page.evaluate("() => S.game")
            if view["result"] or len(view["moves"]) >= args.plies:
                break
            legal = view["legal"]
            captures = [m for m in legal if "x" in m["text"]]
            moves = [m for m in legal if m["action"] >= 56]
            move = rng.choice(captures or (moves if moves and rng.random() < 0.6 else legal))
            page.evaluate("a => play({action: a})", move["action"])
            page.wait_for_function("n => S.game.moves.length > n", arg=len(view["moves"]))
        page.wait_for_function("() => !S.game.thinking")
        page.click("#hint")  # the hint agent's move, outlined on the board
        page.wait_for_function(
            "() => document.getElementById('hint-text').textContent.startsWith('hint')"
        )
        own = next((m for m in page.evaluate("() => S.game.legal") if m["action"] >= 56), None)
        if own is not None:  # a selected piece shows its legal-move dots
            page.evaluate("sq => { S.selected = sq; drawBoard(); }", own["from"])
        page.locator("#new-game summary").click()  # fold the form: the game in view
        if page.locator("#board .piece.down").count():
            page.locator("#board .piece.down").last.hover()
        page.screenshot(path=args.out)
        browser.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
