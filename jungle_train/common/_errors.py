"""The errors of the training package: one family with the rules core's.

Every error is a :class:`jungle_core.JungleError` (so a :class:`ValueError`) whose message
names the file and, where there is one, the field that is wrong.

>>> issubclass(CheckpointError, JungleError) and issubclass(ConfigError, JungleError)
True

What runs on JAX (the DQN, the value network, AlphaZero and its ``azero`` agent), asked for
where the ``train`` extra is not installed (or on PyPy, for which JAX has no build), raises
:class:`jungle_core.MissingExtraError` naming ``train``: :func:`import_train_module`.
"""

from __future__ import annotations

from types import ModuleType

from jungle_core import EXTRA_OF, INSTALLS_TOO, JungleError, import_optional

__all__ = [
    "JAX_LIBRARIES",
    "CheckpointError",
    "ConfigError",
    "JungleError",
    "import_train_module",
]

JAX_LIBRARIES = frozenset(
    package
    for package, extra in EXTRA_OF.items()
    if extra == "train" or extra in INSTALLS_TOO["train"]
)
"""The top-level packages of JAX and of the libraries on it that the learners need (the
``train`` extra installs them, on CPython only).

>>> sorted(JAX_LIBRARIES)
['flashbax', 'flax', 'jax', 'jaxlib', 'mctx', 'optax']
"""


class CheckpointError(JungleError):
    """A checkpoint that cannot be used: missing, truncated, tampered with, of another
    kind of learner, or written with another configuration (the message names the file)."""


class ConfigError(JungleError):
    """A training configuration with an unknown field or a value of the wrong type or range
    (the message names the file or the source, and the field)."""


def import_train_module(name: str, what: str) -> ModuleType:
    """Import the module ``name``, which runs on JAX; where a package of
    :data:`JAX_LIBRARIES` is missing, raise :class:`jungle_core.MissingExtraError` naming
    ``what`` and the extra ``train`` (which installs them all).

    Any other import error is raised as it is, a missing module inside an installed JAX
    library included (a version that lacks it is not a missing extra).

    >>> import_train_module("jungle_train.tabular.qlearn", "tabular Q").__name__
    'jungle_train.tabular.qlearn'
    >>> import_train_module("jungle_train.no_such_module", "nothing")
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: No module named 'jungle_train.no_such_module'
    """
    return import_optional(name, what, extra="train")
