"""The Q-learners' reward and shaping and the approximate learner's features,
on hand-built DARK positions against values computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from jungle_core import State, from_fen, new_game, outcome, parse_action, step
from jungle_core import transitions as core_transitions
from jungle_train.tabular._features import (
    FEATURE_NAMES,
    NUM_FEATURES,
    action_features,
    state_features,
)
from jungle_train.tabular._shaping import (
    TrainingGame,
    expected_ply_reward,
    piece_counts,
    ply_reward,
    potential,
    terminal_reward,
)
from tests._boards import position


def only_child(state: State, text: str) -> State:
    ((prob, child),) = core_transitions(state, parse_action(state, text))
    assert prob == 1.0
    return child


# Player 0's D d4 next to player 1's t e4; spares: player 0's C a1, player 1's r h7.
DOG_VS_TIGER = """
    . . . . . . . r
    . . . . . . . .
    . . . . . . . .
    . . . D t . . .
    . . . . . . . .
    . . . . . . . .
    C . . . . . . .
"""


def test_potential_counts_opportunity_and_threat_of_the_nearest_enemy() -> None:
    s = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")  # E a1 can take w b1 (d = 1)
    assert potential(s, 0) == pytest.approx(3 / 2)
    assert potential(s, 1) == pytest.approx(-4 / 2)


def test_potential_sums_over_pieces() -> None:
    # D d4: nearest t e4 (d 1) takes it: -4/2. C a1: nearest t e4 (d 7) takes it: -4/8.
    assert potential(position(DOG_VS_TIGER), 0) == pytest.approx(-2.5)


def test_potential_tie_of_nearest_enemies_counts_both_relations() -> None:
    # W d4 between d c4 (W takes it) and t e4 (takes W), both at d = 1.
    s = position(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . d W t . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """
    )
    assert potential(s, 0) == pytest.approx(3 / 2 - 4 / 2)


def test_capture_reward() -> None:
    s = from_fen("e7/8/8/8/8/8/Ew6 0 0 0 - -")  # E a1 takes w b1; e a7 stays
    t = only_child(s, "a1xb1")
    # step -0.1, capture 10 * V'(wolf) = 20, shaping 0 - 1.5 (e a7 is equal: no relation)
    assert ply_reward(s, t, 0) == pytest.approx(-0.1 + 20 - 1.5)
    # the opponent's view: no step cost, loss -8 * 2, shaping: w gone, e's nearest E at 7
    assert ply_reward(s, t, 1) == pytest.approx(-16 + 0 - (-2.0))


def test_losing_an_attack_on_a_stronger_piece() -> None:
    s = position(DOG_VS_TIGER)
    t = only_child(s, "d4xe4")  # D attacks t: D removed
    # -0.1 - 8 * V'(dog) 1.5 + shaping: before -2.5, after C a1's threat -0.5
    assert ply_reward(s, t, 0) == pytest.approx(-0.1 - 12 + 2.0)


def test_opponents_capture_costs_the_agent_without_step_cost() -> None:
    s = position(DOG_VS_TIGER, to_move=1)
    t = only_child(s, "e4xd4")  # t takes D; t now on d4, C a1 at d = 6 threatened: -4/7
    assert ply_reward(s, t, 0) == pytest.approx(-12 + (-4 / 7) - (-2.5))


def test_mutual_removal_of_equal_ranks() -> None:
    s = position(DOG_VS_TIGER.replace("D t", "W w"))
    t = only_child(s, "d4xe4")
    # before: W/w no relation, C a1 threatened by w (d 7): -4/8; after: C's nearest is
    # r h7 (d 13), C can take it: +3/14. Trade: -0.5 instead of capture and loss terms.
    assert ply_reward(s, t, 0) == pytest.approx(-0.1 - 0.5 + 3 / 14 + 0.5)


def test_terminal_rewards() -> None:
    s = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")
    t = only_child(s, "a1xb1")  # the last enemy piece: a win
    assert terminal_reward(t, 0) == 100.0
    assert terminal_reward(t, 1) == -100.0
    assert ply_reward(s, t, 0) == pytest.approx(-0.1 + 20 - 1.5 + 100)
    drawn = from_fen("e7/8/8/8/8/8/E7 0 99 120 - -")
    quiet = only_child(drawn, "a1-a2")  # the 100th ply without a removal
    assert terminal_reward(quiet, 0) == 0.0
    assert terminal_reward(drawn, 0) is None


def test_reveal_reward_is_the_expectation_over_outcomes() -> None:
    # E a1; face down: c1 and h7, which are player 0's Rat and player 1's Rat.
    s = from_fen("7?/8/8/8/8/8/E1?5 0 0 0 R r")
    reveal = parse_action(s, "?c1")
    # R turns up: no enemy is face up: -0.1. r turns up at d 2 and can take E: -0.1 - 4/3.
    assert expected_ply_reward(s, reveal) == pytest.approx(-0.1 - 4 / 3 / 2)
    # a reveal never counts as a removal
    for _, child in core_transitions(s, reveal):
        assert sum(piece_counts(child)) == sum(piece_counts(s))


def test_training_game_step_adds_the_opponents_reply() -> None:
    """One learner step on a hand-built position: the learner's C a1-a2, then the
    opponent's reply t e4xd4 (the frozen copy's, fixed here), scored by hand."""
    game = TrainingGame(position(DOG_VS_TIGER), 0, "self")

    def reply(state: State, rng: np.random.Generator) -> int:
        return parse_action(state, "e4xd4")

    action = parse_action(game.state, "a1-a2")
    reward, after, done = game.play(action, np.random.default_rng(0), reply)
    assert after is game.state and not done
    assert after == position(
        """
        . . . . . . . r
        . . . . . . . .
        . . . . . . . .
        . . . t . . . .
        . . . . . . . .
        C . . . . . . .
        . . . . . . . .
        """,
        ply=2,
    )
    # the learner's ply: the step cost, and the shaping from -2.5 (D d4: -4/2, C a1: t e4
    # at d 7, -4/8) to -2 - 4/7 (C a2: t e4 at d 6); the reply: D taken, -8 * V'(dog) 1.5,
    # and the shaping from -2 - 4/7 to -4/6 (C a2: t d4 at d 5); no step cost for it
    mine = -0.1 + (-2 - 4 / 7) - (-2.5)
    theirs = -8 * 1.5 + (-4 / 6) - (-2 - 4 / 7)
    assert reward == pytest.approx(mine + theirs)


# ---------------------------------------------------------------------------- features


def test_features_of_the_start() -> None:
    f = state_features(new_game(), 0)
    assert f == [0.5, 0.5, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    _, phi = action_features(new_game())
    assert phi.shape == (16, NUM_FEATURES) == (16, len(FEATURE_NAMES))
    # ?a1: on average one own piece face up (1/16 of own pieces... half the time)
    assert phi[0, 11] == pytest.approx(0.5 / 8)
    assert phi[0, 2] == pytest.approx(0.5 / 8)
    assert phi[0, 12] == 1.0 and phi[0, 13] == 0.0
    # a1 is a corner: 1 - (3/3 + 3.5/3.5) / 2 = 0
    assert phi[0, 14] == 0.0


def test_features_of_a_capture_by_hand() -> None:
    s = from_fen("e7/8/8/8/8/8/Ew6 0 0 0 - -")
    actions, phi = action_features(s)
    f = phi[actions.index(parse_action(s, "a1xb1"))]
    assert f[0] == 1 / 16 and f[1] == 1 / 16
    assert f[2] == 1.0 and f[3] == 1.0
    assert f[4] == pytest.approx(4.0 / 20.5) and f[5] == pytest.approx(4.0 / 20.5)
    # E b1 and e a7 (d 7): neither takes the other
    assert f[6:10].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert f[10] == pytest.approx(1 / 8) and f[11] == 1 / 8
    assert f[12] == 0.0 and f[13] == 1.0
    assert f[14] == pytest.approx(1 - (3 / 3 + 2.5 / 3.5) / 2)  # target b1
    assert f[15] == pytest.approx(0.5 + 0.5 * np.tanh(-1.5 / 4))
    stay = phi[actions.index(parse_action(s, "a1-a2"))]
    assert stay[8] == pytest.approx(2 / 3) and stay[9] == pytest.approx(2 / 3)  # d 2


def test_features_stay_in_the_unit_interval_along_random_games() -> None:
    rng = np.random.default_rng(0)
    for game in range(3):
        s = new_game()
        while outcome(s) is None and s.ply < 80 + 40 * game:
            actions, phi = action_features(s)
            assert phi.shape == (len(actions), NUM_FEATURES)
            assert ((phi >= 0.0) & (phi <= 1.0)).all(), s
            s = step(s, actions[int(rng.integers(len(actions)))], rng)
