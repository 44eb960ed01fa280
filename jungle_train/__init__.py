"""jungle_train: the learning agents and their training (docs/training.md).

- :mod:`jungle_train.dqn`: DQN on the JAX core, the whole loop jitted over thousands of
  games (``make_train(config)(key)``; :class:`jungle_train.dqn.DQNTrainer` for chunked,
  checkpointed runs);
- :mod:`jungle_train.tabular.qlearn`: tabular Q-learning, the table keyed by the hashable state;
- :mod:`jungle_train.tabular.approxq`: approximate Q-learning over 16 hand-made features;
- :mod:`jungle_train.ablate`: the discount-factor ablation.

Every learner runs under one loop (:func:`run_training`: checkpoints written atomically, a
JSON Lines metrics file, evaluation games through the arena, resume after a kill), is made
by :func:`make_trainer` from its kind and a config (:func:`resolve_config`: a named config,
a TOML or JSON file, or the defaults), and is played by
``make_agent("dqn" | "qlearn" | "approxq"[":path=FILE"], DARK)``: the agents join
:mod:`jungle_agents`' registry through the ``jungle.agents`` entry points, so the agents
package never imports this one. Importing this package imports nothing
heavy; the DQN module brings JAX.

Sits on top of :mod:`jungle_core` and :mod:`jungle_agents`.

>>> import tempfile
>>> trainer = make_trainer("qlearn", resolve_config("qlearn", None, 200))
>>> with tempfile.TemporaryDirectory() as out:
...     _ = run_training(trainer, out, steps=200, eval_games=2, eval_opponents=["random"])
"""

from jungle_train._trainers import KINDS, config_class, make_trainer, resolve_config
from jungle_train.common import CheckpointError, ConfigError, run_training

__all__ = [
    "KINDS",
    "CheckpointError",
    "ConfigError",
    "config_class",
    "make_trainer",
    "resolve_config",
    "run_training",
]
