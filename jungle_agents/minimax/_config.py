"""The Minimax agent's settings (:class:`SearchConfig`, validated when built) and what one
decision's search reports (:class:`SearchInfo`).

What each switch does to the search is described in :mod:`jungle_agents.minimax._search`.
"""

from __future__ import annotations

import math

import attrs

__all__ = ["MAX_DEPTH", "TIEBREAKS", "WIN", "SearchConfig", "SearchInfo"]

WIN = 100_000.0
"""The value of a won game (plus the depth left, so that sooner wins score higher)."""

MAX_DEPTH = 64
"""The deepest ``depth`` (and ``qdepth``) a search takes: the recursion stays far inside
Python's stack, and beyond it a search without ``time=`` would not end in any case."""

TIEBREAKS = ("approach", "random")
"""The values of :attr:`SearchConfig.tiebreak`."""


@attrs.frozen
class SearchConfig:
    """How the Minimax agent searches (each enhancement switchable for ablations).

    Each field's ``metadata`` holds its one-line ``help`` (and ``choices``), from which the
    agent registry builds the ``minimax`` spec parameters (a section of
    :class:`~jungle_agents.minimax.MinimaxConfig`, with the DARK weights and the evaluation).

    >>> SearchConfig().depth, SearchConfig(depth=6, quiescence=True).quiescence
    (3, True)
    """

    depth: int = attrs.field(
        default=3, metadata={"help": "search depth in decisions (chance nodes take none)"}
    )
    """Maximum depth in decisions (chance nodes take none); at least 1."""
    alphabeta: bool = attrs.field(
        default=True, metadata={"help": "alpha-beta pruning at decision nodes"}
    )
    """Alpha-beta windows at decision nodes."""
    ordering: bool = attrs.field(
        default=True, metadata={"help": "move ordering (TT move, MVV/LVA, history)"}
    )
    """Move ordering (TT move, captures MVV/LVA, history heuristic)."""
    tt: bool = attrs.field(
        default=True, metadata={"help": "transposition table keyed on the state"}
    )
    """Transposition table keyed on the state."""
    star1: bool = attrs.field(default=True, metadata={"help": "Star1 pruning at chance nodes"})
    """Star1 pruning at chance nodes (needs ``alphabeta``)."""
    quiescence: bool = attrs.field(
        default=False, metadata={"help": "quiescence search on captures"}
    )
    """Quiescence search on captures at depth 0."""
    qdepth: int = attrs.field(
        default=6, metadata={"help": "maximum plies of the quiescence search"}
    )
    """Maximum plies of the quiescence search."""
    reply: bool = attrs.field(
        default=True, metadata={"help": "at the horizon the opponent may answer a threat (DARK)"}
    )
    """DARK, without quiescence, once no piece is face down: at the horizon, when the
    opponent is to move and one of its pieces stands next to one of the agent's that can
    remove it, the opponent gets one more ply to answer before the evaluation. Otherwise
    a search of odd depth, which ends on the agent's own move, counts a threat it has
    just made as if the opponent had to leave it standing (the evaluation's adjacency
    term), and in an endgame chases a piece that simply steps away. (While pieces are face
    down, the answer would multiply the chance nodes of the frontier, and the search's
    cost with it.) Measured against Greedy at depth 3, 0.880 with it and 0.835 without
    (experiments/readme-core-and-search.md, the defaults measured one at a time)."""
    time: float = attrs.field(
        default=0.0, metadata={"help": "seconds per decision; > 0: iterative deepening to depth"}
    )
    """Time budget per decision in seconds; > 0 turns on iterative deepening."""
    margin: float = attrs.field(
        default=2.0, metadata={"help": "root values within this of the best count as ties"}
    )
    """Root actions within this much of the best value count as equally good, and
    ``tiebreak`` chooses among them (0: exact ties only). Two points are a fifth of one
    rank point and a tenth of the smallest adjacency term: differences that small come
    from averaging over chance outcomes, not from a real difference between the moves.
    Forced wins and losses always use exact ties."""
    contempt: float = attrs.field(
        default=100.0,
        metadata={"help": "a draw scores -contempt; quiet plies cost their share of it (DARK)"},
    )
    """How much worse than an even position the agent holds a draw: a finished game
    drawn scores ``-contempt`` instead of 0. Where the rules draw after a run of plies
    without a removal (DARK's 100), every position also carries its share of that draw,
    ``contempt * plies_since_removal / no_removal_limit`` subtracted from its evaluation,
    so that the cost grows with each quiet ply up to the draw itself: the agent values a
    removal (a capture, a trade, and in the end a sacrifice) for the plies it gives back,
    instead of only noticing the draw when it falls inside the horizon. 0 is the plain
    scoring (a draw is 0). Without it (and without :attr:`reply`) depth 3 scored 0.795
    against Greedy, with both 0.880 (experiments/readme-core-and-search.md)."""
    tiebreak: str = attrs.field(
        default="approach",
        metadata={
            "help": "among equal root values: approach enemy pieces, or at random",
            "choices": TIEBREAKS,
        },
    )
    """Among equally valued root actions (values within ``1e-6``): ``"approach"`` plays
    one that brings the mover's pieces closest to enemy pieces they can remove (then at
    random), ``"random"`` any of them at random. The evaluation alone gives no reason to
    walk toward a distant enemy, so with ``"random"`` won endgames often drift into the
    no-removal draw. With ``margin=0,tiebreak=random`` on top of ``contempt=0,reply=0``,
    depth 3 fell from 0.795 to 0.708 against Greedy
    (experiments/readme-core-and-search.md; docs/agents.md describes the three defaults)."""

    def __attrs_post_init__(self) -> None:
        # one rule for every float: finite (nan compares false everywhere and inf overflows)
        for name in ("time", "margin", "contempt"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, not {getattr(self, name)}")
        if not 1 <= self.depth <= MAX_DEPTH:
            raise ValueError(f"depth must be 1..{MAX_DEPTH}, not {self.depth}")
        if not 0 <= self.qdepth <= MAX_DEPTH:
            raise ValueError(f"qdepth must be 0..{MAX_DEPTH}, not {self.qdepth}")
        if self.time < 0:
            raise ValueError(f"time must be >= 0 seconds, not {self.time}")
        if self.margin < 0:
            raise ValueError(f"margin must be >= 0, not {self.margin}")
        if not 0 <= self.contempt < WIN / 4:
            raise ValueError(f"contempt must be >= 0 and < {WIN / 4:g}, not {self.contempt}")
        if self.tiebreak not in TIEBREAKS:
            raise ValueError(f"tiebreak must be 'random' or 'approach', not {self.tiebreak!r}")


@attrs.frozen
class SearchInfo:
    """What one decision's search did.

    - ``action``: the chosen action; ``value``: its value for the agent (of the deepest
      completed iteration).
    - ``depth``: the deepest completed depth; ``nodes``: positions expanded or evaluated;
      ``seconds``: wall time.
    """

    action: int
    value: float
    depth: int
    nodes: int
    seconds: float
