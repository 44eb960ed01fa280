"""Perft pins the move generator: counts from the core, cross-checked by the slow
independent generator of ``tests/_slow.py``."""

from __future__ import annotations

import pytest

from jungle_cli import main
from jungle_core import CLASSIC, DARK, DARK_STRICT, Rules, from_fen, new_game, perft, to_fen
from tests import _slow

CASES = [
    # (rules, position string or None for the start, depth, count)
    (DARK, None, 1, 256),
    (DARK, None, 2, 61088),
    (DARK, "l???Le??/8/8/8/8/8/?pdw2?? 0 1 8 ETPWDR tr", 2, 5716),
    (DARK, "l???Le??/8/8/8/8/8/?pdw2?? 0 1 8 ETPWDR tr", 3, 298962),
    (DARK, "D2WE1T?/1L6/8/8/8/5t2/?cerl2w 0 5 16 PC -", 3, 4569),
    (DARK, "1lTDL1?W/8/4e3/8/7t/1Edw4/6r1 0 1 30 R -", 3, 3036),
    (DARK, "4E1L1/2p3T1/w7/1C6/8/2lW3d/c5t1 0 1 90 - -", 3, 4790),
    (DARK_STRICT, None, 3, 204800),
    (CLASSIC, None, 1, 24),
    (CLASSIC, None, 2, 576),
    (CLASSIC, None, 3, 12240),
    (CLASSIC, None, 4, 260099),
]


@pytest.mark.parametrize(("rules", "fen", "depth", "count"), CASES)
def test_perft_pinned_and_cross_checked(
    rules: Rules, fen: str | None, depth: int, count: int
) -> None:
    state = new_game(rules) if fen is None else from_fen(fen, rules)
    assert perft(state, depth) == count
    assert _slow.perft(_slow.parse(to_fen(state), rules), rules, depth) == count


def test_perft_of_a_finished_game_is_one_leaf() -> None:
    over = from_fen("8/8/8/8/8/8/E7 1 0 9 - -")
    assert perft(over, 3) == 1
    assert perft(new_game(), 0) == 1
    with pytest.raises(ValueError, match="depth"):
        perft(new_game(), -1)


def test_perft_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", "--rules", "classic", "--depth", "3"]) == 0
    assert capsys.readouterr().out.startswith("perft(3) = 12240  (")
