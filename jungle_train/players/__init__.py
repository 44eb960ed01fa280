"""The learned agents as players: checkpoints in, legal actions out, numpy only.

A network trained with JAX is played here with numpy (:class:`DQNAgent`, :class:`ValueAgent`),
so the agents of the registry play on the bare install. The shipped checkpoints are found by
kind (:func:`shipped_checkpoint`).
"""

from jungle_train.players._numpy import (
    BATTLE_PLANES,
    DANGER_PLANES,
    FIELD_PLANES,
    OBSERVATIONS,
    SHIPPED,
    DQNAgent,
    arrays_to_params,
    battle_table,
    coordinate_planes,
    danger_table,
    extra_inputs,
    field_table,
    shipped_checkpoint,
    square_distances,
)
from jungle_train.players._value import SearchValue, ValueAgent, ValueEvaluator

__all__ = [
    "BATTLE_PLANES",
    "DANGER_PLANES",
    "FIELD_PLANES",
    "OBSERVATIONS",
    "SHIPPED",
    "DQNAgent",
    "SearchValue",
    "ValueAgent",
    "ValueEvaluator",
    "arrays_to_params",
    "battle_table",
    "coordinate_planes",
    "danger_table",
    "extra_inputs",
    "field_table",
    "shipped_checkpoint",
    "square_distances",
]
