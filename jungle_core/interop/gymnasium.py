"""The game as a single-agent Gymnasium environment against an opponent (extra ``interop``).

The core knows no agents, so this environment takes its opponent as a policy: the
registered ``jungle/Dark-v0`` and ``jungle/Classic-v0`` live one layer up, in
:mod:`jungle_agents.envs`, whose subclass also accepts agent spec strings
(``opponent="greedy"``). Here:

>>> env = JungleEnv("dark", player=0, render_mode="ansi")   # the built-in random opponent
>>> obs, info = env.reset(seed=0)
>>> obs["observation"].shape, obs["action_mask"].shape, info["player"]
((7, 8, 6), (280,), 0)
>>> obs, reward, terminated, truncated, info = env.step(3)   # ?d1, then the reply
>>> reward, terminated, truncated
(0.0, False, False)

- **The agent** plays one seat (``player=0`` or ``1``; by default drawn at each reset from
  the environment's generator, and reported as ``info["player"]``). Each ``step`` plays the
  agent's action, then the opponent's replies until it is the agent's turn again or the
  game is over. Chance (which piece a reveal turns up) and the opponent's randomness are
  drawn from the environment's generator, seeded by ``reset(seed=...)``.
- **The opponent** is any of: a callable ``(state, rng) -> action``; an object with
  ``act(state, rng) -> action`` (the :mod:`jungle_agents` protocol); or ``"random"`` (the
  built-in uniform random opponent, the default). Other spec strings (``"greedy"``,
  ``"minimax:depth=3"``) need the agents: use :class:`jungle_agents.envs.JungleEnv`.
- **Observation**: ``{"observation": float32[rows, cols, C], "action_mask": int8[num_actions]}``:
  the observation tensor (:func:`jungle_core.observation`) for the player to move, who is
  the agent whenever it acts (DARK ``float32[7, 8, 6]``, channels 4/5 the agent's / the
  opponent's pieces; CLASSIC ``float32[9, 7, 22]``), and 1 exactly for the legal actions
  (all zeros once the game is over).
- **Action**: ``Discrete(num_actions)``, the core's action integers (280 DARK, 315 CLASSIC).
- **Reward**: 0 until the game ends, then the result for the agent: +1 win, -1 loss,
  0 draw. Every end of the rules is a termination; nothing is truncated (the rules bound the
  game: at most 1500 plies DARK, 300 CLASSIC).
- **Illegal action**: with ``illegal_action="lose"`` (the default, which random
  exploration and ``check_env`` need) it ends the episode as a loss: reward -1,
  ``terminated=True``, ``info["illegal_action"] = True``, the position unchanged. With
  ``illegal_action="raise"`` it raises :class:`jungle_core.IllegalActionError`.
- Calling ``step`` after the episode ended raises :class:`jungle_core.GameOverError`
  (call ``reset``).
- ``render_mode="ansi"``: ``render()`` returns the ASCII board.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, SupportsFloat

import numpy as np

from jungle_core import (
    DARK,
    GameOverError,
    IllegalActionError,
    Rules,
    State,
    describe_action,
    from_fen,
    import_optional,
    legal_action_mask,
    legal_actions,
    new_game,
    observation,
    observation_shape,
    outcome,
    render,
    step,
    to_fen,
)
from jungle_core.interop._common import resolve_rules

# Without Gymnasium: MissingExtraError, naming the extra that installs it.
import_optional("gymnasium", "the Gymnasium adapter (jungle_core.interop.gymnasium)")
import gymnasium  # noqa: E402
from gymnasium import spaces  # noqa: E402

__all__ = ["ENV_IDS", "JungleEnv", "Opponent", "OpponentPolicy", "resolve_opponent"]

OpponentPolicy = Callable[[State, np.random.Generator], int]
"""What an opponent comes down to: ``policy(state, rng) -> action``."""

Opponent = OpponentPolicy | str | Any
"""An opponent as the environment accepts it: a policy callable, an object with
``act(state, rng)``, or an agent spec string (see the module docstring)."""

ENV_IDS = {"jungle/Dark-v0": "dark", "jungle/Classic-v0": "classic"}
"""The environment ids :mod:`jungle_agents.envs` registers, and the rule set each plays."""

Observation = dict[str, Any]
"""``{"observation": float32[rows, cols, C], "action_mask": int8[num_actions]}``."""


def _random_policy(state: State, rng: np.random.Generator) -> int:
    """The built-in opponent: a uniformly random legal action."""
    actions = legal_actions(state)
    return actions[int(rng.integers(len(actions)))]


def resolve_opponent(opponent: Opponent, rules: Rules) -> OpponentPolicy:
    """The policy ``(state, rng) -> action`` an opponent description stands for.

    A policy callable is used as it is, an object's ``act`` method is its policy, and
    ``"random"`` is the built-in random policy. Any other string raises ``ValueError``:
    spec strings are resolved one layer up, by :func:`jungle_agents.envs.resolve_opponent`.

    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> policy = resolve_opponent(lambda state, rng: legal_actions(state)[0], DARK)
    >>> policy(new_game(), np.random.default_rng(0))
    0
    """
    if isinstance(opponent, str):
        if opponent.strip().lower() == "random":
            return _random_policy
        raise ValueError(
            f"opponent spec {opponent!r} needs the agents: use jungle_agents.envs.JungleEnv "
            "(or gymnasium.make('jungle/Dark-v0', ...)), or pass 'random', a callable "
            "(state, rng) -> action, or an agent"
        )
    act = getattr(opponent, "act", None)
    if callable(act):
        return act  # type: ignore[no-any-return]
    if callable(opponent):
        return opponent
    raise TypeError(
        "opponent must be an agent spec string, a callable (state, rng) -> action, or an "
        f"object with act(state, rng); got {opponent!r}"
    )


class JungleEnv(gymnasium.Env[Observation, np.int64]):  # type: ignore[misc, unused-ignore]
    """One seat of a game against an opponent (see the module docstring).

    Parameters: ``rules`` (a :class:`jungle_core.Rules` value or a preset name),
    ``opponent`` (default ``"random"``), ``player`` (0, 1, or None: drawn at each reset),
    ``illegal_action`` (``"lose"`` or ``"raise"``), ``render_mode`` (None or ``"ansi"``).
    ``reset(options=...)`` takes ``"player"`` (the agent's seat for that episode) and
    ``"fen"`` (start from a position string, :func:`jungle_core.from_fen`, instead of the
    start position).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        rules: Rules | str = DARK,
        opponent: Opponent = "random",
        player: int | None = None,
        illegal_action: Literal["lose", "raise"] = "lose",
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        if player not in (None, 0, 1):
            raise ValueError(f"player must be 0, 1 or None (drawn at reset), not {player!r}")
        if illegal_action not in ("lose", "raise"):
            raise ValueError(f"illegal_action must be 'lose' or 'raise', not {illegal_action!r}")
        self.rules = resolve_rules(rules)
        self.opponent = self.resolve_opponent(opponent, self.rules)
        self.player = player
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        n = self.rules.num_actions
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    0.0, 1.0, observation_shape(new_game(self.rules)), dtype=np.float32
                ),
                "action_mask": spaces.Box(0, 1, (n,), dtype=np.int8),
            }
        )
        self.action_space = spaces.Discrete(n)
        self._state: State = new_game(self.rules)
        self._seat = 0 if player is None else player
        self._done = False

    @staticmethod
    def resolve_opponent(opponent: Opponent, rules: Rules) -> OpponentPolicy:
        """How this environment turns its ``opponent`` argument into a policy (a subclass
        that knows more opponents overrides it)."""
        return resolve_opponent(opponent, rules)

    @property
    def jungle_state(self) -> State:
        """The core state of the game in progress."""
        return self._state

    def _observe(self) -> Observation:
        state = self._state
        if self._done:
            mask = np.zeros(self.rules.num_actions, dtype=np.int8)
        else:
            mask = legal_action_mask(state).astype(np.int8)
        return {"observation": observation(state), "action_mask": mask}

    def _info(self, illegal: bool = False) -> dict[str, Any]:
        info: dict[str, Any] = {"player": self._seat, "illegal_action": illegal}
        result = outcome(self._state)
        if result is not None:
            info["winner"] = -1 if result.winner is None else result.winner
            info["reason"] = result.reason.value
        return info

    def _opponent_replies(self) -> float:
        """Let the opponent move until the agent is to move; the agent's reward if it ends."""
        rng = self.np_random
        while True:
            result = outcome(self._state)
            if result is not None:
                self._done = True
                if result.winner is None:
                    return 0.0
                return 1.0 if result.winner == self._seat else -1.0
            if self._state.to_move == self._seat:
                return 0.0
            action = int(self.opponent(self._state, rng))
            self._state = step(self._state, action, rng)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start a new game; ``seed`` seeds the generator of chance and of the opponent."""
        super().reset(seed=seed)
        rng = self.np_random
        options = options or {}
        seat = options.get("player", self.player)
        if seat not in (None, 0, 1):
            raise ValueError(f"options['player'] must be 0, 1 or None, not {seat!r}")
        self._seat = int(rng.integers(2)) if seat is None else int(seat)
        # The seed matters only for setup="scattered" (where the face-down pieces stand).
        start = new_game(self.rules, seed=int(rng.integers(2**63)))
        fen = options.get("fen")
        self._state = start if fen is None else from_fen(fen, self.rules)
        if outcome(self._state) is not None:
            raise ValueError(f"options['fen'] is a finished game: {fen!r}")
        self._done = False
        self._opponent_replies()
        return self._observe(), self._info()

    def step(
        self, action: int | np.int64
    ) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play the agent's ``action`` and the opponent's replies (see the module docstring)."""
        if self._done:
            raise GameOverError(
                f"the episode is over in {to_fen(self._state)!r}; call reset() to start another"
            )
        action = int(action)
        if not (0 <= action < self.rules.num_actions and legal_action_mask(self._state)[action]):
            if self.illegal_action == "raise":
                raise IllegalActionError(
                    f"{describe_action(self._state, action)} is not legal in "
                    f"{to_fen(self._state)!r}"
                )
            self._done = True
            return self._observe(), -1.0, True, False, self._info(illegal=True)
        self._state = step(self._state, action, self.np_random)
        reward = self._opponent_replies()
        return self._observe(), reward, self._done, False, self._info()

    def render(self) -> str | None:  # type: ignore[override, unused-ignore]
        """The ASCII board (``render_mode="ansi"``); None, with a warning, without a mode."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        return render(self._state)
