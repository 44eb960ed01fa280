"""Tests of the agents: the spec registry, Random, Greedy (hand-computed positions), and
the Minimax search (every enhancement equals plain expectiminimax; forced wins)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import attrs
import numpy as np
import pytest

from jungle_agents import (
    WIN,
    AgentSpecError,
    ClassicEvaluator,
    DarkEvaluator,
    GreedyAgent,
    MinimaxAgent,
    Param,
    SearchConfig,
    Searcher,
    agent_kinds,
    classic_moves,
    greedy_heuristic,
    make_agent,
    register_agent,
)
from jungle_agents._base import _REGISTRY
from jungle_agents._classic_eval import classic_outcome
from jungle_core import (
    CLASSIC,
    DARK,
    DARK_STRICT,
    Rules,
    State,
    from_fen,
    legal_actions,
    new_game,
    outcome,
    parse_action,
    step,
    transitions,
)
from jungle_core.lowlevel import apply as _apply
from jungle_core.lowlevel import chance_mask as _chance_mask
from jungle_core.lowlevel import mask_outcomes as _mask_outcomes

# ---------------------------------------------------------------- positions


def random_position(rules: Rules, plies: int, rng: np.random.Generator) -> State:
    """The state after ``plies`` uniformly random actions (fewer if the game ends)."""
    state = new_game(rules, seed=int(rng.integers(1000)))
    for _ in range(plies):
        if outcome(state) is not None:
            break
        actions = legal_actions(state)
        state = step(state, actions[int(rng.integers(len(actions)))], rng)
    return state


def positions(
    rules: Rules, count: int, seed: int, *, max_face_down: int = 16, plies: tuple[int, int]
) -> list[State]:
    """``count`` unfinished random positions with at most ``max_face_down`` face-down
    pieces."""
    rng = np.random.default_rng(seed)
    found: list[State] = []
    while len(found) < count:
        s = random_position(rules, int(rng.integers(*plies)), rng)
        if outcome(s) is None and s.face_down_mask.bit_count() <= max_face_down:
            found.append(s)
    return found


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


# SPEC §7's scoring as written (a draw is 0, no answer at the horizon): the
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


# ------------------------------------------------------------------ registry


def test_registry_builds_every_builtin_kind() -> None:
    assert {"random", "greedy", "minimax"} <= set(agent_kinds())
    assert make_agent("random", DARK).name == "random"
    assert make_agent(" Greedy ", DARK).name == "greedy"
    agent = make_agent("minimax:depth=2,tt=0,quiescence=1,time=0.5", DARK)
    assert isinstance(agent, MinimaxAgent)
    assert agent.config == SearchConfig(depth=2, tt=False, quiescence=True, time=0.5)
    assert agent.name == "minimax:depth=2,tt=0,quiescence=1,time=0.5"
    weighted = make_agent("minimax:rank=5,taken=0", DARK)
    assert isinstance(weighted, MinimaxAgent) and weighted.weights is not None
    assert (weighted.weights.rank, weighted.weights.taken) == (5.0, 0.0)
    greedy = make_agent("greedy:opp_material=1", DARK)
    assert isinstance(greedy, GreedyAgent) and greedy.weights.opp_material == 1.0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("minmax", "unknown agent 'minmax' in spec 'minmax'; valid agents: "),
        ("greedy:depth=2", "greedy takes no parameter 'depth'"),
        ("minimax:depth=three", "minimax:depth='three' is not a valid int"),
        ("minimax:tt=maybe", "minimax:tt='maybe' is not a valid bool (write 0 or 1)"),
        ("minimax:depth", "'depth' in agent spec 'minimax:depth' is not key=value"),
        ("minimax:depth=2,depth=3", "parameter 'depth' is given twice"),
        ("minimax:depth=0", "depth must be 1..64"),
        ("minimax:tiebreak=best", "must be one of ['approach', 'random']"),
        (":depth=2", "has no agent name"),
    ],
)
def test_bad_specs_say_what_is_valid(spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec, DARK)
    assert message in str(info.value)
    if "unknown agent" in message:
        assert "greedy" in str(info.value) and "minimax" in str(info.value)
    if "no parameter" in message:
        assert "valid parameters: opp_material (float)" in str(info.value)


def test_later_agents_register_into_the_same_factory() -> None:
    class First:
        def __init__(self, rules: Rules, offset: int) -> None:
            self.name = f"first:offset={offset}"
            self.offset = offset

        def act(self, state: State, rng: np.random.Generator) -> int:
            return legal_actions(state)[self.offset]

    register_agent("first", First, {"offset": Param(int, 0, "which legal action")}, "test")
    try:
        agent = make_agent("first:offset=1", DARK)
        assert agent.act(new_game(), np.random.default_rng(0)) == legal_actions(new_game())[1]
        with pytest.raises(ValueError, match="already registered"):
            register_agent("first", First)
        with pytest.raises(ValueError, match="must be non-empty"):
            register_agent("bad:name", First)
    finally:
        _REGISTRY.pop("first", None)


# ------------------------------------------------------------- legal actions

AGENT_SPECS = [
    "random",
    "greedy",
    "minimax:depth=1",
    "minimax:depth=2",
    "minimax:depth=2,alphabeta=0,tt=0,ordering=0,star1=0",
    "minimax:depth=2,quiescence=1,qdepth=2",
    "minimax:depth=4,time=0.02",
    "minimax:depth=2,tiebreak=random",
]


@pytest.mark.parametrize("rules", [DARK, DARK_STRICT, CLASSIC], ids=lambda r: r.name)
def test_agents_only_return_legal_actions(rules: Rules) -> None:
    rng = np.random.default_rng(1)
    states = positions(rules, 6, seed=3, plies=(0, 120))
    for spec in AGENT_SPECS:
        agent = make_agent(spec, rules)
        for state in states:
            action = agent.act(state, rng)
            assert action in legal_actions(state), (spec, state)


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


# --------------------------------------------------------------------- Minimax


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
    # no-removal draw, SPEC's scoring (a draw is 0, above the evaluation here) walks into
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
