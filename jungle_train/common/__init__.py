"""What every learner shares: the training loop, configs, checkpoints, metrics and errors.

:func:`run_training` runs any :class:`Trainer` in chunks (atomic checkpoints, a JSON Lines
metrics file, evaluation games through the arena, resume after a kill); configs are frozen
dataclasses read from TOML or JSON; checkpoints are ``.npz`` files with a JSON header,
never pickles. numpy only: JAX is imported by the jitted learners, not here.
"""

from jungle_train.common import _distributed as distributed
from jungle_train.common._checkpoint import atomic_write, load_checkpoint, save_checkpoint
from jungle_train.common._config import (
    RoundSchedule,
    config_from_mapping,
    config_to_json,
    load_config,
)
from jungle_train.common._distributed import (
    GameSharding,
    agree,
    broadcast_arrays,
    is_main,
    place_like,
    process_count,
)
from jungle_train.common._errors import CheckpointError, ConfigError, import_train_module
from jungle_train.common._metrics import COMPILE_S, LOSS, SCORE, TRAIN_SCORE
from jungle_train.common._opponents import parse_mix, parse_weights
from jungle_train.common._run import Trainer, evaluate, run_training

__all__ = [
    "COMPILE_S",
    "LOSS",
    "SCORE",
    "TRAIN_SCORE",
    "CheckpointError",
    "ConfigError",
    "GameSharding",
    "RoundSchedule",
    "Trainer",
    "agree",
    "atomic_write",
    "broadcast_arrays",
    "config_from_mapping",
    "config_to_json",
    "distributed",
    "evaluate",
    "import_train_module",
    "is_main",
    "load_checkpoint",
    "load_config",
    "parse_mix",
    "parse_weights",
    "place_like",
    "process_count",
    "run_training",
    "save_checkpoint",
]
