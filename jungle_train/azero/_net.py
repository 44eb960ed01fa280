"""The AlphaZero agent's network and its input: a canonical view of the position.

**Canonical view.** Both rule sets are symmetric under a 180° turn of the board with the
players swapped (DARK's board has no special squares; CLASSIC's dens, traps
and rivers turn into each other's). The network therefore always sees the position from
the side of the player to move, as player 0: when player 1 is to move, the board is
turned (square ``sq`` → ``N - 1 - sq``) and the players' planes are swapped, and the
network's per-action outputs are turned back by :data:`rotation` (a move ``(sq, d)``
becomes ``(N - 1 - sq, d ^ 1)``: up and down swap, left and right swap). One network
learns both seats from every game.

Planes, ``float32[rows, cols, C]`` (:func:`canonical_planes`):

- DARK, ``C = 6``: the mover's / the opponent's probability of owning the piece on the
  square (channels 4 and 5 of :func:`jungle_core.observation`), rank / 8, face up, then
  two clocks broadcast: plies since a removal / the no-removal limit, and 0 (DARK has no
  ply limit);
- CLASSIC, ``C = 22``: the mover's pieces by rank (8), the opponent's (8), water, the
  mover's traps, the opponent's traps, the opponent's den (the one to enter), then the
  two clocks (0, and ply / the ply limit).

**Network** (:class:`PolicyValueNetwork`): ``conv_layers`` 3×3 convolutions
(:class:`jungle_train.jitted._nets.ShiftConv`, with the two coordinate planes of
:func:`jungle_train.players._numpy.coordinate_planes`), a pooled context added to every square,
then three heads: policy logits per action (each square's 5 actions read that square's
features, as the DQN's head does), the value of the position for the player to move
(``tanh``), and the *afterstate* value of each action for the player to move (``tanh``;
the value before the chance outcome of a reveal is known, which Stochastic MuZero's
search asks for at chance nodes).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from jungle_core import Rules
from jungle_core.jax_env import JaxEnv, JaxState
from jungle_train.jitted import ShiftConv
from jungle_train.players import coordinate_planes

__all__ = [
    "Evaluation",
    "PolicyValueNetwork",
    "canonical_planes",
    "network_evaluation",
    "planes_shape",
    "rotation",
]


class Evaluation(NamedTuple):
    """What the search asks of a model for a batch of ``B`` positions (``A`` actions),
    every value from the side of the player to move in that position, in [-1, 1]."""

    logits: jax.Array
    """``float32[B, A]``: prior logits over the actions (illegal ones not yet masked)."""
    value: jax.Array
    """``float32[B]``: the value of the position."""
    afterstate: jax.Array
    """``float32[B, A]``: the value of each action's afterstate (before its chance
    outcome), used by DARK's chance nodes."""


def rotation(rules: Rules) -> np.ndarray[Any, np.dtype[np.int32]]:
    """``int32[A]``: the action that ``a`` becomes when the board turns 180°
    (an involution: applying it twice gives ``a`` back).

    >>> from jungle_core import DARK
    >>> r = rotation(DARK)
    >>> int(r[0]), int(r[55]), int(r[56 + 0 * 4 + 1]), bool((r[r] == np.arange(280)).all())
    (55, 0, 276, True)
    """
    n = rules.num_squares
    out = np.empty(5 * n, np.int32)
    squares = np.arange(n)
    out[:n] = n - 1 - squares
    for d in range(4):
        out[n + squares * 4 + d] = n + (n - 1 - squares) * 4 + (d ^ 1)
    return out


def planes_shape(rules: Rules) -> tuple[int, int, int]:
    """``(rows, cols, C)`` of :func:`canonical_planes`' output, clocks included.

    >>> from jungle_core import CLASSIC, DARK
    >>> planes_shape(DARK), planes_shape(CLASSIC)
    ((7, 8, 6), (9, 7, 22))
    """
    return (rules.rows, rules.cols, 6 if rules.variant == "dark" else 22)


def canonical_planes(env: JaxEnv, state: JaxState) -> jax.Array:
    """``float32[rows, cols, C]``: one position (unbatched) seen by the player to move
    as player 0 (see the module docstring).

    >>> import jax
    >>> from jungle_core import DARK
    >>> from jungle_core.jax_env import make
    >>> env = make(DARK)
    >>> canonical_planes(env, env.init(jax.random.key(0))).shape
    (7, 8, 6)
    """
    rules = env.rules
    obs = env.observe(state)
    flip = state.current_player == 1
    if rules.variant == "dark":
        board = obs[..., jnp.array([4, 5, 2, 3])]
    else:
        swapped = jnp.concatenate(
            [obs[..., 8:16], obs[..., 0:8], obs[..., 16:17], obs[..., 18:19], obs[..., 17:18]],
            axis=-1,
        )
        straight = obs[..., :19]
        board = jnp.where(flip, swapped, straight)
        enemy_den = jnp.where(flip, obs[..., 19:20], obs[..., 20:21])
        board = jnp.concatenate([board, enemy_den], axis=-1)
    board = jnp.where(flip, board[::-1, ::-1], board)
    since = (
        state.plies_since_removal.astype(jnp.float32) / rules.no_removal_limit
        if rules.no_removal_limit
        else jnp.float32(0.0)
    )
    ply = state.ply.astype(jnp.float32) / rules.ply_limit if rules.ply_limit else jnp.float32(0.0)
    clocks = jnp.broadcast_to(jnp.stack([since, ply]), (rules.rows, rules.cols, 2))
    return jnp.concatenate([board, clocks], axis=-1).astype(jnp.float32)


class PolicyValueNetwork(nn.Module):
    """``float32[..., rows, cols, C]`` canonical planes → ``(logits, value, afterstate)``
    in the canonical frame: ``float32[..., 5·rows·cols]``, ``float32[...]``,
    ``float32[..., 5·rows·cols]`` (see the module docstring)."""

    channels: int
    conv_layers: int
    rows: int
    cols: int

    @nn.compact
    def __call__(self, x: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        squares = self.rows * self.cols
        lead = x.shape[:-3]
        coords = jnp.broadcast_to(
            jnp.asarray(coordinate_planes(self.rows, self.cols)), (*lead, self.rows, self.cols, 2)
        )
        h = nn.relu(ShiftConv(self.channels)(jnp.concatenate([x, coords], axis=-1)))
        for _ in range(self.conv_layers - 1):
            h = h + nn.relu(ShiftConv(self.channels)(h))  # residual
        pooled = jnp.concatenate([jnp.mean(h, axis=(-3, -2)), jnp.max(h, axis=(-3, -2))], -1)
        context = nn.relu(nn.Dense(self.channels)(pooled))
        h = h + context[..., None, None, :]

        def per_action(head: jax.Array) -> jax.Array:  # [..., rows, cols, 5] -> [..., A]
            reveal = head[..., 0].reshape(*lead, squares)
            moves = head[..., 1:].reshape(*lead, squares * 4)
            return jnp.concatenate([reveal, moves], axis=-1)

        logits = per_action(nn.Dense(5)(h))
        afterstate = jnp.tanh(per_action(nn.Dense(5)(h)))
        value = jnp.tanh(nn.Dense(1)(nn.relu(nn.Dense(self.channels)(context)))[..., 0])
        return logits, value, afterstate


def network_evaluation(
    env: JaxEnv, network: PolicyValueNetwork, params: Any, states: JaxState
) -> Evaluation:
    """The network's :class:`Evaluation` of a batch of positions ``states`` ``[B]``, its
    per-action outputs turned back from the canonical frame to the real actions."""
    planes = jax.vmap(lambda s: canonical_planes(env, s))(states)
    out: tuple[jax.Array, jax.Array, jax.Array] = network.apply(params, planes)  # type: ignore[assignment]
    logits, value, afterstate = out
    turn = jnp.asarray(rotation(env.rules))
    flip = (states.current_player == 1)[:, None]
    logits = jnp.where(flip, logits[:, turn], logits)
    afterstate = jnp.where(flip, afterstate[:, turn], afterstate)
    return Evaluation(logits, value, afterstate)
