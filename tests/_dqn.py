"""Shared by the DQN trainer's tests: the tiny configs they train with (``TINY``; the
faster-compiling ``LIGHT``, also the train-speed benchmark's test config)."""

from __future__ import annotations

import dataclasses

from jungle_train import dqn

TINY = dqn.Config(
    total_steps=128,
    num_envs=8,
    rollout_length=2,
    updates_per_rollout=2,
    hidden=(16,),
    dropout=0.0,
    observation="spec+clock",
    batch_size=8,
    n_step=3,
    buffer_size=64,
    min_buffer=16,
    draw_reward=-1.0,
    opponents="random=2,greedy=1,self=1",
)


# without Greedy opponents the program is much smaller, so it compiles much faster
LIGHT = dataclasses.replace(TINY, opponents="random=3,self=1", dropout=0.2)

LEAGUE = dataclasses.replace(
    LIGHT,
    opponents="random=1,league=1",
    pool_size=2,
    self_play_period=2,
    phase1_epsilon=(0.0, 0.0),
    phase2_epsilon=(0.0, 0.0),
)
"""Half the games in the league, a pool of two snapshots taken every second update,
and no exploration (so that every decision is the network's own)."""
