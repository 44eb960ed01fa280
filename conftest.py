"""Shared pytest configuration: Hypothesis profiles.

- ``ci`` (default): enough examples to catch rule bugs while `make test` stays fast.
- ``long``: many more examples, for a local soak (``HYPOTHESIS_PROFILE=long make test-long``).

Deadlines are off: the first call of a jitted function compiles, and CI machines vary.
"""

from __future__ import annotations

import importlib.util
import os

from hypothesis import HealthCheck, settings

# Do not collect (the doctests of) an interop adapter whose framework is not installed:
# each adapter imports its framework at import time and raises an ImportError naming the
# extra to install (`pip install 'jungle[interop]'`).
_ADAPTER_NEEDS = {
    "jungle_core/interop/openspiel.py": ("pyspiel",),
    "jungle_core/interop/pettingzoo.py": ("pettingzoo", "gymnasium"),
    "jungle_core/interop/gymnasium.py": ("gymnasium",),
    "jungle_agents/envs.py": ("gymnasium",),
    "jungle_cli/_serve.py": ("starlette", "uvicorn"),  # `jungle serve`, extra serve
    "tests/_live.py": ("starlette", "uvicorn"),
}
collect_ignore = [
    path
    for path, frameworks in _ADAPTER_NEEDS.items()
    if any(importlib.util.find_spec(name) is None for name in frameworks)
]

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
