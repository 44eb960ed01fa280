"""Endgame tables (``jungle_agents.endgame``): every table entry agrees with the core's own
moves one ply down (the vectorized move generator against ``legal_actions`` + ``apply``),
for DARK and for rule options that change battles and stalemates; the known theorems of
small endgames hold (equal ranks draw; one chaser wins exactly when the distance's parity
is right); the no-removal count turns a slow win into a draw at the right ply."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from jungle_agents.endgame import EndgameTables, Probe, material_of, supported
from jungle_core import CLASSIC, DARK, Rules, State, from_fen, new_game
from jungle_core.lowlevel import piece_code


def _position(
    rules: Rules, codes: list[int], squares: list[int], to_move: int, clock: int
) -> State:
    board = [0] * (rules.rows * rules.cols)
    for code, sq in zip(codes, squares, strict=True):
        board[sq] = code
    text = "/".join(
        _row(board[r * rules.cols : (r + 1) * rules.cols]) for r in reversed(range(rules.rows))
    )
    return from_fen(f"{text} {to_move} {clock} {clock} - -", rules)


def _row(codes: list[int]) -> str:
    out, gap = "", 0
    for code in codes:
        if not code:
            gap += 1
            continue
        if gap:
            out, gap = out + str(gap), 0
        out += ".RCDWPTLE"[(code - 1) % 8 + 1].lower() if code > 8 else ".RCDWPTLE"[code]
    return out + (str(gap) if gap else "")


_MATERIALS = [  # a few materials (each solved once per rules): chases, trades, Rat vs Elephant
    (piece_code(0, 8), piece_code(1, 6)),
    (piece_code(0, 5), piece_code(1, 5)),
    (piece_code(0, 1), piece_code(1, 8)),
    (piece_code(0, 8), piece_code(0, 2), piece_code(1, 8)),
    (piece_code(0, 7), piece_code(1, 1), piece_code(1, 8)),
    (piece_code(0, 3), piece_code(0, 4), piece_code(1, 4)),
]


def _random_positions(rules: Rules, count: int, seed: int) -> list[State]:
    rng = np.random.default_rng(seed)
    positions: list[State] = []
    limit = rules.no_removal_limit
    while len(positions) < count:
        codes = list(_MATERIALS[int(rng.integers(len(_MATERIALS)))])
        squares = [
            int(s) for s in rng.choice(rules.rows * rules.cols, size=len(codes), replace=False)
        ]
        clock = int(rng.choice([0, 0, limit // 2, limit - 5, limit - 1])) if limit else 0
        positions.append(_position(rules, codes, squares, int(rng.integers(2)), clock))
    return positions


@pytest.mark.parametrize(
    "rules",
    [
        DARK,
        attrs.evolve(DARK, name="EQ", equal_rank="attacker_wins", no_moves="draw"),
        attrs.evolve(DARK, name="FB", weaker_attack="forbidden", equal_rank="forbidden"),
        attrs.evolve(DARK, name="L20", no_removal_limit=20),
        attrs.evolve(DARK, name="NL", no_removal_limit=0),  # no limit: distances unbounded
    ],
    ids=lambda r: r.name,
)
def test_every_probe_is_the_best_of_its_moves_by_the_core(rules: Rules) -> None:
    """Bellman consistency: a position's stored value and distance equal the best over
    the core's legal actions of the children's values (a win: the fastest; a loss: the
    slowest), so the table's own move generator cannot differ from the core's."""
    tables = EndgameTables()
    decided = 0
    for state in _random_positions(rules, 120, seed=3):
        probe = tables.probe(state)
        values = tables.action_values(state)
        assert probe is not None and values is not None
        if not values:  # no legal action
            assert probe.result == (-1 if rules.no_moves == "loses" else 0)
            continue
        best = max(v.result for v in values.values())
        assert probe.result == best, state
        if best == 1:
            assert probe.plies == min(v.plies for v in values.values() if v.result == 1)
        elif best == -1:
            assert probe.plies == max(v.plies for v in values.values())
        decided += best != 0
    assert decided > 10  # the sample is not all draws


def test_equal_ranks_alone_are_always_drawn() -> None:
    tables = EndgameTables()
    for state in _random_positions(DARK, 200, seed=5):
        material = material_of(state)
        assert material is not None
        if len(material) == 2 and abs(material[0] - material[1]) == 8:
            assert tables.probe(state) == Probe(0, 0)


@pytest.mark.parametrize("to_move", [0, 1])
def test_one_chaser_wins_exactly_when_the_parity_is_right(to_move: int) -> None:
    """Elephant against tiger, nothing else: every move changes the distance by one, so
    the Elephant can only ever attack if the distance is odd when it is to move; and from
    every such position it does corner the tiger within the limit."""
    tables = EndgameTables()
    elephant, tiger = piece_code(0, 8), piece_code(1, 6)
    for e_sq, t_sq in [(0, 2), (0, 3), (27, 28), (27, 45), (55, 0), (12, 50)]:
        state = _position(DARK, [elephant, tiger], [e_sq, t_sq], to_move, 0)
        distance = abs(e_sq // 8 - t_sq // 8) + abs(e_sq % 8 - t_sq % 8)
        elephant_to_move_odd = (distance % 2 == 1) == (to_move == 0)
        probe = tables.probe(state)
        assert probe is not None
        expected = (1 if to_move == 0 else -1) if elephant_to_move_odd else 0
        assert probe.result == expected, (e_sq, t_sq, to_move, probe)


def test_the_no_removal_count_turns_a_slow_win_into_a_draw() -> None:
    tables = EndgameTables()
    elephant, tiger = piece_code(0, 8), piece_code(1, 6)
    slow = _position(DARK, [elephant, tiger], [0, 54], 1, 0)  # tiger to move, distance 12
    probe = tables.probe(slow)
    assert probe is not None and probe.result == -1 and probe.plies > 2
    limit = DARK.no_removal_limit
    just = _position(DARK, [elephant, tiger], [0, 54], 1, limit - probe.plies)
    late = _position(DARK, [elephant, tiger], [0, 54], 1, limit - probe.plies + 1)
    assert tables.probe(just) == probe
    assert tables.probe(late) == Probe(0, 0)


def test_best_actions_win_fastest_and_keep_draws() -> None:
    tables = EndgameTables()
    # White's Elephant next to the black tiger, a black rat two squares away: take it
    state = from_fen("8/8/8/8/8/r7/Et6 0 0 0 - -")
    best = tables.best_actions(state)
    assert best == [56 + 0 * 4 + 3]
    # every best action of a drawn position is a drawing one
    for drawn in _random_positions(DARK, 60, seed=11):
        probe = tables.probe(drawn)
        if probe is None or probe.result:
            continue
        values = tables.action_values(drawn)
        assert values is not None
        chosen = tables.best_actions(drawn)
        assert chosen and all(values[a].result == 0 for a in chosen)


def test_what_the_tables_do_not_cover() -> None:
    tables = EndgameTables()
    assert tables.probe(new_game()) is None  # face-down pieces
    assert tables.probe(from_fen("8/8/8/8/8/8/ETt5 0 0 0 - -")) is not None
    assert tables.probe(from_fen("8/8/8/8/8/8/ETtl4 0 0 0 - -")) is None  # 4 > 3 pieces
    assert tables.probe(from_fen("8/8/8/8/8/8/ET6 1 0 0 - -")) is None  # game over
    assert not supported(CLASSIC) and not supported(attrs.evolve(DARK, ply_limit=300))
    with pytest.raises(ValueError, match="max_pieces"):
        EndgameTables(max_pieces=5)


@pytest.mark.parametrize("material", [_MATERIALS[3], _MATERIALS[4], _MATERIALS[5]])
def test_packing_the_undecided_positions_does_not_change_a_table(
    material: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The solver packs the positions still undecided once enough have been decided
    (``_REPACK``); never packing and packing after every ply give the same table."""
    from jungle_agents import endgame
    from jungle_agents.endgame import _solver

    solved = []
    for share in (0.0, 1.01):  # never; whenever a ply decides anything
        monkeypatch.setattr(_solver, "_REPACK", share)
        tables = EndgameTables(persist=False)  # solved both times, not read back
        win, loss = tables.distances(DARK, tuple(sorted(material)))
        solved.append((win, loss))
    (win0, loss0), (win1, loss1) = solved
    assert (win0 < endgame.UNSOLVED).any() and (loss0 < endgame.UNSOLVED).any()
    np.testing.assert_array_equal(win0, win1)
    np.testing.assert_array_equal(loss0, loss1)
