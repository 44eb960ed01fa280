"""Position strings, action strings, rendering, tensors and every error type."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import jungle_core
from jungle_core import (
    CLASSIC,
    DARK,
    DARK_STRICT,
    GameOverError,
    IllegalActionError,
    InvalidPositionError,
    JungleError,
    NotationError,
    action_to_str,
    features,
    from_fen,
    legal_action_mask,
    legal_actions,
    new_game,
    observation,
    parse_action,
    render,
    step,
    to_fen,
)
from tests._boards import position

START = "????????/8/8/8/8/8/???????? 0 0 0 ELTPWDCR eltpwdcr"


def test_error_hierarchy() -> None:
    for error in (NotationError, InvalidPositionError, IllegalActionError, GameOverError):
        assert issubclass(error, JungleError) and issubclass(error, ValueError)


@pytest.mark.parametrize(
    ("fen", "message"),
    [
        ("????????/8/8/8/8/8/???????? 0 0 0", "6 fields"),
        ("????????/8/8/8/8/8 0 0 0 ELTPWDCR eltpwdcr", "6 rows, DARK needs 7"),
        ("????????/8/8/8/8/8/??????? 0 0 0 ELTPWDCR eltpwdcr", "rank 1 .* 7 squares, not 8"),
        ("?????????/8/8/8/8/8/???????? 0 0 0 ELTPWDCR eltpwdcr", "more than 8 squares"),
        ("????????/8/8/8/8/8/???Z???? 0 0 0 ELTPWDCR eltpwdcr", "'Z' is not a piece letter"),
        ("????????/8/8/8/8/8/???????? 2 0 0 ELTPWDCR eltpwdcr", "side to move must be 0 or 1"),
        ("????????/8/8/8/8/8/???????? 0 -1 0 ELTPWDCR eltpwdcr", "plies since a removal"),
        ("????????/8/8/8/8/8/???????? 0 0 x ELTPWDCR eltpwdcr", "the ply"),
        ("????????/8/8/8/8/8/???????? 0 0 0 ELTPWDCQ eltpwdcr", "'Q' is not a rank letter"),
    ],
)
def test_notation_errors_say_what_and_where(fen: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        from_fen(fen)


@pytest.mark.parametrize(
    ("fen", "rules", "message"),
    [
        ("E6E/8/8/8/8/8/8 0 0 0 - -", DARK, "player 0's Elephant stands twice, on a7 and h7"),
        ("E6?/8/8/8/8/8/8 0 0 0 E -", DARK, "Elephant is face up on a7 and listed face down"),
        ("??6/8/8/8/8/8/8 0 0 0 E -", DARK, "2 face-down pieces stand on the board but"),
        ("?X6/8/8/8/8/8/8 0 0 0 EL -", DARK, "cannot stand together"),
        ("X7/8/8/8/8/8/8 0 0 0 - e", DARK, "1 face-down pieces of player 0"),
        ("E7/8/8/8/8/8/e7 0 5 3 - -", DARK, "5 plies since a removal is more than"),
        ("E6E/8/8/8/8/8/8 0 0 0 E -", DARK, "listed face down"),
        ("EE/8/8/8/8/8/8 0 0 0 - -", DARK, "describes 2 squares"),
        ("6l/7/7/7/1E5/7/7/7/L6 0 0 0", CLASSIC, "Elephant stands in water on b5"),
        ("6l/7/7/7/7/7/7/7/?6 0 0 0", CLASSIC, "CLASSIC has no face-down pieces"),
        ("6l/7/7/7/7/7/7/7/L6 0 0 0 - -", CLASSIC, "4 fields"),
    ],
)
def test_invalid_positions(fen: str, rules: jungle_core.Rules, message: str) -> None:
    with pytest.raises(JungleError, match=message):
        from_fen(fen, rules)


def test_invalid_position_error_type() -> None:
    with pytest.raises(InvalidPositionError, match="Elephant stands twice"):
        from_fen("E6E/8/8/8/8/8/8 0 0 0 - -")


def test_round_trips_and_repr() -> None:
    for state in (new_game(), new_game(DARK_STRICT), new_game(CLASSIC)):
        assert from_fen(to_fen(state), state.rules) == state
        namespace = vars(jungle_core)
        assert eval(repr(state), namespace) == state
    assert to_fen(new_game()) == START
    custom = new_game(attrs.evolve(DARK, equal_rank="forbidden", name="mine"))
    assert eval(repr(custom), vars(jungle_core)) == custom


def test_action_strings() -> None:
    state = position(
        """
        . . . . . . . e
        . . . . . . . .
        . . . . . . . .
        . . . T w . . .
        . . . ? . . . .
        . . . . . . . .
        R . . . . . . .
        """,
        face_down="E -",
    )
    texts = {action_to_str(state, a): a for a in legal_actions(state)}
    assert {"?d3", "d4xe4", "d4xd3", "d4-d5", "d4-c4", "a1-a2", "a1-b1"} == set(texts)
    assert parse_action(state, "d4-e4") == texts["d4xe4"]  # '-' and 'x' either way
    assert parse_action(state, "D4xD5") == texts["d4-d5"]
    assert parse_action(state, " ?d3 ") == texts["?d3"]
    with pytest.raises(NotationError, match="is not an action"):
        parse_action(state, "d4->e4")
    with pytest.raises(NotationError, match="row or a column"):
        parse_action(state, "d4-e5")
    with pytest.raises(NotationError, match="off the 7x8 board"):
        parse_action(state, "d4-d9")
    with pytest.raises(IllegalActionError, match="a1-a3 is not legal in '7e/"):
        parse_action(state, "a1-a3")
    with pytest.raises(IllegalActionError, match="outside the action space"):
        action_to_str(state, 280)


def test_jump_notation() -> None:
    start = new_game(CLASSIC)
    lion = from_fen("6l/7/7/7/3L3/7/7/7/7 0 0 0", CLASSIC)
    jump = parse_action(lion, "d5-a5")
    assert action_to_str(lion, jump) == "d5-a5"
    assert jump == CLASSIC.num_squares + (4 * 7 + 3) * 4 + 2
    with pytest.raises(IllegalActionError):
        parse_action(lion, "d5-b5")
    assert action_to_str(start, CLASSIC.num_squares + 0 * 4 + 3) == "a1-b1"


def test_game_over_error_names_action_and_position() -> None:
    over = from_fen("8/8/8/8/8/8/E7 1 0 9 - -")
    with pytest.raises(GameOverError, match=r"cannot play .* the game is over in '8/8/8/8/8/8/E7"):
        step(over, 0, np.random.default_rng(0))


def test_render_marks_known_owners_and_terrain() -> None:
    text = render(new_game(DARK_STRICT))
    assert " 7  x x x x x x x x  7" in text and " 1  X X X X X X X X  1" in text
    assert "* " in render(new_game(CLASSIC))


RANK_LETTERS = "RCDWPTLE"
"""The piece letters by rank, 1 (the Rat) to 8 (the Elephant)."""


def _dark_tensors(picture: str, face_down: str, to_move: int) -> tuple[np.ndarray, np.ndarray]:
    """The observation and the feature view of a DARK position, written here square by
    square from its picture (:func:`tests._boards.position`'s tokens) and its list of
    face-down pieces, as the tensors' documentation defines their channels:
    observation ``[P(owner 0), P(owner 1), rank / 8, face up, P(owner = to move),
    P(owner = the other)]``, features ``[owner, rank / 8, face up, occupied]``."""
    lines = picture.strip().splitlines()
    rows, cols = len(lines), len(lines[0].split())
    n0, n1 = (0 if part == "-" else len(part) for part in face_down.split())
    obs = np.zeros((rows, cols, 6), dtype=np.float32)
    feats = np.zeros((rows, cols, 4), dtype=np.float32)
    for i, line in enumerate(lines):
        for col, token in enumerate(line.split()):
            if token == ".":
                continue
            rank = RANK_LETTERS.index(token.upper()) + 1 if token.upper() in RANK_LETTERS else 0
            if token == "?":  # either side's: the sides' shares of the face-down pieces
                owner = (n0 / (n0 + n1), n1 / (n0 + n1))
            else:  # upper case player 0's, face up (a letter) or down (X)
                owner = (1.0, 0.0) if token.isupper() else (0.0, 1.0)
            up = float(rank > 0)
            obs[rows - 1 - i, col] = [*owner, rank / 8, up, owner[to_move], owner[1 - to_move]]
            feats[rows - 1 - i, col] = [0.5 if token == "?" else owner[1], rank / 8, up, 1.0]
    return obs, feats


DARK_PICTURE = """
    . . . . . . . e
    . . ? . . . . .
    . . . . . . . .
    . . . T ? . . .
    . . . . . R . .
    . . . . . . . ?
    w . . . . . . .
"""


@pytest.mark.parametrize("to_move", [0, 1])
def test_dark_observation_channels(to_move: int) -> None:
    """Three face-down pieces, two of player 0 (E, L) and one of player 1 (r): a
    face-down square is player 0's with probability 2/3."""
    obs = observation(position(DARK_PICTURE, face_down="EL r", to_move=to_move))
    feats = features(position(DARK_PICTURE, face_down="EL r", to_move=to_move))
    want_obs, want_feats = _dark_tensors(DARK_PICTURE, "EL r", to_move)
    assert obs.shape == (7, 8, 6) and obs.dtype == np.float32
    assert feats.shape == (7, 8, 4) and feats.dtype == np.float32
    np.testing.assert_allclose(obs, want_obs, rtol=0, atol=1e-7)
    np.testing.assert_allclose(feats, want_feats, rtol=0, atol=1e-7)
    # two squares by hand: T d4 (player 0's Tiger, rank 6), a face-down e4
    mine = float(to_move == 0)
    assert obs[3, 3].tolist() == [1.0, 0.0, 6 / 8, 1.0, mine, 1.0 - mine]
    assert obs[3, 4, :2] == pytest.approx([2 / 3, 1 / 3])


def test_dark_strict_observation_of_the_start() -> None:
    """DARK_STRICT's start: every piece face down on its owner's side, owner known."""
    picture = "x x x x x x x x\n" + ". . . . . . . .\n" * 5 + "X X X X X X X X"
    state = new_game(DARK_STRICT)
    assert state == position(picture, DARK_STRICT, face_down="ELTPWDCR eltpwdcr")
    want_obs, want_feats = _dark_tensors(picture, "ELTPWDCR eltpwdcr", 0)
    np.testing.assert_array_equal(observation(state), want_obs)
    np.testing.assert_array_equal(features(state), want_feats)
    assert features(state)[0, 0, 0] == 0.0 and features(state)[6, 0, 0] == 1.0


def test_legal_action_mask_matches_list() -> None:
    state = new_game(CLASSIC)
    mask = legal_action_mask(state)
    assert mask.shape == (315,) and tuple(np.flatnonzero(mask)) == legal_actions(state)


def test_rules_validation() -> None:
    with pytest.raises(ValueError, match="equal_rank must be one of"):
        attrs.evolve(DARK, equal_rank="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reveal='own' needs"):
        attrs.evolve(DARK, reveal="own")
    with pytest.raises(ValueError, match="unknown rule set"):
        jungle_core.rules_by_name("chess")


def test_classic_capture_rules_are_fixed() -> None:
    with pytest.raises(ValueError, match="CLASSIC captures are fixed"):
        attrs.evolve(CLASSIC, equal_rank="both_removed")
