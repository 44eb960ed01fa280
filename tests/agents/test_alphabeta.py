"""The ``alphabeta`` CLASSIC search: its move generator and game ends are the core's, its
exact enhancements return plain negamax's value, and the agent plays legal moves."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

from jungle_agents import AgentSpecError, make_agent
from jungle_agents.alphabeta import MATE, AlphaBetaAgent, AlphaBetaConfig, AlphaBetaSearch
from jungle_agents.minimax import ClassicEvaluator
from jungle_core import (
    CLASSIC,
    DARK,
    JungleError,
    State,
    from_fen,
    legal_actions,
    new_game,
    outcome,
    step_outcome,
)

PLAIN = AlphaBetaConfig(
    time=0.0,
    quiescence=False,
    tt=False,
    killers=False,
    history=False,
    pvs=False,
)
"""Every enhancement off: plain alpha-beta at a fixed depth."""


def _positions(count: int, seed: int) -> list[State]:
    """Positions of random CLASSIC games (some near their end)."""
    rng = np.random.default_rng(seed)
    out: list[State] = []
    while len(out) < count:
        s = new_game(CLASSIC)
        for _ in range(int(rng.integers(0, 160))):
            if outcome(s) is not None:
                break
            acts = legal_actions(s)
            s = step_outcome(s, acts[int(rng.integers(len(acts)))], -1)
        if outcome(s) is None:
            out.append(s)
    return out


def _negamax(state: State, depth: int, ply: int, pst: tuple[tuple[float, ...], ...]) -> float:
    """Plain negamax over the core's states with the piece-square evaluation."""
    result = outcome(state)
    if result is not None:
        if result.winner is None:
            return 0.0
        return float(MATE - ply) if result.winner == state.to_move else -float(MATE - ply)
    if depth == 0:
        v = sum(pst[c][sq] for sq, c in enumerate(state.board) if c)
        return v if state.to_move == 0 else -v
    return max(
        -_negamax(step_outcome(state, a, -1), depth - 1, ply + 1, pst) for a in legal_actions(state)
    )


def test_moves_are_the_cores() -> None:
    search = AlphaBetaSearch(CLASSIC, PLAIN)
    for s in _positions(150, 1):
        search._load(s)
        ours = sorted(m[0] for m in search._moves(s.to_move))
        assert ours == sorted(legal_actions(s)), s


@pytest.mark.parametrize(
    "switches",
    [
        {},
        {"pvs": True},
        {"pvs": True, "killers": True, "history": True},
    ],
)
def test_exact_enhancements_give_plain_negamax_value(switches: dict[str, Any]) -> None:
    pst = ClassicEvaluator(CLASSIC, 0).pst
    config = attrs.evolve(PLAIN, depth=3, **switches)
    search = AlphaBetaSearch(CLASSIC, config)
    for s in _positions(12, 2):
        info = search.search(s)
        assert info.value == pytest.approx(_negamax(s, 3, 0, pst), abs=1e-6)
        assert info.action in legal_actions(s)


@pytest.mark.parametrize("config", [PLAIN, AlphaBetaConfig(time=0.0, depth=3)])
def test_enters_the_den_and_defends_its_own(config: AlphaBetaConfig) -> None:
    # player 0's Rat on d8, under the enemy den: it enters, a win in one ply
    entry = from_fen("7/3R3/7/7/7/7/7/7/e6 0 0 0", CLASSIC)
    info = AlphaBetaSearch(CLASSIC, attrs.evolve(config, depth=1)).search(entry)
    assert step_outcome(entry, info.action, -1).board[59] == 1 and info.value == MATE - 1
    # player 1's Rat on the trap d2 next to player 0's den: player 0's Elephant takes it
    # there (any piece takes on its own trap), else the Rat enters next ply
    defence = from_fen("e6/7/7/7/7/7/7/3rE2/R6 0 0 0", CLASSIC)
    info = AlphaBetaSearch(CLASSIC, attrs.evolve(config, depth=2)).search(defence)
    assert step_outcome(defence, info.action, -1).board[10] == 8
    assert info.value > -MATE / 2


def test_the_caller_state_is_untouched() -> None:
    s = _positions(1, 3)[0]
    before = (s.board, s.ply, s.to_move)
    AlphaBetaSearch(CLASSIC, AlphaBetaConfig(time=0.0, depth=4)).search(s)
    assert (s.board, s.ply, s.to_move) == before


@pytest.mark.parametrize("switch", ["tt", "killers", "history", "pvs", "quiescence"])
def test_each_switch_off_plays_legal_moves(switch: str) -> None:
    agent = AlphaBetaAgent(
        CLASSIC, attrs.evolve(AlphaBetaConfig(time=0.0, depth=4), **{switch: False})
    )
    for s in _positions(6, 4):
        assert agent.act(s, np.random.default_rng(0)) in legal_actions(s)


def test_a_timed_search_keeps_its_budget_and_state() -> None:
    s = _positions(1, 5)[0]
    search = AlphaBetaSearch(CLASSIC, AlphaBetaConfig(time=0.05))
    info = search.search(s)
    assert info.depth >= 1 and info.action in legal_actions(s) and info.pv[0] == info.action
    # the board is reloaded after the interrupted iteration: nothing of it is left over
    assert search._board == list(s.board) and search._side == s.to_move
    assert search._count == [
        sum(1 for c in s.board if 0 < c <= 8),
        sum(1 for c in s.board if c > 8),
    ]
    again = AlphaBetaSearch(CLASSIC, AlphaBetaConfig(time=0.0, depth=info.depth)).search(s)
    assert again.depth == info.depth


def test_registry_and_rules() -> None:
    agent = make_agent("alphabeta:time=0,depth=2,pvs=0", CLASSIC)
    assert agent.name.startswith("alphabeta")
    with pytest.raises(AgentSpecError):
        make_agent("alphabeta:qdepth=99", CLASSIC)
    with pytest.raises(JungleError):
        AlphaBetaSearch(DARK)


def test_served_over_the_engine_protocol() -> None:
    from jungle_agents.engine import EngineServer

    lines: list[str] = []
    server = EngineServer("classic-strong", CLASSIC, lines.append)  # a preset serves too
    server.handle("position startpos moves a3a4 g7g6")
    server.handle("go depth 4")
    server.wait()
    info = next(line for line in lines if line.startswith("info depth"))
    assert info.startswith("info depth 4 ")  # go depth N: exactly N, not the default time
    pv = info.split(" pv ")[1].split()
    assert len(pv) >= 2 and lines[-1] == f"bestmove {pv[0]}"


def test_classic_strong_is_the_alphabeta_preset_with_its_games() -> None:
    from pathlib import Path

    from jungle_agents import presets
    from jungle_agents.arena import load_games, summarize

    preset = presets()["classic-strong"]
    assert preset.spec == "alphabeta:time=0.25" and preset.rules == "CLASSIC"
    agent = make_agent("classic-strong", CLASSIC)
    assert isinstance(agent, AlphaBetaAgent) and agent.config == AlphaBetaConfig(time=0.25)
    # the measured figure is the committed games file's
    path = Path(__file__).parents[2] / "docs/games/alphabeta-vs-minimax-0.25s.jsonl"
    _, games = load_games(path)
    pair = summarize(games).pairs[("alphabeta", preset.measured.opponent)]
    assert pair.games == preset.measured.games
    assert round(pair.score, 3) == preset.measured.score
    assert round(1000 * pair.latency_a[0]) == preset.measured.ms


def test_weights_change_the_evaluation() -> None:
    from jungle_agents import ClassicWeights

    s = from_fen("7/3R3/7/7/7/7/7/7/e6 1 0 0", CLASSIC)  # the Elephant to move, alone
    plain = AlphaBetaSearch(CLASSIC, attrs.evolve(PLAIN, depth=1)).search(s).value
    heavy = ClassicWeights(value={**ClassicWeights().value, 8: 500.0})
    assert AlphaBetaSearch(CLASSIC, attrs.evolve(PLAIN, depth=1), heavy).search(s).value > plain
