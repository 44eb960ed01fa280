"""The search's tree in slots: a node's action axis holds only its legal actions.

mctx reads and writes rows of ``num_actions`` entries (DARK: plus 16 chance outcomes) at
every level of every simulation; with :attr:`jungle_train.azero.search._config.SearchConfig.slots`
a node's row has :data:`DARK_SLOTS` or :data:`CLASSIC_SLOTS` entries, the legal actions
ascending (:func:`slot_actions`), and the search's output is mapped back to the rules'
actions (:func:`in_actions`). The tree stores each position as a :class:`PackedState`,
its legal mask as bits: 2.5–2.8 times faster (experiments/readme-azero.md).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import mctx

from jungle_core.jax_env import JaxState

__all__ = [
    "CLASSIC_SLOTS",
    "DARK_SLOTS",
    "PackedState",
    "gather_slots",
    "in_actions",
    "in_actions_values",
    "pack_state",
    "slot_actions",
    "unpack_state",
]


DARK_SLOTS = 40
"""The most legal actions a DARK position has: each face-down piece one reveal, each of
the mover's face-up pieces at most four moves, so with ``h`` face down and ``u`` of the
mover's eight face up, ``h + 4u <= (16 - u) + 4u <= 16 + 3 * 8 = 40`` (reached with
eight face down and the mover's eight face up in the open). The width of the tree's
action axis under :attr:`~jungle_train.azero.search._config.SearchConfig.slots`, against the 280
actions of the rules."""

CLASSIC_SLOTS = 32
"""The most legal actions a CLASSIC position has: at most four moves (a leap is one of
them) for each of the mover's eight pieces; CLASSIC's tree width under
:attr:`~jungle_train.azero.search._config.SearchConfig.slots`, against the 315 actions of
the rules."""


@functools.partial(
    jax.tree_util.register_dataclass, data_fields=["state", "legal_bits"], meta_fields=[]
)
@dataclasses.dataclass(frozen=True)
class PackedState:
    """A position as the search tree stores it: the :class:`JaxState` with its legal
    action mask packed into bits (the tree holds one per node and per chance node, and
    XLA copies the tree's embeddings on every simulation, so their size is the search's
    cost: at 1,024 simulations the unpacked ``bool[A]`` masks alone are ~0.6 MB a copy).
    """

    state: JaxState
    """The position, its ``legal_action_mask`` emptied (``bool[..., 0]``)."""
    legal_bits: jax.Array
    """``uint32[..., ceil(A / 32)]``: bit ``a % 32`` of word ``a // 32`` set when ``a`` is
    legal."""


def pack_state(states: JaxState) -> PackedState:
    """``states`` with the legal action mask packed into ``uint32`` words.

    >>> import jax
    >>> from jungle_core.jax_env import make
    >>> env = make()
    >>> states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))
    >>> packed = pack_state(states)
    >>> packed.legal_bits.shape, packed.legal_bits.dtype
    ((2, 9), dtype('uint32'))
    >>> again = unpack_state(packed, env.num_actions)
    >>> bool((again.legal_action_mask == states.legal_action_mask).all())
    True
    """
    mask = states.legal_action_mask
    num_actions = mask.shape[-1]
    words = -(-num_actions // 32)
    padded = jnp.zeros((*mask.shape[:-1], words * 32), jnp.uint32).at[..., :num_actions].set(mask)
    shifts = jnp.arange(32, dtype=jnp.uint32)
    bits = jnp.sum(padded.reshape(*mask.shape[:-1], words, 32) << shifts, axis=-1, dtype=jnp.uint32)
    empty = jnp.zeros((*mask.shape[:-1], 0), jnp.bool_)
    return PackedState(dataclasses.replace(states, legal_action_mask=empty), bits)


def unpack_state(packed: PackedState, num_actions: int) -> JaxState:
    """The :class:`JaxState` of :func:`pack_state` (``num_actions``: the rule set's
    ``A``)."""
    bits = packed.legal_bits
    shifts = jnp.arange(32, dtype=jnp.uint32)
    mask = ((bits[..., :, None] >> shifts) & 1).astype(jnp.bool_).reshape(*bits.shape[:-1], -1)
    mask = mask[..., :num_actions]
    return dataclasses.replace(packed.state, legal_action_mask=mask)


def slot_actions(legal: jax.Array, slots: int) -> jax.Array:
    """``int32[B, slots]``: the legal actions of each row of ``legal`` (``bool[B, A]``),
    ascending, then ``A`` (an illegal action: the JAX core plays it as a forfeit) in the
    slots left over. More legal actions than ``slots`` would be cut off; DARK never has
    more than :data:`DARK_SLOTS`.

    >>> import jax.numpy as jnp
    >>> slot_actions(jnp.array([[False, True, False, True]]), 3).tolist()
    [[1, 3, 4]]
    """
    num_actions = legal.shape[-1]
    index = jnp.arange(num_actions, dtype=jnp.int32)
    # each legal action's rank among the legal ones, the others past the end
    rank = jnp.where(legal, jnp.cumsum(legal, axis=-1, dtype=jnp.int32) - 1, slots)
    rows = jnp.arange(legal.shape[0])[:, None]
    found = jnp.full((legal.shape[0], slots), num_actions, jnp.int32)
    return found.at[rows, rank].set(jnp.broadcast_to(index, legal.shape), mode="drop")


def gather_slots(values: jax.Array, slots: jax.Array, fill: float) -> jax.Array:
    """``values[b, slots[b, k]]`` (``float32[B, K]``), ``fill`` where the slot is unused."""
    num_actions = values.shape[-1]
    taken = jnp.take_along_axis(values, jnp.minimum(slots, num_actions - 1), axis=-1)
    return jnp.where(slots < num_actions, taken, fill)


def in_actions(
    out: mctx.PolicyOutput[Any], slots: jax.Array, num_actions: int
) -> mctx.PolicyOutput[Any]:
    """A search's output over slots (``action`` a slot, ``action_weights`` ``[B, K]``)
    as the rules' actions: ``action`` the action its slot stands for, ``action_weights``
    ``float32[B, num_actions]`` (an unused slot has no weight); ``search_tree`` as it is.
    """
    weights = in_actions_values(out.action_weights, slots, num_actions)
    action = jnp.take_along_axis(slots, out.action[:, None], axis=1)[:, 0]
    return out.replace(action=action, action_weights=weights)


def in_actions_values(values: jax.Array, slots: jax.Array, num_actions: int) -> jax.Array:
    """``float[B, num_actions]``: per-slot ``values`` (``float[B, K]``) placed at the
    actions ``slots`` (``int32[B, K]``) stand for, 0 elsewhere (an unused slot's value
    is dropped).

    >>> values = jnp.array([[0.5, 0.25, 9.0]])
    >>> in_actions_values(values, jnp.array([[1, 3, 4]], jnp.int32), 4).tolist()
    [[0.0, 0.5, 0.0, 0.25]]
    """
    rows = jnp.arange(slots.shape[0])[:, None]
    placed = jnp.zeros((slots.shape[0], num_actions), values.dtype)
    return placed.at[rows, slots].set(values, mode="drop")
