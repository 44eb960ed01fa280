"""The layout's contracts, enforced: only public imports across packages, and no module
over 600 lines.

A private module or name (one whose dotted path has a part starting with ``_``, dunders
aside) may be imported only from inside the package that holds it: ``jungle_train.dqn._replay``
from ``jungle_train.dqn`` and below, never from ``jungle_train.azero`` nor the CLI. The
check covers the packages, the CLI, the benchmarks, the experiments, the docs' hooks and
the Python examples of README.md and docs/*.md. The tests and property tests are the
exception: they test the internals of the package they mirror. The layers and the ban on
circles are import-linter's contracts (``pyproject.toml``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("jungle_core", "jungle_agents", "jungle_train", "jungle_cli")
OTHER_CODE = ("benchmarks", "experiments", "docs")
MAX_LINES = 600
_FENCE = re.compile(r"^```(?:python|py|pycon)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> Iterator[tuple[str, str, str]]:
    """``(where, importer module name, source)`` for every piece of code checked."""
    for top in PACKAGES + OTHER_CODE:
        for path in sorted((ROOT / top).rglob("*.py")):
            yield str(path.relative_to(ROOT)), _module_name(path), path.read_text()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for i, match in enumerate(_FENCE.finditer(path.read_text())):
            code = "\n".join(
                line[4:] if line.startswith((">>> ", "... ")) else line
                for line in match.group(1).splitlines()
                if not line.startswith(("$ ", "#!"))
            )
            yield f"{path.relative_to(ROOT)} example {i + 1}", "__example__", code


def _private_prefix(dotted: str) -> str | None:
    """The package a private path belongs to (``a.b`` for ``a.b._c.d``), or None."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def _imports(source: str) -> Iterator[tuple[int, str]]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def private_imports() -> list[str]:
    """Every import of a private module or name from outside its package."""
    found = []
    for where, importer, source in _sources():
        for line, dotted in _imports(source):
            if not dotted.startswith(PACKAGES):
                continue
            owner = _private_prefix(dotted)
            if owner is not None and not (importer + ".").startswith(owner + "."):
                found.append(f"{where}:{line}: {dotted}")
    return found


def test_only_public_names_are_imported_across_packages() -> None:
    assert private_imports() == []


def test_no_module_is_over_the_size_limit() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for top in PACKAGES
        for path in sorted((ROOT / top).rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert long == []


def test_the_check_sees_a_private_import() -> None:
    # A planted import of a private module from another package is found; one from inside
    # the package is not.
    assert _private_prefix("jungle_train.dqn._replay.Buffer") == "jungle_train.dqn"
    assert _private_prefix("jungle_train.dqn.Buffer") is None
    assert list(_imports("from jungle_agents._base import Agent")) == [
        (1, "jungle_agents._base.Agent")
    ]


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
