"""The settings of the ``alphabeta`` agent (:class:`AlphaBetaConfig`) and what one
decision's search reports (:class:`AlphaBetaInfo`).

Every enhancement of the search is a switch, so that each can be measured on its own
(docs/results.md, "CLASSIC search"); what each one does is described in
:mod:`jungle_agents.alphabeta._search`.
"""

from __future__ import annotations

import math

import attrs

__all__ = ["MATE", "MAX_PLY", "AlphaBetaConfig", "AlphaBetaInfo"]

MATE = 1_000_000
"""The value of a won game for the side to move at the root, less the plies to the win
(a sooner win scores higher). Values beyond ``MATE - MAX_PLY`` are forced results."""

MAX_PLY = 128
"""The deepest a search goes below the root (depth, extensions and quiescence)."""


@attrs.frozen
class AlphaBetaConfig:
    """How the ``alphabeta`` agent searches a CLASSIC position.

    Each field's ``metadata`` holds its one-line ``help``, from which the agent registry
    builds the ``alphabeta`` spec parameters (``alphabeta:time=0.25,pvs=0``).

    >>> AlphaBetaConfig().time, AlphaBetaConfig(depth=4, time=0).depth
    (0.25, 4)
    """

    time: float = attrs.field(
        default=0.25,
        metadata={"help": "seconds per decision (iterative deepening); 0: search to depth"},
    )
    """Seconds a decision may take; 0 searches to exactly ``depth``."""
    depth: int = attrs.field(
        default=64, metadata={"help": "deepest iteration in plies (the limit with time=0)"}
    )
    """The deepest iteration; with ``time=0`` the one fixed depth searched."""
    quiescence: bool = attrs.field(
        default=True, metadata={"help": "quiescence search on captures and den entries"}
    )
    """At depth 0, captures and den entries are searched with stand-pat, and a side whose
    den an enemy piece stands next to must answer it (no stand-pat)."""
    qdepth: int = attrs.field(default=8, metadata={"help": "maximum plies of the quiescence"})
    """Maximum plies of the quiescence search."""
    tt: bool = attrs.field(default=True, metadata={"help": "transposition table (Zobrist keys)"})
    """A transposition table keyed on a Zobrist hash of the board and the side to move."""
    killers: bool = attrs.field(default=True, metadata={"help": "two killer moves per ply"})
    """Two quiet moves per ply that last cut off, tried after the captures."""
    history: bool = attrs.field(
        default=True, metadata={"help": "history heuristic for quiet moves"}
    )
    """Quiet moves ordered by how often (weighted by depth squared) they cut off."""
    pvs: bool = attrs.field(default=True, metadata={"help": "principal variation search"})
    """Every move after the first searched with a null window, re-searched if it beats it."""
    repetition: bool = attrs.field(
        default=True,
        metadata={"help": "a position repeated (in the game or the search) scores as a draw"},
    )
    """A move back to a position seen earlier (in the game so far, as the agent saw it, or
    on the search path) scores as a draw instead of being searched. CLASSIC has no
    repetition rule, so two deterministic engines can cycle until the ply limit; with
    this switch the side that is ahead looks for another way."""
    contempt: float = attrs.field(
        default=100.0,
        metadata={"help": "a draw (repetition or ply limit) scores -contempt for the searcher"},
    )
    """What a draw (a repeated position or the ply limit) is worth to the side searching,
    negated, in evaluation points (a Dog is 35); its opponent's draws score +contempt."""

    def __attrs_post_init__(self) -> None:
        if not math.isfinite(self.time) or self.time < 0:
            raise ValueError(f"time must be a finite number >= 0, not {self.time}")
        if not 1 <= self.depth <= 64:
            raise ValueError(f"depth must be 1..64, not {self.depth}")
        if not 0 <= self.qdepth <= 32:
            raise ValueError(f"qdepth must be 0..32, not {self.qdepth}")
        if not math.isfinite(self.contempt) or abs(self.contempt) > 10_000:
            raise ValueError(
                f"contempt must be a finite number in -10000..10000, not {self.contempt}"
            )


@attrs.frozen
class AlphaBetaInfo:
    """What one decision's search did: the chosen ``action`` and its ``value`` (for the
    side to move, in evaluation points), the deepest completed ``depth``, the ``nodes``
    searched (quiescence included), the wall ``seconds`` and the principal variation
    ``pv`` (actions, the chosen one first)."""

    action: int
    value: float
    depth: int
    nodes: int
    seconds: float
    pv: tuple[int, ...] = ()

    @property
    def mate(self) -> int | None:
        """The forced result the value says, in moves of the side to move as engines
        count them (``3``: it wins with its third move; ``-2``: it loses after its second),
        or None for an evaluation.

        >>> AlphaBetaInfo(0, MATE - 5, 5, 1, 0.0).mate, AlphaBetaInfo(0, 12.5, 5, 1, 0.0).mate
        (3, None)
        """
        if abs(self.value) < MATE - MAX_PLY:
            return None
        plies = MATE - abs(int(self.value))
        return (plies + 1) // 2 if self.value > 0 else -((plies + 1) // 2)
