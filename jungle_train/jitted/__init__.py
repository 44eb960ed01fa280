"""The base of the learners jitted on the JAX core (the DQN, the value network, AlphaZero).

The chunked trainer of a jitted learner (:class:`JaxRoundTrainer`), cheap random choices
inside ``jit`` (:func:`uniform_legal`, :func:`coin`), the board arithmetic of the shaped
reward, the Greedy agent and the Q-learners' one-ply look-ahead as JAX opponents
(:class:`JaxGreedy`, :class:`JaxLookahead`), random endgame starts and the flax networks.
Importing this package imports JAX (the ``train`` extra).
"""

from jungle_train.jitted._board import potential, present, removed_ranks
from jungle_train.jitted._greedy import JaxGreedy
from jungle_train.jitted._lookahead import JaxLookahead
from jungle_train.jitted._nets import ConvQNetwork, QNetwork, ShiftConv, ValueNetwork
from jungle_train.jitted._sampling import best_action, coin, hash_words, uniform_legal
from jungle_train.jitted._starts import random_endgame
from jungle_train.jitted._trainer import JaxRoundTrainer

__all__ = [
    "ConvQNetwork",
    "JaxGreedy",
    "JaxLookahead",
    "JaxRoundTrainer",
    "QNetwork",
    "ShiftConv",
    "ValueNetwork",
    "best_action",
    "coin",
    "hash_words",
    "potential",
    "present",
    "random_endgame",
    "removed_ranks",
    "uniform_legal",
]
