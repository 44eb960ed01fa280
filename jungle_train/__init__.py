"""jungle_train: training of the learning agents on the JAX core (tabular Q, approximate Q, DQN).

Sits on top of :mod:`jungle_core` and :mod:`jungle_agents`.
"""

__all__: list[str] = []
