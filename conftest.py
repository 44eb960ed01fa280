"""Shared pytest configuration: Hypothesis profiles.

- ``ci`` (default): enough examples to catch rule bugs while `make test` stays fast.
- ``long``: many more examples, for a local soak (``HYPOTHESIS_PROFILE=long make test-long``).

Deadlines are off: the first call of a jitted function compiles, and CI machines vary.

JAX compilation (set here, before any test imports JAX, so the xdist workers and every
``jungle`` child process a test starts inherit it): the suite compiles hundreds of small
programs that each run for milliseconds, so XLA's CPU compiler is most of its time.

- ``--xla_backend_optimization_level=0``: LLVM's optimisation passes skipped. The
  programs compute the same operations (the tests compare them with the pure core, numpy
  references and each other, as before); a search's test, compiling from nothing, took
  28 % less time, and with compilation cached the tests ran about as fast as with the
  passes (within 10 % either way, measured on a search test and the JAX-core equivalence
  property).
- A persistent compilation cache in a temporary folder for the whole run, shared by the
  workers and their children, so a program compiled by one test (the same search, network
  or trainer built again by another test, another worker, or a ``jungle`` child process)
  is read back instead of compiled again. JAX keys an entry on the program, its options
  and the JAX version; an entry another process is still writing fails to decompress and
  is compiled instead. The folder is removed when the run ends.

A variable already set in the environment is kept (``XLA_FLAGS`` is extended).

Without JAX (PyPy, for which JAX has no build: ``make test-pypy``), every file whose
module-level imports reach JAX, directly or through the project's own modules, is left
uncollected (``tests._requires.modules_needing_jax``): the JAX core, the DQN, value and
AlphaZero training, and their tests.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

from tests._requires import installed, jax_installed, modules_needing_jax

_FAST_COMPILE = "--xla_backend_optimization_level=0"
if "--xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_FAST_COMPILE}".strip()
# The controller makes the folder; xdist workers (started after this file is read) inherit it.
_OWN_CACHE = "JAX_COMPILATION_CACHE_DIR" not in os.environ
if _OWN_CACHE:
    os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="jungle-jax-cache-")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
# Endgame tables the tests solve go to a folder of the run, never ~/.cache/jungle.
_OWN_TABLES = "JUNGLE_CACHE_DIR" not in os.environ
if _OWN_TABLES:
    os.environ["JUNGLE_CACHE_DIR"] = tempfile.mkdtemp(prefix="jungle-tables-")


def pytest_unconfigure(config: object) -> None:
    """Remove the run's compilation cache and endgame tables (in the process that made
    them)."""
    if _OWN_CACHE:
        shutil.rmtree(os.environ["JAX_COMPILATION_CACHE_DIR"], ignore_errors=True)
    if _OWN_TABLES:
        shutil.rmtree(os.environ["JUNGLE_CACHE_DIR"], ignore_errors=True)


# Do not collect (the doctests of) a module whose optional framework is not installed:
# each imports it at import time and raises jungle_core.MissingExtraError naming the
# extra to install (`pip install 'dou-shou-qi[interop]'`), or fails to import.
_ADAPTER_NEEDS = {
    "jungle_core/interop/openspiel.py": ("pyspiel",),
    "jungle_core/interop/pettingzoo.py": ("pettingzoo", "gymnasium"),
    "jungle_core/interop/gymnasium.py": ("gymnasium",),
    "jungle_agents/envs.py": ("gymnasium",),
    "jungle_cli/_serve.py": ("starlette", "uvicorn"),  # `jungle serve`, extra serve
    "tests/_live.py": ("starlette", "uvicorn"),
    "jungle_train/_plots.py": ("matplotlib",),  # `jungle plot`, extra plot
    "jungle_train/ablate.py": ("matplotlib",),
}
collect_ignore = [
    path
    for path, frameworks in _ADAPTER_NEEDS.items()
    if not all(installed(name) for name in frameworks)
]
# docs/: only the pages' examples are tests (`--doctest-glob='*.md'`). Its Python files are
# the site's build hooks and helper scripts, run by MkDocs or by hand, not modules to import.
collect_ignore_glob = ["docs/*.py"]

if not jax_installed():  # PyPy: see the module docstring
    collect_ignore += modules_needing_jax(Path(__file__).resolve().parent)

# The tests' Ray clusters stay on the loopback address: on Linux Ray otherwise binds to, and
# connects through, the machine's network address even for a local instance. Reachable from
# this machine only, they run without Ray's token authentication (a cluster the tests start
# and a driver that joins it would otherwise have to share a token file).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
