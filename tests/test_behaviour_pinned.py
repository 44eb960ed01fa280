"""Pinned games: every built-in agent and every shipped checkpoint still plays, from the
same seed, the very moves it played when the games were pinned.

Each entry of ``tests/data/pinned_games.json`` names a game: the rules, the two agent
specs (player 0 first), the seed, the ``max_plies`` cap and the deals; and holds what was
played: each ply's action and chance outcome, the moves in notation, the winner and the
reason. The test plays each game again with fresh agents (:func:`jungle_agents.make_agent`)
through :func:`jungle_agents.arena.play_game` and asserts the same plies and result; a
failure names the first ply that differs. It pins behaviour across refactors (modules
moved, code reorganised): a change that is meant to alter play (new weights, a retrained
checkpoint, another tie-break) regenerates the file, from the list :func:`pins` holds::

    python -m tests.test_behaviour_pinned --regenerate

Only specs that play the same moves run to run are pinned: no ``time=`` limit (a timed
search stops where the clock says). ``azero`` searches with few simulations, and it and
Minimax on the value network play short games, so that the file runs in seconds on one
core. ``azero`` computes in floating point through XLA, whose results depend on how it
compiles: on DARK (the DQN checkpoint as its prior) near-equal choices go the other way at
another optimisation level. Its games were pinned, and replay, under :data:`XLA_FLAG`, the
flag the root ``conftest.py`` sets for the test run (and :func:`main` for the
regeneration); where ``XLA_FLAGS`` says otherwise they are skipped. On another machine
(another CPU or accelerator) they may differ too.

>>> pins()[0].players
('random', 'random')
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import jungle_core
from jungle_agents import make_agent
from jungle_agents.arena import GameRecord, moves_text, play_game
from jungle_core import Rules
from tests._requires import needs_jax

DATA = Path(__file__).resolve().parent / "data" / "pinned_games.json"
"""The pinned games (written by :func:`regenerate`)."""

MAX_PLIES = 200
"""The cap of a game without ``azero``: long enough for most games to end."""

SHORT_MAX_PLIES = 60
"""The cap of a game with a costlier agent: ``azero`` (a search per decision, even at 16
simulations), Minimax with the value network at its leaves."""

AZERO = "azero:simulations=16"
"""The AlphaZero agent at a setting fast on a CPU: DARK's search is guided by the shipped
DQN checkpoint, CLASSIC's by the hand-made prior and value (no ``azero.npz`` ships)."""

JAX_KINDS = frozenset({"azero"})
"""Agent kinds that compute through JAX (a game with one needs JAX and :data:`XLA_FLAG`)."""

XLA_FLAG = "--xla_backend_optimization_level=0"
"""The XLA flag the games with JAX were pinned under (the one the test run sets)."""

_PINNED_XLA = pytest.mark.skipif(
    XLA_FLAG not in os.environ.get("XLA_FLAGS", "").split(),
    reason=f"JAX's games were pinned under XLA_FLAGS={XLA_FLAG}",
)


@dataclass(frozen=True)
class Pin:
    """One pinned game: its rules (a :data:`jungle_core` name), the agent specs (player 0
    first), the seed, the cap on plies and the deals (:data:`jungle_agents.arena.DEALS`)."""

    rules: str
    players: tuple[str, str]
    seed: int
    max_plies: int
    deals: str = "independent"

    @property
    def name(self) -> str:
        """A test id that ``pytest -k`` takes: ``dark-minimax_depth_2-vs-random-s1``."""
        a, b = (re.sub(r"[^\w.]+", "_", spec) for spec in self.players)
        deals = "" if self.deals == "independent" else f"-{self.deals}"
        return f"{self.rules.lower()}-{a}-vs-{b}-s{self.seed}{deals}"


def _both_sides(rules: str, a: str, b: str, seeds: tuple[int, ...], max_plies: int) -> list[Pin]:
    """``a`` against ``b`` and ``b`` against ``a``, for each seed."""
    return [Pin(rules, players, seed, max_plies) for seed in seeds for players in ((a, b), (b, a))]


def pins() -> list[Pin]:
    """The games to pin: each agent against ``random`` on both sides with two seeds, a few
    pairings among them, two games of duplicate deals, and ``azero`` in short games."""
    out = [Pin("DARK", ("random", "random"), seed, MAX_PLIES) for seed in (1, 2)]
    dark = ("greedy", "minimax:depth=2", "qlearn", "approxq", "dqn", "value")
    for spec in dark:
        out += _both_sides("DARK", spec, "random", (1, 2), MAX_PLIES)
    out += _both_sides("DARK", "minimax:depth=2,quiescence=true", "random", (1,), MAX_PLIES)
    out.append(Pin("DARK", ("minimax:depth=2,eval=value", "random"), 1, SHORT_MAX_PLIES))
    for a, b in (
        ("greedy", "minimax:depth=2"),
        ("qlearn", "approxq"),
        ("dqn", "value"),
        ("minimax:depth=2", "dqn"),
    ):
        out += _both_sides("DARK", a, b, (3,), MAX_PLIES)
    out += [
        Pin("DARK", ("greedy", "random"), 4, MAX_PLIES, "duplicate"),
        Pin("DARK", ("minimax:depth=2", "greedy"), 4, MAX_PLIES, "duplicate"),
    ]
    out += _both_sides("DARK", AZERO, "random", (1, 2), SHORT_MAX_PLIES)
    out += _both_sides("DARK", AZERO, "greedy", (3,), SHORT_MAX_PLIES)
    for spec in ("greedy", "minimax:depth=2", "minimax:depth=3"):
        out += _both_sides("CLASSIC", spec, "random", (1, 2), MAX_PLIES)
    out += _both_sides("CLASSIC", "greedy", "minimax:depth=2", (3,), MAX_PLIES)
    out += _both_sides("CLASSIC", "minimax:depth=2", "minimax:depth=3", (3,), MAX_PLIES)
    out += _both_sides("CLASSIC", AZERO, "random", (1, 2), SHORT_MAX_PLIES)
    out += _both_sides("CLASSIC", AZERO, "minimax:depth=2", (3,), SHORT_MAX_PLIES)
    return out


def _rules(name: str) -> Rules:
    rules = getattr(jungle_core, name)
    assert isinstance(rules, Rules), name
    return rules


def play(pin: Pin) -> GameRecord:
    """Play ``pin``'s game with fresh agents built from its specs."""
    rules = _rules(pin.rules)
    agent0, agent1 = (make_agent(spec, rules) for spec in pin.players)
    return play_game(rules, agent0, agent1, pin.seed, max_plies=pin.max_plies, deals=pin.deals)


def entry(pin: Pin, record: GameRecord) -> dict[str, Any]:
    """The JSON entry of ``pin``'s game as ``record`` played it."""
    return {
        "rules": pin.rules,
        "players": list(pin.players),
        "seed": pin.seed,
        "max_plies": pin.max_plies,
        "deals": pin.deals,
        "actions": list(record.actions),
        "outcomes": list(record.outcomes),
        "moves": moves_text(record),
        "winner": record.winner,
        "reason": record.reason,
    }


def pin_of(game: dict[str, Any]) -> Pin:
    """The :class:`Pin` a JSON entry names."""
    a, b = game["players"]
    return Pin(game["rules"], (a, b), game["seed"], game["max_plies"], game["deals"])


def regenerate(path: Path = DATA) -> int:
    """Play every game of :func:`pins` and write them to ``path`` (atomically); the count."""
    games = []
    for pin in pins():
        games.append(entry(pin, play(pin)))
        print(f"{pin.name}: {len(games[-1]['actions'])} plies, {games[-1]['reason']}")
    lines = ",\n".join(json.dumps(game) for game in games)
    text = '{"games": [\n' + lines + "\n]}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(games)


def _load() -> list[dict[str, Any]]:
    games = json.loads(DATA.read_text(encoding="utf-8"))["games"]
    assert isinstance(games, list)
    return games


def _param(game: dict[str, Any]) -> Any:
    pin = pin_of(game)
    kinds = {spec.split(":")[0] for spec in pin.players}
    marks = [needs_jax, _PINNED_XLA] if kinds & JAX_KINDS else []
    return pytest.param(game, id=pin.name, marks=marks)


def first_difference(pinned: dict[str, Any], now: dict[str, Any]) -> str:
    """Where ``now``'s game leaves ``pinned``'s: the first ply whose action or outcome
    differs (both moves in notation), else the length or the result; empty if none.

    >>> game = {"actions": [1, 2], "outcomes": [-1, -1], "moves": ["a", "b"],
    ...         "winner": None, "reason": "unfinished"}
    >>> first_difference(game, dict(game, actions=[1, 3], moves=["a", "c"]))
    "ply 2: pinned 'b' (action 2, outcome -1), now 'c' (action 3, outcome -1)"
    """
    plies = zip(
        pinned["actions"], pinned["outcomes"], now["actions"], now["outcomes"], strict=False
    )
    for ply, (a0, o0, a1, o1) in enumerate(plies):
        if (a0, o0) != (a1, o1):
            return (
                f"ply {ply + 1}: pinned {pinned['moves'][ply]!r} (action {a0}, outcome {o0}), "
                f"now {now['moves'][ply]!r} (action {a1}, outcome {o1})"
            )
    if len(pinned["actions"]) != len(now["actions"]):
        return f"pinned {len(pinned['actions'])} plies, now {len(now['actions'])}"
    if (pinned["winner"], pinned["reason"]) != (now["winner"], now["reason"]):
        return (
            f"pinned result {pinned['winner']}/{pinned['reason']}, "
            f"now {now['winner']}/{now['reason']}"
        )
    return ""


def test_the_file_pins_the_listed_games() -> None:
    """The data file holds exactly the games :func:`pins` lists, in its order (a pin added
    or changed without regenerating fails here)."""
    assert [pin_of(game) for game in _load()] == pins()


@pytest.mark.parametrize("game", [_param(game) for game in _load()] if DATA.exists() else [])
def test_pinned_game_plays_the_same(game: dict[str, Any]) -> None:
    pin = pin_of(game)
    now = entry(pin, play(pin))
    difference = first_difference(game, now)
    assert not difference, f"{pin.name} no longer plays as pinned: {difference}"
    assert now == game


def main(argv: list[str]) -> int:
    """``--regenerate``: rewrite :data:`DATA` from :func:`pins` under the test run's
    :data:`XLA_FLAG` (set before JAX is imported, unless ``XLA_FLAGS`` chooses a level)."""
    if argv != ["--regenerate"]:
        print("usage: python -m tests.test_behaviour_pinned --regenerate", file=sys.stderr)
        return 2
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_backend_optimization_level" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {XLA_FLAG}".strip()
    print(f"{regenerate()} games written to {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
