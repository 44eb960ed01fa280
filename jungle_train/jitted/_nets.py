"""The DQN's Q-networks (flax): ``float32[..., obs]`` → ``float32[..., 280]`` action values.

- :class:`QNetwork`: an MLP (ReLU hidden layers, dropout in training only);
- :class:`ConvQNetwork`: 3×3 convolutions over the 7×8 board (:class:`ShiftConv`), a
  pooled context, coordinate planes and a per-square action head, optionally dueling;
- :class:`ValueNetwork`: the same trunk with a pooled ``tanh`` head, the value network of
  ``jungle train value`` (its numpy twin: :mod:`jungle_train.players._vnet`).

Their numpy twins, for play without JAX, are in :mod:`jungle_train.players._numpy`
(``network_numpy``, ``conv_numpy``); ``tests/train/test_dqn_learning.py`` checks they agree.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from jungle_train.players import coordinate_planes

__all__ = ["ConvQNetwork", "QNetwork", "ShiftConv"]


class QNetwork(nn.Module):
    """The MLP: ``float32[..., obs]`` → ``float32[..., 280]`` action values."""

    hidden: tuple[int, ...]
    dropout: float
    num_actions: int = 280

    @nn.compact
    def __call__(self, x: jax.Array, deterministic: bool = True) -> jax.Array:
        for width in self.hidden:
            x = nn.relu(nn.Dense(width)(x))
            if self.dropout > 0:
                x = nn.Dropout(self.dropout, deterministic=deterministic)(x)
        out: jax.Array = nn.Dense(self.num_actions)(x)
        return out


class ShiftConv(nn.Module):
    """A 3×3 'same' convolution written as nine shifted views of the zero-padded board
    and one Dense layer: ``float32[..., 7, 8, C]`` → ``float32[..., 7, 8, features]``.

    On XLA's CPU backend its backward pass is about 10× faster than ``nn.Conv``'s; the
    result is the same convolution."""

    features: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        rows, cols = x.shape[-3], x.shape[-2]
        pad = jnp.pad(x, [(0, 0)] * (x.ndim - 3) + [(1, 1), (1, 1), (0, 0)])
        views = [pad[..., r : r + rows, c : c + cols, :] for r in range(3) for c in range(3)]
        out: jax.Array = nn.Dense(self.features)(jnp.concatenate(views, axis=-1))
        return out


def board_planes(x: jax.Array, rows: int, cols: int, square_planes: int = 0) -> jax.Array:
    """The convolutional networks' input: ``float32[..., obs]`` (the observation's six
    board planes, then extra scalars such as the clock, then ``square_planes`` per-square
    planes, square-major) → ``float32[..., rows, cols, C]`` (the six planes, each scalar
    broadcast as a plane, the per-square planes, and the two coordinate planes).

    >>> board_planes(jnp.zeros((2, 337)), 7, 8).shape
    (2, 7, 8, 9)
    >>> board_planes(jnp.zeros((2, 337 + 8 * 56)), 7, 8, square_planes=8).shape
    (2, 7, 8, 17)
    """
    squares = rows * cols
    lead = x.shape[:-1]
    size = x.shape[-1]
    board = x[..., : squares * 6].reshape(*lead, rows, cols, 6)
    extra = x[..., squares * 6 : size - square_planes * squares]
    per_square = x[..., size - square_planes * squares :].reshape(*lead, rows, cols, square_planes)
    planes = jnp.broadcast_to(extra[..., None, None, :], (*lead, rows, cols, extra.shape[-1]))
    coords = jnp.broadcast_to(jnp.asarray(coordinate_planes(rows, cols)), (*lead, rows, cols, 2))
    return jnp.concatenate([board, planes, per_square, coords], axis=-1)


class ConvQNetwork(nn.Module):
    """Convolutions over the 7×8 board: ``float32[..., obs]`` → ``float32[..., 280]``.

    The observation's 336 floats are the board's six planes; extra inputs (the clock)
    are broadcast as planes, ``square_planes`` per-square planes follow them (the
    ``fields`` and ``battles`` observations: how near each enemy rank is, what moving
    onto each neighbouring enemy does), and two planes hold each
    square's row and column (scaled to [-1, 1]) so that the pooled context can say
    *where* pieces are: without them a piece cannot find an enemy beyond its receptive
    field, and games against a fleeing piece end in the no-removal draw.
    ``conv_layers`` ReLU :class:`ShiftConv` layers, a global context (the mean over
    squares through a Dense layer, added to every square), then a per-square head of 5
    outputs: the square's reveal (action ``sq``) and its four moves (actions
    ``56 + 4·sq + d``), so every action reads the features of its own square.
    With ``dueling``, the head gives advantages and a value head on the context gives
    ``V(s)``: ``Q = V + A − mean(A)`` (Wang et al. 2016)."""

    channels: int
    conv_layers: int
    dueling: bool = False
    rows: int = 7
    cols: int = 8
    square_planes: int = 0

    @nn.compact
    def __call__(self, x: jax.Array, deterministic: bool = True) -> jax.Array:
        squares = self.rows * self.cols
        lead = x.shape[:-1]
        h = board_planes(x, self.rows, self.cols, self.square_planes)
        for _ in range(self.conv_layers):
            h = nn.relu(ShiftConv(self.channels)(h))
        context = nn.relu(nn.Dense(self.channels)(jnp.mean(h, axis=(-3, -2))))
        h = h + context[..., None, None, :]
        head = nn.Dense(5)(h)  # [..., rows, cols, 5]
        reveal = head[..., 0].reshape(*lead, squares)
        moves = head[..., 1:].reshape(*lead, squares * 4)
        q = jnp.concatenate([reveal, moves], axis=-1)
        if self.dueling:
            value = nn.Dense(1)(context)  # [..., 1]
            q = value + q - jnp.mean(q, axis=-1, keepdims=True)
        return q


class ValueNetwork(nn.Module):
    """``float32[..., 337]`` → ``float32[...]`` in [-1, 1] (see :mod:`jungle_train.players._vnet`).

    >>> import jax, jax.numpy as jnp
    >>> net = ValueNetwork(channels=8, conv_layers=1)
    >>> params = net.init(jax.random.key(0), jnp.zeros(337))
    >>> net.apply(params, jnp.zeros((3, 337))).shape
    (3,)
    """

    channels: int
    conv_layers: int
    rows: int = 7
    cols: int = 8

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = board_planes(x, self.rows, self.cols)
        for _ in range(self.conv_layers):
            h = nn.relu(ShiftConv(self.channels)(h))
        pooled = jnp.concatenate([jnp.mean(h, axis=(-3, -2)), jnp.max(h, axis=(-3, -2))], axis=-1)
        hidden = nn.relu(nn.Dense(self.channels)(pooled))
        out: jax.Array = jnp.tanh(nn.Dense(1)(hidden)[..., 0])
        return out
