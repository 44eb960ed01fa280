"""The Minimax agent on hand-computed positions: the DARK evaluation and its incremental
form, the CLASSIC move generator, forced wins, the opponent's reply at the horizon,
contempt, the time budget, ties and the margin."""

from __future__ import annotations

import numpy as np
import pytest

from jungle_agents import (
    WIN,
    ClassicEvaluator,
    DarkEvaluator,
    MinimaxAgent,
    SearchConfig,
    Searcher,
    classic_moves,
)
from jungle_agents.minimax._classic_eval import classic_outcome
from jungle_core import (
    CLASSIC,
    DARK,
    DARK_STRICT,
    Rules,
    from_fen,
    legal_actions,
    outcome,
    parse_action,
    transitions,
)
from jungle_core.lowlevel import apply as _apply
from jungle_core.lowlevel import chance_mask as _chance_mask
from jungle_core.lowlevel import mask_outcomes as _mask_outcomes
from tests._agents import positions, random_position


def test_dark_evaluation_by_hand() -> None:
    # self = player 0: E a1, R c1 face up, one face-down piece each (p0 C, p1 d) on g7, h7;
    # opp: w on b1 (E can take w: +20; w can take R, its neighbour on c1: -15)
    s = from_fen("6??/8/8/8/8/8/EwR5 0 0 3 C d", DARK)
    ev = DarkEvaluator(DARK, 0)
    count = (3 - 2) * 1
    ranks = 10 * ((8 + 1) - 4)
    face_down = 5 * 1 - 10 * 1
    pairs = 20 - 15
    assert ev.evaluate(s) == count + ranks + face_down + pairs
    assert DarkEvaluator(DARK, 1).evaluate(s) == -1 - 50 + 5 * 1 - 10 * 1 + (20 - 15)


@pytest.mark.parametrize("rules", [DARK, DARK_STRICT], ids=lambda r: r.name)
def test_incremental_child_evaluation_matches_full(rules: Rules) -> None:
    for state in positions(rules, 25, seed=5, plies=(0, 60)):
        for player in (0, 1):
            ev = DarkEvaluator(rules, player)
            base = ev.evaluate(state)
            for action in legal_actions(state):
                for o in _mask_outcomes(_chance_mask(state, action)) or (-1,):
                    child = _apply(state, action, o)
                    changes, delta = ev.child_change(state.board, state.to_move, action, o)
                    board = list(state.board)
                    for sq, code in changes:
                        board[sq] = code
                    assert tuple(board) == child.board
                    assert base + delta == pytest.approx(ev.evaluate(child))


def test_reply_lets_the_opponent_step_away_from_a_new_threat() -> None:
    # player 0's Elephant chases player 1's lone Leopard. At depth 1 every move that ends
    # next to the Leopard counts +20 (a threat the Leopard would ignore); with the reply
    # the Leopard steps away first, and the moves are worth the same.
    s = from_fen("8/8/8/3p4/8/3E4/8 0 0 9 - -", DARK)
    plain = Searcher(DARK, 0, SearchConfig(depth=1, contempt=0.0, reply=False))
    assert plain.value(_apply(s, parse_action(s, "d2-d3"), -1), 0) == 10 * (8 - 5) + 20
    reply = Searcher(DARK, 0, SearchConfig(depth=1, contempt=0.0, reply=True))
    assert reply.value(_apply(s, parse_action(s, "d2-d3"), -1), 0) == 10 * (8 - 5)
    assert reply.value(_apply(s, parse_action(s, "d2-c2"), -1), 0) == 10 * (8 - 5)


def test_contempt_makes_the_agent_prefer_a_removal_to_the_coming_draw() -> None:
    # player 0's Cat on d4 may trade itself for player 1's Cat on e4, or walk away; the
    # face-down pieces keep both sides' counts equal either way. Two plies before the
    # no-removal draw, the plain scoring (a draw is 0, above the evaluation here) walks into
    # the draw; with contempt the trade that resets the count is worth more.
    s = from_fen("????????/8/8/3Cc3/8/8/8 0 98 140 ELTP eltp", DARK)
    trade = parse_action(s, "d4xe4")
    literal = SearchConfig(depth=3, contempt=0.0)
    plain = Searcher(DARK, 0, literal).search(s, np.random.default_rng(0))
    assert plain.action != trade and plain.value == 0.0
    info = Searcher(DARK, 0, SearchConfig(depth=3, contempt=50.0)).search(
        s, np.random.default_rng(0)
    )
    assert info.action == trade and info.value > -50.0
    with pytest.raises(ValueError, match="contempt must be"):
        SearchConfig(contempt=-1.0)


def test_classic_move_generator_and_game_end_match_the_core() -> None:
    rng = np.random.default_rng(7)
    for _ in range(150):
        state = random_position(CLASSIC, int(rng.integers(0, 250)), rng)
        assert classic_outcome(state) == outcome(state)
        assert sorted(classic_moves(state)) == list(legal_actions(state))
    ev0, ev1 = ClassicEvaluator(CLASSIC, 0), ClassicEvaluator(CLASSIC, 1)
    state = random_position(CLASSIC, 40, rng)
    assert ev0.evaluate(state) == pytest.approx(-ev1.evaluate(state))


def test_search_finds_a_win_in_one() -> None:
    # player 0: E on a2 next to player 1's last piece, the Wolf on a1
    s = from_fen("8/8/8/8/8/E7/w5T1 0 0 9 - -", DARK)
    info = Searcher(DARK, 0, SearchConfig(depth=3)).search(s, np.random.default_rng(0))
    assert info.action == parse_action(s, "a2xa1")
    assert info.value == WIN + 2  # won after one ply, with depth 2 to spare


def test_search_finds_a_forced_win_in_two() -> None:
    # player 1's last piece, the Wolf in the corner a1; player 0's Tiger c1, Lion a3.
    s = from_fen("8/8/8/8/L7/8/w1T5 0 0 9 - -", DARK)
    assert Searcher(DARK, 0, SearchConfig(depth=1)).search(s).value < WIN  # not in one
    plain = SearchConfig(depth=3, alphabeta=False, ordering=False, tt=False, star1=False)
    for config in (SearchConfig(depth=3), plain):
        info = Searcher(DARK, 0, config).search(s, np.random.default_rng(1))
        assert info.value >= WIN
        # check by brute force: after the chosen move, every reply allows a win in one
        ((_, after),) = transitions(s, info.action)
        for reply in legal_actions(after):
            for _, position in transitions(after, reply):
                result = outcome(position)
                if result is not None:
                    assert result.winner == 0
                    continue
                wins = [
                    a
                    for a in legal_actions(position)
                    if any(
                        (r := outcome(c)) is not None and r.winner == 0
                        for _, c in transitions(position, a)
                    )
                ]
                assert wins, position


def test_search_prefers_the_sooner_win_and_finds_den_entries() -> None:
    # CLASSIC: player 0's Wolf on d8 steps into player 1's den d9
    s = from_fen("6t/3W3/7/7/7/7/7/7/6L 0 0 10", CLASSIC)
    info = Searcher(CLASSIC, 0, SearchConfig(depth=4)).search(s)
    assert info.action == parse_action(s, "d8-d9")
    assert info.value == WIN + 3


def test_time_budget_returns_a_completed_depth() -> None:
    agent = MinimaxAgent(DARK, SearchConfig(depth=8, time=0.05))
    state = positions(DARK, 1, seed=51, plies=(20, 40))[0]
    action = agent.act(state, np.random.default_rng(0))
    assert action in legal_actions(state)
    assert agent.last is not None and 1 <= agent.last.depth <= 8


def test_ties_at_the_root_are_broken_at_random_or_by_approach() -> None:
    # player 0's Lion far from player 1's last piece, a Cat: every move is worth the same
    s = from_fen("7c/8/8/8/8/8/L7 0 0 9 - -", DARK)
    searcher = Searcher(DARK, 0, SearchConfig(depth=2, tiebreak="random"))
    picks = {searcher.search(s, np.random.default_rng(i)).action for i in range(12)}
    assert picks == {parse_action(s, "a1-a2"), parse_action(s, "a1-b1")}
    approach = Searcher(DARK, 0, SearchConfig(depth=2, tiebreak="approach"))
    # both moves approach the Cat on h7 equally (distance 12 -> 11)
    assert {approach.search(s, np.random.default_rng(i)).action for i in range(12)} == picks
    s2 = from_fen("8/8/8/8/8/8/L6c 0 0 9 - -", DARK)
    assert approach.search(s2, np.random.default_rng(0)).action == parse_action(s2, "a1-b1")
    assert SearchConfig().tiebreak == "approach"


def test_a_margin_widens_the_ties_but_never_for_forced_results() -> None:
    # the Lion can take the lone Cat next to it; every other move is worth less, so with
    # any margin the capture (a win) stays the only choice
    s = from_fen("8/8/8/8/8/8/Lc6 0 0 9 - -", DARK)
    wide = Searcher(DARK, 0, SearchConfig(depth=3, margin=1e9))
    assert {wide.search(s, np.random.default_rng(i)).action for i in range(5)} == {
        parse_action(s, "a1xb1")
    }
    # a near-tie: the approaching move is chosen among moves within the margin
    s2 = from_fen("8/8/8/8/8/8/L6c 0 0 9 - -", DARK)
    exact = Searcher(DARK, 0, SearchConfig(depth=2, margin=0.0, tiebreak="approach"))
    assert exact.search(s2, np.random.default_rng(0)).action == parse_action(s2, "a1-b1")
    with pytest.raises(ValueError, match="margin must be >= 0"):
        SearchConfig(margin=-1.0)
