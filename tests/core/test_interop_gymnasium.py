"""The Gymnasium adapter: gymnasium's env checker, registration, rewards, opponents."""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from jungle_agents import AgentSpecError  # noqa: E402
from jungle_agents.envs import JungleEnv as AgentsEnv  # noqa: E402
from jungle_agents.envs import resolve_opponent as resolve_spec  # noqa: E402
from jungle_core import (  # noqa: E402
    GameOverError,
    IllegalActionError,
    State,
    legal_action_mask,
    legal_actions,
    new_game,
    observation,
    render,
    to_fen,
)
from jungle_core.interop.gymnasium import (  # noqa: E402
    ENV_IDS,
    JungleEnv,
    resolve_opponent,
)

# Player 0's Cat on a1, player 1's Dog on c1 (DARK, nothing face down).
CAT_AND_DOG = "8/8/8/8/8/8/C1d5 0 0 0 - -"
A1_UP, A1_RIGHT = 56 + 0 * 4 + 1, 56 + 0 * 4 + 3  # a1-a2, a1-b1
C1_TAKES_B1 = 56 + 2 * 4 + 2  # c1xb1


def dog_takes_b1(state: State, rng: np.random.Generator) -> int:
    """A scripted opponent: take on b1 when it can, else the first legal action."""
    actions = legal_actions(state)
    return C1_TAKES_B1 if C1_TAKES_B1 in actions else actions[0]


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_gymnasium_check_env_on_the_registered_ids(env_id: str) -> None:
    env = gymnasium.make(env_id, render_mode="ansi")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
    assert env.unwrapped.rules.name == ENV_IDS[env_id].upper()


def test_make_imports_the_module_itself_and_passes_options() -> None:
    env = gymnasium.make("jungle_agents.envs:jungle/Classic-v0", player=1)
    obs, info = env.reset(seed=0)
    assert obs["observation"].shape == (9, 7, 22) and obs["action_mask"].shape == (315,)
    assert info["player"] == 1 and env.unwrapped.jungle_state.ply == 1  # the opponent opened
    assert gymnasium.spec("jungle/Dark-v0").max_episode_steps is None


def test_observation_is_the_spec_tensor_and_the_mask_the_legal_actions() -> None:
    env = JungleEnv("dark", player=0)
    obs, info = env.reset(seed=5)
    state = env.jungle_state
    assert state == new_game() and info == {"player": 0, "illegal_action": False}
    np.testing.assert_array_equal(obs["observation"], observation(state))
    assert obs["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(obs["action_mask"], legal_action_mask(state).astype(np.int8))
    obs, reward, terminated, truncated, _ = env.step(0)  # ?a1, then the opponent's reply
    state = env.jungle_state
    assert state.to_move == 0 and state.ply == 2 and reward == 0.0
    assert not terminated and not truncated
    np.testing.assert_array_equal(obs["observation"], observation(state))


@pytest.mark.parametrize(
    ("fen", "agent_action", "reward", "reason"),
    [
        ("8/8/8/8/8/8/E?6 0 0 0 - c", A1_RIGHT, 1.0, "elimination"),  # a1xb1 takes the last
        (CAT_AND_DOG, A1_RIGHT, -1.0, "elimination"),  # a1-b1, then the Dog takes it
        ("8/8/8/8/8/8/C1d5 0 99 99 - -", A1_UP, 0.0, "no_removal_limit"),  # the 100th quiet ply
    ],
)
def test_reward_is_the_game_result_for_the_agent(
    fen: str, agent_action: int, reward: float, reason: str
) -> None:
    env = JungleEnv("dark", opponent=dog_takes_b1, player=0)
    env.reset(seed=0, options={"fen": fen})
    _, got, terminated, truncated, info = env.step(agent_action)
    assert (got, terminated, truncated) == (reward, True, False)
    assert info["reason"] == reason
    assert info["winner"] == {1.0: 0, -1.0: 1, 0.0: -1}[reward]


def test_illegal_action_loses_by_default_or_raises() -> None:
    env = JungleEnv("dark", player=0)
    obs, _ = env.reset(seed=0)
    before = env.jungle_state
    for bad in (56 + 3 * 4 + 1, 999, -1):  # d1-d2 with d1 face down; off the action space
        env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(bad)
        assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
        assert env.jungle_state == before and not obs["action_mask"].any()
        with pytest.raises(GameOverError, match="reset"):
            env.step(0)
    strict = JungleEnv("dark", player=0, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="d1-d2"):
        strict.step(56 + 3 * 4 + 1)
    with pytest.raises(IllegalActionError, match="action 999"):
        strict.step(999)


def test_seat_is_fixed_or_drawn_from_the_seed() -> None:
    env = JungleEnv("classic", player=1)
    _, info = env.reset(seed=0)
    assert info["player"] == 1 and env.jungle_state.to_move == 1
    _, info = env.reset(seed=0, options={"player": 0})
    assert info["player"] == 0 and env.jungle_state.ply == 0
    drawn = JungleEnv("classic")
    seats = {drawn.reset(seed=seed)[1]["player"] for seed in range(12)}
    assert seats == {0, 1}
    assert drawn.reset(seed=3)[1]["player"] == drawn.reset(seed=3)[1]["player"]
    with pytest.raises(ValueError, match="player"):
        drawn.reset(options={"player": 2})


def play_episode(env: JungleEnv, seed: int) -> tuple[list[str], float]:
    """Masked random actions from ``seed`` to the end: the positions seen and the reward."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen, terminated, reward = [to_fen(env.jungle_state)], False, 0.0
    while not terminated:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward_now, terminated, truncated, _ = env.step(action)
        reward = float(reward_now)
        assert not truncated
        seen.append(to_fen(env.jungle_state))
    return seen, reward


@pytest.mark.parametrize("rules", ["dark", "classic"])
def test_episodes_end_with_a_result_and_replay_from_their_seed(rules: str) -> None:
    seen, reward = play_episode(JungleEnv(rules), seed=11)
    assert reward in (-1.0, 0.0, 1.0) and len(seen) > 2
    assert play_episode(JungleEnv(rules), seed=11) == (seen, reward)


def test_opponent_callable_object_and_spec_string() -> None:
    class FirstLegal:
        name = "first"

        def act(self, state: State, rng: np.random.Generator) -> int:
            return legal_actions(state)[0]

    for opponent in (FirstLegal(), FirstLegal().act):
        env = JungleEnv("dark", opponent=opponent, player=1)
        env.reset(seed=0)
        assert env.jungle_state.ply == 1 and env.jungle_state.board[0] != 17  # it played ?a1
    with pytest.raises(TypeError, match="opponent"):
        JungleEnv("dark", opponent=42)


def test_spec_strings_are_built_by_jungle_agents_make_agent() -> None:
    env = AgentsEnv("dark", opponent="greedy", player=1)
    env.reset(seed=0)
    assert env.jungle_state.ply == 1
    assert gymnasium.spec("jungle/Dark-v0").entry_point == "jungle_agents.envs:JungleEnv"
    with pytest.raises(AgentSpecError, match="no-such-agent"):
        AgentsEnv("dark", opponent="no-such-agent")
    rng = np.random.default_rng(0)
    assert resolve_spec(dog_takes_b1, new_game().rules) is dog_takes_b1
    assert resolve_spec("random", new_game().rules)(new_game(), rng) in legal_actions(new_game())


def test_the_core_env_knows_only_the_random_spec() -> None:
    """The core resolves policies and "random" itself and never imports the agents."""
    policy: Any = resolve_opponent("random", new_game().rules)
    rng = np.random.default_rng(0)
    assert policy(new_game(), rng) in legal_actions(new_game())
    with pytest.raises(ValueError, match=r"jungle_agents\.envs"):
        resolve_opponent("greedy", new_game().rules)
    with pytest.raises(ValueError, match=r"jungle_agents\.envs"):
        JungleEnv("dark", opponent="greedy")
    code = (
        "import sys, jungle_core.interop.gymnasium as g; g.JungleEnv('dark').reset(seed=0); "
        "sys.exit(any(m.startswith('jungle_agents') for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_ansi_render_and_bad_arguments() -> None:
    env = JungleEnv("dark", render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == render(env.jungle_state)
    with pytest.raises(ValueError, match="render_mode"):
        JungleEnv("dark", render_mode="human")
    with pytest.raises(ValueError, match="illegal_action"):
        JungleEnv("dark", illegal_action="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finished"):
        env.reset(options={"fen": "8/8/8/8/8/8/E7 1 0 9 - -"})
