"""The learners on the pure DARK core: tabular Q-learning and approximate (linear) Q-learning.

One algorithm a module: :mod:`jungle_train.tabular.qlearn` (the table keyed by the hashable
state) and :mod:`jungle_train.tabular.approxq` (a linear Q over 16 hand-made features).
Both train on the shaped reward of the training game they share, with numpy only.
"""
