"""Leaf evaluations for the Minimax search, by name: ``minimax:eval=NAME``.

``hand`` is the hand-written evaluation (the default, built in; docs/agents.md). Other packages add
theirs with :func:`register_evaluation` from a ``jungle.agents`` entry point, as the
learned agents register themselves: ``jungle_train`` registers ``value``, its value
network (``minimax:eval=value``; ``value_path=FILE`` for another checkpoint). An
evaluation is any :class:`~jungle_agents.minimax._base.Evaluator`: ``evaluate(state)``,
the value for the searcher's player, and ``max_ply_change()``, a bound for Star1.

>>> "hand" in evaluation_names()
True
"""

from __future__ import annotations

from collections.abc import Callable

from jungle_agents._base import AgentSpecError, load_plugins
from jungle_agents.minimax._base import Evaluator
from jungle_core import Rules

__all__ = [
    "HAND",
    "EvaluationFactory",
    "evaluation_names",
    "make_evaluation",
    "register_evaluation",
]

HAND = "hand"
"""The name of the built-in hand-written evaluation."""

EvaluationFactory = Callable[[Rules, int, str], Evaluator]
"""``factory(rules, player, path) -> Evaluator``: ``path`` is the evaluation's file
(``""``: its default)."""

_EVALUATIONS: dict[str, tuple[EvaluationFactory, str]] = {}


def register_evaluation(name: str, factory: EvaluationFactory, description: str) -> None:
    """Make ``minimax:eval=name`` build its leaf evaluation with ``factory`` (replacing
    an earlier registration of the same name)."""
    if name == HAND:
        raise ValueError(f"{HAND!r} is the built-in evaluation and cannot be replaced")
    _EVALUATIONS[name] = (factory, description)


def evaluation_names() -> tuple[str, ...]:
    """The evaluation names ``minimax:eval=`` accepts (plugins loaded)."""
    load_plugins()
    return (HAND, *sorted(_EVALUATIONS))


def make_evaluation(name: str, rules: Rules, player: int, path: str = "") -> Evaluator | None:
    """The evaluation ``name`` for ``player`` (None for ``hand``: the searcher's own);
    :class:`AgentSpecError` for an unknown name or one that cannot be built."""
    if name == HAND:
        if path:
            raise AgentSpecError("value_path is for a network evaluation, not eval=hand")
        return None
    load_plugins()
    found = _EVALUATIONS.get(name)
    if found is None:
        raise AgentSpecError(
            f"unknown evaluation eval={name!r}; valid: {', '.join(evaluation_names())}"
        )
    try:
        return found[0](rules, player, path)
    except (OSError, ValueError) as error:
        raise AgentSpecError(f"eval={name}: {error}") from error
