"""jungle_agents: game-playing agents behind one protocol, and the arena.

Builds on :mod:`jungle_core` only; it never imports :mod:`jungle_train`.
"""

__all__: list[str] = []
