"""The engine protocol's text under Hypothesis: the interchange FEN and 4-character moves
round-trip, every malformed field gets a typed error, and no line sent to a served agent
crashes it or leaves it silent.
"""

from __future__ import annotations

import threading

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

import jungle_core as jc
from jungle_agents.engine import EngineServer


def _game(rules: jc.Rules, seed: int, plies: int) -> jc.State:
    """The position after ``plies`` random plies from the start (fewer if it ends)."""
    rng = np.random.default_rng(seed)
    state = jc.new_game(rules, seed=seed)
    for _ in range(plies):
        if jc.outcome(state) is not None:
            break
        actions = jc.legal_actions(state)
        state = jc.step(state, actions[rng.integers(len(actions))], rng)
    return state


seeds = st.integers(0, 2**32 - 1)
plies = st.integers(0, 120)


@given(seeds, plies)
def test_the_interchange_fen_round_trips(seed: int, n: int) -> None:
    state = _game(jc.CLASSIC, seed, n)
    text = jc.to_interchange_fen(state)
    back = jc.from_interchange_fen(text)
    assert jc.to_interchange_fen(back) == text
    # the same position: board, side, counters (a FEN does not keep the history)
    assert jc.to_fen(back) == jc.to_fen(state)
    assert back.ply == state.ply and back.plies_since_removal == state.plies_since_removal


@given(st.sampled_from([jc.CLASSIC, jc.DARK]), seeds, plies)
def test_every_legal_move_round_trips_through_its_text(rules: jc.Rules, seed: int, n: int) -> None:
    state = _game(rules, seed, n)
    assume(jc.outcome(state) is None)  # a finished game has no move to play
    for action in jc.legal_actions(state):
        for outcome, _ in jc.chance_outcomes(state, action):
            text = jc.move_text(state, action, outcome)
            assert jc.parse_move(state, text) == (action, None if outcome < 0 else outcome)
            assert jc.apply_move(state, text) == jc.step_outcome(state, action, outcome)


START = ["l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/1C3D1/T5L", "w", "-", "-", "0", "1"]


@given(st.integers(0, 5), st.text(max_size=30))
def test_a_malformed_interchange_field_gets_a_typed_error(field: int, junk: str) -> None:
    fields = list(START)
    fields[field] = junk
    text = " ".join(fields)
    try:
        state = jc.from_interchange_fen(text)
    except jc.JungleError:
        return  # NotationError or InvalidPositionError, naming the field
    # what parses is a position that writes back to itself
    assert jc.from_interchange_fen(jc.to_interchange_fen(state)) == state


_ANSWERS = ("id ", "option ", "jceiok", "uciok", "readyok", "info ", "bestmove ", "moves", "perft ")
_WORDS = [
    "jcei", "uci", "isready", "position", "startpos", "fen", "moves", "go", "depth", "movetime",
    "wtime", "btime", "winc", "binc", "movestogo", "infinite", "stop", "perft", "d", "setoption",
    "name", "value", "Rules", "JungleRng", "a3a4", "d1", "d1=E", "e1f1=c", "-1", "0", "1", "3",
    "99999999999999", "w", "b", "-", "l5t/1d3c1/r1p1w1e/7/7/7/E1W1P1R/1C3D1/T5L", "jceinewgame",
]  # fmt: skip
lines = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(_WORDS) | st.text(max_size=8), min_size=1, max_size=8).map(" ".join),
)


@given(st.sampled_from(["classic", "dark"]), st.lists(lines, min_size=1, max_size=12))
def test_no_line_crashes_a_served_agent_or_leaves_it_silent(rules: str, script: list[str]) -> None:
    out: list[str] = []
    server = EngineServer("random", jc.rules_by_name(rules), out.append)
    for line in [*script, "stop", "isready"]:
        if not server.handle(line):
            break
    # a search in progress ends (a 'go infinite' after 'stop' or 'quit' too)
    server.handle("stop")
    waiter = threading.Thread(target=server.wait, daemon=True)
    waiter.start()
    waiter.join(30)
    assert not waiter.is_alive(), "the server did not finish its search"
    for line in out:
        assert line.startswith(_ANSWERS), line
    searches = [line for line in out if line.startswith("bestmove")]
    assert all(len(line.split()) == 2 for line in searches)
