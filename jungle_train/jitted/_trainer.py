"""The one trainer of every jitted JAX learner (the DQN, the value network, AlphaZero).

A learner written PureJaxRL-style has ``init(key) -> runner`` and ``round(runner) ->
(runner, metrics)``, pure and jittable (its :class:`RoundParts`). :class:`JaxRoundTrainer`
holds everything the learners share, so that each subclass states only what differs: its
``kind``, how its parts are built from a config (:meth:`JaxRoundTrainer.make_parts`), the
XLA options of its round, how a chunk's rounds make one metrics line
(:meth:`JaxRoundTrainer.summarize`) and which agent plays its checkpoint
(:meth:`JaxRoundTrainer.agent`). The base gives both ways of running the rounds from the
same parts: the whole run as one jitted ``lax.scan`` (:meth:`JaxRoundTrainer.train_function`,
each learner's ``make_train``) and the chunked run of ``jungle train``
(:class:`jungle_train.common._run.Trainer`: a chunk of whole rounds at a time, the run
state as one checkpoint of its leaves, the playing checkpoint of its ``params``); the two
give the same network for the same key.

Under ``jax.distributed`` (:mod:`jungle_train.common._distributed`) every process runs the
same rounds on the global arrays, every process gathers what a checkpoint holds and
process 0 alone writes it; on resume process 0 alone reads it and hands it to the others.
A learner whose parts do not shard their games over the processes
(:class:`jungle_train.common._distributed.GameSharding` as ``parts.games``) is refused
there, as each process would play the whole batch.

The first chunk of a run spends most of its time compiling the round; each chunk's
metrics say how long (``compile_s``, measured by :class:`CompileTimer`), so the rate of
training leaves it out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import jax
import jax.monitoring
import jax.numpy as jnp
import numpy as np

from jungle_train.common import (
    COMPILE_S,
    CheckpointError,
    ConfigError,
    GameSharding,
    agree,
    broadcast_arrays,
    config_to_json,
    is_main,
    load_checkpoint,
    place_like,
    process_count,
    save_checkpoint,
)
from jungle_train.jitted._pytree_io import leaves_from_arrays, leaves_to_arrays, params_to_arrays

__all__ = ["CompileTimer", "JaxRoundTrainer", "RoundParts"]

_COMPILE_EVENTS = frozenset(
    {
        "/jax/core/compile/jaxpr_trace_duration",
        "/jax/core/compile/jaxpr_to_mlir_module_duration",
        "/jax/core/compile/backend_compile_duration",
    }
)
"""The events JAX reports (``jax.monitoring``) for tracing, lowering and compiling."""


class CompileTimer:
    """While entered, the seconds JAX spends tracing, lowering and compiling (the union
    of the spans it reports, so a function traced inside another counts once).

    >>> import jax, jax.numpy as jnp
    >>> with CompileTimer() as timer:
    ...     _ = jax.jit(lambda x: x * 2 + 1)(jnp.ones(3))
    >>> timer.seconds > 0
    True
    """

    def __init__(self) -> None:
        self._spans: list[tuple[float, float]] = []

    def _listen(self, event: str, duration_secs: float, **kwargs: str | int) -> None:
        if event in _COMPILE_EVENTS:
            end = time.perf_counter()
            self._spans.append((end - duration_secs, end))

    def __enter__(self) -> CompileTimer:
        jax.monitoring.register_event_duration_secs_listener(self._listen)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        jax.monitoring.unregister_event_duration_listener(self._listen)

    @property
    def seconds(self) -> float:
        """The seconds spent compiling so far."""
        total, reach = 0.0, -math.inf
        for start, end in sorted(self._spans):
            if end > reach:
                total += end - max(start, reach)
                reach = end
        return total


class RoundParts(Protocol):
    """What a jitted learner provides: its first runner state and one round."""

    def init(self, key: jax.Array) -> Any:
        """The runner state (a pytree with ``params`` and ``rounds: int32[]``)."""
        ...

    def round(self, runner: Any) -> tuple[Any, dict[str, jax.Array]]:
        """One round: the next runner state and the round's scalar metrics."""
        ...


P = TypeVar("P", bound=RoundParts)


class JaxRoundTrainer(Generic[P]):
    """:class:`jungle_train.common._run.Trainer` over a learner's :class:`RoundParts` ``P``.

    A subclass sets :attr:`kind` (and :attr:`compiler_options` where its round needs
    them) and defines :meth:`make_parts`, :meth:`summarize` and :meth:`agent`; everything
    else (compiling, chunks, checkpoints, the one-writer rule across processes) is here.
    ``parts`` replaces the ones :meth:`make_parts` would build (tests pass their own)."""

    kind: str = ""
    """The agent kind its checkpoints play as."""
    compiler_options: ClassVar[dict[str, Any] | None] = None
    """XLA options of the round (``jax.jit``'s ``compiler_options``)."""

    def __init__(self, config: Any, parts: P | None = None) -> None:
        parts = self.make_parts(config) if parts is None else parts
        if process_count() > 1 and not isinstance(getattr(parts, "games", None), GameSharding):
            # unsharded, each process would run the whole batch and the gathered
            # checkpoint would hold every process's copy
            raise ConfigError(
                f"{type(self).__name__} does not shard its games over processes; "
                "run it in one process (without jax.distributed)"
            )
        self.config = config
        self._parts: P = parts
        self._init = jax.jit(parts.init)
        self._round = jax.jit(parts.round, compiler_options=self.compiler_options)

    @classmethod
    def make_parts(cls, config: Any) -> P:
        """The learner's parts for ``config`` (built once per trainer)."""
        raise NotImplementedError

    @classmethod
    def train_function(cls, config: Any) -> Callable[[jax.Array], tuple[Any, dict[str, Any]]]:
        """``train(key) -> (runner, metrics)``: ``config.num_rounds`` rounds from
        ``init(key)`` as one jitted ``lax.scan`` (each learner's ``make_train``);
        ``metrics`` maps each name to its value per round. The rounds are the ones the
        chunked trainer runs, so both give the same runner for the same key."""
        parts = cls.make_parts(config)

        def train(key: jax.Array) -> tuple[Any, dict[str, Any]]:
            runner = parts.init(key)
            return jax.lax.scan(lambda r, _: parts.round(r), runner, None, length=config.num_rounds)

        return jax.jit(train, compiler_options=cls.compiler_options)

    def init(self, seed: int) -> Any:
        """A fresh run from ``jax.random.key(seed)``."""
        return self._init(jax.random.key(seed))

    def advance(self, state: Any, steps: int) -> tuple[Any, dict[str, Any]]:
        """Whole rounds covering at least ``steps`` steps; one metrics line for them
        (:meth:`summarize`), with ``compile_s`` where the chunk compiled."""
        rounds = max(1, math.ceil(steps / self.config.steps_per_round))
        history = []
        with CompileTimer() as timer:
            for _ in range(rounds):
                state, metrics = self._round(state)
                history.append(metrics)
            history = jax.device_get(history)
        line = self.summarize(history)
        if timer.seconds > 0:
            line[COMPILE_S] = timer.seconds
        return state, line

    def summarize(self, history: list[dict[str, Any]]) -> dict[str, float]:
        """One metrics line from the metrics of several rounds."""
        raise NotImplementedError

    def steps_done(self, state: Any) -> int:
        """Steps so far (whole rounds)."""
        return int(state.rounds) * int(self.config.steps_per_round)

    def _write(self, path: str, arrays: dict[str, Any], state: Any, **extra: Any) -> None:
        if not is_main():  # every process gathered; one writes
            return
        save_checkpoint(
            path,
            arrays,
            kind=self.kind,
            config=config_to_json(self.config),
            step=self.steps_done(state),
            **extra,
        )

    def save(self, state: Any, path: str) -> None:
        """The whole run state (every leaf: networks, optimiser, replay, games, key)."""
        self._write(path, leaves_to_arrays(state), state)

    def load(self, path: str) -> Any:
        """The run state :meth:`save` wrote, for this config. Across processes, process
        0 reads the file and the others receive its arrays (a refusal on process 0 is a
        :class:`CheckpointError` on every process)."""
        template = jax.eval_shape(self._parts.init, jax.random.key(0))
        if process_count() == 1:
            ckpt = load_checkpoint(path, kind=self.kind, config=config_to_json(self.config))
            return leaves_from_arrays(template, dict(ckpt.arrays), path)
        return self._load_across_processes(path, template)

    def _load_across_processes(self, path: str, template: Any) -> Any:
        fresh = self._init(jax.random.key(0))  # every leaf's global layout
        leaves, treedef = jax.tree.flatten(fresh)
        layouts = [jax.random.key_data(a) if _is_key(a) else a for a in leaves]
        arrays: dict[str, Any] = {}
        error: CheckpointError | None = None
        if is_main():
            try:
                ckpt = load_checkpoint(path, kind=self.kind, config=config_to_json(self.config))
                leaves_from_arrays(template, dict(ckpt.arrays), path)  # refuses a mismatch
                arrays = dict(ckpt.arrays)
            except CheckpointError as e:
                error = e
        if agree(int(error is None)) == 0:
            raise error or CheckpointError(f"{path}: process 0 could not read this run state")
        received = broadcast_arrays(
            [
                np.asarray(arrays[f"run/{i:04d}"]) if arrays else np.zeros(a.shape, a.dtype)
                for i, a in enumerate(layouts)
            ]
        )
        out = []
        for leaf, layout, value in zip(leaves, layouts, received, strict=True):
            placed = place_like(value, layout)
            out.append(jax.random.wrap_key_data(placed) if _is_key(leaf) else placed)
        return jax.tree.unflatten(treedef, out)

    def save_agent(self, state: Any, path: str, **extra: Any) -> None:
        """The playing checkpoint: the network's parameters and the config."""
        self._write(path, params_to_arrays(state.params), state, **extra)

    def agent(self, path: str) -> Any:
        """The agent that plays from a checkpoint :meth:`save_agent` wrote."""
        raise NotImplementedError


def _is_key(a: Any) -> bool:
    return bool(jnp.issubdtype(a.dtype, jax.dtypes.prng_key))
