"""Faster mctx on a CPU (and a GPU), without changing what it computes.

What :func:`jungle_train.azero.search._search.make_search` wraps mctx's search in, each measured
with ``benchmarks/azero_speed.py`` (the figures are in experiments/readme-azero.md):

- :data:`COMPILER_OPTIONS`: XLA's copy insertion told to analyse the search loop's
  regions, so the tree's arrays are not copied on every simulation;
- :func:`search_key`: an ``rbg`` key for mctx's per-level tie-break noise;
- :func:`dirichlet_noise` and :func:`batched_backward`: mctx's root noise and backward
  pass written for a batch, swapped into mctx's modules only while a search is traced
  (:func:`mctx_patches`);
- :func:`one_game_at_a_time`: a batch searched game by game under ``lax.map``.

And one that does change it, on request (:attr:`~jungle_train.azero.search._config.
SearchConfig.minimax_backup`): :func:`minimax_values` keeps beside mctx's averaged values
each node's expectimax value over the tree searched so far (the best child at a decision
node, the probability-weighted mean of the searched outcomes at a chance node, the
evaluation at a leaf), and :func:`qtransform_minimax_mix` lets PUCT read a mix of the two,
as Lanctot et al.'s implicit minimax backups do (*Monte Carlo Tree Search with Heuristic
Evaluations using Implicit Minimax Backups*, 2014).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import mctx
from mctx._src import policies as mctx_policies
from mctx._src import search as mctx_search

from jungle_core.jax_env import JaxState

__all__ = [
    "COMPILER_OPTIONS",
    "Search",
    "batched_backward",
    "dirichlet_noise",
    "mctx_patches",
    "minimax_values",
    "one_game_at_a_time",
    "qtransform_minimax_mix",
    "search_key",
]


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


def batched_backward(tree: mctx.Tree[Any], leaf_index: jax.Array) -> mctx.Tree[Any]:
    """mctx's backward pass (``mctx._src.search.backward``) over a batched ``tree``
    from ``leaf_index`` (``int32[B]``), written for the batch: one ``while`` loop until
    every game has reached its root, whose carry is only the four arrays it updates
    (``node_values``, ``node_visits`` ``[B, N]``, ``children_values``,
    ``children_visits`` ``[B, N, A]``), each step writing one entry a game (a game
    already at its root writes its old value back). mctx's own runs a per-game loop
    under ``jax.vmap``, which carries the whole tree and selects all of it at every
    step (:attr:`~jungle_train.azero.search._config.SearchConfig.backward`).

    >>> import jax, jax.numpy as jnp
    >>> from jungle_core.jax_env import make
    >>> from jungle_train.azero.search._search import make_search, zero_evaluator
    >>> from jungle_train.azero.search._config import SearchConfig
    >>> env = make()
    >>> search = make_search(env, zero_evaluator(280), SearchConfig(simulations=4))
    >>> states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))
    >>> tree = search(None, jax.random.key(1), states).search_tree
    >>> leaf = jnp.array([4, 0], jnp.int32)  # game 1 starts at its root: nothing to do
    >>> new = batched_backward(tree, leaf)
    >>> new.node_visits[:, 0].tolist(), tree.node_visits[:, 0].tolist()
    ([6, 5], [5, 5])
    """
    rows = jnp.arange(leaf_index.shape[0])
    leaf_index = jnp.asarray(leaf_index, jnp.int32)
    root = mctx.Tree.ROOT_INDEX
    Carry = tuple[tuple[jax.Array, jax.Array, jax.Array, jax.Array], jax.Array, jax.Array]

    def going(carry: Carry) -> jax.Array:
        return jnp.any(carry[2] != root)

    def step(carry: Carry) -> Carry:
        (node_values, node_visits, children_values, children_visits), value, index = carry
        up = index != root
        parent = jnp.where(up, tree.parents[rows, index], root)
        action = jnp.where(up, tree.action_from_parent[rows, index], 0)
        count = node_visits[rows, parent]
        reward = tree.children_rewards[rows, parent, action]
        new_value = reward + tree.children_discounts[rows, parent, action] * value
        old_parent = node_values[rows, parent]
        parent_value = (old_parent * count + new_value) / (count + 1.0)
        old_child = children_values[rows, parent, action]
        old_visits = children_visits[rows, parent, action]
        arrays = (
            node_values.at[rows, parent].set(jnp.where(up, parent_value, old_parent)),
            node_visits.at[rows, parent].set(jnp.where(up, count + 1, count)),
            children_values.at[rows, parent, action].set(
                jnp.where(up, node_values[rows, index], old_child)
            ),
            children_visits.at[rows, parent, action].set(jnp.where(up, old_visits + 1, old_visits)),
        )
        return arrays, jnp.where(up, new_value, value), jnp.where(up, parent, index)

    start = (tree.node_values, tree.node_visits, tree.children_values, tree.children_visits)
    carry: Carry = (start, tree.node_values[rows, leaf_index], leaf_index)
    (node_values, node_visits, children_values, children_visits), _, _ = jax.lax.while_loop(
        going, step, carry
    )
    out: mctx.Tree[Any] = tree.replace(
        node_values=node_values,
        node_visits=node_visits,
        children_values=children_values,
        children_visits=children_visits,
    )
    return out


def minimax_values(tree: mctx.Tree[Any], leaf_index: jax.Array) -> mctx.Tree[Any]:
    """``tree`` with ``extra_data`` (``float32[B, N]``, each node's expectimax value
    from its own mover's side) brought up to date on the path from ``leaf_index``
    (``int32[B]``) to the root: a node none of whose children is searched keeps its
    evaluation (``raw_values``); a decision node takes its best child,
    ``max(reward + discount * value)`` over its searched children; a chance node (a
    stochastic tree's ``is_decision_node`` false) the mean of its searched outcomes'
    ``reward + discount * value``, weighted by their probabilities (its children's prior
    logits) renormalized over them. Call it after mctx's backward pass from the same
    leaf, on a tree whose ``extra_data`` started as its ``raw_values``
    (:func:`mctx_patches` with ``minimax=True`` does both).

    >>> import jax, jax.numpy as jnp, mctx
    >>> root = mctx.RootFnOutput(prior_logits=jnp.zeros((1, 2)), value=jnp.zeros(1),
    ...                          embedding=jnp.zeros(1))
    >>> def step(params, key, action, embedding):   # action 1 is worth 0.5, action 0 -0.5
    ...     value = jnp.where(action == 1, 0.5, -0.5)
    ...     out = mctx.RecurrentFnOutput(reward=jnp.zeros(1), discount=jnp.ones(1),
    ...                                  prior_logits=jnp.zeros((1, 2)), value=value)
    ...     return out, embedding
    >>> with mctx_patches("batched", "threefry", minimax=True):
    ...     out = mctx.muzero_policy(None, jax.random.key(0), root, step, num_simulations=2)
    >>> out.search_tree.extra_data[0, 0].item(), out.search_tree.node_values[0, 0].item()
    (0.5, 0.0)
    """
    rows = jnp.arange(leaf_index.shape[0])
    root = mctx.Tree.ROOT_INDEX
    decision = getattr(tree.embeddings, "is_decision_node", None)

    def node_value(values: jax.Array, node: jax.Array) -> jax.Array:
        kids = tree.children_index[rows, node]  # [B, A]
        searched = kids != mctx.Tree.UNVISITED
        below = jnp.take_along_axis(values, jnp.maximum(kids, 0), axis=1)
        q = tree.children_rewards[rows, node] + tree.children_discounts[rows, node] * below
        best = jnp.max(jnp.where(searched, q, -jnp.inf), axis=-1)
        logits = tree.children_prior_logits[rows, node]
        top = jnp.max(logits, axis=-1, keepdims=True)
        weights = jnp.where(searched, jnp.exp(logits - top), 0.0)
        # a chance node always has a searched outcome of positive weight here
        mean = jnp.sum(weights * q, axis=-1) / jnp.maximum(jnp.sum(weights, axis=-1), 1e-30)
        chosen = best if decision is None else jnp.where(decision[rows, node], best, mean)
        return jnp.where(jnp.any(searched, axis=-1), chosen, tree.raw_values[rows, node])

    Carry = tuple[jax.Array, jax.Array, jax.Array]

    def going(carry: Carry) -> jax.Array:
        return jnp.any(carry[2])

    def step(carry: Carry) -> Carry:
        values, index, active = carry
        old = values[rows, index]
        values = values.at[rows, index].set(jnp.where(active, node_value(values, index), old))
        active = active & (index != root)
        return values, jnp.where(active, tree.parents[rows, index], index), active

    leaf = jnp.asarray(leaf_index, jnp.int32)
    start: Carry = (tree.extra_data, leaf, jnp.ones(leaf.shape, bool))
    values, _, _ = jax.lax.while_loop(going, step, start)
    out: mctx.Tree[Any] = tree.replace(extra_data=values)
    return out


def qtransform_minimax_mix(
    tree: mctx.Tree[Any], node_index: jax.Array, *, mix: float, epsilon: float = 1e-8
) -> jax.Array:
    """mctx's ``qtransform_by_parent_and_siblings`` (PUCT's exploitation term: the
    searched children's Q values and the node's own value rescaled to [0, 1] by their
    minimum and maximum, unsearched children at the minimum) on Q values that mix
    mctx's averaged ones with the expectimax ones :func:`minimax_values` keeps in
    ``extra_data``: ``(1 - mix) * average + mix * expectimax``, the node's value the
    same way. ``tree`` is unbatched (``float32[A]`` out), as mctx calls a qtransform;
    ``mix`` 0 is mctx's own.

    mctx's transform is written out here rather than called on a one-node view of the
    mixed row (``tree.replace`` with that row): the view cost the 2,048-simulation
    agent 0.30 s a middlegame decision against 0.20 s for this (0.18 s without the mix).
    """
    kids = tree.children_index[node_index]
    below = tree.extra_data[jnp.maximum(kids, 0)]
    expectimax = tree.children_rewards[node_index] + tree.children_discounts[node_index] * below
    qvalues = (1.0 - mix) * tree.qvalues(node_index) + mix * expectimax
    node_value = (1.0 - mix) * tree.node_values[node_index] + mix * tree.extra_data[node_index]
    visited = tree.children_visits[node_index] > 0
    safe = jnp.where(visited, qvalues, node_value)
    low = jnp.minimum(node_value, jnp.min(safe, axis=-1))
    high = jnp.maximum(node_value, jnp.max(safe, axis=-1))
    completed = jnp.where(visited, qvalues, low)
    normalized: jax.Array = (completed - low) / jnp.maximum(high - low, epsilon)
    return normalized


def dirichlet_noise(
    rng_key: jax.Array, probs: jax.Array, *, dirichlet_alpha: float, dirichlet_fraction: float
) -> jax.Array:
    """mctx's root noise (``mctx._src.policies._add_dirichlet_noise``): ``probs``
    ``float32[B, A]`` mixed with a share ``dirichlet_fraction`` of Dirichlet noise of
    concentration ``dirichlet_alpha``, with two changes. The noise is drawn with a
    ``threefry`` key made from ``rng_key`` (its first two words): JAX draws a Gamma
    variate with any other key one element after another (``lax.map`` over the
    ``B * A`` elements; its vectorized path takes ``threefry`` keys only), and with
    :func:`search_key`'s ``rbg`` key that loop was most of the GPU's search (one H200,
    1,024 games in slots at 64 simulations: 4.397 s a search with it, 0.092 s with this
    draw; experiments/readme-azero.md). And with a fraction of 0 it returns ``probs`` as
    they are, drawing nothing (mctx draws the noise and multiplies it by 0: the same
    numbers).

    >>> import jax, jax.numpy as jnp
    >>> probs = jnp.full((2, 4), 0.25)
    >>> noisy = dirichlet_noise(search_key(jax.random.key(0)), probs,
    ...                         dirichlet_alpha=0.3, dirichlet_fraction=0.25)
    >>> noisy.shape, bool(jnp.allclose(noisy.sum(axis=1), 1.0))
    ((2, 4), True)
    >>> bool((dirichlet_noise(jax.random.key(0), probs, dirichlet_alpha=0.3,
    ...                       dirichlet_fraction=0.0) == probs).all())
    True
    """
    if isinstance(dirichlet_fraction, float | int) and dirichlet_fraction == 0:
        return probs
    key = rng_key
    typed = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    if typed and str(jax.random.key_impl(key)) != "threefry2x32":
        data = jax.random.key_data(key).reshape(-1)[:2].astype(jnp.uint32)
        key = jax.random.wrap_key_data(data, impl="threefry2x32")
    batch, num_actions = probs.shape
    alpha = jnp.full([num_actions], dirichlet_alpha, probs.dtype)
    noise = jax.random.dirichlet(key, alpha, shape=(batch,), dtype=probs.dtype)
    return (1 - dirichlet_fraction) * probs + dirichlet_fraction * noise


_PATCH_LOCK = threading.RLock()


@contextlib.contextmanager
def mctx_patches(backward: str, noise: str, *, minimax: bool = False) -> Iterator[None]:
    """While an mctx policy is traced inside, with ``noise="threefry"`` its root noise is
    :func:`dirichlet_noise`, and with ``backward="batched"`` its search goes back up the
    tree with :func:`batched_backward`. mctx reads its modules' globals (``policies.
    _add_dirichlet_noise``, ``search.backward``) when it is traced, so the swap lasts
    only as long as the trace (under a lock, against this module's own traces in other
    threads); an mctx search traced elsewhere in the meantime would get the same
    updates and noise of the same law, only faster. With ``minimax=True`` the tree's
    ``extra_data`` starts as its ``raw_values`` and every backward pass is followed by
    :func:`minimax_values` (for :func:`qtransform_minimax_mix`; the policy must pass no
    ``extra_data`` of its own, as mctx's policies do not)."""
    with _PATCH_LOCK:  # the originals are read under the lock too
        swaps = _swaps(backward, noise, minimax)
        saved = [getattr(module, name) for module, name, _ in swaps]
        try:
            for module, name, replacement in swaps:
                setattr(module, name, replacement)
            yield
        finally:
            for (module, name, _), original in zip(swaps, saved, strict=True):
                setattr(module, name, original)


def _swaps(backward: str, noise: str, minimax: bool) -> list[tuple[Any, str, Any]]:
    """What :func:`mctx_patches` puts in mctx's modules: (module, name, replacement)."""
    swaps: list[tuple[Any, str, Any]] = []
    if noise == "threefry":
        swaps.append((mctx_policies, "_add_dirichlet_noise", dirichlet_noise))
    base = batched_backward if backward == "batched" else mctx_search.backward
    if minimax:
        instantiate = mctx_search.instantiate_tree_from_root

        def start(*args: Any, **kwargs: Any) -> mctx.Tree[Any]:
            tree: mctx.Tree[Any] = instantiate(*args, **kwargs)
            if tree.extra_data is not None:
                raise ValueError("minimax backups keep their values in the tree's extra_data")
            return tree.replace(extra_data=tree.raw_values)

        def back(tree: mctx.Tree[Any], leaf_index: jax.Array) -> mctx.Tree[Any]:
            return minimax_values(base(tree, leaf_index), leaf_index)

        swaps.append((mctx_search, "instantiate_tree_from_root", start))
        swaps.append((mctx_search, "backward", back))
    elif backward == "batched":
        swaps.append((mctx_search, "backward", batched_backward))
    return swaps


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
