"""Agents for the worker-pool tests, as a plugin module: spawned workers import it by name.

``sleepy`` takes an hour a move (a game the pool must not wait for when it stops),
``crash`` kills its own process (a worker dying mid-game), ``fail`` raises;
``crash_once`` plays as ``random`` does, except that the first time any process asks it
for a move while the file named by ``JUNGLE_CRASH_ONCE`` does not exist, it creates the
file and kills its own process (one worker lost mid-game, once in a whole run).
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np

from jungle_agents import register_agent
from jungle_core import Rules, State, legal_actions

NAMES = ("sleepy", "crash", "fail", "crash_once")


class _Agent:
    name = "test"

    def __init__(self, rules: Rules) -> None:
        self.rules = rules


class Sleepy(_Agent):
    name = "sleepy"

    def act(self, state: State, rng: np.random.Generator) -> int:
        time.sleep(3600)
        return legal_actions(state)[0]


class Crash(_Agent):
    name = "crash"

    def act(self, state: State, rng: np.random.Generator) -> int:
        os.kill(os.getpid(), signal.SIGKILL)
        return legal_actions(state)[0]


class Fail(_Agent):
    name = "fail"

    def act(self, state: State, rng: np.random.Generator) -> int:
        raise ZeroDivisionError("no move today")


class CrashOnce(_Agent):
    name = "crash_once"

    def act(self, state: State, rng: np.random.Generator) -> int:
        marker = os.environ.get("JUNGLE_CRASH_ONCE")
        if marker and not os.path.exists(marker):
            with open(marker, "x"):
                pass
            os.kill(os.getpid(), signal.SIGKILL)
        actions = legal_actions(state)
        return actions[int(rng.integers(len(actions)))]


register_agent("sleepy", Sleepy, {}, "an hour a move", replace=True)
register_agent("crash", Crash, {}, "kills its own process", replace=True)
register_agent("fail", Fail, {}, "raises", replace=True)
register_agent("crash_once", CrashOnce, {}, "random, but kills its process once", replace=True)
