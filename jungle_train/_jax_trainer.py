"""The chunked runner of a jitted JAX learner (the DQN, the value network, AlphaZero).

A learner written PureJaxRL-style has ``init(key) -> runner`` and ``round(runner) ->
(runner, metrics)``, pure and jittable; :class:`JaxRoundTrainer` compiles both once and
implements :class:`jungle_train._run.Trainer` over them: whole rounds a chunk at a time,
the run state as one checkpoint of its leaves, the playing checkpoint of its ``params``.
Under ``jax.distributed`` every process computes and process 0 alone writes.

The first chunk of a run spends most of its time compiling the round; each chunk's
metrics say how long (``compile_s``, measured by :class:`CompileTimer`), so the rate of
training leaves it out.
"""

from __future__ import annotations

import math
import time
from types import TracebackType
from typing import Any, Protocol

import jax
import jax.monitoring

from jungle_train._checkpoint import load_checkpoint, save_checkpoint
from jungle_train._config import config_to_json
from jungle_train._metrics import COMPILE_S
from jungle_train._pytree_io import leaves_from_arrays, leaves_to_arrays, params_to_arrays

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


class JaxRoundTrainer:
    """:class:`jungle_train._run.Trainer` over a learner's :class:`RoundParts` (a subclass
    sets ``kind`` and defines :meth:`summarize` and :meth:`agent`); ``compiler_options``
    go to XLA with the round."""

    kind = ""

    def __init__(
        self, config: Any, parts: RoundParts, compiler_options: dict[str, Any] | None = None
    ) -> None:
        self.config = config
        self._parts = parts
        self._init = jax.jit(parts.init)
        self._round = jax.jit(parts.round, compiler_options=compiler_options)

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
        if jax.process_index() != 0:  # every process gathered; one writes
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
        """The run state :meth:`save` wrote, for this config."""
        ckpt = load_checkpoint(path, kind=self.kind, config=config_to_json(self.config))
        template = jax.eval_shape(self._parts.init, jax.random.key(0))
        return leaves_from_arrays(template, dict(ckpt.arrays), path)

    def save_agent(self, state: Any, path: str, **extra: Any) -> None:
        """The playing checkpoint: the network's parameters and the config."""
        self._write(path, params_to_arrays(state.params), state, **extra)

    def agent(self, path: str) -> Any:
        """The agent that plays from a checkpoint :meth:`save_agent` wrote."""
        raise NotImplementedError
