"""Training on several processes or hosts: JAX's multi-controller runtime.

Every process runs the same program on the same global arrays: a jitted learner's
batch of games (and its replay) is sharded over ``jax.devices()``, the devices of every
process (:class:`GameSharding`), so each process computes and holds only its own
games, and XLA all-reduces what crosses the shards (the gradients of a batch sampled
from the whole replay, the metrics' sums). Every random key is derived from the run's
one seed inside the jitted program, so a run on two processes of one device each is
the same computation as a run in one process with two devices.

:func:`initialize` joins the processes (``jax.distributed.initialize``; CPUs exchange
their collectives over gloo). :func:`jungle_train.common._run.run_training` then lets process
0 alone write the run folder (``run.npz``, ``agent.npz``, ``metrics.jsonl``) and read
it back on resume (:func:`broadcast_arrays` hands the state to the others), so only
process 0's host needs the folder.

Without ``jax`` imported (the tabular learners) there is one process::

    >>> process_count(), is_main()
    (1, True)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from jungle_train.common._errors import ConfigError

__all__ = [
    "GameSharding",
    "agree",
    "broadcast_arrays",
    "initialize",
    "is_main",
    "place_like",
    "process_count",
    "process_index",
    "wanted",
]

_SLURM = ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID")
"""What ``jax.distributed.initialize()`` reads under SLURM (inside ``srun``)."""


def wanted(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    environ: dict[str, str] | None = None,
) -> bool:
    """Whether a run should join other processes: an argument is given, or the
    environment names a coordinator (``JAX_COORDINATOR_ADDRESS``) or holds the
    variables of a SLURM step of several tasks.

    >>> wanted(), wanted("10.0.0.1:1234", 2, 0)
    (False, True)
    >>> wanted(environ={"SLURM_JOB_ID": "7", "SLURM_STEP_NODELIST": "n[1-2]",
    ...     "SLURM_NTASKS": "2", "SLURM_PROCID": "1", "SLURM_LOCALID": "0"})
    True
    """
    env = os.environ if environ is None else environ
    if coordinator is not None or num_processes is not None or process_id is not None:
        return True
    if env.get("JAX_COORDINATOR_ADDRESS"):
        return True
    return all(name in env for name in _SLURM) and env["SLURM_NTASKS"].strip() not in ("", "1")


def initialize(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    heartbeat_timeout_s: int = 100,
    initialization_timeout_s: int = 300,
) -> None:
    """Join this process to the others: ``jax.distributed.initialize`` with CPU
    collectives over gloo. Call it before anything else uses JAX.

    ``coordinator`` (``"host:port"`` of process 0), ``num_processes`` and ``process_id``
    left ``None`` come from ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and
    ``JAX_PROCESS_ID`` when set, else JAX detects them (SLURM, Open MPI, Kubernetes).
    A process that stops sending heartbeats for ``heartbeat_timeout_s`` seconds is
    declared dead and the others stop with an error, so a killed process never leaves
    the rest waiting for ever; ``initialization_timeout_s`` bounds the wait for all of
    them to join.
    """
    for name, value in (("num_processes", num_processes), ("process_id", process_id)):
        if value is not None and value < (1 if name == "num_processes" else 0):
            raise ConfigError(f"{name} must be >= {1 if name == 'num_processes' else 0}")
    if num_processes is not None and process_id is not None and process_id >= num_processes:
        raise ConfigError(f"process_id {process_id} is not below num_processes {num_processes}")
    coordinator = coordinator or os.environ.get("JAX_COORDINATOR_ADDRESS") or None
    num_processes = num_processes if num_processes is not None else _env_int("JAX_NUM_PROCESSES")
    process_id = process_id if process_id is not None else _env_int("JAX_PROCESS_ID")
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")  # type: ignore[no-untyped-call]
    jax.distributed.initialize(
        coordinator_address=coordinator,
        num_processes=num_processes,
        process_id=process_id,
        heartbeat_timeout_seconds=heartbeat_timeout_s,
        initialization_timeout=initialization_timeout_s,
    )


def _env_int(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{name}={text!r} is not an integer") from None


def process_index() -> int:
    """This process's index (0 without ``jax.distributed``)."""
    jax = sys.modules.get("jax")
    return 0 if jax is None else int(jax.process_index())


def process_count() -> int:
    """The processes of the run (1 without ``jax.distributed``)."""
    jax = sys.modules.get("jax")
    return 1 if jax is None else int(jax.process_count())


def is_main() -> bool:
    """Whether this is process 0, the one that writes the run's files."""
    return process_index() == 0


def agree(value: int) -> int:
    """Process 0's ``value`` (an int32), on every process.

    >>> agree(3)
    3
    """
    if process_count() == 1:
        return value
    from jax.experimental import multihost_utils

    return int(multihost_utils.broadcast_one_to_all(np.int32(value)))


def broadcast_arrays(arrays: Sequence[np.ndarray[Any, Any]]) -> list[np.ndarray[Any, Any]]:
    """Process 0's ``arrays`` on every process; the others pass arrays of the same
    shapes and dtypes (their values are ignored)."""
    if process_count() == 1:
        return list(arrays)
    from jax.experimental import multihost_utils

    out = multihost_utils.broadcast_one_to_all(list(arrays))
    # the broadcast is a sum with zeros, which turns booleans into integers
    return [np.asarray(a).astype(b.dtype) for a, b in zip(out, arrays, strict=True)]


def place_like(host: np.ndarray[Any, Any], like: Any) -> Any:
    """The global array of value ``host`` (the same on every process) laid out as the
    global array ``like``: each process puts its own shards on its devices."""
    import jax

    return jax.make_array_from_callback(host.shape, like.sharding, lambda index: host[index])


class GameSharding:
    """The batch of games (a pytree's leading axis) sharded over every device of every
    process, a 1-D mesh named ``"games"``; the rest (networks, optimiser) replicated.

    >>> import jax
    >>> sharding = GameSharding()
    >>> sharding.devices == len(jax.devices())
    True
    """

    def __init__(self) -> None:
        import jax
        from jax.sharding import Mesh

        self.mesh = Mesh(np.array(jax.devices()), ("games",))
        self.devices = len(jax.devices())

    def __call__(self, tree: Any) -> Any:
        """Inside a jitted function, constrain each leaf of ``tree`` whose leading axis
        divides among the devices to be split along it (one device: ``tree`` as is)."""
        if self.devices == 1:
            return tree
        import jax
        from jax.sharding import NamedSharding, PartitionSpec

        spec = NamedSharding(self.mesh, PartitionSpec("games"))  # type: ignore[no-untyped-call]
        return jax.tree.map(
            lambda a: (
                jax.lax.with_sharding_constraint(a, spec)  # type: ignore[no-untyped-call]
                if a.ndim and a.shape[0] % self.devices == 0
                else a
            ),
            tree,
        )
