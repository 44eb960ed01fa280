"""Adapters that put the game inside the standard frameworks: OpenSpiel, PettingZoo, Gymnasium.

Each adapter is its own module behind its own optional extra, and importing this package
imports none of them (nor any framework), so ``jungle_core`` stays light:

- :mod:`jungle_core.interop.openspiel` (extra ``openspiel``): the pyspiel games
  ``python_jungle_dark`` and ``python_jungle_classic``;
- :mod:`jungle_core.interop.pettingzoo` (extra ``pettingzoo``): a two-player AEC environment;
- :mod:`jungle_core.interop.gymnasium` (extra ``gymnasium``): a single-agent environment
  against an opponent policy; :mod:`jungle_agents.envs` extends it to agent spec strings
  and registers it as ``jungle/Dark-v0`` and ``jungle/Classic-v0``.

(``pip install jungle[interop]`` installs all three.) Importing an adapter whose framework
is missing raises an :class:`ImportError` that names the extra to install.

What the adapters share, framework-free, lives here:

>>> from jungle_core import DARK, CLASSIC
>>> from jungle_core.interop import max_game_length, max_chance_nodes
>>> max_game_length(DARK), max_chance_nodes(DARK)
(1500, 16)
>>> max_game_length(CLASSIC), max_chance_nodes(CLASSIC)
(300, 0)
"""

from jungle_core.interop._common import (
    max_chance_nodes,
    max_game_length,
    missing_framework,
    observation_for,
    resolve_rules,
)

__all__ = [
    "max_chance_nodes",
    "max_game_length",
    "missing_framework",
    "observation_for",
    "resolve_rules",
]
