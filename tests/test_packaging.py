"""The distribution's metadata (``pyproject.toml``): the bare install is attrs and numpy,
each optional package sits in the extra that :data:`jungle_core._extras.EXTRA_OF` names,
``all`` holds every user extra, no pre-release anywhere, and one version.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import jungle_core
from jungle_core._extras import DISTRIBUTION, EXTRA_OF, INSTALLS_TOO

ROOT = Path(__file__).resolve().parent.parent
PROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS: dict[str, list[str]] = PROJECT["project"]["optional-dependencies"]

USER_EXTRAS = ("jax", "train", "plot", "serve", "interop", "ray")
"""The extras a user installs for a feature (``dev``, ``docs``, ``bench`` and ``pypy-test``
are the project's own tools)."""

DISTRIBUTION_OF = {"pyspiel": "open-spiel", "open_spiel": "open-spiel"}
"""Import names whose distribution is named otherwise (the rest are their own)."""


def _requirements(extra: str) -> Iterator[Requirement]:
    """The requirements ``extra`` installs, its references to other extras followed."""
    for line in EXTRAS[extra]:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == DISTRIBUTION:
            for included in sorted(requirement.extras):
                yield from _requirements(included)
        else:
            yield requirement


def _imported(path: Path) -> set[str]:
    """The top-level packages the module at ``path`` imports, anywhere in it."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def _names(extra: str) -> set[str]:
    return {canonicalize_name(r.name) for r in _requirements(extra)}


def test_the_distribution_is_dou_shou_qi_and_its_version_is_the_packages() -> None:
    project = PROJECT["project"]
    assert project["name"] == DISTRIBUTION == "dou-shou-qi"
    assert "version" not in project and project["dynamic"] == ["version"]
    dynamic = PROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "jungle_core.__version__"}
    version = Version(jungle_core.__version__)
    assert str(version) == jungle_core.__version__ == "0.2.0" and not version.is_prerelease


def test_the_bare_install_is_attrs_and_numpy() -> None:
    names = [canonicalize_name(Requirement(r).name) for r in PROJECT["project"]["dependencies"]]
    assert sorted(names) == ["attrs", "numpy"]


@pytest.mark.parametrize("package", sorted(EXTRA_OF))
def test_each_optional_package_is_in_the_extra_that_its_error_names(package: str) -> None:
    distribution = canonicalize_name(DISTRIBUTION_OF.get(package, package))
    assert distribution in _names(EXTRA_OF[package])
    assert distribution in _names("all")


def test_the_extras_that_install_others_do() -> None:
    for extra, included in INSTALLS_TOO.items():
        for other in included:
            assert _names(other) <= _names(extra), (extra, other)


def test_all_is_every_user_extra_and_nothing_else() -> None:
    assert set(EXTRA_OF.values()) == set(USER_EXTRAS)
    assert _names("all") == set().union(*(_names(extra) for extra in USER_EXTRAS))
    for tool in ("dev", "docs", "bench", "pypy-test"):
        assert tool in EXTRAS


def test_no_rlax_and_no_prerelease_anywhere() -> None:
    lines = [*PROJECT["project"]["dependencies"], *(r for e in EXTRAS.values() for r in e)]
    requirements = [Requirement(line) for line in lines]
    assert "rlax" not in {canonicalize_name(r.name) for r in requirements}
    assert "rlax" not in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for package in ("jungle_core", "jungle_agents", "jungle_train", "jungle_cli"):
        for path in sorted((ROOT / package).rglob("*.py")):
            assert "rlax" not in _imported(path), path
    for requirement in requirements:
        assert not requirement.specifier.prereleases, requirement
        assert not any(Version(s.version).is_prerelease for s in requirement.specifier), requirement


def test_mctx_is_bounded_above_since_the_search_uses_its_private_modules() -> None:
    (mctx,) = (r for r in _requirements("train") if r.name == "mctx")
    assert any(s.operator == "<" for s in mctx.specifier)
    assert importlib.metadata.version("mctx") in mctx.specifier


def test_no_installed_dependency_of_every_extra_is_a_prerelease() -> None:
    """What pip resolved here for ``all`` and its whole dependency tree: no pre-release or
    nightly build (only the distributions installed here are walked)."""
    seen: set[str] = set()
    todo = sorted(_names("all") | {"attrs", "numpy"})
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            version = Version(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            continue  # a PyPy-only requirement, or an extra not installed here
        assert not version.is_prerelease and not version.is_devrelease, (name, str(version))
        for line in importlib.metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    assert {"jax", "flax", "mctx"} <= seen


def test_the_learned_agents_stay_entry_points() -> None:
    points = PROJECT["project"]["entry-points"]["jungle.agents"]
    assert sorted(points) == ["approxq", "azero", "dqn", "presets", "qlearn", "value"]
    for target in points.values():
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(module), function))
