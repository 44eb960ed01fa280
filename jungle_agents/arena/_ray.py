"""The optional Ray backend of the arena (the ``ray`` extra): the same games as Ray tasks.

Each game is one task; ``workers`` caps the tasks in flight (default: the cluster's CPUs).
Connects to the cluster at ``address`` (``--ray-address``), else to the one ``RAY_ADDRESS``
names, else starts a local instance for the run. A worker that dies mid-game (killed, out
of memory, its node lost) costs nothing: Ray runs the task again (up to
:data:`TASK_RETRIES` times), the game is seeded, so the retry plays the same game, and
only the finished game reaches the games file, once.
The submission loop is the process pool's (:func:`jungle_agents.arena._schedule.run_bounded`):
at most twice the cap in flight, drawn from the tasks as games finish, every task in
flight cancelled when the run is interrupted or a game fails.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Sequence
from typing import Any

from jungle_agents.arena._schedule import Finished, Task, run_bounded, run_task
from jungle_core import import_optional

__all__ = ["TASK_RETRIES", "run_ray"]

TASK_RETRIES = 3
"""How often Ray runs a game again whose worker died (Ray's ``max_retries``)."""


def run_ray(
    tasks: Iterable[Task],
    finished: Finished,
    workers: int | None,
    plugins: Sequence[str],
    address: str | None = None,
) -> None:
    """Run arena tasks on Ray, calling ``finished(entry)`` as each game completes;
    ``address``: the cluster to connect to (default: ``RAY_ADDRESS``, else a local one).

    Without Ray installed, raises :class:`jungle_core.MissingExtraError` naming the ``ray``
    extra, before any game starts.
    """
    # an optional extra: imported when this backend is asked for, not with the arena;
    # partly typed, so used through Any
    ray: Any = import_optional("ray", "the arena's ray backend")
    started = False
    if not ray.is_initialized():
        # this run's connection (a cluster's, or a local instance's), closed at its end
        # the cluster named, else RAY_ADDRESS's, else a new local instance: never a cluster
        # that an earlier `ray start` happened to leave recorded on this machine
        address = address or os.environ.get("RAY_ADDRESS") or "local"
        options = {} if address != "local" else {"include_dashboard": False}
        ray.init(address=address, log_to_driver=False, **options)
        started = True
    try:
        runner = _RayTasks(ray, tuple(plugins))
        limit = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        run_bounded(tasks, runner, 2 * limit, finished)
    finally:
        if started:
            ray.shutdown()


class _RayTasks:
    """A :class:`jungle_agents.arena._schedule.Runner` of Ray tasks."""

    def __init__(self, ray: Any, plugins: tuple[str, ...]) -> None:
        self._ray = ray
        self._play = ray.remote(max_retries=TASK_RETRIES)(_play)
        self._plugins = plugins
        self._pending: list[Any] = []

    def submit(self, task: Task) -> None:
        self._pending.append(self._play.remote(task, self._plugins))

    def next_result(self) -> dict[str, Any]:
        ready, self._pending = self._ray.wait(self._pending, num_returns=1)
        entry: dict[str, Any] = self._ray.get(ready[0])
        return entry

    def stop(self) -> None:
        for ref in self._pending:
            self._ray.cancel(ref, force=True)
        self._pending = []


def _play(task: Task, plugins: Sequence[str]) -> dict[str, Any]:
    """One Ray task: import the plugins (they register agent kinds), play the game."""
    for module in plugins:
        importlib.import_module(module)
    return run_task(task)
