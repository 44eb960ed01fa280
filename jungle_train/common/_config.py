"""Training configurations as frozen, typed dataclasses: read from JSON or TOML files,
written as JSON, compared field by field.

A config class is a ``@dataclasses.dataclass(frozen=True)`` whose fields have plain types
(``int``, ``float``, ``bool``, ``str``, or a ``tuple[int, ...]``), each documented by the
string literal under it. Derived values are properties, never fields, so a config file
holds only choices.

>>> import dataclasses
>>> @dataclasses.dataclass(frozen=True)
... class Toy:
...     lr: float = 0.1
...     hidden: tuple[int, ...] = (8, 8)
>>> config_from_mapping(Toy, {"lr": 0.5, "hidden": [4]}, "example")
Toy(lr=0.5, hidden=(4,))
>>> config_from_mapping(Toy, {"lr": "fast"}, "example")
Traceback (most recent call last):
...
jungle_train.common._errors.ConfigError: example: field 'lr' must be a float, not 'fast'
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from jungle_train.common._errors import ConfigError

__all__ = ["RoundSchedule", "config_diff", "config_from_mapping", "config_to_json", "load_config"]

C = TypeVar("C")


class RoundSchedule:
    """The derived round counts of a jitted trainer's config (a base class of the DQN,
    value-network and AlphaZero configs): ``num_envs`` games play ``rollout_length``
    decisions a round, and a run of ``total_steps`` decisions has ``num_rounds`` rounds.
    The fields themselves stay on the dataclass (annotations here are not fields).

    >>> @dataclasses.dataclass(frozen=True)
    ... class Run(RoundSchedule):
    ...     total_steps: int = 100
    ...     num_envs: int = 8
    ...     rollout_length: int = 4
    >>> Run().steps_per_round, Run().num_rounds
    (32, 4)
    """

    total_steps: int
    num_envs: int
    rollout_length: int

    @property
    def steps_per_round(self) -> int:
        """Decisions per round: ``num_envs * rollout_length``."""
        return self.num_envs * self.rollout_length

    @property
    def num_rounds(self) -> int:
        """Rounds in a full run: ``total_steps / steps_per_round``, rounded up."""
        return max(1, math.ceil(self.total_steps / self.steps_per_round))


def _coerce(kind: Any, value: Any, where: str) -> Any:
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where} must be true or false, not {value!r}")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(f"{where} must be an int, not {value!r}")
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ConfigError(f"{where} must be a finite number, not {value!r}")
            return float(value)
        raise ConfigError(f"{where} must be a float, not {value!r}")
    if kind is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where} must be a string, not {value!r}")
    if typing.get_origin(kind) is tuple:
        (item, _) = typing.get_args(kind)
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where} must be a list, not {value!r}")
        return tuple(_coerce(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    raise TypeError(f"unsupported config field type {kind!r} at {where}")


def config_from_mapping(cls: type[C], data: Mapping[str, Any], source: str) -> C:
    """A config of class ``cls`` from a mapping; fields it does not name keep their
    defaults. An unknown field, a wrong type or a value the class's ``__post_init__``
    refuses raises :class:`ConfigError` naming ``source`` and the field.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: a config must be a table of fields, not {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - fields)
    if unknown:
        raise ConfigError(
            f"{source}: unknown field {unknown[0]!r} for {cls.__name__}; "
            f"valid fields: {', '.join(sorted(fields))}"
        )
    values = {k: _coerce(hints[k], v, f"{source}: field {k!r}") for k, v in data.items()}
    try:
        return cls(**values)
    except (ValueError, TypeError) as error:
        if isinstance(error, ConfigError):
            raise
        raise ConfigError(f"{source}: {error}") from None


def config_to_json(config: Any) -> dict[str, Any]:
    """The fields of a config as a JSON object (tuples as lists).

    >>> import dataclasses
    >>> @dataclasses.dataclass(frozen=True)
    ... class Toy:
    ...     hidden: tuple[int, ...] = (8,)
    >>> config_to_json(Toy())
    {'hidden': [8]}
    """
    return {
        f.name: list(v) if isinstance(v := getattr(config, f.name), tuple) else v
        for f in dataclasses.fields(config)
    }


def config_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The fields on which two config JSON objects differ, as ``name: a != b`` lines.

    >>> config_diff({"lr": 0.1, "n": 2}, {"lr": 0.2, "n": 2})
    ['lr: 0.1 != 0.2']
    """
    keys = sorted(set(a) | set(b))
    return [f"{k}: {a.get(k)!r} != {b.get(k)!r}" for k in keys if a.get(k) != b.get(k)]


def load_config(cls: type[C], path: str | os.PathLike[str]) -> C:
    """Read a config of class ``cls`` from a ``.json`` or ``.toml`` file.

    Errors (missing file, bad syntax, unknown field, wrong type) raise
    :class:`ConfigError` naming the file.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{p}: cannot read the config file ({error})") from None
    try:
        if p.suffix.lower() == ".toml":
            data: Any = tomllib.loads(text)
        else:
            data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        raise ConfigError(
            f"{p}: not a valid {p.suffix.lstrip('.') or 'JSON'} file: {error}"
        ) from None
    return config_from_mapping(cls, data, str(p))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a config accepts")
