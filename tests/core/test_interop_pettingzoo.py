"""The PettingZoo adapter: PettingZoo's own api_test and seed_test, and the AEC semantics."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import gymnasium
from pettingzoo.test import api_test, seed_test

from jungle_core import (
    DARK_STRICT,
    IllegalActionError,
    from_fen,
    legal_action_mask,
    observation,
    render,
)
from jungle_core.interop.pettingzoo import JungleAECEnv, env, raw_env

RULES = ["dark", "classic"]


# What api_test warns about by design: it expects a Box observation unless the env is one
# of PettingZoo's own dict-observation games (it checks by name); an action mask is all zeros
# when it is not the agent's turn or the game is over; and a DARK observation is all zeros
# when the board is empty (the last two pieces removed together: a draw), which api_test's
# unseeded random play reaches now and then.
EXPECTED_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be",
    "Action mask numpy array is all zeros",
    "Observation numpy array is all zeros",
)


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_api_test(rules: str) -> None:
    e = env(rules, render_mode="ansi")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(e, num_cycles=1000)
    unexpected = {str(w.message) for w in caught} - {
        str(w.message) for w in caught if str(w.message).startswith(EXPECTED_WARNINGS)
    }
    assert not unexpected


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_seed_test(rules: str) -> None:
    seed_test(lambda: env(rules), num_cycles=200)


def play_out(e: Any, rng: np.random.Generator) -> dict[str, float]:
    """Play masked random actions to the end; the final cumulative reward of each agent."""
    final: dict[str, float] = {}
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        if terminated or truncated:
            final[agent] = reward
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))
    return final


def test_observation_is_the_spec_tensor_with_the_legal_action_mask() -> None:
    e = raw_env("dark")
    e.reset(seed=1)
    e.step(3)  # ?d1, a chance event drawn from the env's generator
    state = e.jungle_state
    assert state.board[3] != 17 and e.agent_selection == "player_1"
    mover = e.observe("player_1")
    np.testing.assert_array_equal(mover["observation"], observation(state))
    assert mover["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(mover["action_mask"], legal_action_mask(state).astype(np.int8))
    waiting = e.observe("player_0")
    assert not waiting["action_mask"].any()
    np.testing.assert_array_equal(waiting["observation"][..., 4], observation(state)[..., 5])
    assert e.observation_space("player_0").contains(waiting)


def test_same_seed_same_game_other_seed_other_draws() -> None:
    def reveals(seed: int) -> tuple[int, ...]:
        e = raw_env("dark")
        e.reset(seed=seed)
        for sq in range(8):
            e.step(sq)  # ?a1 .. ?h1, alternating players
        return e.jungle_state.board[:8]

    assert reveals(7) == reveals(7)
    assert len({reveals(seed) for seed in range(6)}) > 1


@pytest.mark.parametrize("rules", RULES)
def test_game_end_rewards_are_zero_sum_and_agents_leave(rules: str) -> None:
    e = env(rules)
    e.reset(seed=3)
    final = play_out(e, np.random.default_rng(3))
    assert e.agents == []
    assert sorted(final) == ["player_0", "player_1"]
    assert final["player_0"] == -final["player_1"]
    assert final["player_0"] in (-1.0, 0.0, 1.0)


def test_a_win_pays_plus_one_and_minus_one() -> None:
    e = raw_env("dark")
    e.reset(seed=0)
    e._state = from_fen("8/8/8/8/8/8/E?6 0 0 0 - c")  # the Elephant takes the last piece
    e.step(56 + 0 * 4 + 3)  # a1xb1
    assert e.terminations == {"player_0": True, "player_1": True}
    assert e.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert e.truncations == {"player_0": False, "player_1": False}


def test_illegal_action_raises_bare_and_loses_wrapped() -> None:
    bare = raw_env("dark")
    bare.reset(seed=0)
    with pytest.raises(IllegalActionError):
        bare.step(56 + 3 * 4 + 1)  # d1-d2: d1 is face down
    with pytest.raises(ValueError, match="needs an action"):
        bare.step(None)
    wrapped = env("dark")
    wrapped.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.step(56 + 3 * 4 + 1)
    _, reward, terminated, _, _ = wrapped.last()
    assert terminated and wrapped.agent_selection == "player_0" and reward == -1.0


def test_ansi_render_and_other_rule_sets() -> None:
    e = raw_env(DARK_STRICT, render_mode="ansi")
    e.reset(seed=0)
    assert e.render() == render(e.jungle_state)
    assert str(e) == "jungle_dark_strict_v0"
    space = raw_env("classic").action_space("player_0")
    assert isinstance(space, gymnasium.spaces.Discrete) and space.n == 315
    quiet = JungleAECEnv("dark")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert quiet.render() is None
    with pytest.raises(ValueError, match="render_mode"):
        JungleAECEnv("dark", render_mode="human")
