"""The AlphaZero agent as a player: an ``mctx`` search with the JAX core as the model
(:mod:`jungle_train.azero.search`), guided by a network or the hand-made value.

Unlike the DQN, tabular and approximate Q agents (numpy only), this agent runs JAX: its
construction compiles the search for one game (about 5–20 s on a CPU, once per process
and per configuration) and plays a warm-up search, so that no decision pays for the
compilation.

What guides the search (:attr:`AZeroSettings.prior`):

- ``"azero"``: an AlphaZero checkpoint of :mod:`jungle_train.azero` (policy, value and
  afterstate heads), its values mixed with the hand-made value by the checkpoint's
  weight. ``path`` names it; without one the shipped ``jungle_train/checkpoints/azero.npz``
  (``azero_classic.npz`` for CLASSIC) is used, and none ships yet: the network trained
  from its own search did not beat random (docs/training.md).
- ``"dqn"`` (DARK): a DQN checkpoint of :mod:`jungle_train.dqn` (the shipped ``dqn.npz``
  without ``path``): its action values are the prior, and the leaf values the hand-made
  value (:func:`jungle_train.azero.search.dqn_prior_evaluation`). The DQN knows which
  moves matter (it takes and converts, and does not walk into a bigger piece), which the
  AlphaZero prior trained here did not learn; the search supplies the tactics.
- ``"hand"``: no network: the hand-made value (DARK's, or CLASSIC's piece-square
  evaluation) and a uniform prior (DARK) or each move's change of that evaluation as the
  prior's logits (CLASSIC; :func:`jungle_train.azero.search.hand_evaluation`): the
  search's baseline, and on CLASSIC, where no checkpoint ships, what plays.
- ``""``: the kind of the checkpoint ``path`` names; without a path the shipped
  AlphaZero checkpoint where one exists, else DARK's shipped DQN (:func:`default_prior`),
  else (CLASSIC) ``"hand"``. So ``make_agent("azero", DARK)`` plays the DQN-guided search
  from the shipped files, ``make_agent("azero", CLASSIC)`` the hand-guided one.

The settings are :class:`~jungle_train._azero_settings.AZeroSettings`' fields; the
strongest measured (docs/results.md) is
``endgame=4,dead_draw=0.1,draw_bounds=1,face_down_simulations=4096``. The search plays the
most visited action (DARK) or Gumbel MuZero's choice without noise (CLASSIC), with the
root's randomness drawn from the game's generator; where the endgame tables hold the
position, they decide among the actions (:meth:`AZeroAgent.act`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from time import perf_counter
from typing import Any

import flax.traverse_util
import jax
import jax.numpy as jnp
import numpy as np

from jungle_agents.endgame import EndgameTables, supported
from jungle_core import Rules, State, legal_action_mask, legal_actions, new_game, outcome, step
from jungle_core.jax_env import JaxState, make
from jungle_train._azero_settings import AZeroSettings
from jungle_train.azero._guides import (
    RULES,
    build_network,
    compiled_search,
    default_prior,
    load_dqn,
    shipped_azero,
)
from jungle_train.azero._hand_value import classic_piece_squares, classic_targets
from jungle_train.azero._net import PolicyValueNetwork, planes_shape
from jungle_train.azero.search import SearchConfig
from jungle_train.common import CheckpointError, load_checkpoint
from jungle_train.players import shipped_checkpoint

__all__ = ["AZeroAgent", "AZeroSettings", "calibration_position", "params_from_arrays"]

Search = Callable[[Any, jax.Array, JaxState], tuple[jax.Array, jax.Array]]
"""A compiled search: ``(params, key, state[1]) -> (action int32[1], weights float32[1, A])``."""


class AZeroAgent:
    """Plays the action of an ``mctx`` search guided by an AlphaZero checkpoint, a DQN
    checkpoint or the hand-made value, as ``settings`` say (``changes``: fields of
    :class:`AZeroSettings` set on top of them).

    >>> import os, tempfile
    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> from jungle_train.common._checkpoint import save_checkpoint
    >>> from jungle_train.jitted._pytree_io import params_to_arrays
    >>> untrained = build_network(DARK, 4, 1).init(jax.random.key(0), jnp.zeros((1, 7, 8, 6)))
    >>> path = os.path.join(tempfile.mkdtemp(), "agent.npz")
    >>> config = {"rules": "dark", "channels": 4, "conv_layers": 1}
    >>> save_checkpoint(path, params_to_arrays(untrained), kind="azero", config=config, step=0)
    >>> agent = AZeroAgent(DARK, AZeroSettings(path=path, simulations=8))
    >>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    True
    """

    def __init__(self, rules: Rules, settings: AZeroSettings | None = None) -> None:
        settings = AZeroSettings() if settings is None else settings
        self.settings = settings
        """What this agent was built with."""
        self.rules = rules
        self.name = settings.name()
        # the same search on a narrower tree: the legal actions in slots
        face_up = SearchConfig(
            simulations=settings.simulations,
            dead_draw=settings.dead_draw,
            draw_bounds=settings.draw_bounds,
            slots=True,
        )
        face_up.check_rules(rules)  # before any checkpoint is read
        endgame = settings.endgame
        self._endgame = EndgameTables(endgame) if endgame and supported(rules) else None
        path = settings.path
        prior = settings.prior or default_prior(rules, path)
        self.prior = prior
        self._env = make(rules)
        if prior == "dqn":
            self._init_dqn(path or shipped_checkpoint("dqn"))
        elif prior == "hand":
            self._init_hand()
        else:
            self._init_azero(path or shipped_azero(rules))
        self._prior_mix = float(self.config.get("prior_mix", 0.0))
        self._afterstate = str(
            self.config.get("afterstate", "head" if prior == "azero" else "parent")
        )
        self.simulations = settings.simulations
        self._search = self._compile(face_up)
        if settings.time > 0:
            self.simulations = self._calibrate(settings.time)
            face_up = replace(face_up, simulations=self.simulations)
            self._search = self._compile(face_up)
        self.face_down_simulations = settings.face_down_simulations or self.simulations
        """Simulations of the decisions taken while some piece is face down."""
        face_down = replace(face_up, simulations=self.face_down_simulations)
        self._search_face_down = self._search if face_down == face_up else self._compile(face_down)
        """The search of the decisions taken while some piece is face down."""

    def _init_azero(self, source: str) -> None:
        """Read an AlphaZero checkpoint: its network guides the search."""
        ckpt = load_checkpoint(source, kind="azero")
        config = dict(ckpt.config)
        trained = RULES.get(str(config.get("rules")))
        if trained != self.rules:
            raise CheckpointError(
                f"{source}: a checkpoint for {config.get('rules')!r}, not for {self.rules.name}"
            )
        self.config = config
        self.step = ckpt.step
        try:
            channels, layers = int(config["channels"]), int(config["conv_layers"])
            network = build_network(self.rules, channels, layers)
            network_params = params_from_arrays(ckpt.arrays, network, self.rules, source)
            weight = float(list(config.get("heuristic_prior", [0.0, 0.0]))[-1])
        except (KeyError, ValueError, TypeError) as error:
            raise CheckpointError(
                f"{source}: the network does not fit its config ({error})"
            ) from None
        self.params: Any = (network_params, jnp.float32(weight))
        """The search's parameters: the network's and the weight of the hand-made value."""
        self._model: tuple[Any, ...] = ("azero", channels, layers)
        self._depth = int(config.get("max_depth", 0))
        self._considered = int(config.get("max_considered", 16))

    def _init_hand(self) -> None:
        """No checkpoint: the hand-made prior and value."""
        self.config = {}
        self.step = 0
        if self.rules.is_dark:
            self.params = (jnp.zeros(()), jnp.zeros((), jnp.int32))
        else:
            pst = jnp.asarray(classic_piece_squares(self.rules), jnp.float32)
            self.params = (pst, jnp.asarray(classic_targets(self.rules)))
        self._model = ("hand",)
        self._depth = 0
        # every legal root action: with equal prior logits (DARK; CLASSIC's quiet moves
        # far from the dens) and no Gumbel noise (play), the top 16 would be the 16
        # lowest action indices, a corner of the board
        self._considered = self._env.num_actions

    def _init_dqn(self, source: str) -> None:
        """Read a DQN checkpoint: its action values are the search's prior, the
        hand-made value its leaf values."""
        if not self.rules.is_dark:
            raise ValueError(f"a DQN prior plays DARK rules only, not {self.rules.name}")
        dqn_config, q_params, self.step = load_dqn(source)
        self.config = {}
        # the prior at tau 1; the leaf values the hand-made value's alone (weight 1)
        self.params = (q_params, jnp.float32(1.0), jnp.float32(1.0))
        self._model = ("dqn", dqn_config)
        self._depth = 0
        self._considered = 16

    def _compile(self, config: SearchConfig) -> Search:
        """The jitted search of ``config`` with this agent's model, compiled now."""
        search_config = replace(
            config,
            max_depth=self._depth,
            max_considered=self._considered,
            prior_mix=self._prior_mix,
            afterstate=self._afterstate,
        )
        search = compiled_search(self.rules, self._model, search_config)
        start = self._batch(new_game(self.rules))
        search(self.params, jax.random.key(0), start)[0].block_until_ready()  # compile now
        return search

    def _calibrate(self, seconds: float) -> int:
        """Simulations that take about ``seconds`` here, from a timed search of a
        middlegame (:func:`calibration_position`; the start, all face down, searches
        several times faster than a game's later positions), rounded down to a power of
        two, at least 8."""
        position = self._batch(calibration_position(self.rules))
        self._search(self.params, jax.random.key(1), position)[0].block_until_ready()
        begin = perf_counter()
        self._search(self.params, jax.random.key(2), position)[0].block_until_ready()
        per_simulation = (perf_counter() - begin) / self.simulations
        fits = max(8, int(seconds / max(per_simulation, 1e-9)))
        return 1 << (fits.bit_length() - 1)

    def _batch(self, state: State) -> JaxState:
        one: JaxState = jax.tree.map(lambda x: x[None], self._env.from_state(state))
        return one

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The search's action (a legal one) for the player to move in ``state``.

        Where the endgame tables cover ``state`` (every piece face up, at most
        ``endgame`` pieces; :mod:`jungle_agents.endgame`) the action is one that keeps
        the exact value: a fastest win outright, else the search's choice among the
        drawing (or slowest losing) actions, by its visit weights."""
        best = self._endgame.best_actions(state) if self._endgame is not None else None
        if best is not None and len(best) == 1:
            return best[0]
        key = jax.random.key(int(rng.integers(2**62)))
        search = self._search_face_down if state.face_down_mask else self._search
        chosen, weights = search(self.params, key, self._batch(state))
        action = int(chosen[0])
        if best is not None and action not in best:
            policy = np.asarray(weights[0])
            action = max(best, key=lambda a: (policy[a], -a))
        legal = legal_action_mask(state)
        if not (0 <= action < legal.shape[0] and legal[action]):  # never seen; a guard
            action = int(np.flatnonzero(legal)[0])
        return action


def calibration_position(rules: Rules, plies: int = 60, seed: int = 0) -> State:
    """A fixed middlegame: ``plies`` of seeded random play from the start (a new game
    where one ends); the position the ``time`` parameter's timed search runs on.

    >>> from jungle_core import DARK, outcome
    >>> position = calibration_position(DARK)
    >>> outcome(position) is None, position == calibration_position(DARK)
    (True, True)
    """
    rng = np.random.default_rng(seed)
    state = new_game(rules, seed=seed)
    for _ in range(plies):
        if outcome(state) is not None:
            state = new_game(rules, seed=int(rng.integers(2**31)))
        actions = legal_actions(state)
        state = step(state, actions[int(rng.integers(len(actions)))], rng)
    return state if outcome(state) is None else new_game(rules, seed=seed)


def params_from_arrays(arrays: Any, network: PolicyValueNetwork, rules: Rules, where: str) -> Any:
    """The network parameters from a checkpoint's ``params/...`` arrays, checked
    against the network's own shapes (``where`` names the file in errors).

    >>> from jungle_core import DARK
    >>> from jungle_train.jitted._pytree_io import params_to_arrays
    >>> network = build_network(DARK, 4, 1)
    >>> params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(DARK))))
    >>> back = params_from_arrays(params_to_arrays(params), network, DARK, "agent.npz")
    >>> jax.tree.all(jax.tree.map(lambda a, b: bool((a == b).all()), params, back))
    True
    """
    flat = {}
    for name, value in arrays.items():
        parts = tuple(name.split("/"))
        if len(parts) < 3 or parts[0] != "params":
            raise CheckpointError(f"{where}: unexpected array {name!r} in an azero checkpoint")
        flat[parts] = jnp.asarray(value, jnp.float32)
    params = flax.traverse_util.unflatten_dict(flat)  # type: ignore[no-untyped-call]
    template = jax.eval_shape(network.init, jax.random.key(0), jnp.zeros((1, *planes_shape(rules))))
    want = jax.tree.map(lambda x: x.shape, template)
    got = jax.tree.map(lambda x: x.shape, params)
    if want != got:
        raise ValueError("parameter shapes differ from the config's network")
    return params
