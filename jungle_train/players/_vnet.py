"""The value network read with numpy: a position in, the expected result for the mover out.

:func:`value_numpy` (numpy, for playing and for search leaves; no JAX, so agents load
quickly in worker processes) computes :class:`jungle_train.jitted._nets.ValueNetwork` (flax,
for training); both share one architecture, the DQN's convolutional trunk
(:class:`jungle_train.jitted._nets.ShiftConv` layers over the 7×8 board with the clock and
coordinate planes, a pooled context), then a small head and ``tanh``: ``float32[..., 337]``
(the 336 floats of :func:`jungle_core.observation` for the player to move, then
``plies_since_removal / limit``) → ``float32[...]`` in [-1, 1] (+1: the player to move
wins; score = (v + 1) / 2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jungle_core import Rules, State, observation
from jungle_train.players._numpy import coordinate_planes

__all__ = ["observe_numpy", "value_numpy"]


def observe_numpy(state: State) -> np.ndarray[Any, Any]:
    """``float32[337]``: the value network's input for a pure-core state.

    >>> from jungle_core import new_game
    >>> observe_numpy(new_game()).shape
    (337,)
    """
    clock = state.plies_since_removal / max(1, state.rules.no_removal_limit)
    obs = observation(state).reshape(-1)
    return np.concatenate([obs, np.array([clock], np.float32)]).astype(np.float32)


def value_numpy(
    params: dict[str, Any], x: np.ndarray[Any, Any], rules: Rules | None = None
) -> np.ndarray[Any, Any]:
    """:class:`jungle_train.jitted._nets.ValueNetwork`'s forward pass in numpy over a batch:
    ``float32[B, 337]`` → ``float32[B]``. ``params`` is flax's parameter tree
    (``{"ShiftConv_0": ..., "Dense_0": ..., "Dense_1": ...}``)."""
    rows, cols = (rules.rows, rules.cols) if rules is not None else (7, 8)
    squares = rows * cols
    x = np.asarray(x, np.float32)
    b = x.shape[0]
    board = x[:, : squares * 6].reshape(b, rows, cols, 6)
    extra = np.broadcast_to(
        x[:, None, None, squares * 6 :], (b, rows, cols, x.shape[1] - squares * 6)
    )
    coords = np.broadcast_to(coordinate_planes(rows, cols), (b, rows, cols, 2))
    h = np.concatenate([board, extra, coords], axis=-1)
    convs = sorted(
        (n for n in params if n.startswith("ShiftConv_")), key=lambda n: int(n.rsplit("_", 1)[-1])
    )
    for name in convs:
        pad = np.pad(h, ((0, 0), (1, 1), (1, 1), (0, 0)))
        views = np.concatenate(
            [pad[:, r : r + rows, c : c + cols] for r in range(3) for c in range(3)], axis=-1
        )
        dense = params[name]["Dense_0"]
        h = np.maximum(views @ dense["kernel"] + dense["bias"], 0.0)
    pooled = np.concatenate([h.mean(axis=(1, 2)), h.max(axis=(1, 2))], axis=-1)
    hidden = np.maximum(pooled @ params["Dense_0"]["kernel"] + params["Dense_0"]["bias"], 0.0)
    out: np.ndarray[Any, Any] = np.tanh(
        (hidden @ params["Dense_1"]["kernel"] + params["Dense_1"]["bias"])[:, 0]
    )
    return out
