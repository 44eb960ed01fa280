"""The AlphaZero agent's settings (:class:`AZeroSettings`): one field per spec parameter
of ``azero``, its help, choices and checks declared on the field, so that the registry's
parameters (:func:`jungle_agents.register_configured`) and the agent's canonical name
(:meth:`AZeroSettings.name`) come from this one declaration.

The strongest setting measured against minimax depth 3 (docs/results.md) is
``azero:endgame=4,dead_draw=0.1,draw_bounds=1,face_down_simulations=4096``; the settings
measured no better were removed (experiments/azero-deleted-settings.md).
"""

from __future__ import annotations

import attrs

from jungle_agents import canonical_name

__all__ = ["KIND", "PRIORS", "AZeroSettings"]

KIND = "azero"
"""The agent kind's name in the registry and in specs."""

PRIORS = ("", "azero", "dqn", "hand")
"""What guides the search (``prior=``): an AlphaZero checkpoint, a DQN checkpoint, the
hand-made value alone, or (empty) the default choice
(:func:`jungle_train.azero._guides.default_prior`)."""

ENDGAMES = (0, 2, 3, 4)
"""The sizes of the endgame tables the agent may consult (0: none)."""


@attrs.frozen
class AZeroSettings:
    """The ``azero`` agent's settings, checked when built (``ValueError``).

    >>> AZeroSettings(endgame=4, dead_draw=0.1, draw_bounds=True).name()
    'azero:endgame=4,dead_draw=0.1,draw_bounds=1'
    >>> AZeroSettings(endgame=5)
    Traceback (most recent call last):
    ...
    ValueError: azero: endgame must be one of (0, 2, 3, 4), not 5
    """

    path: str = attrs.field(
        default="", metadata={"help": "checkpoint file, AlphaZero or DQN (default: see prior)"}
    )
    prior: str = attrs.field(
        default="",
        metadata={
            "help": "what guides the search: an azero or a dqn checkpoint, or hand (the "
            "hand-made value and prior) (empty: the path's kind; without a path the "
            "shipped azero.npz, else DARK's shipped dqn.npz, CLASSIC's hand)",
            "choices": PRIORS,
        },
    )
    simulations: int = attrs.field(
        default=2048, metadata={"help": "search simulations per decision"}
    )
    time: float = attrs.field(
        default=0.0,
        metadata={
            "help": "seconds per decision: sets simulations once, from a timed search of a "
            "middlegame (0: off)"
        },
    )
    face_down_simulations: int = attrs.field(
        default=0,
        metadata={
            "help": "search simulations of the decisions taken while some piece is face "
            "down (0: simulations)"
        },
    )
    endgame: int = attrs.field(
        default=3,
        metadata={
            "help": "exact endgame tables (jungle_agents.endgame) for face-up positions of "
            "at most this many pieces: 2, 3 or 4 (0: off; 4 costs 8-20 s and 1.7 GB per "
            "material)",
            "choices": ENDGAMES,
        },
    )
    dead_draw: float = attrs.field(
        default=0.0,
        metadata={
            "help": "DARK: a draw is worth -dead_draw to the agent in its search, and so is "
            "every position where neither side's material can still win (a dead draw, such "
            "as one Elephant against one) (0: off)"
        },
    )
    draw_bounds: bool = attrs.field(
        default=False,
        metadata={
            "help": "DARK: in the agent's search a side whose material can no longer win is "
            "valued at most a draw (worth -dead_draw to the agent) and its opponent at "
            "least one"
        },
    )

    def __attrs_post_init__(self) -> None:
        checks = [
            (self.prior in PRIORS, f"prior must be one of {PRIORS}, not {self.prior!r}"),
            (self.simulations >= 1, f"simulations must be >= 1, not {self.simulations}"),
            (self.time >= 0.0, f"time must be >= 0, not {self.time}"),
            (
                self.face_down_simulations >= 0,
                "face_down_simulations must be >= 1 (or 0: simulations), not "
                f"{self.face_down_simulations}",
            ),
            (
                self.endgame in ENDGAMES,
                f"endgame must be one of {ENDGAMES}, not {self.endgame}",
            ),
            (0.0 <= self.dead_draw < 1.0, f"dead_draw must be in [0, 1), not {self.dead_draw}"),
            (
                not (self.prior == "hand" and self.path),
                "prior=hand reads no checkpoint: no path",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"{KIND}: {message}")

    def name(self) -> str:
        """The canonical spec (:func:`jungle_agents.canonical_name`): the kind and the
        fields that differ from their defaults, in declaration order.

        >>> AZeroSettings().name(), AZeroSettings(simulations=64, time=0.5).name()
        ('azero', 'azero:simulations=64,time=0.5')
        """
        return canonical_name(KIND, self)
