"""What makes mctx's search cheaper here, through its public API only.

- :data:`COMPILER_OPTIONS`: XLA's copy insertion told to analyse the search loop's
  regions, so the tree's arrays are not copied on every simulation;
- :func:`search_key`: an ``rbg`` key for mctx's per-level tie-break noise;
- :func:`one_game_at_a_time`: a batch searched game by game under ``lax.map``.

Each was measured with ``experiments/azero_speed.py`` (experiments/readme-azero.md).
mctx's own backward pass and root noise are used as they are: the search calls only
mctx's public policies and never replaces anything inside mctx's modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import mctx

from jungle_core.jax_env import JaxState

__all__ = ["COMPILER_OPTIONS", "Search", "one_game_at_a_time", "search_key"]


COMPILER_OPTIONS: dict[str, Any] = {"xla_cpu_copy_insertion_use_region_analysis": True}
"""XLA options for a jitted search (``jax.jit(..., compiler_options=COMPILER_OPTIONS)``).
mctx keeps the tree's arrays in a ``while`` loop and reads them where it updates them;
XLA's CPU compiler copied every embedding array twice per simulation unless its copy
insertion analyses the loop's regions (GPU compilers ignore the CPU option)."""


def search_key(key: jax.Array) -> jax.Array:
    """An ``rbg`` key (XLA's RngBitGenerator) from any key, for ``mctx``: it splits its
    key and draws ``uniform[A]`` tie-break noise at every level of every simulation,
    and with ``threefry`` keys that drawing was half the time of a one-game search on
    this CPU (1,024 simulations: 1.10 s → 0.53 s). Deterministic in ``key``.

    >>> import jax
    >>> str(jax.random.key_impl(search_key(jax.random.key(0))))
    'rbg'
    """
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) and str(jax.random.key_impl(key)) == "rbg":
        return key
    data = jax.random.key_data(key).reshape(-1)[:2].astype(jnp.uint32)
    rbg: jax.Array = jax.random.wrap_key_data(jnp.concatenate([data, ~data]), impl="rbg")
    return rbg


Search = Callable[[Any, jax.Array, JaxState], mctx.PolicyOutput[Any]]
"""``search(params, key, states[B]) -> mctx.PolicyOutput`` (batch ``B`` in front)."""


def one_game_at_a_time(search: Search) -> Search:
    """``search`` run over a batch one game at a time (``lax.map``, each game a batch of
    one, game ``i`` with key ``jax.random.split(key, B)[i]``), its outputs stacked as
    the batched search's are; a batch of one goes to ``search`` as it is
    (:attr:`~jungle_train.azero.search._config.SearchConfig.batching`).

    >>> import jax
    >>> from jungle_core.jax_env import make
    >>> from jungle_train.azero.search._search import make_search, zero_evaluator
    >>> from jungle_train.azero.search._config import SearchConfig
    >>> env = make()
    >>> plain = make_search(env, zero_evaluator(280),
    ...                     SearchConfig(simulations=4, batching="vectorized"))
    >>> states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 3))
    >>> out = jax.jit(one_game_at_a_time(plain))(None, jax.random.key(1), states)
    >>> out.action.shape, out.action_weights.shape
    ((3,), (3, 280))
    """

    def run(params: Any, key: jax.Array, states: JaxState) -> mctx.PolicyOutput[Any]:
        batch = states.legal_action_mask.shape[0]
        if batch == 1:
            return search(params, key, states)

        def one(game: tuple[jax.Array, JaxState]) -> mctx.PolicyOutput[Any]:
            k, state = game
            out = search(params, k, jax.tree.map(lambda x: x[None], state))
            unbatched: mctx.PolicyOutput[Any] = jax.tree.map(lambda x: x[0], out)
            return unbatched

        out: mctx.PolicyOutput[Any] = jax.lax.map(one, (jax.random.split(key, batch), states))
        return out

    return run
