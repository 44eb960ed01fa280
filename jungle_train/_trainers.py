"""The learners by kind, for ``jungle train`` and the ablations: their config classes,
named configs, and trainers.

Each kind's module is imported only when that kind is asked for (the DQN, the value
network and AlphaZero bring JAX; where the ``train`` extra is not installed, or on PyPy,
asking for one of them raises :class:`jungle_core.MissingExtraError` naming ``train``, and
the tabular and linear learners still work).

>>> cls, named = config_class("qlearn")
>>> cls.__module__, sorted(named)
('jungle_train.tabular.qlearn', ['default'])
"""

from __future__ import annotations

import dataclasses
from typing import Any

from jungle_train.common import ConfigError, Trainer, import_train_module, load_config

__all__ = ["KINDS", "config_class", "make_trainer", "resolve_config"]

KINDS = {
    "dqn": "jungle_train.dqn",
    "qlearn": "jungle_train.tabular.qlearn",
    "approxq": "jungle_train.tabular.approxq",
    "value": "jungle_train.value",
    "azero": "jungle_train.azero",
}
"""Learner kind → its module (each has ``Config``, optional ``CONFIGS`` and a trainer)."""

_TRAINER_CLASS = {
    "dqn": "DQNTrainer",
    "qlearn": "QLearner",
    "approxq": "ApproxQLearner",
    "value": "ValueTrainer",
    "azero": "AZeroTrainer",
}


def _module(kind: str) -> Any:
    if kind not in KINDS:
        raise ConfigError(f"unknown learner {kind!r}; valid: {', '.join(KINDS)}")
    return import_train_module(KINDS[kind], f"the learner {kind!r}")


def config_class(kind: str) -> tuple[type[Any], dict[str, Any]]:
    """The config class of ``kind`` and its named configs (``{"spec": ..., "cpu": ...}``
    for the DQN; a kind without named configs has ``{"default": Config()}``)."""
    module = _module(kind)
    named = dict(getattr(module, "CONFIGS", {"default": module.Config()}))
    return module.Config, named


def resolve_config(kind: str, config: str | None, steps: int | None) -> Any:
    """The config of a run: a named config (``spec``, ``cpu``, ...) or a ``.json`` /
    ``.toml`` file of fields (others keep the class defaults; default: the kind's first
    named config), with ``total_steps`` set to ``steps`` when given and the config has it."""
    cls, named = config_class(kind)
    if config is None:
        chosen = next(iter(named.values())) if "cpu" not in named else named["cpu"]
    elif config in named:
        chosen = named[config]
    else:
        chosen = load_config(cls, config)
    if steps is not None and any(f.name == "total_steps" for f in dataclasses.fields(chosen)):
        try:
            chosen = dataclasses.replace(chosen, total_steps=steps)
        except ValueError as error:
            raise ConfigError(f"--steps {steps}: {error}") from None
    return chosen


def make_trainer(kind: str, config: Any) -> Trainer:
    """The trainer of ``kind`` for ``config``."""
    trainer: Trainer = getattr(_module(kind), _TRAINER_CLASS[kind])(config)
    return trainer
