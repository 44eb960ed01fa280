"""Example tests of every CLASSIC rule (docs/rules.md), each on a drawn position.

Pictures show rank 9 at the top; ``~`` water, ``#`` traps and ``*`` dens are drawn for
readability and read as empty squares.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from jungle_core import (
    CLASSIC,
    IllegalActionError,
    InvalidPositionError,
    Reason,
    State,
    action_to_str,
    from_fen,
    legal_actions,
    new_game,
    observation,
    outcome,
    parse_action,
    render,
    step,
    to_fen,
    transitions,
)
from tests._boards import position


def classic(picture: str, to_move: int = 0, ply: int = 10) -> State:
    return position(picture, CLASSIC, to_move=to_move, since=0, ply=ply)


def moves_from(state: State, square: str) -> set[str]:
    texts = (action_to_str(state, a) for a in legal_actions(state))
    return {t[2:] for t in texts if t[:2] == square}


def play(state: State, text: str) -> State:
    ((prob, nxt),) = transitions(state, parse_action(state, text))
    assert prob == 1.0
    return nxt


def test_start_position_and_render() -> None:
    start = new_game(CLASSIC)
    assert to_fen(start) == "l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/1C3D1/T5L 0 0 0"
    assert len(legal_actions(start)) == 24
    picture = render(start)
    assert picture.splitlines()[1] == " 9  l . # * # . t  9"
    assert " 5  . ~ ~ . ~ ~ .  5" in picture
    assert picture.splitlines()[9] == " 1  T . # * # . L  1"


def test_lion_jumps_across_both_rivers_along_a_row() -> None:
    state = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ L ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    assert moves_from(state, "d5") == {"-a5", "-g5", "-d6", "-d4"}


def test_tiger_jumps_along_a_column_both_ways() -> None:
    up = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . T . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    assert moves_from(up, "b3") == {"-b7", "-a3", "-c3", "-b2"}
    down = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . T .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    assert moves_from(down, "f7") == {"-f3", "-e7", "-g7", "-f8"}


@pytest.mark.parametrize("rat", ["R", "r"])
def test_a_rat_of_either_side_in_the_water_blocks_a_jump(rat: str) -> None:
    state = classic(
        f"""
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . {rat} ~ L ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    assert moves_from(state, "d5") == {"-g5", "-d6", "-d4"}
    column = classic(
        f"""
        . . # * # . l
        . . . # . . .
        . T . . . . .
        . ~ ~ . ~ ~ .
        . {rat} ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    assert "-b3" not in moves_from(column, "b7")


def test_jump_may_end_in_a_capture_but_not_on_a_stronger_piece() -> None:
    state = classic(
        """
        . . # * # . .
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        w ~ ~ L ~ ~ e
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    assert moves_from(state, "d5") == {"xa5", "-d6", "-d4"}
    after = play(state, "d5xa5")
    assert after.board[4 * 7 + 0] == 7 and after.plies_since_removal == 0


def test_only_the_rat_enters_water() -> None:
    state = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        E R . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    assert moves_from(state, "a3") == {"-a4", "-a2"}
    assert moves_from(state, "b3") == {"-b4", "-c3", "-b2"}
    swim = play(state, "b3-b4")
    assert swim.board[3 * 7 + 1] == 1


def test_water_and_land_rats_and_elephants() -> None:
    state = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . R r . ~ ~ .
        . e . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    # the Rat in water can take the Rat in water, but not the Elephant on land
    assert moves_from(state, "b4") == {"xc4", "-a4", "-b5"}
    on_land = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . r ~ . ~ ~ .
        e R . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    # on land the Rat takes the Elephant, but not the Rat in the water
    assert moves_from(on_land, "b3") == {"xa3", "-c3", "-b2"}
    elephant = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        E r . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    # the Elephant never takes a Rat outside a trap
    assert moves_from(elephant, "a3") == {"-a4", "-a2"}


def test_equal_ranks_capture_each_other() -> None:
    state = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        W w . . . . .
        . . . # . . .
        . . # * # . .
        """
    )
    assert "xb3" in moves_from(state, "a3")
    assert "xa3" in moves_from(attrs.evolve(state, to_move=1), "b3")


def test_a_piece_in_an_opponents_trap_can_be_taken_by_any_piece() -> None:
    state = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . C # . . .
        . . e * # . .
        """
    )
    # player 1's Elephant stands in player 0's trap c1: even the Cat takes it
    assert "xc1" in moves_from(state, "c2")
    trapped_rat = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . E r . . .
        . . # * # . .
        """
    )
    assert "xd2" in moves_from(trapped_rat, "c2")  # the Elephant takes a trapped Rat


def test_own_traps_do_not_weaken_own_pieces() -> None:
    state = classic(
        """
        . . # * # . l
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . . # . . .
        . c T * # . .
        """,
        to_move=1,
    )
    # player 0's Tiger in its own trap c1 keeps its rank: player 1's Cat cannot take it
    assert "xc1" not in moves_from(state, "b1")


def test_no_piece_enters_its_own_den_and_entering_the_enemy_den_wins() -> None:
    state = classic(
        """
        . . # * # . l
        . . . W . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . . # . . .
        . . C * # . .
        """
    )
    assert "-d1" not in moves_from(state, "c1")
    won = play(state, "d8-d9")
    result = outcome(won)
    assert result is not None and result.winner == 0 and result.reason is Reason.DEN_ENTERED
    with pytest.raises(InvalidPositionError, match="own den"):
        from_fen("3l3/7/7/7/7/7/7/7/3L3 0 0 0", CLASSIC)


def test_elimination_no_moves_and_ply_limit() -> None:
    last = classic(
        """
        . . # * # . .
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        . . . # . . .
        L c # * # . .
        """
    )
    end = play(last, "a1xb1")
    assert outcome(end) is not None and outcome(end).reason is Reason.ELIMINATION  # type: ignore[union-attr]
    boxed = classic(
        """
        . . # * # . .
        . . . # . . .
        . . . . . . .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . ~ ~ . ~ ~ .
        . . . . . . .
        l . . # . . .
        R t # * # . .
        """,
        to_move=0,
    )
    result = outcome(boxed)
    assert legal_actions(boxed) == ()
    assert result is not None and result.winner == 1 and result.reason is Reason.NO_LEGAL_ACTIONS
    at_limit = new_game(CLASSIC)
    at_limit = attrs.evolve(at_limit, ply=299)
    nxt = step(at_limit, legal_actions(at_limit)[0], np.random.default_rng(0))
    result = outcome(nxt)
    assert result is not None and result.winner is None and result.reason is Reason.PLY_LIMIT


def test_repetition_ban_third() -> None:
    rules = attrs.evolve(CLASSIC, repetition="ban_third")
    state = new_game(rules)
    shuffle = ["a1-a2", "g9-g8", "a2-a1", "g8-g9"]
    for text in shuffle:  # the start position now stands for the second time
        state = play(state, text)
    state = play(state, "a1-a2")
    state = play(state, "g9-g8")
    state = play(state, "a2-a1")
    # g8-g9 would make the start position stand for the third time
    with pytest.raises(IllegalActionError):
        parse_action(state, "g8-g9")
    plain = new_game(CLASSIC)
    for text in [*shuffle, *shuffle[:3]]:
        plain = play(plain, text)
    assert "g8-g9" in {action_to_str(plain, a) for a in legal_actions(plain)}


def test_classic_observation_planes() -> None:
    obs = observation(new_game(CLASSIC))
    assert obs.shape == (9, 7, 22) and obs.dtype == np.float32
    assert obs[0, 0, 5] == 1.0  # player 0's Tiger (rank 6) on a1
    assert obs[8, 0, 8 + 6] == 1.0  # player 1's Lion (rank 7) on a9
    assert obs[:, :, 16].sum() == 12 and obs[3, 1, 16] == 1.0
    assert obs[0, 2, 17] == 1.0 and obs[8, 2, 18] == 1.0
    assert obs[0, 3, 19] == 1.0 and obs[8, 3, 20] == 1.0
    assert obs[:, :, 21].max() == 0.0
    assert observation(play(new_game(CLASSIC), "a1-a2"))[:, :, 21].min() == 1.0


def test_the_generator_reads_the_board_alone_or_its_bitboards_alike() -> None:
    """``classic_actions`` given a state's bitboards and given its board alone (the
    bitboards computed from it) list the same moves as ``legal_actions``, along random
    games in which pieces meet, block each other and swim in the way of leaps."""
    from jungle_core._moves import classic_actions
    from jungle_core._state import board_bitboards
    from jungle_core._tables import tables

    t = tables(CLASSIC)
    rng = np.random.default_rng(3)
    seen = 0
    for game in range(12):
        state = new_game(CLASSIC, seed=game)
        while outcome(state) is None:
            actions = legal_actions(state)
            assert board_bitboards(state.board) == state.bitboards
            for me in (0, 1):
                alone = classic_actions(state.board, me, t)
                assert alone == classic_actions(state.board, me, t, state.bitboards)
            assert tuple(classic_actions(state.board, state.to_move, t)) == actions
            state = step(state, actions[int(rng.integers(len(actions)))], rng)
            seen += 1
    assert seen > 1000
