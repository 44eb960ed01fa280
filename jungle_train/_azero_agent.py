"""The AlphaZero agent as a player: a checkpoint's network inside the ``mctx`` search,
the JAX core as the model (:mod:`jungle_train._azero_search`).

Unlike the DQN, tabular and approximate Q agents (numpy only), this agent runs JAX: its
construction compiles the search for one game (about 10–20 s on a CPU, once per process
and per simulation count) and plays a warm-up search, so that no decision pays for the
compilation. ``make_agent("azero:path=runs/azero/agent.npz", DARK)`` plays a checkpoint;
without ``path`` it looks for a shipped ``jungle_train/checkpoints/azero.npz``
(``azero_classic.npz`` for CLASSIC). None ships yet: the measured CPU run's agent did not
beat random (README), and one ships only once a checkpoint beats random clearly.

Parameters: ``simulations`` per decision, or ``time``: seconds per decision, which
sets the simulation count once, at construction, from a timed search (rounded down to a
power of two, at least 8), so the agent plays at about that speed on this machine;
``heuristic``: the weight of the hand-made value in the search's leaf values (-1: the
weight the checkpoint was trained to play with, its config's ``heuristic_prior[1]``);
``prior_mix`` and ``afterstate`` (-1 / empty: the checkpoint config's) as in
:class:`jungle_train._azero_search.SearchConfig`.
The search plays the most visited action (DARK) or Gumbel MuZero's choice without
noise (CLASSIC), with the root's randomness drawn from the game's generator.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from time import perf_counter
from typing import Any

import flax.traverse_util
import jax
import jax.numpy as jnp
import numpy as np

from jungle_core import CLASSIC, DARK, Rules, State, legal_action_mask, new_game
from jungle_core.jax_env import JaxState, make
from jungle_train._azero_net import PolicyValueNetwork, blended_evaluation, planes_shape
from jungle_train._azero_search import SearchConfig, make_search
from jungle_train._checkpoint import load_checkpoint
from jungle_train._errors import CheckpointError
from jungle_train._learned import SHIPPED

__all__ = ["RULES", "AZeroAgent", "build_network", "shipped_azero"]

RULES = {"dark": DARK, "classic": CLASSIC}
"""The rule sets an AlphaZero config may name."""

_SHIPPED = {"dark": "azero.npz", "classic": "azero_classic.npz"}
_MAKE = {"dark": "--config cpu", "classic": "--config classic-cpu"}


def build_network(rules: Rules, channels: int, conv_layers: int) -> PolicyValueNetwork:
    """The policy-value network for ``rules``' board.

    >>> from jungle_core import DARK
    >>> build_network(DARK, 8, 2).rows
    7
    """
    return PolicyValueNetwork(channels, conv_layers, rules.rows, rules.cols)


def shipped_azero(rules: Rules) -> str:
    """The shipped checkpoint for ``rules`` (DARK or CLASSIC); :class:`CheckpointError`
    saying which command makes it when it is missing.

    >>> from jungle_core import CLASSIC
    >>> shipped_azero(CLASSIC)
    Traceback (most recent call last):
    ...
    jungle_train._errors.CheckpointError: ...azero_classic.npz: no shipped AlphaZero ...
    """
    name = next((n for n, r in RULES.items() if r == rules), None)
    if name is None:
        raise CheckpointError(f"the AlphaZero agent plays DARK or CLASSIC, not {rules.name}")
    path = SHIPPED / _SHIPPED[name]
    if not path.exists():
        raise CheckpointError(
            f"{path}: no shipped AlphaZero checkpoint for {rules.name}; make one with "
            f"`jungle train azero {_MAKE[name]} --out DIR` and pass path=DIR/agent.npz"
        )
    return str(path)


@functools.cache
def _searcher(
    rules: Rules, channels: int, conv_layers: int, config: SearchConfig
) -> Callable[[Any, jax.Array, JaxState], jax.Array]:
    """A jitted ``(params, key, state[1]) -> int32[1]`` search, one per configuration
    in a process (so agents of several checkpoints share the compiled code)."""
    env = make(rules)
    network = build_network(rules, channels, conv_layers)
    search = make_search(env, functools.partial(blended_evaluation, env, network), config)

    def act(params: Any, key: jax.Array, states: JaxState) -> jax.Array:
        action: jax.Array = search(params, key, states).action
        return action

    return jax.jit(act)


class AZeroAgent:
    """Plays the action of an ``mctx`` search guided by an AlphaZero checkpoint.

    >>> import os, tempfile
    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> from jungle_train._checkpoint import save_checkpoint
    >>> from jungle_train._pytree_io import params_to_arrays
    >>> untrained = build_network(DARK, 4, 1).init(jax.random.key(0), jnp.zeros((1, 7, 8, 6)))
    >>> path = os.path.join(tempfile.mkdtemp(), "agent.npz")
    >>> config = {"rules": "dark", "channels": 4, "conv_layers": 1}
    >>> save_checkpoint(path, params_to_arrays(untrained), kind="azero", config=config, step=0)
    >>> agent = AZeroAgent(DARK, path, simulations=8)
    >>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    True
    """

    def __init__(
        self,
        rules: Rules,
        path: str = "",
        simulations: int = 128,
        time: float = 0.0,
        heuristic: float = -1.0,
        prior_mix: float = -1.0,
        afterstate: str = "",
    ) -> None:
        if heuristic > 1.0:
            raise ValueError(
                f"heuristic must be in [0, 1] (or -1: the checkpoint's), not {heuristic}"
            )
        if simulations < 1:
            raise ValueError(f"simulations must be >= 1, not {simulations}")
        if time < 0:
            raise ValueError(f"time must be >= 0, not {time}")
        source = path or shipped_azero(rules)
        ckpt = load_checkpoint(source, kind="azero")
        config = dict(ckpt.config)
        trained = RULES.get(str(config.get("rules")))
        if trained != rules:
            raise CheckpointError(
                f"{source}: a checkpoint for {config.get('rules')!r}, not for {rules.name}"
            )
        self.rules = rules
        self.config = config
        self.step = ckpt.step
        self._env = make(rules)
        try:
            channels, layers = int(config["channels"]), int(config["conv_layers"])
            self._network = build_network(rules, channels, layers)
            network_params = _params_from_arrays(ckpt.arrays, self._network, rules, source)
            weight = float(list(config.get("heuristic_prior", [0.0, 0.0]))[-1])
            weight = weight if heuristic < 0 else heuristic
        except (KeyError, ValueError, TypeError) as error:
            raise CheckpointError(
                f"{source}: the network does not fit its config ({error})"
            ) from None
        self.params = (network_params, jnp.float32(weight))
        """The search's parameters: the network's and the material weight it plays with."""
        self._arch = (channels, layers)
        self._depth = int(config.get("max_depth", 0))
        self._considered = int(config.get("max_considered", 16))
        self._prior_mix = float(config.get("prior_mix", 0.0)) if prior_mix < 0 else prior_mix
        self._afterstate = afterstate or str(config.get("afterstate", "head"))
        self.simulations = simulations
        self._search = self._compile(simulations)
        if time > 0:
            self.simulations = self._calibrate(time)
            self._search = self._compile(self.simulations)
        label = f"path={path}" if path else ""
        label += ("," if label else "") + (
            f"time={time:g}" if time > 0 else f"simulations={simulations}"
        )
        label += f",heuristic={heuristic:g}" if heuristic >= 0 else ""
        label += f",prior_mix={prior_mix:g}" if prior_mix >= 0 else ""
        label += f",afterstate={afterstate}" if afterstate else ""
        self.name = f"azero:{label}"

    def _compile(self, simulations: int) -> Callable[[Any, jax.Array, JaxState], jax.Array]:
        search_config = SearchConfig(
            simulations=simulations,
            max_depth=self._depth,
            max_considered=self._considered,
            prior_mix=self._prior_mix,
            afterstate=self._afterstate,
        )
        search = _searcher(self.rules, *self._arch, search_config)
        start = self._batch(new_game(self.rules))
        search(self.params, jax.random.key(0), start).block_until_ready()  # compile now
        return search

    def _calibrate(self, seconds: float) -> int:
        """Simulations that take about ``seconds`` here, from a timed search of the start
        (a power of two, at least 8)."""
        start = self._batch(new_game(self.rules))
        begin = perf_counter()
        self._search(self.params, jax.random.key(1), start).block_until_ready()
        per_simulation = (perf_counter() - begin) / self.simulations
        fits = max(8, int(seconds / max(per_simulation, 1e-9)))
        return 1 << (fits.bit_length() - 1)

    def _batch(self, state: State) -> JaxState:
        one: JaxState = jax.tree.map(lambda x: x[None], self._env.from_state(state))
        return one

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The search's action (a legal one) for the player to move in ``state``."""
        key = jax.random.key(int(rng.integers(2**62)))
        action = int(self._search(self.params, key, self._batch(state))[0])
        legal = legal_action_mask(state)
        if not (0 <= action < legal.shape[0] and legal[action]):  # never seen; a guard
            action = int(np.flatnonzero(legal)[0])
        return action


def _params_from_arrays(arrays: Any, network: PolicyValueNetwork, rules: Rules, where: str) -> Any:
    """The network parameters from a checkpoint's ``params/...`` arrays, checked
    against the network's own shapes."""
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
