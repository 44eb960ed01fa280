"""The OpenSpiel adapter: pyspiel's own conformance tests, chance nodes, serialization, MCTS."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
mcts = pytest.importorskip("open_spiel.python.algorithms.mcts")

from jungle_core import (  # noqa: E402
    CLASSIC,
    DARK,
    GameOverError,
    IllegalActionError,
    action_to_str,
    from_fen,
    is_chance_action,
    legal_actions,
    new_game,
    observation,
    outcome,
    perft,
    returns,
    step_outcome,
    to_fen,
)
from jungle_core.interop import openspiel  # noqa: E402

GAMES = ["python_jungle_dark", "python_jungle_classic"]

# Player 0's Elephant on a1 next to player 1's last piece, a face-down Cat, on b1.
ONE_PIECE_LEFT = "8/8/8/8/8/8/E?6 0 0 0 - c"


def play_randomly(state: Any, plies: int, rng: np.random.Generator) -> Any:
    """Play ``plies`` steps (decisions and chance outcomes) with uniform choices."""
    for _ in range(plies):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def tree_leaves(state: Any, depth: int) -> int:
    """Leaves after ``depth`` decisions, expanding chance nodes: OpenSpiel's own perft."""
    if state.is_terminal():
        return 1
    if state.is_chance_node():
        return sum(tree_leaves(state.child(a), depth) for a, _ in state.chance_outcomes())
    if depth == 0:
        return 1
    return sum(tree_leaves(state.child(a), depth - 1) for a in state.legal_actions())


def test_games_declare_actions_chance_length_utilities_and_tensors() -> None:
    dark = pyspiel.load_game("python_jungle_dark")
    classic = pyspiel.load_game("python_jungle_classic")
    assert (dark.num_distinct_actions(), classic.num_distinct_actions()) == (280, 315)
    assert (dark.max_chance_outcomes(), classic.max_chance_outcomes()) == (16, 0)
    assert (dark.max_game_length(), classic.max_game_length()) == (1500, 300)
    assert (dark.max_chance_nodes_in_history(), classic.max_chance_nodes_in_history()) == (16, 0)
    assert dark.observation_tensor_shape() == [7, 8, 6]
    assert classic.observation_tensor_shape() == [9, 7, 22]
    for game in (dark, classic):
        assert (game.num_players(), game.min_utility(), game.max_utility()) == (2, -1.0, 1.0)
        assert game.utility_sum() == 0.0
        kind = game.get_type()
        assert kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION
        assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    chance = pyspiel.GameType.ChanceMode
    assert dark.get_type().chance_mode == chance.EXPLICIT_STOCHASTIC
    assert classic.get_type().chance_mode == chance.DETERMINISTIC


@pytest.mark.parametrize("name", GAMES)
def test_pyspiel_random_sim_test(name: str) -> None:
    # OpenSpiel's own checks: clone, serialize/deserialize, legal-action masks, chance
    # outcomes, observations, returns, and the game length against MaxGameLength.
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=3, serialize=True, verbose=False)


def test_reveal_leads_to_a_chance_node_over_the_pieces_still_face_down() -> None:
    state = pyspiel.load_game("python_jungle_dark").new_initial_state()
    assert state.current_player() == 0
    state.apply_action(3)  # ?d1
    assert state.is_chance_node() and state.pending_action == 3
    outcomes = state.chance_outcomes()
    assert [o for o, _ in outcomes] == list(range(16))
    assert all(p == pytest.approx(1 / 16) for _, p in outcomes)
    assert state.legal_actions() == list(range(16))
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 7) == "d1=E"
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 8) == "d1=r"
    state.apply_action(15)  # player 1's Elephant
    assert state.jungle_state == step_outcome(new_game(), 3, 15)
    assert state.current_player() == 1 and state.history() == [3, 15]
    # The next reveal draws from the 15 pieces left.
    state.apply_action(0)
    assert [o for o, _ in state.chance_outcomes()] == list(range(15))


def test_move_onto_a_face_down_piece_is_a_chance_node_then_a_battle() -> None:
    game = pyspiel.load_game("python_jungle_dark")
    state = game.new_initial_state(ONE_PIECE_LEFT)
    assert state.legal_actions() == list(legal_actions(from_fen(ONE_PIECE_LEFT)))
    attack = 56 + 0 * 4 + 3  # a1xb1
    assert state.action_to_string(0, attack) == "a1xb1"
    state.apply_action(attack)
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(9, 1.0)]  # player 1's Cat, the only piece left
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 9) == "b1=c"
    state.apply_action(9)
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert state.current_player() == pyspiel.PlayerId.TERMINAL


def test_openspiel_tree_counts_equal_core_perft() -> None:
    dark = pyspiel.load_game("python_jungle_dark").new_initial_state()
    assert tree_leaves(dark, 2) == perft(new_game(DARK), 2)
    classic = pyspiel.load_game("python_jungle_classic").new_initial_state()
    assert tree_leaves(classic, 3) == perft(new_game(CLASSIC), 3)


@pytest.mark.parametrize("name", GAMES)
def test_action_strings_are_spec_notation(name: str) -> None:
    state = play_randomly(pyspiel.load_game(name).new_initial_state(), 40, np.random.default_rng(1))
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    core = state.jungle_state
    for action in state.legal_actions():
        assert state.action_to_string(state.current_player(), action) == action_to_str(core, action)


@pytest.mark.parametrize("name", GAMES)
def test_observation_tensor_is_the_spec_tensor_seen_by_each_player(name: str) -> None:
    state = play_randomly(pyspiel.load_game(name).new_initial_state(), 30, np.random.default_rng(2))
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[-1][0])
    core = state.jungle_state
    mover = core.to_move
    expected = observation(core)
    seen = np.asarray(state.observation_tensor(mover), dtype=np.float32)
    np.testing.assert_array_equal(seen, expected.ravel())
    other = np.asarray(state.observation_tensor(1 - mover), dtype=np.float32)
    other = other.reshape(expected.shape)
    if core.rules.is_dark:
        np.testing.assert_array_equal(other[..., :4], expected[..., :4])
        np.testing.assert_array_equal(other[..., 4], expected[..., 5])
        np.testing.assert_array_equal(other[..., 5], expected[..., 4])
    else:
        np.testing.assert_array_equal(other, expected)
    assert state.observation_string(0) == str(state)


@pytest.mark.parametrize("name", GAMES)
def test_serialize_and_deserialize_round_trip(name: str) -> None:
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(3)
    state = game.new_initial_state()
    seen_chance = False
    for _ in range(60):
        text = pyspiel.serialize_game_and_state(game, state)
        game2, copy = pyspiel.deserialize_game_and_state(text)
        assert str(game2) == str(game)
        assert copy.jungle_state == state.jungle_state
        assert copy.pending_action == state.pending_action
        assert copy.history() == state.history() and str(copy) == str(state)
        assert game.deserialize_state(state.serialize()).jungle_state == state.jungle_state
        seen_chance |= state.is_chance_node()
        if state.is_terminal():
            break
        play_randomly(state, 1, rng)
    assert seen_chance == (name == "python_jungle_dark")


def test_deserializing_a_tampered_position_is_a_clear_error() -> None:
    game = pyspiel.load_game("python_jungle_dark")
    state = game.new_initial_state()
    illegal = openspiel._Node(state.jungle_state, 100)  # d2xd1: d2 is empty
    with pytest.raises(IllegalActionError, match="d2xd1"):
        openspiel._restore_node(*illegal.__reduce__()[1])
    no_chance = openspiel._Node(from_fen(ONE_PIECE_LEFT), 56 + 1)  # a1-a2 draws nothing
    with pytest.raises(IllegalActionError, match="pending action 57"):
        openspiel._restore_node(*no_chance.__reduce__()[1])
    bad_position = (*illegal.__reduce__()[1][:1], "8/8/8 0 0 0 - -", (), -1)
    with pytest.raises(ValueError):
        openspiel._restore_node(*bad_position)


def test_clones_are_independent() -> None:
    state = pyspiel.load_game("python_jungle_dark").new_initial_state()
    clone = state.clone()
    state.apply_action(0)
    assert clone.history() == [] and clone.current_player() == 0
    assert clone.jungle_state == new_game() and state.is_chance_node()


def test_illegal_actions_and_finished_games_raise_the_core_errors() -> None:
    game = pyspiel.load_game("python_jungle_dark")
    state = game.new_initial_state()
    with pytest.raises(IllegalActionError):
        state.apply_action(56 + 3 * 4 + 1)  # d1-d2: d1 is face down
    state.apply_action(3)
    with pytest.raises(IllegalActionError):
        state.apply_action(16)  # not an outcome index
    done = game.new_initial_state("8/8/8/8/8/8/E7 1 0 9 - -")
    assert done.is_terminal() and done.returns() == [1.0, -1.0]
    assert outcome(done.jungle_state) is not None
    with pytest.raises(GameOverError):
        done._apply_action(56)
    with pytest.raises(TypeError):
        game.new_initial_state({"board": []})


def test_start_from_a_position_string() -> None:
    fen = "8/8/8/8/8/8/E?6 1 0 0 - c"
    state = pyspiel.load_game("python_jungle_dark").new_initial_state(fen)
    assert to_fen(state.jungle_state) == fen and state.current_player() == 1
    assert is_chance_action(state.jungle_state, 1)


def _mcts_bot(game: Any, seed: int, simulations: int = 2) -> Any:
    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    return mcts.MCTSBot(game, 2.0, simulations, evaluator, solve=True, random_state=rng)


@pytest.mark.parametrize("name", GAMES)
def test_mcts_bot_plays_a_full_game(name: str) -> None:
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    bots = [_mcts_bot(game, 0), _mcts_bot(game, 1)]
    rng = np.random.default_rng(4)
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        action = bots[state.current_player()].step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        decisions += 1
    assert decisions <= game.max_game_length()
    assert state.returns() == list(returns(state.jungle_state))
    assert state.returns() in ([1.0, -1.0], [-1.0, 1.0], [0.0, 0.0])


def test_mcts_bot_finds_the_winning_battle_through_a_chance_node() -> None:
    game = pyspiel.load_game("python_jungle_dark")
    state = game.new_initial_state(ONE_PIECE_LEFT)
    bot = _mcts_bot(game, 5, simulations=50)
    assert bot.step(state) == 56 + 0 * 4 + 3  # a1xb1 wins: the Elephant takes the last piece
