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
    repetition=False,
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


def _negamax(
    state: State,
    depth: int,
    ply: int,
    pst: tuple[tuple[float, ...], ...],
    path: frozenset[tuple[Any, ...]] | None = None,
    draw: tuple[float, float] = (0.0, 0.0),
) -> float:
    """Plain negamax over the core's states with the piece-square evaluation. With a
    ``path`` (the positions above, as ``(board, to_move)``), a move back to one of them
    scores ``draw[side moving]``, as the ply limit's draw does."""
    result = outcome(state)
    if result is not None:
        if result.winner is None:
            return draw[state.to_move]
        return float(MATE - ply) if result.winner == state.to_move else -float(MATE - ply)
    if depth == 0:
        v = sum(pst[c][sq] for sq, c in enumerate(state.board) if c)
        return v if state.to_move == 0 else -v
    below = None if path is None else path | {(state.board, state.to_move)}
    best = -float("inf")
    for a in legal_actions(state):
        child = step_outcome(state, a, -1)
        if below is not None and (child.board, child.to_move) in below:
            v = draw[state.to_move]
        else:
            v = -_negamax(child, depth - 1, ply + 1, pst, below, draw)
        best = max(best, v)
    return best


def _sparse(count: int, seed: int) -> list[State]:
    """Random legal CLASSIC positions with two or three pieces a side (few moves each, so
    that a plain negamax reaches four plies, where a line can return to a position)."""
    rng = np.random.default_rng(seed)
    out: list[State] = []
    while len(out) < count:
        board = [["1"] * 7 for _ in range(9)]
        for letters in ("RCDWPTLE", "rcdwptle"):
            for letter in rng.choice(list(letters), int(rng.integers(2, 4)), replace=False):
                board[int(rng.integers(9))][int(rng.integers(7))] = str(letter)
        rows = "/".join("".join(row) for row in board)
        try:
            s = from_fen(f"{rows} {int(rng.integers(2))} 0 {int(rng.integers(100))}", CLASSIC)
        except JungleError:
            continue  # a piece in the water or a den
        if outcome(s) is None:
            out.append(s)
    return out


_PST = ClassicEvaluator(CLASSIC, 0).pst


@pytest.mark.parametrize("contempt", [0.0, 40.0, -300.0])
def test_repetition_on_the_search_path_scores_the_draw(contempt: float) -> None:
    config = attrs.evolve(PLAIN, depth=4, repetition=True, contempt=contempt)
    search = AlphaBetaSearch(CLASSIC, config)
    for s in _sparse(10, 7):
        draw = [0.0, 0.0]
        draw[s.to_move], draw[1 - s.to_move] = -contempt, contempt
        info = search.search(s)
        want = _negamax(s, 4, 0, _PST, frozenset(), (draw[0], draw[1]))
        assert info.value == pytest.approx(want, abs=1e-6), s


@pytest.mark.parametrize(
    "fen",
    ["6D/4l2/7/7/7/7/7/7/7 0 0 0", "7/7/7/7/7/7/7/4D2/5r1 0 0 0", "7/7/7/7/7/7/7/3L3/1w5 0 0 0"],
)
def test_a_draw_loving_searcher_forces_its_opponent_off_the_cycle(fen: str) -> None:
    # the side searching values a draw at +300: its opponent must avoid moving back to a
    # position of the path, which costs it (a value that plain negamax does not see)
    s = from_fen(fen, CLASSIC)
    config = attrs.evolve(PLAIN, depth=4, repetition=True, contempt=-300.0)
    value = AlphaBetaSearch(CLASSIC, config).search(s).value
    assert value == pytest.approx(_negamax(s, 4, 0, _PST, frozenset(), (300.0, -300.0)), abs=1e-6)
    assert value != pytest.approx(_negamax(s, 4, 0, _PST), abs=1e-6)


def test_a_position_of_the_game_scores_as_a_draw() -> None:
    s = new_game(CLASSIC)
    config = AlphaBetaConfig(time=0.0, depth=4)
    first = AlphaBetaSearch(CLASSIC, config).search(s)
    after = step_outcome(s, first.action, -1)
    # the best move leads back to a position of the game: another move is played
    again = AlphaBetaSearch(CLASSIC, config).search(s, [after])
    assert again.action != first.action and again.value > -config.contempt
    # a searcher that likes draws goes back, and the draw is worth +300 to it
    liking = AlphaBetaSearch(CLASSIC, attrs.evolve(config, contempt=-300.0)).search(s, [after])
    assert (liking.action, liking.value) == (first.action, 300.0)
    # without the switch the game's positions are not looked at
    off = AlphaBetaSearch(CLASSIC, attrs.evolve(config, repetition=False)).search(s, [after])
    assert off.action == first.action


def test_the_agent_remembers_its_game() -> None:
    rng = np.random.default_rng(0)
    agent = AlphaBetaAgent(CLASSIC, AlphaBetaConfig(time=0.0, depth=2))
    s = new_game(CLASSIC)
    for _ in range(3):  # the agent plays both sides: every position is remembered
        s = step_outcome(s, agent.act(s, rng), -1)
    assert [g.ply for g in agent._game] == [0, 1, 1, 2, 2, 3]
    assert agent._game[-1] == s
    agent.act(new_game(CLASSIC), rng)  # a new game forgets the old one
    assert [g.ply for g in agent._game] == [0, 1]


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


def test_a_forced_result_is_served_as_score_mate() -> None:
    from jungle_agents.engine import EngineServer

    for side, depth, mate in (("w", 3, "mate 1"), ("b", 5, "mate -1")):
        lines: list[str] = []
        server = EngineServer("alphabeta", CLASSIC, lines.append)
        server.handle(f"position fen 7/3R3/7/7/7/7/7/7/e6 {side} - - 0 1")  # Rat next to the den
        server.handle(f"go depth {depth}")
        server.wait()
        assert lines[0].startswith(f"info depth 1 score {mate} "), lines


def test_the_engine_gives_the_agent_the_positions_of_its_move_list() -> None:
    from jungle_agents.engine import EngineServer
    from jungle_core import IllegalActionError, apply_move, move_text

    s0 = new_game(CLASSIC)
    best = move_text(
        s0, AlphaBetaSearch(CLASSIC, AlphaBetaConfig(time=0.0, depth=4)).search(s0).action
    )
    back = best[2:] + best[:2]
    s1 = apply_move(s0, best)
    for action in legal_actions(s1):  # a reply of player 1 that it can take back
        reply = move_text(s1, action)
        cycle = [best, reply, back, reply[2:] + reply[:2]]
        try:
            end = s0
            for move in cycle:
                end = apply_move(end, move)
            break
        except IllegalActionError:
            continue
    assert end.board == s0.board and end.ply == 4

    def bestmove(position: str) -> str:
        lines: list[str] = []
        server = EngineServer("alphabeta", CLASSIC, lines.append)
        server.handle(position)
        server.handle("go depth 4")
        server.wait()
        return lines[-1]

    # the start again after four plies: its best move would repeat the first ply's position
    assert bestmove("position startpos moves " + " ".join(cycle)) != f"bestmove {best}"
    assert bestmove("position startpos") == f"bestmove {best}"


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
