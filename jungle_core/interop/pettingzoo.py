"""The game as a PettingZoo AEC (agent-environment-cycle) environment (extra ``interop``).

Two agents, ``"player_0"`` (moves first) and ``"player_1"``, take turns; the environment
follows the conventions of PettingZoo's classic board games (chess, connect four):

>>> import numpy as np
>>> from jungle_core.interop.pettingzoo import env
>>> e = env(rules="dark", render_mode="ansi")
>>> e.reset(seed=0)
>>> rng = np.random.default_rng(0)
>>> for agent in e.agent_iter():
...     obs, reward, terminated, truncated, info = e.last()
...     legal = np.flatnonzero(obs["action_mask"])
...     e.step(None if terminated or truncated else int(rng.choice(legal)))
>>> e.agents                              # both agents have left: the game is over
[]

- **Observation** of an agent: a dict ``{"observation": float32[rows, cols, C],
  "action_mask": int8[num_actions]}``. ``observation`` is the observation tensor as that agent
  sees it (:func:`jungle_core.interop.observation_for`: ``float32[7, 8, 6]`` for DARK,
  ``float32[9, 7, 22]`` for CLASSIC); ``action_mask`` is 1 exactly for the legal actions
  when it is that agent's turn, all zeros otherwise and once the game is over.
- **Action**: ``Discrete(num_actions)``, the core's action integers (280 DARK, 315 CLASSIC).
- **Chance**: an action that turns a piece face up draws the piece inside ``step`` from
  the environment's random generator, which ``reset(seed=...)`` seeds (the same seed
  replays the same game for the same actions).
- **Rewards**: 0 during the game; at the end +1 to the winner and -1 to the loser, 0 each
  for a draw. Every end of the rules (elimination, den, no legal action, the no-removal
  limit, the ply limit) is a *termination*; nothing is ever truncated.
- **Illegal actions**: the bare :class:`JungleAECEnv` (``raw_env``) raises
  :class:`jungle_core.IllegalActionError`. :func:`env` wraps it like PettingZoo's classic
  games: an illegal action ends the game, the offender gets -1 and the other agent 0
  (``TerminateIllegalWrapper``); out-of-range actions are asserted against and the
  ``reset``/``step`` order is enforced.
- ``render_mode="ansi"``: :meth:`JungleAECEnv.render` returns the ASCII board.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from jungle_core import (
    DARK,
    Rules,
    State,
    import_optional,
    legal_action_mask,
    new_game,
    observation_shape,
    outcome,
    render,
    step,
)
from jungle_core.interop._common import observation_for, resolve_rules

# Without PettingZoo or Gymnasium: MissingExtraError, naming the extra that installs them.
import_optional("pettingzoo", "the PettingZoo adapter (jungle_core.interop.pettingzoo)")
import_optional("gymnasium", "the PettingZoo adapter (jungle_core.interop.pettingzoo)")
import gymnasium  # noqa: E402
from gymnasium import spaces  # noqa: E402
from pettingzoo import AECEnv  # noqa: E402
from pettingzoo.utils import wrappers  # noqa: E402

__all__ = ["JungleAECEnv", "env", "raw_env"]

AGENTS = ("player_0", "player_1")


class JungleAECEnv(AECEnv):  # type: ignore[misc]
    """The bare AEC environment (see the module docstring); :func:`env` is the wrapped one.

    ``rules`` is a :class:`jungle_core.Rules` value or a preset name (``"dark"``,
    ``"dark_strict"``, ``"classic"``); ``render_mode`` is None or ``"ansi"``.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 - PettingZoo reads it as a class attribute
        "render_modes": ["ansi"],
        "name": "jungle_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, rules: Rules | str = DARK, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.rules = resolve_rules(rules)
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "name": f"jungle_{self.rules.name.lower()}_v0"}
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        shape = observation_shape(new_game(self.rules))
        n = self.rules.num_actions
        self._observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, shape, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (n,), dtype=np.int8),
                }
            )
            for agent in AGENTS
        }
        self._action_spaces = {agent: spaces.Discrete(n) for agent in AGENTS}
        self._rng = np.random.default_rng()
        self._state: State = new_game(self.rules)
        self._reset_bookkeeping()

    @property
    def jungle_state(self) -> State:
        """The core state of the game in progress."""
        return self._state

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The (cached) ``Dict`` space of ``agent``'s observations."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The (cached) ``Discrete(num_actions)`` space of ``agent``'s actions."""
        return self._action_spaces[agent]

    def _reset_bookkeeping(self) -> None:
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = AGENTS[self._state.to_move]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; ``seed`` (re)seeds the generator that draws face-down pieces."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        # The seed matters only for setup="scattered" (where the face-down pieces stand).
        self._state = new_game(self.rules, seed=int(self._rng.integers(2**63)))
        self._reset_bookkeeping()

    def observe(self, agent: str) -> dict[str, npt.NDArray[Any]]:
        """``agent``'s observation dict: its view of the board and its action mask."""
        state = self._state
        player = AGENTS.index(agent)
        if player == state.to_move and outcome(state) is None:
            mask = legal_action_mask(state).astype(np.int8)
        else:
            mask = np.zeros(self.rules.num_actions, dtype=np.int8)
        return {"observation": observation_for(state, player), "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Play ``action`` for the selected agent (``None`` once it is terminated)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is still playing: step() needs an action, not None")
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._state = step(self._state, int(action), self._rng)
        result = outcome(self._state)
        if result is not None:
            self.terminations = dict.fromkeys(self.agents, True)
            if result.winner is not None:
                self.rewards[AGENTS[result.winner]] = 1.0
                self.rewards[AGENTS[1 - result.winner]] = -1.0
        self._accumulate_rewards()
        self.agent_selection = AGENTS[self._state.to_move]

    def render(self) -> str | None:
        """The ASCII board (``render_mode="ansi"``); None, with a warning, without a mode."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        return render(self._state)

    def close(self) -> None:
        """Nothing to release."""


def raw_env(rules: Rules | str = DARK, render_mode: str | None = None) -> JungleAECEnv:
    """The bare environment: illegal actions raise :class:`jungle_core.IllegalActionError`.

    >>> raw_env("classic").rules.name
    'CLASSIC'
    """
    return JungleAECEnv(rules, render_mode)


def env(rules: Rules | str = DARK, render_mode: str | None = None) -> Any:
    """The environment wrapped like PettingZoo's classic games (see the module docstring).

    >>> e = env("dark", render_mode="ansi")
    >>> e.reset(seed=0)
    >>> e.agent_selection, int(e.action_space("player_0").n)
    ('player_0', 280)
    """
    wrapped: Any = wrappers.TerminateIllegalWrapper(raw_env(rules, render_mode), illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
