"""Shared pytest configuration: Hypothesis profiles.

- ``ci`` (default): enough examples to catch rule bugs while `make test` stays fast.
- ``long``: many more examples, for a local soak (``HYPOTHESIS_PROFILE=long make test-long``).

Deadlines are off: the first call of a jitted function compiles, and CI machines vary.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

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
