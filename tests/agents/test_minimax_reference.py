"""The Minimax search against references written from the definitions: every enhancement
(alpha-beta, ordering, transposition table, Star1, incremental evaluation) equals plain
expectiminimax, and quiescence, contempt and the horizon reply equal their definitions
(DARK and CLASSIC)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import attrs
import numpy as np
import pytest

from jungle_agents import WIN, ClassicEvaluator, DarkEvaluator, SearchConfig, Searcher
from jungle_core import CLASSIC, DARK, Rules, State, legal_actions, outcome, transitions
from tests._agents import positions

# ------------------------------------------------------------ the reference


def expectiminimax(
    state: State,
    depth: int,
    player: int,
    evaluate: object,
    draw: float = 0.0,
    leaf: Callable[[State], float] | None = None,
) -> float:
    """Plain expectiminimax straight from the definition, on the core's public API:
    the reference every enhanced search must equal (a draw scores ``draw``; an unfinished
    state at depth 0 scores ``leaf(state)``, by default its evaluation)."""
    result = outcome(state)
    if result is not None:
        if result.winner is None:
            return draw
        return WIN + depth if result.winner == player else -(WIN + depth)
    if depth == 0:
        return (leaf or evaluate)(state)  # type: ignore[operator, no-any-return]
    values = [
        sum(
            p * expectiminimax(child, depth - 1, player, evaluate, draw, leaf)
            for p, child in transitions(state, a)
        )
        for a in legal_actions(state)
    ]
    return max(values) if state.to_move == player else min(values)


def with_contempt(evaluate: object, contempt: float, rules: Rules) -> object:
    """``evaluate`` less the quiet plies' share of a draw scored ``-contempt``."""

    def evaluate_with_contempt(state: State) -> float:
        cost = contempt * state.plies_since_removal / rules.no_removal_limit
        return evaluate(state) - cost  # type: ignore[operator, no-any-return]

    return evaluate_with_contempt


def quiescence_reference(
    state: State, player: int, evaluate: object, qdepth: int, draw: float = 0.0
) -> float:
    """Stand-pat capture search straight from the definition (captures: moves onto an
    opposing face-up piece that remove it)."""
    from jungle_core._tables import BattleResult, tables

    result = outcome(state)
    if result is not None:
        if result.winner is None:
            return draw
        return WIN if result.winner == player else -WIN
    stand: float = evaluate(state)  # type: ignore[operator]
    if qdepth == 0:
        return stand
    t = tables(state.rules)
    n = state.rules.num_squares
    values = [stand]
    for a in legal_actions(state):
        if a < n:
            continue
        sq, d = divmod(a - n, 4)
        target = t.step[sq * 4 + d]
        if state.rules.is_dark:
            q = state.board[target]
            if not 0 < q < 17 or t.battle[state.board[sq] * 20 + q] not in (
                BattleResult.TAKE,
                BattleResult.BOTH,
            ):
                continue
        ((_, child),) = transitions(state, a)
        if not state.rules.is_dark and sum(1 for c in child.board if c) == sum(
            1 for c in state.board if c
        ):
            continue  # CLASSIC: a capture removes a piece
        values.append(quiescence_reference(child, player, evaluate, qdepth - 1, draw))
    return max(values) if state.to_move == player else min(values)


def expectiminimax_q(
    state: State, depth: int, player: int, evaluate: object, qdepth: int, draw: float = 0.0
) -> float:
    """Expectiminimax with the quiescence search at depth 0."""

    def quiesce(leaf: State) -> float:
        return quiescence_reference(leaf, player, evaluate, qdepth, draw)

    return expectiminimax(state, depth, player, evaluate, draw, quiesce)


# the plain scoring (a draw is 0, no answer at the horizon): the
# enhancements must leave the plain search's values unchanged
VARIANTS = [
    attrs.evolve(config, contempt=0.0, reply=False)
    for config in (
        SearchConfig(alphabeta=False, ordering=False, tt=False, star1=False),
        SearchConfig(alphabeta=True, ordering=False, tt=False, star1=False),
        SearchConfig(alphabeta=True, ordering=True, tt=False, star1=False),
        SearchConfig(alphabeta=True, ordering=False, tt=True, star1=False),
        SearchConfig(alphabeta=True, ordering=False, tt=False, star1=True),
        SearchConfig(alphabeta=True, ordering=True, tt=True, star1=True),
        SearchConfig(alphabeta=False, ordering=True, tt=True, star1=False),
    )
]


@pytest.mark.parametrize("depth", [1, 2])
def test_enhanced_search_equals_plain_expectiminimax_dark(depth: int) -> None:
    face_down = 16 if depth == 1 else 6
    for state in positions(DARK, 12, seed=10 + depth, max_face_down=face_down, plies=(2, 90)):
        for player in (0, 1):
            ev = DarkEvaluator(DARK, player)
            want = expectiminimax(state, depth, player, ev.evaluate)
            for config, incremental in itertools.product(VARIANTS, (True, False)):
                got = Searcher(DARK, player, config, incremental=incremental).value(state, depth)
                assert got == pytest.approx(want, abs=1e-6), (config, incremental, state)


def test_enhanced_search_equals_plain_expectiminimax_at_depth_3() -> None:
    for state in positions(DARK, 10, seed=21, max_face_down=2, plies=(30, 120)):
        player = state.to_move
        ev = DarkEvaluator(DARK, player)
        want = expectiminimax(state, 3, player, ev.evaluate)
        for config in VARIANTS[1:]:
            got = Searcher(DARK, player, config).value(state, 3)
            assert got == pytest.approx(want, abs=1e-6), (config, state)


def test_enhanced_search_equals_plain_minimax_classic() -> None:
    for i, state in enumerate(positions(CLASSIC, 10, seed=31, plies=(0, 80))):
        for player, depth in ((0, 2), (1, 3)) if i < 3 else ((i % 2, 2),):
            ev = ClassicEvaluator(CLASSIC, player)
            want = expectiminimax(state, depth, player, ev.evaluate)
            for config in VARIANTS:
                got = Searcher(CLASSIC, player, config).value(state, depth)
                assert got == pytest.approx(want, abs=1e-6), (config, state)


@pytest.mark.parametrize("rules", [DARK, CLASSIC], ids=lambda r: r.name)
def test_quiescence_equals_its_definition(rules: Rules) -> None:
    max_fd = 6
    for state in positions(rules, 8, seed=41, max_face_down=max_fd, plies=(10, 90)):
        player = state.to_move
        ev: DarkEvaluator | ClassicEvaluator = (
            DarkEvaluator(rules, player) if rules.is_dark else ClassicEvaluator(rules, player)
        )
        for depth in (1, 2):
            want = expectiminimax_q(state, depth, player, ev.evaluate, 3)
            for config in (VARIANTS[0], VARIANTS[-2]):
                cfg = SearchConfig(
                    alphabeta=config.alphabeta,
                    ordering=config.ordering,
                    tt=config.tt,
                    star1=config.star1,
                    quiescence=True,
                    qdepth=3,
                    contempt=0.0,
                )
                for incremental in (True, False):
                    got = Searcher(rules, player, cfg, incremental=incremental).value(state, depth)
                    assert got == pytest.approx(want, abs=1e-6), (cfg, incremental, state)


def near_the_draw(rules: Rules, count: int, seed: int, max_face_down: int) -> list[State]:
    """Random positions, each given a no-removal count that puts the rule's draw 1 to 3
    plies ahead, or anywhere before it."""
    rng = np.random.default_rng(seed)
    found = []
    for state in positions(rules, count, seed, max_face_down=max_face_down, plies=(4, 80)):
        gap = int(rng.integers(1, 4)) if rng.random() < 0.7 else int(rng.integers(4, 90))
        found.append(attrs.evolve(state, plies_since_removal=rules.no_removal_limit - gap))
    return found


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_contempt_equals_its_definition(depth: int) -> None:
    # a draw scores -contempt and each position carries contempt * quiet plies / limit:
    # every enhancement (the incremental frontier and Star1's bounds included) must give
    # the reference's value, close to the no-removal draw where it falls in the horizon
    contempt = 40.0
    max_fd = (16, 6, 2)[depth - 1]
    for state in near_the_draw(DARK, (10, 8, 6)[depth - 1], 60 + depth, max_fd):
        player = state.to_move
        ev = DarkEvaluator(DARK, player)
        evaluate = with_contempt(ev.evaluate, contempt, DARK)
        want = expectiminimax(state, depth, player, evaluate, -contempt)
        for config, incremental in itertools.product(VARIANTS, (True, False)):
            cfg = attrs.evolve(config, contempt=contempt)
            got = Searcher(DARK, player, cfg, incremental=incremental).value(state, depth)
            assert got == pytest.approx(want, abs=1e-6), (cfg, incremental, state)
        if depth <= 2:
            want_q = expectiminimax_q(state, depth, player, evaluate, 3, -contempt)
            cfg = SearchConfig(quiescence=True, qdepth=3, contempt=contempt)
            for incremental in (True, False):
                got = Searcher(DARK, player, cfg, incremental=incremental).value(state, depth)
                assert got == pytest.approx(want_q, abs=1e-6), (incremental, state)


def threatened(state: State, player: int) -> bool:
    """Whether one of ``player``'s face-up pieces can remove an adjacent face-up piece of
    the opponent (the opponent's battle would take it, or remove both)."""
    from jungle_core._tables import BattleResult, tables

    t = tables(state.rules)
    board = state.board
    for sq, c in enumerate(board):
        if 0 < c < 17 and (c - 1) >> 3 == player:
            for _, nb in t.neighbours[sq]:
                q = board[nb]
                removes = t.battle[c * 20 + q] in (BattleResult.TAKE, BattleResult.BOTH)
                if 0 < q < 17 and (q - 1) >> 3 != player and removes:
                    return True
    return False


def expectiminimax_reply(
    state: State, depth: int, player: int, evaluate: object, draw: float
) -> float:
    """Expectiminimax where, at depth 0 with no piece face down, an opponent to move with
    a piece under threat plays one more ply (its children evaluated as they stand)."""

    def answer(leaf: State) -> float:
        if leaf.face_down_mask or leaf.to_move == player or not threatened(leaf, player):
            return evaluate(leaf)  # type: ignore[operator, no-any-return]
        return expectiminimax(leaf, 1, player, evaluate, draw)

    return expectiminimax(state, depth, player, evaluate, draw, answer)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_reply_equals_its_definition(depth: int) -> None:
    # the opponent's answer at the horizon, with and without contempt, every enhancement
    # at most two face-down pieces: the last reveals lead into the answered endgame
    found = near_the_draw(DARK, (10, 8, 6)[depth - 1], 70 + depth, 2)
    for i, state in enumerate(found):
        contempt = 40.0 if i % 2 else 0.0
        for player in (0, 1):
            ev = DarkEvaluator(DARK, player)
            evaluate = with_contempt(ev.evaluate, contempt, DARK)
            want = expectiminimax_reply(state, depth, player, evaluate, -contempt)
            for config, incremental in itertools.product(VARIANTS, (True, False)):
                cfg = attrs.evolve(config, reply=True, contempt=contempt)
                got = Searcher(DARK, player, cfg, incremental=incremental).value(state, depth)
                assert got == pytest.approx(want, abs=1e-6), (cfg, incremental, state)
