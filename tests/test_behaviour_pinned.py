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

    python -m tests.test_behaviour_pinned --regenerate      # every game
    python -m tests.test_behaviour_pinned --regenerate-jax  # the JAX games only

Only specs that play the same moves run to run are pinned: no ``time=`` limit (a timed
search stops where the clock says). ``azero`` searches with few simulations, and it and
Minimax on the value network play short games, so that the file runs in seconds on one
core.

``azero`` computes in floating point through XLA, whose rounding depends on how it
compiles: on DARK (the DQN checkpoint as its prior) near-equal choices go the other way at
another optimisation level. Its games are pinned, and replayed, at XLA's default level,
the one a user's program runs at, not the fast-compiling level the root ``conftest.py``
sets for the test run: the test replays them in a child process
(``--replay-jax``) whose ``XLA_FLAGS`` lack the level (:func:`default_level_env`), the
rest of its environment inherited. On another machine (another CPU or accelerator) they
may differ too.

>>> pins()[0].players
('random', 'random')
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
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

ROOT = Path(__file__).resolve().parents[1]
"""The repository root, where the child process of :func:`replay_jax_games` starts."""

MAX_PLIES = 200
"""The cap of a game without ``azero``: long enough for most games to end."""

SHORT_MAX_PLIES = 60
"""The cap of a game with a costlier agent: ``azero`` (a search per decision, even at 16
simulations), Minimax with the value network at its leaves."""

AZERO = "azero:simulations=16"
"""The AlphaZero agent at a setting fast on a CPU: DARK's search is guided by the shipped
DQN checkpoint, CLASSIC's by the hand-made prior and value (no ``azero.npz`` ships)."""

JAX_KINDS = frozenset({"azero"})
"""Agent kinds that compute through JAX (a game with one is played at XLA's default
optimisation level, in a child process of the test)."""

XLA_LEVEL = "--xla_backend_optimization_level"
"""The XLA flag that :func:`default_level_env` removes from ``XLA_FLAGS``."""

REPLAY_TIMEOUT_S = 600
"""How long the child process of :func:`replay_jax_games` may take (it takes seconds)."""


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


def is_jax_game(pin: Pin) -> bool:
    """Whether one of ``pin``'s agents computes through JAX (:data:`JAX_KINDS`).

    >>> is_jax_game(Pin("DARK", ("azero:simulations=16", "random"), 1, 60))
    True
    """
    return any(spec.split(":")[0] in JAX_KINDS for spec in pin.players)


def default_level_flags(flags: str) -> str:
    """``flags`` (an ``XLA_FLAGS`` value) without any :data:`XLA_LEVEL` setting.

    >>> default_level_flags("--a=1 --xla_backend_optimization_level=0 --b")
    '--a=1 --b'
    """
    return " ".join(flag for flag in flags.split() if flag.split("=")[0] != XLA_LEVEL)


def default_level_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with :data:`XLA_LEVEL` removed from its ``XLA_FLAGS`` (the variable dropped
    if nothing is left): XLA compiles at its default optimisation level.

    >>> default_level_env({"XLA_FLAGS": "--xla_backend_optimization_level=0", "A": "1"})
    {'A': '1'}
    """
    out = dict(env)
    flags = default_level_flags(out.pop("XLA_FLAGS", ""))
    if flags:
        out["XLA_FLAGS"] = flags
    return out


def _use_default_level() -> None:
    """Remove :data:`XLA_LEVEL` from this process's ``XLA_FLAGS`` (read when JAX starts its
    backend, on the first computation, so before any game is played)."""
    env = default_level_env(os.environ)
    os.environ.pop("XLA_FLAGS", None)
    os.environ.update(env)


def _write_atomically(path: Path, text: str) -> None:
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


def _games_text(games: list[dict[str, Any]]) -> str:
    """The data file's text: one game a line."""
    return '{"games": [\n' + ",\n".join(json.dumps(game) for game in games) + "\n]}\n"


def play_all(selected: list[Pin], *, verbose: bool = False) -> list[dict[str, Any]]:
    """The JSON entries of the ``selected`` games, played now."""
    games = []
    for pin in selected:
        games.append(entry(pin, play(pin)))
        if verbose:
            print(f"{pin.name}: {len(games[-1]['actions'])} plies, {games[-1]['reason']}")
    return games


def regenerate(path: Path = DATA, *, jax_only: bool = False) -> int:
    """Play the games of :func:`pins` and write them to ``path`` (atomically); the count
    played. ``jax_only``: play only the JAX games (:func:`is_jax_game`) and keep the others
    as ``path`` holds them. Call it with ``XLA_FLAGS`` free of :data:`XLA_LEVEL`."""
    listed = pins()
    if not jax_only:
        games = play_all(listed, verbose=True)
        _write_atomically(path, _games_text(games))
        return len(games)
    games = _load(path)
    if [pin_of(game) for game in games] != listed:
        raise SystemExit(f"{path} does not list the games of pins(): run --regenerate")
    played = iter(play_all([pin for pin in listed if is_jax_game(pin)], verbose=True))
    merged = [
        next(played) if is_jax_game(pin) else game for pin, game in zip(listed, games, strict=True)
    ]
    _write_atomically(path, _games_text(merged))
    return sum(is_jax_game(pin) for pin in listed)


def _load(path: Path | None = None) -> list[dict[str, Any]]:
    """The games ``path`` (by default :data:`DATA`) holds."""
    games = json.loads((path or DATA).read_text(encoding="utf-8"))["games"]
    assert isinstance(games, list)
    return games


def replay_jax_games(out: Path) -> list[dict[str, Any]]:
    """The JAX games of :func:`pins`, played now by a child process
    (``python -m tests.test_behaviour_pinned --replay-jax OUT``) at XLA's default
    optimisation level: its environment is this one's, through :func:`default_level_env`.
    ``out`` is the file the child writes them to."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.test_behaviour_pinned", "--replay-jax", str(out)],
        cwd=ROOT,
        env=default_level_env(os.environ),
        capture_output=True,
        text=True,
        timeout=REPLAY_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"the replay failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return _load(out)


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


def _in_process_games() -> list[dict[str, Any]]:
    return [game for game in _load() if not is_jax_game(pin_of(game))] if DATA.exists() else []


@pytest.mark.parametrize("game", [pytest.param(g, id=pin_of(g).name) for g in _in_process_games()])
def test_pinned_game_plays_the_same(game: dict[str, Any]) -> None:
    """A game without JAX, played again in this process."""
    pin = pin_of(game)
    now = entry(pin, play(pin))
    difference = first_difference(game, now)
    assert not difference, f"{pin.name} no longer plays as pinned: {difference}"
    assert now == game


@needs_jax
def test_pinned_jax_games_play_the_same(tmp_path: Path) -> None:
    """The JAX games, played again together in one child process at XLA's default level
    (one process: JAX starts and compiles once); a failure names each game that differs
    and its first differing ply."""
    pinned = [game for game in _load() if is_jax_game(pin_of(game))]
    now = replay_jax_games(tmp_path / "replayed.json")
    assert [pin_of(game) for game in now] == [pin_of(game) for game in pinned]
    differences = [
        f"{pin_of(old).name} no longer plays as pinned: {first_difference(old, new)}"
        for old, new in zip(pinned, now, strict=True)
        if old != new
    ]
    assert not differences, "\n".join(differences)


_USAGE = (
    "usage: python -m tests.test_behaviour_pinned "
    "(--regenerate | --regenerate-jax | --replay-jax OUT)"
)


def main(argv: list[str]) -> int:
    """``--regenerate``: rewrite :data:`DATA` from :func:`pins`; ``--regenerate-jax``:
    rewrite only its JAX games; ``--replay-jax OUT``: write the JAX games, played now, to
    ``OUT`` (for :func:`replay_jax_games`). Each plays at XLA's default optimisation level
    (:data:`XLA_LEVEL` removed from ``XLA_FLAGS`` before JAX computes)."""
    _use_default_level()
    if argv == ["--regenerate"]:
        print(f"{regenerate()} games written to {DATA}")
    elif argv == ["--regenerate-jax"]:
        print(f"{regenerate(jax_only=True)} JAX games rewritten in {DATA}")
    elif len(argv) == 2 and argv[0] == "--replay-jax":
        games = play_all([pin for pin in pins() if is_jax_game(pin)])
        _write_atomically(Path(argv[1]), _games_text(games))
    else:
        print(_USAGE, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
