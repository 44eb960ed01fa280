"""The ``alphabeta`` agent: CLASSIC's fast alpha-beta search.

A negamax alpha-beta for CLASSIC rules on a private mutable board (make and unmake, an
incremental piece-square evaluation, Zobrist hashing), with a switchable transposition
table, principal variation search, killer and history move ordering, quiescence on
captures, den entries and den threats, and repetition draws with contempt (a move back to
a position of its game scores as a draw worth ``-contempt`` to it) (:class:`AlphaBetaConfig`).
``make_agent("alphabeta:time=0.25", CLASSIC)`` builds one.

>>> import numpy as np
>>> from jungle_core import CLASSIC, legal_actions, new_game
>>> agent = AlphaBetaAgent(CLASSIC, AlphaBetaConfig(time=0.0, depth=3))
>>> agent.act(new_game(CLASSIC), np.random.default_rng(0)) in legal_actions(new_game(CLASSIC))
True
"""

from jungle_agents.alphabeta._agent import AlphaBetaAgent
from jungle_agents.alphabeta._config import MATE, AlphaBetaConfig, AlphaBetaInfo
from jungle_agents.alphabeta._search import AlphaBetaSearch

__all__ = ["MATE", "AlphaBetaAgent", "AlphaBetaConfig", "AlphaBetaInfo", "AlphaBetaSearch"]
