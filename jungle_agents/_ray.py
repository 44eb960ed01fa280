"""The optional Ray backend of the arena (the ``ray`` extra): the same games as Ray tasks.

Each game is one task; ``workers`` caps the tasks in flight (default: the cluster's CPUs).
Connects to a running cluster when ``RAY_ADDRESS`` is set, else starts a local instance.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["run_ray"]


def run_ray(
    tasks: Iterable[Any],
    finished: Callable[[dict[str, Any]], None],
    workers: int | None,
    plugins: Sequence[str],
) -> None:
    """Run arena tasks on Ray, calling ``finished(entry)`` as each game completes."""
    try:
        import ray as ray_module
    except ImportError:
        raise RuntimeError(
            "the ray backend needs the 'ray' extra: pip install 'jungle[ray]'"
        ) from None
    ray: Any = ray_module  # partly typed: used through Any
    started = False
    if not ray.is_initialized():
        # a local instance for this run (call ray.init yourself for a cluster or a dashboard)
        ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
        started = True
    try:
        play = ray.remote(_play)
        plugin_list = tuple(plugins)
        limit = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        queue = iter(tasks)
        pending = [
            play.remote(t, plugin_list) for _, t in zip(range(2 * limit), queue, strict=False)
        ]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                finished(ray.get(ref))
                nxt = next(queue, None)
                if nxt is not None:
                    pending.append(play.remote(nxt, plugin_list))
    except BaseException:
        for ref in locals().get("pending", []):
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()


def _play(task: Any, plugins: Sequence[str]) -> dict[str, Any]:
    import importlib

    from jungle_agents.arena import _run_task

    for module in plugins:
        importlib.import_module(module)
    return _run_task(task)
