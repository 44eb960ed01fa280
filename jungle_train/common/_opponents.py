"""The opponents a learner trains against, shared by every trainer: random by
default; greedy and self-play available.

A mix is written ``"random"`` or ``"random=0.5,greedy=0.3,self=0.2"`` (weights need not
sum to 1; they are normalised). ``self`` is self-play against a periodically frozen copy
of the learner. Each training game draws its opponent from the mix.

>>> parse_mix("random=1,greedy=3")
(0.25, 0.75, 0.0)
>>> parse_mix("self")
(0.0, 0.0, 1.0)
"""

from __future__ import annotations

import math

from jungle_train.common._errors import ConfigError

__all__ = ["OPPONENTS", "parse_mix", "parse_weights"]

OPPONENTS = ("random", "greedy", "self")
"""The opponent kinds, in the order of :func:`parse_mix`'s weights."""


def parse_weights(text: str, kinds: tuple[str, ...]) -> tuple[float, ...]:
    """The normalised weights of ``kinds`` (in that order) in a mix string such as
    ``"random=0.5,league=0.5"`` (a bare name weighs 1); a malformed mix, or one naming a
    kind outside ``kinds``, raises :class:`ConfigError` naming it.

    >>> parse_weights("league=3,greedy", ("random", "greedy", "league"))
    (0.0, 0.25, 0.75)
    """
    weights = dict.fromkeys(kinds, 0.0)
    for item in text.split(","):
        name, eq, value = item.strip().partition("=")
        name = name.strip().lower()
        if name not in weights:
            raise ConfigError(
                f"opponent mix {text!r}: unknown opponent {name!r}; valid: {', '.join(kinds)}"
            )
        try:
            w = float(value) if eq else 1.0
        except ValueError:
            raise ConfigError(f"opponent mix {text!r}: {value!r} is not a number") from None
        if not math.isfinite(w) or w < 0:
            raise ConfigError(f"opponent mix {text!r}: weight {value!r} must be finite and >= 0")
        weights[name] += w
    total = sum(weights.values())
    if total <= 0:
        raise ConfigError(f"opponent mix {text!r}: the weights add up to 0")
    return tuple(weights[k] / total for k in kinds)


def parse_mix(text: str) -> tuple[float, float, float]:
    """The normalised weights ``(random, greedy, self)`` of a mix string of
    :data:`OPPONENTS`; a malformed one raises :class:`ConfigError` naming it."""
    r, g, s = parse_weights(text, OPPONENTS)
    return (r, g, s)
