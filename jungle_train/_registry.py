"""The learned agents' entries in the agent registry, loaded through the ``jungle.agents``
entry points (``pyproject.toml``), so :mod:`jungle_agents` finds them without importing
this package: ``make_agent("dqn", DARK)`` plays the shipped checkpoint,
``make_agent("dqn:path=runs/dqn/agent.npz", DARK)`` another; the same for ``qlearn`` and
``approxq``. Each kind is its own entry point, so one that fails to load leaves the
others working.

>>> from jungle_agents import agent_kinds
>>> {"dqn", "qlearn", "approxq"} <= set(agent_kinds())
True
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from jungle_agents import Param, params_of, register_configured

__all__ = [
    "LearnedSettings",
    "register_approxq",
    "register_azero",
    "register_dqn",
    "register_qlearn",
    "register_value",
]


@attrs.frozen
class LearnedSettings:
    """The spec parameters of the agents that play a checkpoint (``dqn``, ``qlearn``,
    ``approxq``, ``value``), declared once (:func:`jungle_agents.params_of`); ``{kind}``
    in a help text is the agent kind's name.

    >>> LearnedSettings(epsilon=1.5)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be in [0, 1], not 1.5
    """

    path: str = attrs.field(
        default="", metadata={"help": "checkpoint file (default: the shipped {kind}.npz)"}
    )
    """The checkpoint to play (empty: the shipped one)."""
    epsilon: float = attrs.field(
        default=0.0, metadata={"help": "probability of a uniformly random legal action instead"}
    )
    """The probability of playing a uniformly random legal action instead."""

    def __attrs_post_init__(self) -> None:
        if not (math.isfinite(self.epsilon) and 0.0 <= self.epsilon <= 1.0):
            raise ValueError(f"epsilon must be in [0, 1], not {self.epsilon!r}")


def _params(kind: str) -> dict[str, Param]:
    """The parameters of :class:`LearnedSettings`, their help naming ``kind``.

    >>> _params("dqn")["path"].help
    'checkpoint file (default: the shipped dqn.npz)'
    """
    return {
        name: attrs.evolve(param, help=param.help.format(kind=kind))
        for name, param in params_of(LearnedSettings).items()
    }


def _learned(kind: str, agent: Any, help: str) -> None:
    """Register ``kind``: ``agent(rules, path=..., epsilon=...)`` playing a checkpoint,
    its settings a :class:`LearnedSettings`."""

    def build(rules: Any, settings: LearnedSettings) -> Any:
        return agent(rules, path=settings.path, epsilon=settings.epsilon)

    register_configured(kind, LearnedSettings, build, help, params=_params(kind), replace=True)


def register_dqn() -> None:
    """Register ``dqn``: the masked argmax of a DQN checkpoint."""
    from jungle_train.players import DQNAgent

    _learned("dqn", DQNAgent, "DQN: masked argmax of a trained network")


def register_qlearn() -> None:
    """Register ``qlearn``: the greedy action of a tabular Q checkpoint."""
    from jungle_train.tabular.qlearn import QTableAgent

    _learned("qlearn", QTableAgent, "tabular Q-learning")


def register_value() -> None:
    """Register ``value``: one ply of expectimax on a value-network checkpoint; and the
    same network as the Minimax search's leaf evaluation, ``minimax:eval=value``."""
    from jungle_agents import register_evaluation
    from jungle_train.players import SearchValue, ValueAgent

    register_evaluation(
        "value",
        SearchValue,
        "the value network (jungle train value) at the search's leaves",
    )
    _learned("value", ValueAgent, "one ply of expectimax on a trained value network (DARK)")


def register_approxq() -> None:
    """Register ``approxq``: the greedy action of a linear Q checkpoint."""
    from jungle_train.tabular.approxq import ApproxQAgent

    _learned("approxq", ApproxQAgent, "approximate Q-learning, 16 features")


def register_azero() -> None:
    """Register ``azero``: an ``mctx`` search (the JAX core as the model) guided by an
    AlphaZero checkpoint, a DQN checkpoint or the hand-made value. Its parameters are the
    fields of :class:`~jungle_train._azero_settings.AZeroSettings`, a module without JAX:
    listing the agents imports none, and JAX is imported when an ``azero`` agent is built."""
    from jungle_train._azero_settings import KIND, AZeroSettings

    register_configured(
        KIND,
        AZeroSettings,
        _make_azero,
        "AlphaZero: mctx search with the true rules as the model, guided by a network (JAX)",
        replace=True,
    )


def _make_azero(rules: Any, settings: Any) -> Any:
    """Build an :class:`~jungle_train.azero.AZeroAgent` from its settings (imports JAX;
    where the ``train`` extra is not installed, :class:`jungle_core.MissingExtraError`
    naming it, which :func:`~jungle_agents.make_agent` reports as an ``AgentSpecError``)."""
    from jungle_train.common import import_train_module

    agent = import_train_module("jungle_train.azero", "the agent 'azero'").AZeroAgent
    return agent(rules, settings)
