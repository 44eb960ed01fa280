"""The value network as a player and as a leaf evaluator, numpy only (no JAX).

- :class:`ValueEvaluator`: ``evaluate(states)`` gives each state's value for its player to
  move, in [-1, 1], in one batched forward pass; finished games get their exact result.
- :class:`SearchValue`: the same network as the leaf evaluation of the Minimax search
  (``minimax:eval=value``), in the search's units and from the searcher's side.
- :class:`ValueAgent` (``make_agent("value", DARK)``): one ply of expectimax on the
  network: each legal action is worth the probability-weighted value of its children
  for the mover; the best one is played (ties at random).

``path=""`` reads the shipped ``jungle_train/checkpoints/value.npz``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jungle_core import Rules, State, legal_actions, outcome
from jungle_core.lowlevel import apply, chance_mask, mask_outcomes
from jungle_train.common import CheckpointError, load_checkpoint
from jungle_train.players._numpy import arrays_to_params, shipped_checkpoint
from jungle_train.players._vnet import observe_numpy, value_numpy

__all__ = ["SearchValue", "ValueAgent", "ValueEvaluator"]


class ValueEvaluator:
    """A value checkpoint read for numpy inference.

    >>> from jungle_core import DARK, new_game
    >>> ev = ValueEvaluator(DARK)
    >>> v = ev.evaluate([new_game()])
    >>> v.shape, bool(-1.0 <= v[0] <= 1.0)
    ((1,), True)
    """

    def __init__(self, rules: Rules, path: str = "") -> None:
        if not rules.is_dark:
            raise CheckpointError(f"the value network plays DARK rules only, not {rules.name}")
        self.rules = rules
        self.path = path or shipped_checkpoint("value")
        ckpt = load_checkpoint(self.path, kind="value")
        self.params: dict[str, Any] = arrays_to_params(ckpt.arrays, self.path, "value network")
        self.config = dict(ckpt.config)
        self.step = ckpt.step

    def evaluate(self, states: Sequence[State]) -> np.ndarray[Any, Any]:
        """``float64[len(states)]``: each state's value for its player to move (the exact
        result, ±1 or 0, for a finished game)."""
        out = np.zeros(len(states), np.float64)
        todo: list[int] = []
        for i, state in enumerate(states):
            result = outcome(state)
            if result is None:
                todo.append(i)
            elif result.winner is not None:
                out[i] = 1.0 if result.winner == state.to_move else -1.0
        if todo:
            x = np.stack([observe_numpy(states[i]) for i in todo])
            out[todo] = value_numpy(self.params, x, self.rules)
        return out


class ValueAgent:
    """One ply of expectimax on the value network (see the module docstring).

    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> agent = ValueAgent(DARK)
    >>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    True
    """

    name = "value"

    def __init__(self, rules: Rules, path: str = "", epsilon: float = 0.0) -> None:
        self.rules = rules
        self.evaluator = ValueEvaluator(rules, path)
        self.epsilon = float(epsilon)

    def action_values(self, state: State) -> dict[int, float]:
        """The expected value of each legal action for the player to move."""
        me = state.to_move
        actions = legal_actions(state)
        children: list[State] = []
        weights: list[tuple[int, float]] = []
        for action in actions:
            outcomes = mask_outcomes(chance_mask(state, action)) or (-1,)
            p = 1.0 / len(outcomes)
            for o in outcomes:
                children.append(apply(state, action, o))
                weights.append((action, p))
        values = self.evaluator.evaluate(children)
        totals = dict.fromkeys(actions, 0.0)
        for child, (action, p), v in zip(children, weights, values, strict=True):
            totals[action] += p * (float(v) if child.to_move == me else -float(v))
        return totals

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The action of the best expected value (ties within 1e-9 at random)."""
        actions = legal_actions(state)
        if self.epsilon and rng.random() < self.epsilon:
            return actions[int(rng.integers(len(actions)))]
        values = self.action_values(state)
        best = max(values.values())
        tied = [a for a in actions if values[a] >= best - 1e-9]
        return tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]


class SearchValue:
    """The value network as the Minimax search's evaluation (``minimax:eval=value``).

    ``evaluate(state)`` is ``scale`` times the network's value for ``player`` (the
    searcher), so a sure win the network sees is worth ``scale`` (below the search's
    exact win, above its draw at ``-contempt``); values are cached per state, since the
    search meets the same leaves again across iterations and transpositions.

    >>> from jungle_core import DARK, new_game
    >>> ev = SearchValue(DARK, 1)
    >>> abs(ev.evaluate(new_game())) <= 1000.0, ev.max_ply_change()
    (True, 2000.0)
    """

    def __init__(self, rules: Rules, player: int, path: str = "", scale: float = 1000.0) -> None:
        self.network = ValueEvaluator(rules, path)
        self.player = player
        self.scale = float(scale)
        self._cache: dict[State, float] = {}

    def evaluate(self, state: State) -> float:
        """The searcher's value of ``state`` (see the class docstring)."""
        found = self._cache.get(state)
        if found is None:
            if len(self._cache) > 500_000:
                self._cache.clear()
            v = float(self.network.evaluate([state])[0]) * self.scale
            found = self._cache[state] = v if state.to_move == self.player else -v
        return found

    def prefetch(self, states: Sequence[State]) -> None:
        """Evaluate the states not yet cached in one batched forward pass and cache them
        (the search calls this with a frontier node's children)."""
        todo = list({s: None for s in states if s not in self._cache})
        if not todo:
            return
        if len(self._cache) + len(todo) > 500_000:
            self._cache.clear()
        values = self.network.evaluate(todo) * self.scale
        for state, v in zip(todo, values.tolist(), strict=True):
            self._cache[state] = v if state.to_move == self.player else -v

    def max_ply_change(self) -> float:
        """The network's values span ``[-scale, scale]``: one ply changes at most ``2·scale``."""
        return 2.0 * self.scale
