"""What guides the AlphaZero agent's search, read and compiled: the network of an
AlphaZero checkpoint (:func:`build_network`), a DQN checkpoint as the prior
(:func:`load_dqn`, :func:`dqn_functions`, :func:`dqn_guide`), the shipped files and which
one plays by default (:func:`default_prior`, :func:`shipped_azero`), and the jitted
search of one configuration (:func:`compiled_search`, one per configuration in a
process). :class:`jungle_train.azero._agent.AZeroAgent` plays with them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jungle_core import CLASSIC, DARK, Rules
from jungle_core.jax_env import JaxEnv, JaxState, make
from jungle_train.azero._net import PolicyValueNetwork
from jungle_train.azero.search import (
    COMPILER_OPTIONS,
    SearchConfig,
    blended_evaluation,
    dqn_prior_evaluation,
    hand_evaluation,
    make_search,
)
from jungle_train.common import CheckpointError, config_from_mapping, load_checkpoint
from jungle_train.dqn import Config as DQNConfig
from jungle_train.dqn import make_network, observe
from jungle_train.players import SHIPPED, arrays_to_params, shipped_checkpoint

__all__ = [
    "RULES",
    "build_network",
    "compiled_search",
    "default_prior",
    "dqn_functions",
    "dqn_guide",
    "load_dqn",
    "shipped_azero",
]

RULES = {"dark": DARK, "classic": CLASSIC}
"""The rule sets an AlphaZero config may name."""

_SHIPPED = {"dark": "azero.npz", "classic": "azero_classic.npz"}
_MAKE = {
    "dark": "--config experiments/configs/azero-cpu.toml",
    "classic": "--config experiments/configs/azero-classic-cpu.toml",
}


def build_network(rules: Rules, channels: int, conv_layers: int) -> PolicyValueNetwork:
    """The policy-value network for ``rules``' board.

    >>> from jungle_core import DARK
    >>> build_network(DARK, 8, 2).rows
    7
    """
    return PolicyValueNetwork(channels, conv_layers, rules.rows, rules.cols)


def default_prior(rules: Rules, path: str) -> str:
    """What guides the search when ``prior`` is not given: the kind of the checkpoint
    ``path`` names; without a path, the shipped AlphaZero checkpoint where one exists,
    else the shipped DQN (DARK) or the hand-made value (CLASSIC).

    >>> from jungle_core import CLASSIC, DARK
    >>> default_prior(DARK, ""), default_prior(CLASSIC, "")
    ('dqn', 'hand')
    """
    if path:
        return "dqn" if load_checkpoint(path).kind == "dqn" else "azero"
    name = next((n for n, r in RULES.items() if r == rules), None)
    if name is not None and (SHIPPED / _SHIPPED[name]).exists():
        return "azero"
    if name is None:
        return "azero"  # shipped_azero names the rule sets it plays
    return "dqn" if rules.is_dark else "hand"


def load_dqn(source: str) -> tuple[DQNConfig, Any, int]:
    """A DQN checkpoint read for the JAX search: its config, its Q-network's parameters
    (``jax.Array`` leaves) and its step; :class:`CheckpointError` naming the file when it
    is not a usable DQN checkpoint."""
    ckpt = load_checkpoint(source, kind="dqn")
    try:
        config = config_from_mapping(DQNConfig, ckpt.config, source)
        params = jax.tree.map(jnp.asarray, arrays_to_params(ckpt.arrays, source, "DQN"))
    except (KeyError, ValueError, TypeError) as error:
        raise CheckpointError(f"{source}: not a usable DQN checkpoint ({error})") from None
    return config, params, ckpt.step


def dqn_functions(
    env: JaxEnv, config: DQNConfig
) -> tuple[Callable[[Any, jax.Array], jax.Array], Callable[[JaxState], jax.Array]]:
    """The DQN's ``q_network(params, obs[B, obs]) -> float32[B, A]`` and its
    ``observe(state) -> float32[obs]``, as :func:`dqn_prior_evaluation` takes them."""
    network = make_network(config)

    def q_network(params: Any, obs: jax.Array) -> jax.Array:
        return jnp.asarray(network.apply({"params": params}, obs))

    return q_network, functools.partial(observe, env, config)


def dqn_guide(env: JaxEnv, source: str = "") -> tuple[Callable[..., Any], Any]:
    """``(evaluate, params)``: a DQN checkpoint (``source``; the shipped ``dqn.npz``
    without one) as the search's evaluator, the prior at ``tau`` 1 and the leaf values
    the hand-made value's alone: what ``make_agent("azero", DARK)``
    searches with, for benchmarks and tests that call :func:`make_search` themselves.

    >>> from jungle_core.jax_env import make
    >>> evaluate, params = dqn_guide(make())
    >>> len(params)  # the Q-network's parameters, 1 / tau, the hand-made value's weight
    3
    """
    config, q_params, _ = load_dqn(source or shipped_checkpoint("dqn"))
    q_network, observe_one = dqn_functions(env, config)
    evaluate = functools.partial(
        dqn_prior_evaluation, env, q_network, observe_one, config.win_reward
    )
    return evaluate, (q_params, jnp.float32(1.0), jnp.float32(1.0))


def shipped_azero(rules: Rules) -> str:
    """The shipped checkpoint for ``rules`` (DARK or CLASSIC); :class:`CheckpointError`
    saying which command makes it when it is missing.

    >>> from jungle_core import CLASSIC
    >>> shipped_azero(CLASSIC)
    Traceback (most recent call last):
    ...
    jungle_train.common._errors.CheckpointError: ...azero_classic.npz: no shipped AlphaZero ...
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
def compiled_search(
    rules: Rules, model: tuple[Any, ...], config: SearchConfig
) -> Callable[[Any, jax.Array, JaxState], tuple[jax.Array, jax.Array]]:
    """A jitted ``(params, key, state[1]) -> (action int32[1], weights float32[1, A])``
    search (``weights``: the search's policy over the actions), one per configuration
    in a process (so agents of several checkpoints share the compiled code).
    ``model``: ``("azero", channels, conv_layers)``, ``("dqn", DQN config)`` or
    ``("hand",)``."""
    env = make(rules)
    evaluate: Any
    if model[0] == "hand":
        evaluate = functools.partial(hand_evaluation, env)
    elif model[0] == "dqn":
        q_network, observe_one = dqn_functions(env, model[1])
        evaluate = functools.partial(
            dqn_prior_evaluation, env, q_network, observe_one, model[1].win_reward
        )
    else:
        network = build_network(rules, model[1], model[2])
        evaluate = functools.partial(blended_evaluation, env, network)
    search = make_search(env, evaluate, config)

    def act(params: Any, key: jax.Array, states: JaxState) -> tuple[jax.Array, jax.Array]:
        output = search(params, key, states)
        return output.action, output.action_weights

    return jax.jit(act, compiler_options=COMPILER_OPTIONS)
