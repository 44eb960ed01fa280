"""The Minimax agent: a :class:`~jungle_agents.minimax._search.Searcher` per side it plays."""

from __future__ import annotations

import attrs
import numpy as np

from jungle_agents.minimax._config import SearchConfig, SearchInfo
from jungle_agents.minimax._dark_eval import DarkEvaluator, DarkWeights
from jungle_agents.minimax._evaluations import HAND, make_evaluation
from jungle_agents.minimax._search import Searcher
from jungle_core import Rules, State

__all__ = ["MinimaxAgent", "MinimaxConfig"]


@attrs.frozen
class MinimaxConfig:
    """Every setting of the ``minimax`` agent kind, each declared once: the search's
    (:class:`SearchConfig`), DARK's evaluation weights (:class:`DarkWeights`) and the leaf
    evaluation. The registry reads its spec parameters, their checks and the agent's
    canonical name from these fields (:func:`jungle_agents.params_of`).

    >>> MinimaxConfig().search.depth, MinimaxConfig().eval
    (3, 'hand')
    """

    search: SearchConfig = attrs.field(factory=SearchConfig, metadata={"section": ""})
    """How the agent searches."""
    weights: DarkWeights = attrs.field(factory=DarkWeights, metadata={"section": "DARK weight: "})
    """The DARK evaluation's weights (unused on CLASSIC and by another ``eval``)."""
    eval: str = attrs.field(
        default=HAND,
        metadata={"help": "leaf evaluation: hand (built in) or a registered network (value)"},
    )
    """The leaf evaluation's name (:mod:`jungle_agents.minimax._evaluations`)."""
    value_path: str = attrs.field(
        default="", metadata={"help": "the network evaluation's checkpoint (default: shipped)"}
    )
    """The network evaluation's checkpoint (empty: the shipped one)."""


class MinimaxAgent:
    """Expectiminimax with a hand-written evaluation and switchable enhancements.

    ``weights`` (DARK) are the evaluation weights, for ablations; on CLASSIC the CLASSIC
    evaluation is used (:mod:`jungle_agents.minimax._classic_eval`). ``evaluation`` names another
    leaf evaluation (:mod:`jungle_agents.minimax._evaluations`: ``"value"``, the value network,
    with ``evaluation_path`` its checkpoint), built for each side on first use. ``last`` holds the
    :class:`SearchInfo` of the latest decision.

    >>> from jungle_core import DARK, new_game, legal_actions
    >>> agent = MinimaxAgent(DARK, SearchConfig(depth=1))
    >>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    True
    """

    def __init__(
        self,
        rules: Rules,
        config: SearchConfig | None = None,
        weights: DarkWeights | None = None,
        name: str = "minimax",
        evaluation: str = HAND,
        evaluation_path: str = "",
    ) -> None:
        self.rules = rules
        self.evaluation = evaluation
        self.evaluation_path = evaluation_path
        self.config = config or SearchConfig()
        self.weights = weights
        self.name = name
        self._searchers: dict[int, Searcher] = {}
        self.last: SearchInfo | None = None

    def searcher(self, player: int) -> Searcher:
        """The (cached) searcher that plays for ``player``.

        >>> from jungle_core import DARK
        >>> MinimaxAgent(DARK).searcher(1).player
        1
        """
        found = self._searchers.get(player)
        if found is None:
            evaluator = make_evaluation(self.evaluation, self.rules, player, self.evaluation_path)
            if evaluator is None and self.rules.is_dark:
                evaluator = DarkEvaluator(self.rules, player, self.weights)
            found = self._searchers[player] = Searcher(self.rules, player, self.config, evaluator)
        return found

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The best action found by the search (ties broken by ``rng``)."""
        info = self.searcher(state.to_move).search(state, rng)
        self.last = info
        return info.action
