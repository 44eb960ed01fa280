"""Optional parts of the library and the extra that installs each.

The bare install (``pip install dou-shou-qi``) is the rules, the search agents, the arena,
the CLI and the learned agents played with numpy, on attrs and numpy alone. Everything
heavier is an *extra*: ``jax`` (the JAX core), ``train`` (the DQN, value and AlphaZero
learners and the ``azero`` agent), ``plot``, ``serve``, ``interop``, ``ray``, and ``all``.
A feature whose extra is missing raises :class:`MissingExtraError`, one typed error that
names the feature, the missing package and the command that installs it.

>>> import_optional("json", "the JSON reader").__name__
'json'
>>> EXTRA_OF["matplotlib"]
'plot'
"""

from __future__ import annotations

import importlib
import platform
from types import ModuleType

from jungle_core._errors import JungleError

__all__ = ["DISTRIBUTION", "EXTRA_OF", "INSTALLS_TOO", "MissingExtraError", "import_optional"]

DISTRIBUTION = "dou-shou-qi"
"""The name the library is installed under (``pip install dou-shou-qi``); the import
packages (``jungle_core``, ``jungle_agents``, ``jungle_train``, ``jungle_cli``) and the
``jungle`` command keep their own names."""

EXTRA_OF: dict[str, str] = {
    "jax": "jax",
    "jaxlib": "jax",
    "flax": "train",
    "optax": "train",
    "flashbax": "train",
    "mctx": "train",
    "matplotlib": "plot",
    "starlette": "serve",
    "uvicorn": "serve",
    "pyspiel": "interop",
    "open_spiel": "interop",
    "pettingzoo": "interop",
    "gymnasium": "interop",
    "ray": "ray",
}
"""The top-level package of each optional dependency, and the extra that installs it."""

INSTALLS_TOO: dict[str, frozenset[str]] = {
    "train": frozenset({"jax"}),
    "all": frozenset(EXTRA_OF.values()),
}
"""The extras that install other extras' packages as well: ``train`` brings the JAX core's
(``pip install 'dou-shou-qi[train]'`` installs JAX), ``all`` every one."""

# What JAX and the libraries built on it need that an interpreter may lack.
_JAX_FAMILY = frozenset({"jax", "jaxlib", "flax", "optax", "flashbax", "mctx"})


class MissingExtraError(JungleError, ImportError):
    """A feature was asked for whose optional dependency is not installed.

    ``extra`` is the extra that installs it and ``package`` the missing top-level package.

    >>> error = MissingExtraError("plots need matplotlib", extra="plot", package="matplotlib")
    >>> isinstance(error, ImportError) and isinstance(error, ValueError), error.extra
    (True, 'plot')
    """

    def __init__(self, message: str, *, extra: str, package: str) -> None:
        super().__init__(message)
        self.extra = extra
        self.package = package


def import_optional(name: str, what: str, extra: str | None = None) -> ModuleType:
    """Import the module ``name``; where an optional dependency it needs is missing, raise
    :class:`MissingExtraError` naming ``what``, the package and the extra to install.

    The extra named is the missing package's own (:data:`EXTRA_OF`), or ``extra`` where
    that installs the package too: the DQN needs JAX, and its extra is ``train``, which
    brings JAX (:data:`INSTALLS_TOO`), so ``import_optional("jungle_train.dqn", "the DQN",
    "train")`` names ``train`` whichever of JAX, Flax, Optax, Flashbax or mctx is missing.

    Any other import error is raised as it is, a missing module inside an installed
    package included (a version that lacks it is not a missing extra).

    >>> import_optional("jungle_core.no_such_module", "nothing")
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: No module named 'jungle_core.no_such_module'
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        named = EXTRA_OF.get(missing)
        if named is None:
            raise
        if extra is not None and (extra == named or named in INSTALLS_TOO.get(extra, ())):
            named = extra
        hint = f"pip install '{DISTRIBUTION}[{named}]'"
        if missing in _JAX_FAMILY and platform.python_implementation() != "CPython":
            interpreter = f"{platform.python_implementation()} {platform.python_version()}"
            hint += f" on CPython (JAX has no build for {interpreter})"
        raise MissingExtraError(
            f"{what} needs {missing!r}, which is not installed: {hint}",
            extra=named,
            package=missing,
        ) from error
