"""Loading the scripts of ``benchmarks/`` and ``experiments/`` (not packages) as modules,
for their tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests._requires import JAX_LIBRARIES, jax_installed

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
EXPERIMENTS = ROOT / "experiments"


def _load(folder: Path, name: str) -> ModuleType:
    """The module of ``<folder>/<name>.py``, registered in ``sys.modules`` as ``<name>``
    (so that its worker processes can import what it defines). Where JAX is not
    installed (PyPy), a script that imports it skips the test that loads it."""
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as error:
        del sys.modules[name]
        if jax_installed() or error.name not in JAX_LIBRARIES:
            raise
        pytest.skip(f"{folder.name}/{name}.py needs JAX ({error.name} is not installed)")
    return module


def load_benchmark(name: str) -> ModuleType:
    """The module of ``benchmarks/<name>.py`` (see :func:`_load`)."""
    return _load(BENCHMARKS, name)


def load_experiment(name: str) -> ModuleType:
    """The module of ``experiments/<name>.py`` (see :func:`_load`)."""
    return _load(EXPERIMENTS, name)
