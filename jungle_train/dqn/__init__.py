"""DQN on the JAX core: thousands of DARK games at once, the whole loop jitted.

In the style of PureJaxRL / CleanRL: :class:`Config` (a frozen, typed dataclass; derived
values are properties) and :func:`make_train` ``(config) -> train(key)``, where ``train``
is a pure function whose whole loop is jitted and scanned::

    round = rollout of `rollout_length` iterations over `num_envs` games
              (each iteration: the learner acts in every game, the opponent replies
               inside the same step, finished games reset, the learner's transition
               is kept)
            -> add the [num_envs, rollout_length] block to the prioritised replay
            -> `updates_per_rollout` updates (sample, double-DQN n-step loss, Adam),
               target sync and self-play snapshot on their periods
    train(key) = init(key), then `num_rounds` rounds in a `lax.scan`; the metrics of each
                 round are the only thing that leaves the device.

:class:`DQNTrainer` runs the same rounds in chunks for ``jungle train dqn`` (checkpoints,
metrics file, evaluation through the arena, resume after a kill); chunked and in-one-go
runs of the same key give the same network.

**Configs** (docs/training.md measures them). :data:`SPEC_CONFIG` is the reference DQN:
the 336-float observation, MLP 512-512-512 with dropout 0.2, Adam 1e-4, γ 0.99, batch
64, Huber, gradient clip 1.0, double DQN, prioritised replay (β 0.4 → 1.0), rewards for
reveals (+0.1), plain moves (+0.05), captures (+0.2·rank), own pieces lost (−0.3) and
the result (±10 / 0), and a two-phase curriculum (the first 40 % explores with the Greedy
heuristic's action, ε 0.9 → 0.02; then uniformly, ε 0.5 → 0.02), against random
opponents. Its rewards pay for stalling until the 100-ply draw, so :data:`CPU_CONFIG`
(what learned in 30 minutes on a 2-core CPU) pays for material only and charges each
decision, shows the network the no-removal clock and the per-square planes
(:func:`enemy_fields`, :func:`battle_planes`), and uses the dueling convolutional
network (:class:`ConvQNetwork`) against 40 % Greedy opponents, half of the games after
the first starting from random endgames. :data:`GPU_CONFIG` is :data:`CPU_CONFIG` with
sixteen times the games and updates a round (the same replay ratio and schedules), for
one GPU. :data:`LEAGUE_CONFIG` trains :data:`CPU_CONFIG`'s learner, seeing
:func:`danger_planes` too, in a league inside the jitted loop (:data:`OPPONENT_KINDS`:
random, Greedy, the Q-learners' one-ply look-ahead, and the current network with a pool
of its past snapshots drawn by prioritised fictitious self-play, ``_league``);
``frozen_opponent`` trains against a fixed checkpoint instead,
to measure how much it leaves to exploit.

**Layout.** The algorithm is split along its jobs into private modules, each readable
alone and each a step of the loop above: ``_config`` (the config and the named configs,
no JAX), ``_league`` (the snapshot pool and the draw of each league game's member),
``_observe`` (the network's input and the network), ``_replay`` (compact
positions, the prioritised buffer, importance weights), ``_rewards`` (the learner's
rewards, the ε and β schedules), ``_rollout`` (acting in every game: the opponents'
slots, restarts, endgame starts, the transitions), ``_learner`` (the loss, the update and
the round) and ``_trainer`` (the whole run jitted, and the chunked trainer on the one
base of every jitted learner, :class:`jungle_train.jitted.JaxRoundTrainer`). This module
is the public API; the networks, Greedy and the board arithmetic are
:mod:`jungle_train.jitted`'s, shared with the other jitted learners.

**Devices.** The batch of games (environment states, and the replay's leading axis) is
sharded over every device of every process (:class:`jungle_train.common.GameSharding`,
a 1-D mesh named ``"games"``); parameters and optimiser state are replicated, so one CPU,
one GPU, eight, or several hosts run the same computation: XLA all-reduces the gradients
of a batch sampled across the shards. Across processes, call
:func:`jungle_train.common.distributed.initialize` on each before building the trainer
(``jungle train dqn --coordinator HOST:PORT --num-processes N --process-id I``); process
0 alone writes the checkpoints.
"""

from jungle_train.dqn._config import (
    CONFIGS,
    CPU_CONFIG,
    GPU_CONFIG,
    KIND,
    LEAGUE_CONFIG,
    OPPONENT_KINDS,
    SPEC_CONFIG,
    Config,
)
from jungle_train.dqn._learner import double_q_loss
from jungle_train.dqn._observe import (
    battle_planes,
    danger_planes,
    enemy_fields,
    make_network,
    observe,
)
from jungle_train.dqn._replay import Position, Transition
from jungle_train.dqn._rollout import RunnerState
from jungle_train.dqn._trainer import DQNTrainer, make_train, summarize_rounds
from jungle_train.jitted import ConvQNetwork, QNetwork

__all__ = [
    "CONFIGS",
    "CPU_CONFIG",
    "GPU_CONFIG",
    "KIND",
    "LEAGUE_CONFIG",
    "OPPONENT_KINDS",
    "SPEC_CONFIG",
    "Config",
    "ConvQNetwork",
    "DQNTrainer",
    "Position",
    "QNetwork",
    "RunnerState",
    "Transition",
    "battle_planes",
    "danger_planes",
    "double_q_loss",
    "enemy_fields",
    "make_network",
    "make_train",
    "observe",
    "summarize_rounds",
]
