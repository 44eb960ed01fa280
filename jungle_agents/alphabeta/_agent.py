"""The ``alphabeta`` agent: an :class:`~jungle_agents.alphabeta._search.AlphaBetaSearch`
that plays CLASSIC."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from jungle_agents.alphabeta._config import AlphaBetaConfig, AlphaBetaInfo
from jungle_agents.alphabeta._search import AlphaBetaSearch
from jungle_core import Rules, State, step_outcome

__all__ = ["AlphaBetaAgent"]


class AlphaBetaAgent:
    """CLASSIC alpha-beta on a mutable board (:mod:`jungle_agents.alphabeta`).

    The search is deterministic: ``rng`` is not used (varied games come from varied
    openings, ``jungle match --openings 2``). ``last`` holds the latest decision's
    :class:`AlphaBetaInfo` (``jungle engine`` prints it as an ``info`` line).

    The agent remembers the positions of the game it is playing (each position it was
    asked about and the one its move made), so that its search can score a return to one
    of them as a draw (``AlphaBetaConfig.repetition``). A position of a lower or equal
    ply than the last one asked starts a new game.

    >>> from jungle_core import CLASSIC, legal_actions, new_game
    >>> agent = AlphaBetaAgent(CLASSIC, AlphaBetaConfig(time=0.0, depth=2))
    >>> agent.act(new_game(CLASSIC), np.random.default_rng(0)) in legal_actions(new_game(CLASSIC))
    True
    >>> agent.last.depth
    2
    """

    def __init__(
        self, rules: Rules, config: AlphaBetaConfig | None = None, name: str = "alphabeta"
    ) -> None:
        self.rules = rules
        self.config = config or AlphaBetaConfig()
        self.name = name
        self._search = AlphaBetaSearch(rules, self.config)
        self.last: AlphaBetaInfo | None = None
        self._game: list[State] = []

    def remember(self, earlier: Iterable[State]) -> None:
        """Take ``earlier`` as the positions of the game before the next one asked (in
        order), in place of those the agent saw itself: ``jungle engine`` passes the
        positions its ``position ... moves`` line went through."""
        self._game = list(earlier)

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The search's move in ``state``."""
        if self._game and state.ply <= self._game[-1].ply - 1:
            self._game = []  # a new game (or a position taken back)
        self.last = self._search.search(state, self._game)
        self._game.append(state)
        self._game.append(step_outcome(state, self.last.action, -1))
        return self.last.action
