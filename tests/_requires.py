"""What a test needs that an install may lack: JAX (the ``jax`` and ``train`` extras, which
install it on CPython only; PyPy has no build of it) and the other extras' frameworks.

Without JAX, as under PyPy, ``make test-pypy`` runs every test that needs none. The root
``conftest.py`` leaves uncollected the files that :func:`modules_needing_jax` finds, and
those whose framework :func:`installed` does not find; a test that reaches JAX only in its
body is marked :data:`needs_jax`; :func:`tests._scripts.load_benchmark` skips a benchmark
that imports JAX.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from jungle_train.common._errors import JAX_LIBRARIES

__all__ = ["JAX_LIBRARIES", "installed", "jax_installed", "modules_needing_jax", "needs_jax"]

SCANNED = ("jungle_core", "jungle_agents", "jungle_train", "jungle_cli", "tests", "property_tests")
"""The folders of the project that pytest collects from."""


def installed(name: str) -> bool:
    """Whether the module ``name`` can be found (an import hook that refuses it, as the
    tests that play an install without JAX set up, counts as absent).

    >>> installed("attrs"), installed("no_such_module_here")
    (True, False)
    """
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def jax_installed() -> bool:
    """Whether every library of :data:`JAX_LIBRARIES` can be imported here."""
    return all(installed(name) for name in sorted(JAX_LIBRARIES))


needs_jax = pytest.mark.skipif(not jax_installed(), reason="needs JAX (not installed here)")
"""Mark a test that imports JAX in its body (through ``jungle train dqn``, say)."""


def _module_imports(body: list[ast.stmt]) -> Iterator[str]:
    """The modules that the statements import when the module is imported: imports at
    its top level, in ``try`` blocks and under ``if``s other than ``if TYPE_CHECKING``;
    ``from a import b`` yields ``a`` and ``a.b`` (``b`` may be a module)."""
    for node in body:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_imports(block)
            for handler in node.handlers:
                yield from _module_imports(handler.body)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            yield from _module_imports(node.body)
            yield from _module_imports(node.orelse)


def _packages(module: str) -> Iterator[str]:
    """``a.b.c`` → ``a``, ``a.b``, ``a.b.c``: importing a module imports its packages."""
    parts = module.split(".")
    return (".".join(parts[: i + 1]) for i in range(len(parts)))


def modules_needing_jax(root: Path, scanned: tuple[str, ...] = SCANNED) -> list[str]:
    """The ``.py`` files under ``root``'s folders ``scanned`` (paths relative to ``root``,
    sorted) that import JAX when they are imported: they import a package of
    :data:`JAX_LIBRARIES` or a module of the project that does, where a package's
    ``__init__`` counts for each of its modules.

    >>> files = modules_needing_jax(Path(__file__).resolve().parent.parent)
    >>> "jungle_train/dqn/_learner.py" in files, "jungle_train/tabular/qlearn.py" in files
    (True, False)
    """
    files: dict[str, Path] = {}
    for folder in scanned:
        for path in sorted((root / folder).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            files[name.removesuffix(".__init__")] = path
    imports = {  # what importing each module imports: its statements' and its packages
        name: {
            *_module_imports(ast.parse(path.read_text(encoding="utf-8")).body),
            *list(_packages(name))[:-1],
        }
        for name, path in files.items()
    }
    jax = {
        name
        for name, found in imports.items()
        if any(module.partition(".")[0] in JAX_LIBRARIES for module in found)
    }
    grew = True
    while grew:  # what imports a module that needs JAX needs it too
        grew = False
        for name, found in imports.items():
            if name not in jax and any(p in jax for m in found for p in _packages(m)):
                jax.add(name)
                grew = True
    return sorted(files[name].relative_to(root).as_posix() for name in jax)
