"""pytest: do not collect (the doctests of) an adapter whose framework is not installed.

Each adapter module imports its framework at import time and raises an ImportError naming
the extra to install when it is missing; without this list, collecting its doctests would
fail the whole run on a machine without the ``interop`` extras.
"""

from __future__ import annotations

import importlib.util

_NEEDS = {
    "openspiel.py": ("pyspiel",),
    "pettingzoo.py": ("pettingzoo", "gymnasium"),
    "gymnasium.py": ("gymnasium",),
}

collect_ignore = [
    module
    for module, frameworks in _NEEDS.items()
    if any(importlib.util.find_spec(name) is None for name in frameworks)
]
