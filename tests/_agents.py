"""Shared by the agents' tests: random positions of a rule variant, and the check that
an agent spec is refused for a given reason."""

from __future__ import annotations

import numpy as np
import pytest

from jungle_core import Rules, State, legal_actions, new_game, outcome, step


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


def assert_refused(spec: str, rules: Rules, text: str) -> None:
    """``make_agent(spec, rules)`` raises :class:`AgentSpecError` whose message, with the
    spec taken out, contains ``text`` (the spec names every knob it sets, so matching
    the whole message would pass whatever the reason said)."""
    from jungle_agents import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError) as raised:
        make_agent(spec, rules)
    assert text in str(raised.value).replace(spec, "")
