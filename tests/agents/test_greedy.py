"""The Greedy agent on hand-computed positions: its heuristic, its best action, chance
actions scored by their expectation, ties broken at random."""

from __future__ import annotations

import numpy as np
import pytest

from jungle_agents import GreedyAgent, greedy_heuristic
from jungle_core import DARK, from_fen, new_game, parse_action, transitions

# --------------------------------------------------------------------- Greedy


def test_greedy_heuristic_by_hand() -> None:
    # self = player 0: E on a1, C on d2; opp w on b1 (E can take w; w cannot take E),
    # plus one face-down piece of each side (p0's Rat, p1's rat) on g7 and h7.
    s = from_fen("6??/8/8/8/8/3C4/Ew6 1 0 5 R r", DARK)
    # material: 80 + 20 + 30 (own face down) - 0.8 * (40 + 30)          = 74
    # position: 1.5 * ((0 + 0) + (5 * 1 + 5))  (C on d2: row 1, centre)  = 15
    # mobility: 2 * (2 reveals + E: a2, b1 + C: d3, d1, c2, e2)          = 16
    # safety:   10 * 15                                                  = 150
    assert greedy_heuristic(s, 0) == pytest.approx(74 + 15 + 16 + 150)


def test_greedy_takes_the_hand_computed_best_action() -> None:
    # player 0: E a1, T d3 (next to player 1's c on d4 and w on e3); player 1's e on h7
    s = from_fen("7e/8/8/3c4/3Tw3/8/E7 0 0 0 - -", DARK)
    values = GreedyAgent(DARK).action_values(s)
    # a1-a2 keeps both threats: material 140 - 0.8 * 140 = 28; position 1.5 * (5 + 15) = 30;
    # mobility 2 * (E: a3, a1, b2 + T: d4, d2, c3, e3) = 14; safety 10 * (15 + 15) = 300
    assert values[parse_action(s, "a1-a2")] == pytest.approx(372.0)
    # a1-b1: position 1.5 * (0 + 15) = 22.5; mobility 2 * (E: a1, c1, b2 + T: 4) = 14
    assert values[parse_action(s, "a1-b1")] == pytest.approx(364.5)
    # d3xe3 takes the Wolf: material 140 - 0.8 * 100 = 60; position 1.5 * (10 + 5) = 22.5;
    # mobility 2 * (E: a2, b1 + T: e4, e2, d3, f3) = 12; no pair left: 94.5
    assert values[parse_action(s, "d3xe3")] == pytest.approx(94.5)
    # d3xd4 takes the Cat: 140 - 0.8 * 120 = 44; position 1.5 * (15 + 5) = 30; mobility 12
    assert values[parse_action(s, "d3xd4")] == pytest.approx(86.0)
    assert max(values, key=values.__getitem__) == parse_action(s, "a1-a2")
    assert GreedyAgent(DARK).act(s, np.random.default_rng(0)) == parse_action(s, "a1-a2")


def test_greedy_scores_chance_actions_by_their_expectation() -> None:
    # player 0's E on a1 bumps into the face-down b1: p0's Rat or p1's rat (one more
    # face-down piece on h7)
    s = from_fen("7?/8/8/8/8/8/E?6 0 0 0 R r", DARK)
    bump = parse_action(s, "a1xb1")
    # own Rat turns up, E stays: material 80 + 30 - 0.8 * 30 = 86; position 0;
    # mobility 2 * (reveal h7 + E: a2 + R: b2, c1) = 8; safety 0          -> 94
    # p1's rat turns up and survives, E is removed: 30 - 0.8 * 30 = 6; mobility 2 * 1 -> 8
    assert GreedyAgent(DARK).action_values(s)[bump] == pytest.approx((94 + 8) / 2)
    expected = sum(p * greedy_heuristic(child, 0) for p, child in transitions(s, bump))
    assert expected == pytest.approx(51.0)


def test_greedy_breaks_ties_at_random() -> None:
    # at the start the best reveals are d7 and e7: a piece of player 0 turned up there
    # scores the most advance (row 6) and the centre bonus; the two are worth the same
    s = new_game(DARK)
    agent = GreedyAgent(DARK)
    values = agent.action_values(s)
    best = max(values.values())
    tied = {a for a, v in values.items() if v == pytest.approx(best)}
    assert tied == {parse_action(s, "?d7"), parse_action(s, "?e7")}
    picks = {agent.act(s, np.random.default_rng(seed)) for seed in range(30)}
    assert picks == tied
