"""Gymnasium environments against an agent of the registry (extra ``gymnasium``).

Importing this module registers ``jungle/Dark-v0`` (DARK rules) and ``jungle/Classic-v0``
(CLASSIC rules); ``gymnasium.make`` can also import it itself:

>>> import gymnasium
>>> env = gymnasium.make("jungle_agents.envs:jungle/Dark-v0",
...                      opponent="greedy", player=0, render_mode="ansi")
>>> obs, info = env.reset(seed=0)
>>> obs["observation"].shape, obs["action_mask"].shape, info["player"]
((7, 8, 6), (280,), 0)
>>> obs, reward, terminated, truncated, info = env.step(3)   # ?d1, then the reply
>>> reward, terminated, truncated
(0.0, False, False)

:class:`JungleEnv` is :class:`jungle_core.interop.gymnasium.JungleEnv` (observation,
actions, rewards, illegal actions and rendering are documented there) with one addition:
``opponent`` may be any agent spec of :func:`jungle_agents.make_agent` (``"greedy"``,
``"minimax:depth=3"``, a learned agent's ``"dqn"`` when :mod:`jungle_train` is
installed), besides a policy callable or an agent object. It lives here, not in the core,
because the core knows no agents (imports run one way: core, agents, training, CLI).
"""

from __future__ import annotations

import gymnasium

from jungle_agents._base import make_agent
from jungle_core import Rules
from jungle_core.interop.gymnasium import ENV_IDS, Opponent, OpponentPolicy
from jungle_core.interop.gymnasium import JungleEnv as _CoreEnv
from jungle_core.interop.gymnasium import resolve_opponent as _resolve_policy

__all__ = ["ENV_IDS", "JungleEnv", "resolve_opponent"]


def resolve_opponent(opponent: Opponent, rules: Rules) -> OpponentPolicy:
    """The policy ``(state, rng) -> action`` of an agent spec, an agent or a callable.

    A spec string is built with :func:`jungle_agents.make_agent` (an unknown spec raises
    its ``AgentSpecError``, a ``ValueError``).

    >>> import numpy as np
    >>> from jungle_core import DARK, new_game
    >>> policy = resolve_opponent("greedy", DARK)
    >>> policy(new_game(), np.random.default_rng(0)) < 56   # a reveal
    True
    """
    if isinstance(opponent, str):
        opponent = make_agent(opponent, rules)
    return _resolve_policy(opponent, rules)


class JungleEnv(_CoreEnv):  # type: ignore[misc, unused-ignore]
    """One seat of a game against an opponent given as a spec, an agent or a policy.

    >>> env = JungleEnv("classic", opponent="minimax:depth=1", player=1)
    >>> _ = env.reset(seed=0)
    >>> env.jungle_state.ply   # the opponent opened
    1
    """

    @staticmethod
    def resolve_opponent(opponent: Opponent, rules: Rules) -> OpponentPolicy:
        """Spec strings through :func:`jungle_agents.make_agent`, the rest as the core's."""
        return resolve_opponent(opponent, rules)


for _env_id, _rules_name in ENV_IDS.items():
    if _env_id not in gymnasium.registry:
        gymnasium.register(
            id=_env_id,
            entry_point="jungle_agents.envs:JungleEnv",
            kwargs={"rules": _rules_name},
        )
