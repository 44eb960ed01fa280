"""The errors of the training package: one family with the rules core's.

Every error is a :class:`jungle_core.JungleError` (so a :class:`ValueError`) whose message
names the file and, where there is one, the field that is wrong.

>>> issubclass(CheckpointError, JungleError) and issubclass(ConfigError, JungleError)
True
"""

from __future__ import annotations

from jungle_core import JungleError

__all__ = ["CheckpointError", "ConfigError", "JungleError"]


class CheckpointError(JungleError):
    """A checkpoint that cannot be used: missing, truncated, tampered with, of another
    kind of learner, or written with another configuration (the message names the file)."""


class ConfigError(JungleError):
    """A training configuration with an unknown field or a value of the wrong type or range
    (the message names the file or the source, and the field)."""
