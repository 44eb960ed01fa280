"""Pytrees in and out of checkpoints: a run state's leaves as named arrays (PRNG keys as
their key data), network parameters by their flax path, gathered to one host when several
processes run under ``jax.distributed``.
"""

from __future__ import annotations

from typing import Any

import flax.traverse_util
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils

from jungle_train.common import CheckpointError

__all__ = ["leaves_from_arrays", "leaves_to_arrays", "params_to_arrays", "to_host"]


def params_to_arrays(params: Any) -> dict[str, np.ndarray[Any, Any]]:
    """The network parameters as ``{"params/Dense_0/kernel": array, ...}``."""
    host = jax.tree.map(to_host, params)
    flat = flax.traverse_util.flatten_dict(host, sep="/")  # type: ignore[no-untyped-call]
    return {name: np.asarray(value) for name, value in flat.items()}


def to_host(x: jax.Array) -> np.ndarray[Any, Any]:
    """The whole array on this host (gathered from every process when several run)."""
    if jax.process_count() > 1:
        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(jax.device_get(x))


def leaves_to_arrays(tree: Any) -> dict[str, np.ndarray[Any, Any]]:
    """Every leaf of ``tree`` as ``{"run/0000": array, ...}`` in :func:`jax.tree.leaves`
    order, a PRNG key as its key data (``uint32[..., 2]`` for the default key), on this
    host; :func:`leaves_from_arrays` reads it back."""
    out = {}
    for i, leaf in enumerate(jax.tree.leaves(tree)):
        is_key = jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)
        data = jax.random.key_data(leaf) if is_key else leaf
        out[f"run/{i:04d}"] = to_host(data)
    return out


def leaves_from_arrays(template: Any, arrays: dict[str, Any], where: str) -> Any:
    """The pytree of ``template``'s structure (a tree of arrays or of
    :class:`jax.ShapeDtypeStruct`, e.g. from :func:`jax.eval_shape`) with the leaves
    :func:`leaves_to_arrays` wrote; an array missing, extra, or of another shape or dtype
    (PRNG keys checked on their key data) raises :class:`CheckpointError` naming ``where``
    (the file)."""
    leaves, treedef = jax.tree.flatten(template)
    out = []
    for i, leaf in enumerate(leaves):
        name = f"run/{i:04d}"
        if name not in arrays:
            raise CheckpointError(f"{where}: the run state lacks {name} (another version?)")
        value = arrays[name]
        is_key = jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)
        expected = jax.eval_shape(jax.random.key_data, leaf) if is_key else leaf
        if value.shape != expected.shape or value.dtype != expected.dtype:
            raise CheckpointError(
                f"{where}: {name} is {value.dtype}{list(value.shape)}, "
                f"expected {expected.dtype}{list(expected.shape)}"
            )
        key_or_array = jnp.asarray(value)
        out.append(jax.random.wrap_key_data(key_or_array) if is_key else key_or_array)
    if len(arrays) != len(leaves):
        raise CheckpointError(f"{where}: {len(arrays)} arrays for {len(leaves)} run-state leaves")
    return jax.tree.unflatten(treedef, out)
