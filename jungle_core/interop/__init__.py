"""Adapters that put the game inside the standard frameworks: OpenSpiel, PettingZoo, Gymnasium.

Each adapter is its own module, and importing this package imports none of them (nor any
framework), so ``jungle_core`` stays light:

- :mod:`jungle_core.interop.openspiel`: the pyspiel games ``python_jungle_dark`` and
  ``python_jungle_classic``;
- :mod:`jungle_core.interop.pettingzoo`: a two-player AEC environment;
- :mod:`jungle_core.interop.gymnasium`: a single-agent environment against an opponent
  policy; :mod:`jungle_agents.envs` extends it to agent spec strings and registers it as
  ``jungle/Dark-v0`` and ``jungle/Classic-v0``.

``pip install 'dou-shou-qi[interop]'`` installs the three frameworks (the extras
``openspiel``, ``pettingzoo`` and ``gymnasium`` install one each). Importing an adapter
whose framework is missing raises :class:`jungle_core.MissingExtraError` naming the extra
``interop``.

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
    observation_for,
    resolve_rules,
)

__all__ = [
    "max_chance_nodes",
    "max_game_length",
    "observation_for",
    "resolve_rules",
]
