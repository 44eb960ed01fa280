"""The errors of the training package: one family with the rules core's.

Every error is a :class:`jungle_core.JungleError` (so a :class:`ValueError`) whose message
names the file and, where there is one, the field that is wrong.

>>> issubclass(CheckpointError, JungleError) and issubclass(ConfigError, JungleError)
True

:class:`JaxMissingError` is one of the family and an :class:`ImportError` too: what runs
on JAX (the DQN, the value network, AlphaZero and its ``azero`` agent), asked for where
JAX is not installed, as on PyPy, for which JAX has no build (README: "On PyPy").
"""

from __future__ import annotations

import importlib
import platform
from types import ModuleType

from jungle_core import JungleError

__all__ = [
    "JAX_LIBRARIES",
    "CheckpointError",
    "ConfigError",
    "JaxMissingError",
    "JungleError",
    "import_jax_module",
]

JAX_LIBRARIES = frozenset({"jax", "jaxlib", "flax", "optax", "flashbax", "rlax", "mctx"})
"""The top-level packages of JAX and of the libraries on it that the project depends on
(``pyproject.toml`` installs them on CPython only)."""


class CheckpointError(JungleError):
    """A checkpoint that cannot be used: missing, truncated, tampered with, of another
    kind of learner, or written with another configuration (the message names the file)."""


class ConfigError(JungleError):
    """A training configuration with an unknown field or a value of the wrong type or range
    (the message names the file or the source, and the field)."""


class JaxMissingError(JungleError, ImportError):
    """Something that runs on JAX was asked for where JAX, or a library of its family
    (:data:`JAX_LIBRARIES`), is not installed. The message names what was asked for, the
    missing package and the interpreter.

    >>> error = JaxMissingError("the DQN needs JAX")
    >>> isinstance(error, ImportError) and isinstance(error, ValueError)
    True
    """


def import_jax_module(name: str, what: str) -> ModuleType:
    """Import the module ``name``, which runs on JAX; where a package of
    :data:`JAX_LIBRARIES` is missing, raise :class:`JaxMissingError` naming ``what``.

    Any other import error is raised as it is, a missing module inside an installed JAX
    library included (a version that lacks it is not a missing JAX).

    >>> import_jax_module("jungle_train.tabular_q", "tabular Q").__name__
    'jungle_train.tabular_q'
    >>> import_jax_module("jungle_train.no_such_module", "nothing")
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: No module named 'jungle_train.no_such_module'
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing not in JAX_LIBRARIES:
            raise
        interpreter = f"{platform.python_implementation()} {platform.python_version()}"
        raise JaxMissingError(
            f"{what} runs on JAX, and {missing!r} is not installed here ({interpreter}). "
            "Install the project on CPython, where its dependencies include JAX: "
            "pip install jungle (JAX has no PyPy build)"
        ) from error
