"""Implicit minimax backups in the DARK search (``SearchConfig.minimax_backup``): the
expectimax values kept beside mctx's averages, checked node by node against a recursion
written here over the whole tree, and PUCT's mix of the two."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from mctx._src import policies as mctx_policies

from jungle_core import DARK
from jungle_train.azero.search import _search as _azero_search
from jungle_train.azero.search._config import SearchConfig
from jungle_train.azero.search._mctx_fast import mctx_patches, qtransform_minimax_mix
from jungle_train.azero.search._search import make_search
from tests._agents import assert_refused
from tests._azero import searched_batch


def full_trees(
    monkeypatch: pytest.MonkeyPatch, config: SearchConfig, seed: int = 5
) -> tuple[Any, Any]:
    """The search's output and its tree before mctx cuts the chance outcomes off the
    action axis (``_mask_tree``), for a batch of four DARK middlegame positions; run
    without ``jit`` so that tree is concrete."""
    env, params, evaluate, batch = searched_batch(DARK, seed=seed, count=4)
    kept: list[Any] = []
    cut = mctx_policies._mask_tree

    def keep(tree: Any, num_actions: int, mode: str) -> Any:
        kept.append(tree)
        return cut(tree, num_actions, mode)

    monkeypatch.setattr(mctx_policies, "_mask_tree", keep)
    out = make_search(env, evaluate, config)(params, jax.random.key(seed), batch)
    return out, kept[-1]


def expectimax(tree: Any, game: int) -> dict[int, float]:
    """Each searched node's expectimax value, by recursion from the root: a leaf's
    evaluation; a decision node's best child ``reward + discount * value``; a chance
    node's searched outcomes weighted by their probabilities, renormalized."""
    kids = np.asarray(tree.children_index[game])
    rewards = np.asarray(tree.children_rewards[game], np.float64)
    discounts = np.asarray(tree.children_discounts[game], np.float64)
    logits = np.asarray(tree.children_prior_logits[game], np.float64)
    decision = np.asarray(tree.embeddings.is_decision_node[game])
    raw = np.asarray(tree.raw_values[game], np.float64)
    values: dict[int, float] = {}

    def value(node: int) -> float:
        searched = np.flatnonzero(kids[node] >= 0)
        if searched.size == 0:
            result = float(raw[node])
        else:
            q = np.array(
                [rewards[node, a] + discounts[node, a] * value(kids[node, a]) for a in searched]
            )
            if decision[node]:
                result = float(q.max())
            else:
                weights = np.exp(logits[node, searched] - logits[node].max())
                result = float((weights * q).sum() / weights.sum())
        values[node] = result
        return result

    value(mctx.Tree.ROOT_INDEX)
    return values


def test_kept_values_are_the_expectimax_of_the_searched_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = SearchConfig(simulations=48, slots=True, batching="vectorized", minimax_backup=0.5)
    _, tree = full_trees(monkeypatch, config)
    kept = np.asarray(tree.extra_data)
    chance_nodes = 0
    for game in range(kept.shape[0]):
        values = expectimax(tree, game)
        assert len(values) == int(np.sum(np.asarray(tree.node_visits[game]) > 0))
        nodes = np.array(sorted(values))
        np.testing.assert_allclose(kept[game, nodes], [values[n] for n in nodes], atol=1e-5)
        chance_nodes += int(np.sum(~np.asarray(tree.embeddings.is_decision_node[game])[nodes]))
    assert chance_nodes > 20  # the chance nodes' weighted means were exercised


def test_kept_values_alone_change_nothing_and_the_mix_moves_the_visits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the expectimax values kept (the patched tree start and backward pass) but
    PUCT reading none of them (the mix forced to 0), the search visits exactly as
    mctx's plain one; reading half of them, it visits otherwise."""

    def visits(mix: float) -> np.ndarray:
        config = SearchConfig(simulations=64, slots=True, batching="vectorized", minimax_backup=mix)
        out, _ = full_trees(monkeypatch, config, seed=9)
        return np.asarray(out.action_weights)

    plain, half = visits(0.0), visits(0.5)
    monkeypatch.setattr(
        _azero_search,
        "qtransform_minimax_mix",
        lambda tree, node_index, mix: qtransform_minimax_mix(tree, node_index, mix=0.0),
    )
    kept_only = visits(0.5)
    np.testing.assert_array_equal(plain, kept_only)
    assert not np.array_equal(plain, half)


def test_mix_zero_is_mctx_qtransform_and_one_reads_expectimax(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = SearchConfig(simulations=48, slots=True, batching="vectorized", minimax_backup=0.5)
    _, tree = full_trees(monkeypatch, config)
    one = jax.tree.map(lambda x: x[0], tree)
    decision = np.flatnonzero(
        np.asarray(one.embeddings.is_decision_node) & (np.asarray(one.node_visits) > 1)
    )
    assert decision.size > 3
    for node in decision:
        index = jnp.int32(node)
        np.testing.assert_allclose(
            qtransform_minimax_mix(one, index, mix=0.0),
            mctx.qtransform_by_parent_and_siblings(one, index),
            atol=1e-6,
        )
        # mix 1: the rescaled expectimax Q values, whose best searched child is at 1
        full = np.asarray(qtransform_minimax_mix(one, index, mix=1.0))
        searched = np.asarray(one.children_visits[node]) > 0
        kids = np.asarray(one.children_index[node])
        q = (
            np.asarray(one.children_rewards[node])
            + np.asarray(one.children_discounts[node])
            * np.asarray(one.extra_data)[np.maximum(kids, 0)]
        )
        assert int(np.argmax(np.where(searched, full, -1.0))) == int(
            np.argmax(np.where(searched, q, -np.inf))
        )


def test_minimax_backup_is_checked() -> None:
    with pytest.raises(ValueError, match="minimax_backup"):
        SearchConfig(minimax_backup=1.5)
    with pytest.raises(ValueError, match="minimax_backup"):
        SearchConfig(minimax_backup=0.5, qtransform="minmax")
    with pytest.raises(ValueError, match="keep their values"):
        root = mctx.RootFnOutput(
            prior_logits=jnp.zeros((1, 2)), value=jnp.zeros(1), embedding=jnp.zeros(1)
        )
        with mctx_patches("batched", "threefry", minimax=True):
            from mctx._src import search as mctx_search

            mctx_search.instantiate_tree_from_root(root, 2, jnp.zeros((1, 2)), jnp.zeros(1))


def test_agent_knob() -> None:
    """``azero:minimax_backup=x``: named in the agent's name, plays legally in both
    phases; refused out of [0, 1], on CLASSIC and beside ``qtransform=minmax``; the
    search refuses it on CLASSIC too."""
    from jungle_core import CLASSIC
    from jungle_core.jax_env import make
    from jungle_train.azero.search._search import zero_evaluator
    from tests._azero import check_knob

    check_knob("minimax_backup=0.5")
    for spec, rules, why in (
        ("azero:minimax_backup=2", DARK, "minimax_backup must be in [0, 1]"),
        ("azero:minimax_backup=0.5", CLASSIC, "minimax_backup is for DARK rules"),
        ("azero:minimax_backup=0.5,qtransform=minmax", DARK, "siblings qtransform, not minmax"),
    ):
        assert_refused(spec, rules, why)
    with pytest.raises(ValueError, match="minimax_backup"):
        make_search(make(CLASSIC), zero_evaluator(315), SearchConfig(minimax_backup=0.5))
