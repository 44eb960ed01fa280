"""Example tests of every DARK rule (docs/rules.md), each on a drawn position."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from jungle_core import (
    DARK,
    DARK_STRICT,
    EMPTY,
    HIDDEN,
    GameOverError,
    IllegalActionError,
    Reason,
    Rules,
    State,
    action_to_str,
    chance_outcomes,
    legal_actions,
    new_game,
    outcome,
    parse_action,
    parse_square,
    piece_code,
    returns,
    score,
    step,
    step_outcome,
    to_fen,
    transitions,
)
from tests._boards import position

RANKS = {"E": 8, "L": 7, "T": 6, "P": 5, "W": 4, "D": 3, "C": 2, "R": 1}


def duel(attacker: str, defender: str, rules: Rules = DARK) -> State:
    """Player 0's ``attacker`` on d4 next to player 1's ``defender`` on e4, plus a spare
    piece each (so no battle ends the game)."""
    spare0 = next(x for x in "ELTPWDCR" if x not in (attacker, defender.upper()))
    spare1 = next(x for x in "eltpwdcr" if x not in (attacker.lower(), defender))
    return position(
        f"""
        . . . . . . . {spare1}
        . . . . . . . .
        . . . . . . . .
        . . . {attacker} {defender} . . .
        . . . . . . . .
        . . . . . . . .
        {spare0} . . . . . . .
        """,
        rules,
    )


def after(state: State, text: str) -> State:
    (prob, nxt), *rest = transitions(state, parse_action(state, text))
    assert prob == 1.0 and not rest
    return nxt


D4, E4 = 3 * 8 + 3, 3 * 8 + 4


@pytest.mark.parametrize(
    ("attacker", "defender", "d4", "e4"),
    [
        ("T", "w", EMPTY, piece_code(0, 6)),  # stronger takes
        ("R", "e", EMPTY, piece_code(0, 1)),  # the Rat takes the Elephant
        ("W", "w", EMPTY, EMPTY),  # equal ranks: both removed
        ("W", "t", EMPTY, piece_code(1, 6)),  # weaker attacker removed
        ("E", "r", EMPTY, piece_code(1, 1)),  # the Elephant attacking the Rat is removed
    ],
)
def test_battle_table_default(attacker: str, defender: str, d4: int, e4: int) -> None:
    nxt = after(duel(attacker, defender), "d4xe4")
    assert (nxt.board[D4], nxt.board[E4]) == (d4, e4)
    assert nxt.plies_since_removal == 0


def test_equal_rank_options() -> None:
    wins = attrs.evolve(DARK, equal_rank="attacker_wins")
    nxt = after(duel("W", "w", wins), "d4xe4")
    assert (nxt.board[D4], nxt.board[E4]) == (EMPTY, piece_code(0, 4))
    forbidden = attrs.evolve(DARK, equal_rank="forbidden")
    state = duel("W", "w", forbidden)
    with pytest.raises(IllegalActionError, match=r"d4xe4 \(action \d+\) is not legal"):
        transitions(state, parse_action(duel("W", "w"), "d4xe4"))
    assert DARK.num_squares + D4 * 4 + 3 not in legal_actions(state)


def test_weaker_attack_forbidden() -> None:
    rules = attrs.evolve(DARK, weaker_attack="forbidden")
    move = DARK.num_squares + D4 * 4 + 3
    assert move not in legal_actions(duel("W", "t", rules))
    assert move not in legal_actions(duel("E", "r", rules))
    assert move in legal_actions(duel("R", "e", rules))
    assert move in legal_actions(duel("T", "w", rules))


def test_cannot_move_onto_own_piece_or_off_the_board() -> None:
    state = position(
        """
        . . . . . . . e
        . . . . . . . .
        . . . . . . . .
        . . . T W . . .
        . . . . . . . .
        . . . . . . . .
        R . . . . . . .
        """
    )
    with pytest.raises(IllegalActionError):
        parse_action(state, "d4-e4")
    rng = np.random.default_rng(0)
    off_board = DARK.num_squares + 0 * 4 + 0  # a1 towards row -1
    with pytest.raises(IllegalActionError, match="action 56"):
        step(state, off_board, rng)


def test_moves_in_a_corner_among_own_pieces_and_next_to_a_face_down_piece() -> None:
    """The move generator reads bitboards: each piece's neighbours that its own pieces
    hold are blocked (a1 boxed in by a2 and b1), the board's edges end the board, and a
    face-down neighbour is a target exactly when ``attack_face_down``."""
    picture = """
        . . . . . . . e
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        C . . . . . . .
        R T . . . . W ?
        """
    moves = ["b1-b2", "b1-c1", "g1-g2", "g1-f1", "g1xh1", "a2-a3", "a2-b2"]
    state = position(picture, face_down="- d")
    assert [action_to_str(state, a) for a in legal_actions(state)] == ["?h1", *moves]
    shy = position(picture, attrs.evolve(DARK, attack_face_down=False), face_down="- d")
    moves.remove("g1xh1")
    assert [action_to_str(shy, a) for a in legal_actions(shy)] == ["?h1", *moves]


def test_reveal_any_face_down_piece_exact_distribution() -> None:
    state = position(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . ? . . . .
        . . . . . . . .
        . . . . . ? . .
        E . . . . . . e
        """,
        face_down="R l",
    )
    reveal = parse_square(DARK, "d4")
    assert reveal in legal_actions(state)
    outcomes = transitions(state, reveal)
    assert [p for p, _ in outcomes] == [0.5, 0.5]
    revealed = sorted(s.board[D4] for _, s in outcomes)
    assert revealed == [piece_code(0, 1), piece_code(1, 7)]
    for _, s in outcomes:
        assert s.to_move == 1 and s.plies_since_removal == 1
        assert len(s.face_down) == 1
    assert chance_outcomes(state, reveal) == ((0, 0.5), (15 - 1, 0.5))


def test_move_onto_face_down_own_piece_turns_it_up_and_stays() -> None:
    state = position(
        """
        . . . . . . . e
        . . . . . . . .
        . . . . . . . .
        . . . T ? . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """,
        face_down="W -",
    )
    (prob, nxt), *rest = transitions(state, parse_action(state, "d4xe4"))
    assert not rest and prob == 1.0
    assert nxt.board[D4] == piece_code(0, 6)
    assert nxt.board[E4] == piece_code(0, 4)
    assert nxt.face_down_mask == 0 and nxt.to_move == 1 and nxt.plies_since_removal == 1


def test_move_onto_face_down_opponent_piece_is_a_battle() -> None:
    state = position(
        """
        ? ? . . . . . e
        . . . . . . . .
        . . . . . . . .
        . . . T ? . . .
        . . . . . . . .
        . . . . . . . .
        D . . . . . . .
        """,
        face_down="- lwt",
    )
    results: dict[int, tuple[object, int, int]] = {
        s.board[E4]: (p, s.board[D4], s.plies_since_removal)
        for p, s in transitions(state, parse_action(state, "d4xe4"))
    }
    third = pytest.approx(1 / 3)
    assert results == {
        piece_code(1, 7): (third, EMPTY, 0),  # a Lion: the Tiger is removed
        piece_code(0, 6): (third, EMPTY, 0),  # a Wolf: taken
        EMPTY: (third, EMPTY, 0),  # a Tiger: both removed
    }


def test_no_removal_draw_after_100_plies_reveals_do_not_reset() -> None:
    state = position(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . ? . . . .
        . . . . . . . .
        . . . . . . . .
        R . . . . . . e
        """,
        since=98,
        ply=120,
        face_down="W -",
    )
    nxt = step_outcome(state, parse_square(DARK, "d4"), 3)  # a reveal: no removal
    assert nxt.plies_since_removal == 99 and outcome(nxt) is None
    last = after(nxt, "h1-h2")
    assert last.plies_since_removal == 100
    assert outcome(last) == outcome(last) and outcome(last).reason is Reason.NO_REMOVAL_LIMIT  # type: ignore[union-attr]
    assert outcome(last).winner is None  # type: ignore[union-attr]
    with pytest.raises(GameOverError, match="the game is over"):
        step(last, legal_actions(last)[0], np.random.default_rng(0))


def test_both_last_pieces_removed_in_one_battle_is_a_draw() -> None:
    state = position(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . W w . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """
    )
    end = after(state, "d4xe4")
    assert outcome(end) is not None
    assert outcome(end).winner is None and outcome(end).reason is Reason.ELIMINATION  # type: ignore[union-attr]
    assert returns(end) == (0.0, 0.0) and score(end, 0) == 0.5


def test_win_by_removing_the_last_piece() -> None:
    state = position(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . L w . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """
    )
    end = after(state, "d4xe4")
    assert outcome(end) is not None and outcome(end).winner == 0  # type: ignore[union-attr]
    assert returns(end) == (1.0, -1.0)
    assert (score(end, 0), score(end, 1)) == (1.0, 0.0)


def test_face_down_pieces_count_as_pieces_left() -> None:
    state = position(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . ?
        . . . L w . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """,
        face_down="- c",
    )
    assert outcome(after(state, "d4xe4")) is None


def test_loss_with_no_legal_action() -> None:
    # Player 1's Rat is in the corner and cannot attack the Cat or the Dog
    # (weaker attacks forbidden): player 1 to move has no legal action.
    rules = attrs.evolve(DARK, weaker_attack="forbidden", equal_rank="forbidden")
    state = position(
        """
        r C . . . . . .
        D . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """,
        rules,
        to_move=1,
    )
    assert legal_actions(state) == ()
    result = outcome(state)
    assert result is not None and result.winner == 0 and result.reason is Reason.NO_LEGAL_ACTIONS
    drawn = position(
        """
        r C . . . . . .
        D . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """,
        attrs.evolve(rules, no_moves="draw"),
        to_move=1,
    )
    assert outcome(drawn) is not None and outcome(drawn).winner is None  # type: ignore[union-attr]


def test_dark_strict_owners_known_own_reveals_only_strictly_weaker_taken() -> None:
    start = new_game(DARK_STRICT)
    assert to_fen(start) == "xxxxxxxx/8/8/8/8/8/XXXXXXXX 0 0 0 ELTPWDCR eltpwdcr"
    assert legal_actions(start) == tuple(range(8))  # player 0 reveals only row 1
    first = transitions(start, 0)
    assert len(first) == 8 and all(s.board[0] in range(1, 9) for _, s in first)
    state = position(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . W w c x . .
        . . . X . . . .
        . . . . . . . .
        . . . . . . . .
        """,
        DARK_STRICT,
        face_down="E t",
    )
    moves = {action_to_str(state, a) for a in legal_actions(state)}
    # no equal-rank attack on w, no move onto face-down pieces, no reveal of x
    assert moves == {"?d3", "c4-c5", "c4-b4", "c4-c3"}
    weaker = position(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . T w . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """,
        DARK_STRICT,
    )
    assert "d4xe4" in {action_to_str(weaker, a) for a in legal_actions(weaker)}


def test_scattered_setup_is_seeded_and_distinct() -> None:
    rules = attrs.evolve(DARK, setup="scattered")
    a, b, c = new_game(rules, seed=1), new_game(rules, seed=1), new_game(rules, seed=2)
    assert a == b and a != c
    assert a.board.count(HIDDEN) == 16 and a.face_down_mask == 0xFFFF
    assert set(a.board) == {EMPTY, HIDDEN}


def test_step_samples_only_possible_outcomes_and_never_changes_input() -> None:
    state = new_game()
    snapshot = (state.board, state.face_down_mask, state.to_move, state.ply)
    rng = np.random.default_rng(7)
    seen = {step(state, 0, rng).board[0] for _ in range(200)}
    assert seen <= set(range(1, 17)) and len(seen) > 10
    assert (state.board, state.face_down_mask, state.to_move, state.ply) == snapshot
