"""AlphaZero-style search with ``mctx``, the JAX core itself as the model.

:func:`make_search` builds ``search(params, key, states) -> mctx.PolicyOutput`` for a
batch of :class:`jungle_core.jax_env.JaxState` and an evaluator (a network, or a stub);
the search steps the true rules, so the only thing learned is the evaluator.

**DARK: Stochastic MuZero** (``mctx.stochastic_muzero_policy``). Every action that turns
a piece face up is a chance node; the chance outcomes are the 16 piece identities
``owner * 8 + rank - 1`` of :meth:`JaxEnv.chance_probs`.

- A decision node's embedding is :class:`DecisionNode`: the state, and the evaluator's
  afterstate values of its actions (computed when the state was reached, so expanding
  an action costs no network call).
- The *afterstate* of ``(state, action)`` is just that pair (:class:`Afterstate`);
  ``chance_logits = log(chance_probs(state, action))``, with the smallest finite float
  for impossible outcomes. An action that turns nothing face up gets all its mass on
  outcome 0 (``chance_probs`` does that), so every action has a chance node with at
  least one possible outcome, and the logits are never all ``-inf`` (which would give
  NaN in the chance node's softmax).
- The afterstate value is the evaluator's afterstate value of the action, or with
  ``afterstate="parent"`` the value of the position itself (with ``"expected"`` plus the
  action's expected change of material, added when the action is expanded), from the
  mover's side (a decision → afterstate edge has reward 0 and discount 1 in mctx); an
  action illegal in the state is worth -1 (the JAX core plays it as a forfeit), and any
  action of a finished game 0.
- The chance step is :meth:`JaxEnv.step_outcome`. Its reward is the game result for the
  player who moved (``rewards[mover]``), and its discount is **-1 when the player to
  move changes, +1 when the same player moves again, 0 when the game is over**: the
  value of every decision node is from the side of its player to move, so crossing
  to the other player negates it (a zero-sum game), and a finished game's value (0) and
  anything below it is cut off. Under every rule set of this library each legal action
  passes the turn (a DARK bump into one's own face-down piece included), so the +1 case
  is a guard, not a path; ``tests/train/test_azero_search.py`` checks the signs in both seats.

mctx calls *both* recurrent functions on every expansion (it selects the output by the
node's kind afterwards), so each one is given indices it does not expect: the decision
function gets ``A + outcome`` at a chance node, the chance function ``action - A`` (a
negative number) at a decision node. Each clips its index into range, so the unused
branch computes garbage but finite values on valid indices. mctx's ``invalid_actions``
masks the root only; deeper in the tree illegal actions get a prior of 0 (logits at the
smallest finite float), and if the search ever picks one anyway the core plays it as a
forfeit, which the search sees as a loss. ``max_depth`` counts chance levels too, so the
depth in decisions is doubled (:attr:`SearchConfig.max_depth` is in decisions).

**CLASSIC: Gumbel MuZero** (``mctx.gumbel_muzero_policy``, as pgx's AlphaZero example
uses it): no chance, so the recurrent function steps the core with outcome 0, with the
same reward and discount.

Cost: every chance expansion steps the core once and evaluates the network once (at a
decision expansion the chance function's ``lax.cond`` skips both). Three things cost more
than that on a CPU, for one game at a time, and are kept small here:

- mctx keeps every node's embedding in the tree, and XLA's CPU compiler copied the
  embedding arrays on every simulation. So a node stores a :class:`PackedState` (the
  legal mask as bits) and, with ``afterstate="parent"``, one value instead of one per
  action; and the search is compiled with
  :data:`~jungle_train.azero.search._mctx_fast.COMPILER_OPTIONS`, which removes the copies.
- mctx splits its key and draws ``uniform[A]`` tie-break noise at every level of every
  simulation; :func:`search_key` turns the caller's key into an ``rbg`` one, much
  cheaper than ``threefry`` on a CPU.
- mctx reads and writes rows of ``num_actions`` (DARK: plus 16 chance outcomes) entries
  at every level of every simulation; with :attr:`SearchConfig.slots` (what the agent
  plays and self-play searches) a node's action axis holds only its legal actions, at most
  :data:`DARK_SLOTS` or :data:`CLASSIC_SLOTS` of them, 2.5–2.8 times faster.

``experiments/azero_speed.py`` measures the three against the plain search
(experiments/readme-azero.md: ×4.9 at 1,024 simulations, ×5.6 at 2,048, one DARK game;
the first two ×1.66 and ×1.81).

Where the parts live: the search's nodes and model (the recurrent functions) and
:func:`make_search` here; its settings (:class:`SearchConfig`) in
:mod:`jungle_train.azero.search._config`; the slots and packed states in
:mod:`jungle_train.azero.search._slots`; what makes mctx itself cheaper (the compiler options,
the ``rbg`` key, the game-by-game batching) in
:mod:`jungle_train.azero.search._mctx_fast`; the evaluators it calls in
:mod:`jungle_train.azero.search._evaluations`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import mctx
import numpy as np

from jungle_core.jax_env import JaxEnv, JaxState
from jungle_train.azero._hand_value import expected_gain, winning_material
from jungle_train.azero._net import Evaluation
from jungle_train.azero.search._config import CHANCE_JITTER, SearchConfig, stratified_order
from jungle_train.azero.search._mctx_fast import one_game_at_a_time, search_key
from jungle_train.azero.search._slots import (
    CLASSIC_SLOTS,
    DARK_SLOTS,
    PackedState,
    gather_slots,
    in_actions,
    pack_state,
    slot_actions,
    unpack_state,
)

__all__ = [
    "Afterstate",
    "DecisionNode",
    "Evaluator",
    "make_search",
    "step_result",
    "zero_evaluator",
]

NUM_OUTCOMES = 16
"""Chance outcomes of a DARK action: the piece ``owner * 8 + rank - 1`` turned face up."""

_MIN_LOGIT = float(np.finfo(np.float32).min)

Evaluator = Callable[[Any, JaxState], Evaluation]
"""``evaluate(params, states[B]) -> Evaluation``: the learned part of the search."""


@functools.partial(
    jax.tree_util.register_dataclass,
    data_fields=["state", "afterstate_values", "slots"],
    meta_fields=[],
)
@dataclasses.dataclass(frozen=True)
class DecisionNode:
    """A DARK decision node's embedding (batch axes in front)."""

    state: PackedState | JaxState
    """The position (a :class:`JaxState` with ``compact=False``)."""
    afterstate_values: jax.Array
    """``float32[..., A]``: the value of each action's afterstate for the player to move
    (already -1 for illegal actions and 0 in a finished game); with
    ``afterstate="parent"`` or ``"expected"`` (and ``compact``), where every legal
    action's is the position's own value (``"expected"`` adds the action's own part when
    it is expanded), ``float32[..., 1]``: that value (0 in a finished game). With
    :attr:`SearchConfig.slots` (and not one value), ``float32[..., K]``, one a slot."""
    slots: jax.Array
    """``int32[..., K]``: with :attr:`SearchConfig.slots`, the action each slot stands
    for (:func:`slot_actions`; ``K`` is :data:`DARK_SLOTS` or :data:`CLASSIC_SLOTS`);
    ``int32[..., 0]`` without."""


@functools.partial(
    jax.tree_util.register_dataclass, data_fields=["state", "action"], meta_fields=[]
)
@dataclasses.dataclass(frozen=True)
class Afterstate:
    """A DARK chance node's embedding: the position and the action chosen in it."""

    state: PackedState | JaxState
    """The position before the action (as :attr:`DecisionNode.state`)."""
    action: jax.Array
    """``int32[...]``: the action."""


def zero_evaluator(num_actions: int) -> Evaluator:
    """An evaluator that knows nothing: uniform prior, every value 0. Searching with it
    is plain MCTS on the true rules whose only signal is the end of the game.

    >>> import jax
    >>> from jungle_core.jax_env import make
    >>> env = make()
    >>> states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))
    >>> zero_evaluator(280)(None, states).logits.shape
    (2, 280)
    """

    def evaluate(params: Any, states: JaxState) -> Evaluation:
        del params
        batch = states.current_player.shape[0]
        zeros = jnp.zeros((batch, num_actions), jnp.float32)
        return Evaluation(zeros, jnp.zeros(batch, jnp.float32), zeros)

    return evaluate


def _masked_logits(logits: jax.Array, legal: jax.Array, uniform: float = 0.0) -> jax.Array:
    """Logits with illegal actions at the smallest finite float (never ``-inf``: a row
    with no legal action, a finished game's, must not give NaN in a softmax), and with
    ``uniform`` of the mass spread evenly over the legal actions."""
    logits = jnp.where(legal, logits - jnp.max(logits, axis=-1, keepdims=True), _MIN_LOGIT)
    if uniform:
        probs = jax.nn.softmax(logits, axis=-1)
        count = jnp.maximum(jnp.sum(legal, axis=-1, keepdims=True), 1)
        mixed = (1.0 - uniform) * probs + uniform * legal / count
        logits = jnp.where(legal, jnp.log(jnp.maximum(mixed, 1e-30)), _MIN_LOGIT)
    return logits


def _stratified_jitter() -> jax.Array:
    """``float32[2, 16]``: for each mover, what ``chance_order="stratified"`` adds to each
    outcome's chance logit, from :data:`CHANCE_JITTER` for the first outcome of
    :func:`stratified_order` down to 0 for the last: among outcomes of equal probability
    and visits, mctx's ``probability / (visits + 1)`` then picks them in that order."""
    jitter = np.zeros((2, 16), np.float32)
    for mover in (0, 1):
        for place, outcome in enumerate(stratified_order(mover)):
            jitter[mover, outcome] = CHANCE_JITTER * (15 - place) / 15
    return jnp.asarray(jitter)


def step_result(before: JaxState, after: JaxState) -> tuple[jax.Array, jax.Array]:
    """``(reward, discount)``, ``float32[B]`` each, of the steps ``before`` → ``after``:
    the result for the player who moved, and -1 / +1 / 0 (the other player moves / the
    same player moves again / the game is over)."""
    mover = before.current_player
    reward = jnp.take_along_axis(after.rewards, mover[:, None], axis=1)[:, 0]
    over = after.terminated | after.truncated
    same = after.current_player == mover
    discount = jnp.where(over, 0.0, jnp.where(same, 1.0, -1.0)).astype(jnp.float32)
    return reward, discount


class _Model:
    """The recurrent functions of one rule set and evaluator."""

    def __init__(self, env: JaxEnv, evaluate: Evaluator, config: SearchConfig) -> None:
        self.env = env
        self.evaluate = evaluate
        self.prior_mix = config.prior_mix
        # "expected" starts from the parent's value too, the material change added
        self.parent_afterstate = config.afterstate in ("parent", "expected")
        self.expected = config.afterstate == "expected"
        self.compact = config.compact
        # "parent" with compact nodes: one value a node (the decision function masks it)
        self.one_value = self.parent_afterstate and self.compact
        self.num_actions = env.num_actions
        self.shuffle_chance = config.chance_order == "shuffled"
        # "stratified": float32[2, 16], by the mover, each outcome's fixed jitter (the
        # first in stratified_order the largest)
        self.stratified_jitter = (
            _stratified_jitter() if config.chance_order == "stratified" else None
        )
        dark = env.rules.variant == "dark"
        self.slots = (DARK_SLOTS if dark else CLASSIC_SLOTS) if config.slots else 0
        # the width of a decision node's action axis in the tree
        self.width = self.slots or self.num_actions
        # with dead_draw or draw_bounds the search's params are (evaluator params, root
        # mover int32[B])
        self.dead_draw = config.dead_draw
        self.draw_bounds = config.draw_bounds
        self.rooted = bool(config.dead_draw or config.draw_bounds)

    def with_root(self, params: Any, states: JaxState) -> Any:
        """What the search hands mctx as ``params``: the evaluator's, and with dead_draw
        or draw_bounds the root's mover (``int32[B]``), which the recurrent functions
        read back."""
        return (params, states.current_player) if self.rooted else params

    def _evaluate(self, params: Any, states: JaxState) -> Evaluation:
        """The evaluator's view of ``states``, with dead_draw's value of a dead draw
        (``-dead_draw`` for the root's mover, where neither side's material can win) or
        draw_bounds' bounds (at most that draw's value for a mover whose material cannot
        win, at least it where the opponent's cannot)."""
        if not self.rooted:
            return self.evaluate(params, states)
        inner, root = params
        ev = self.evaluate(inner, states)
        sign = jnp.where(states.current_player == root, 1.0, -1.0)
        can_win = jax.vmap(functools.partial(winning_material, self.env.rules))
        mover = states.current_player
        mine, theirs = can_win(states, mover), can_win(states, 1 - mover)
        drawn = -self.dead_draw * sign  # a draw's value for the player to move
        # a draw's value bounds the value from above where the mover cannot win, from
        # below where the opponent cannot (draw_bounds; pieces only leave, so the bounds
        # hold for every afterstate too); dead_draw alone: only where neither can
        live = mine | theirs
        capped, floored = (~mine, ~theirs) if self.draw_bounds else (~live, ~live)
        most = jnp.where(capped, drawn, jnp.inf)
        least = jnp.where(floored, drawn, -jnp.inf)
        value = jnp.clip(ev.value, least, most)
        afterstate = jnp.clip(ev.afterstate, least[:, None], most[:, None])
        return Evaluation(ev.logits, value, afterstate)

    def _result(
        self, params: Any, before: JaxState, after: JaxState
    ) -> tuple[jax.Array, jax.Array]:
        """:func:`step_result`, with dead_draw a draw's reward ``-dead_draw`` for the
        root's mover (``+`` for the other)."""
        reward, discount = step_result(before, after)
        draw_cost = self.dead_draw
        if not draw_cost:
            return reward, discount
        sign = jnp.where(before.current_player == params[1], 1.0, -1.0)
        drawn = (after.terminated | after.truncated) & (reward == 0.0)
        return jnp.where(drawn, -draw_cost * sign, reward), discount

    def pack(self, states: JaxState) -> Any:
        """A position as the tree stores it (:class:`PackedState`, or as it is)."""
        return pack_state(states) if self.compact else states

    def unpack(self, stored: Any) -> JaxState:
        """The position of :meth:`pack`."""
        return unpack_state(stored, self.num_actions) if self.compact else stored

    def node(self, params: Any, states: JaxState) -> tuple[Evaluation, DecisionNode]:
        """The evaluation of ``states`` and their decision-node embedding."""
        ev = self._evaluate(params, states)
        done = (states.terminated | states.truncated)[:, None]
        value = jnp.where(done[:, 0], 0.0, ev.value).astype(jnp.float32)
        guess = ev.value[:, None] if self.parent_afterstate else ev.afterstate
        after = jnp.where(states.legal_action_mask, guess, -1.0)
        after = jnp.where(done, 0.0, after).astype(jnp.float32)
        logits = _masked_logits(
            ev.logits.astype(jnp.float32), states.legal_action_mask, self.prior_mix
        )
        slots = jnp.zeros((value.shape[0], 0), jnp.int32)
        if self.slots:
            slots = slot_actions(states.legal_action_mask, self.slots)
            logits = gather_slots(logits, slots, _MIN_LOGIT)
            after = gather_slots(after, slots, -1.0)
            after = jnp.where(done, 0.0, after)
        # "parent": every legal action's afterstate value is the position's own, so the
        # node keeps that one number (the decision function masks illegal actions)
        stored = value[:, None] if self.one_value else after
        node = DecisionNode(self.pack(states), stored, slots)
        return Evaluation(logits, value, after), node

    def root(self, params: Any, states: JaxState) -> mctx.RootFnOutput:
        ev, node = self.node(params, states)
        return mctx.RootFnOutput(prior_logits=ev.logits, value=ev.value, embedding=node)

    def decision(
        self, params: Any, key: jax.Array, action: jax.Array, node: DecisionNode
    ) -> tuple[mctx.DecisionRecurrentFnOutput, Afterstate]:
        del params
        # at a chance node's expansion mctx passes width + outcome here: clip (output
        # unused); a slot stands for the action it holds (an unused one for A, illegal)
        slot = jnp.clip(action, 0, self.width - 1).astype(jnp.int32)
        a = jnp.take_along_axis(node.slots, slot[:, None], axis=1)[:, 0] if self.slots else slot
        states = self.unpack(node.state)
        probs = jax.vmap(self.env.chance_probs)(states, a)
        chance_logits = jnp.where(probs > 0, jnp.log(jnp.maximum(probs, 1e-30)), _MIN_LOGIT)
        if self.shuffle_chance:
            jitter = jax.random.uniform(key, chance_logits.shape, maxval=CHANCE_JITTER)
            chance_logits = jnp.where(probs > 0, chance_logits + jitter, chance_logits)
        elif self.stratified_jitter is not None:
            jitter = self.stratified_jitter[states.current_player]
            chance_logits = jnp.where(probs > 0, chance_logits + jitter, chance_logits)
        done = states.terminated | states.truncated
        inside = jnp.minimum(a, self.num_actions - 1)[:, None]
        legal = jnp.take_along_axis(states.legal_action_mask, inside, axis=1)[:, 0]
        legal = legal & (a < self.num_actions) & ~done
        if self.one_value:
            own = node.afterstate_values[:, 0]
            value = jnp.where(done, 0.0, jnp.where(legal, own, -1.0))
        else:
            value = jnp.take_along_axis(node.afterstate_values, slot[:, None], axis=1)[:, 0]
        if self.expected:
            gain = jax.vmap(functools.partial(expected_gain, self.env.rules))(states, a, probs)
            value = jnp.where(legal, value + gain, value)
        out = mctx.DecisionRecurrentFnOutput(chance_logits=chance_logits, afterstate_value=value)
        return out, Afterstate(node.state, a)

    def chance(
        self, params: Any, key: jax.Array, outcome: jax.Array, after: Afterstate
    ) -> tuple[mctx.ChanceRecurrentFnOutput, DecisionNode]:
        del key
        # at a decision node's expansion mctx passes action - A (< 0) here: clip; and
        # when no game of the batch expands a chance node, skip the step and the network
        # (the output is unused): this halves the cost of a one-game search
        o = jnp.clip(outcome, 0, NUM_OUTCOMES - 1).astype(jnp.int32)

        def expand(_: None) -> tuple[mctx.ChanceRecurrentFnOutput, DecisionNode]:
            before = self.unpack(after.state)
            states = jax.vmap(self.env.step_outcome)(before, after.action, o)
            reward, discount = self._result(params, before, states)
            ev, node = self.node(params, states)
            out = mctx.ChanceRecurrentFnOutput(
                action_logits=ev.logits, value=ev.value, reward=reward, discount=discount
            )
            return out, node

        def skip(_: None) -> tuple[mctx.ChanceRecurrentFnOutput, DecisionNode]:
            zeros = jnp.zeros(outcome.shape, jnp.float32)
            out = mctx.ChanceRecurrentFnOutput(
                action_logits=jnp.zeros((*outcome.shape, self.width), jnp.float32),
                value=zeros,
                reward=zeros,
                discount=zeros,
            )
            width = 1 if self.one_value else self.width
            blank = jnp.zeros((*outcome.shape, width), jnp.float32)
            slots = jnp.zeros((*outcome.shape, self.slots), jnp.int32)
            return out, DecisionNode(after.state, blank, slots)

        out: tuple[mctx.ChanceRecurrentFnOutput, DecisionNode] = jax.lax.cond(
            jnp.any(outcome >= 0), expand, skip, None
        )
        return out

    def classic_root(self, params: Any, states: JaxState) -> mctx.RootFnOutput:
        ev, node = self.node(params, states)
        embedding = self.classic_node(node)
        return mctx.RootFnOutput(prior_logits=ev.logits, value=ev.value, embedding=embedding)

    def classic_node(self, node: DecisionNode) -> Any:
        """What a CLASSIC node keeps: the position, and with slots the slots' actions."""
        return (node.state, node.slots) if self.slots else node.state

    def classic_step(
        self, params: Any, key: jax.Array, action: jax.Array, stored: Any
    ) -> tuple[mctx.RecurrentFnOutput, Any]:
        del key
        if self.slots:
            packed, slots = stored
            slot = jnp.clip(action, 0, self.slots - 1).astype(jnp.int32)
            action = jnp.take_along_axis(slots, slot[:, None], axis=1)[:, 0]
        else:
            packed = stored
        states = self.unpack(packed)
        zero = jnp.zeros_like(action, jnp.int32)
        after = jax.vmap(self.env.step_outcome)(states, action.astype(jnp.int32), zero)
        reward, discount = step_result(states, after)
        ev, node = self.node(params, after)
        out = mctx.RecurrentFnOutput(
            reward=reward, discount=discount, prior_logits=ev.logits, value=ev.value
        )
        return out, self.classic_node(node)


def make_search(
    env: JaxEnv, evaluate: Evaluator, config: SearchConfig
) -> Callable[[Any, jax.Array, JaxState], mctx.PolicyOutput[Any]]:
    """``search(params, key, states) -> mctx.PolicyOutput`` for a batch ``[B]`` of
    unfinished positions of ``env``'s rule set: ``action`` ``int32[B]``,
    ``action_weights`` ``float32[B, A]`` (the visit distribution for DARK, Gumbel
    MuZero's improved policy for CLASSIC), ``search_tree``. Not jitted: wrap it in
    ``jax.jit`` (or call it inside a jitted function).

    >>> import jax
    >>> from jungle_core.jax_env import make
    >>> env = make()
    >>> search = make_search(env, zero_evaluator(280), SearchConfig(simulations=4))
    >>> states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))
    >>> out = jax.jit(search)(None, jax.random.key(1), states)
    >>> out.action.shape, out.action_weights.shape
    ((2,), (2, 280))
    """
    model = _Model(env, evaluate, config)
    depth = config.max_depth or None
    noisy_off_cpu = bool(config.dirichlet_fraction) and jax.default_backend() != "cpu"
    rbg = config.rng == "rbg" or (config.rng == "auto" and not noisy_off_cpu)
    keyed = search_key if rbg else (lambda key: key)

    def search_dark(params: Any, key: jax.Array, states: JaxState) -> mctx.PolicyOutput[Any]:
        params = model.with_root(params, states)
        root = model.root(params, states)
        slots = root.embedding.slots
        out = mctx.stochastic_muzero_policy(
            params=params,
            rng_key=keyed(key),
            root=root,
            decision_recurrent_fn=model.decision,
            chance_recurrent_fn=model.chance,
            num_simulations=config.simulations,
            invalid_actions=slots >= env.num_actions if model.slots else ~states.legal_action_mask,
            max_depth=None if depth is None else 2 * depth,
            dirichlet_fraction=config.dirichlet_fraction,
            dirichlet_alpha=config.dirichlet_alpha,
            pb_c_init=config.pb_c_init,
            temperature=config.temperature,
        )
        return in_actions(out, slots, env.num_actions) if model.slots else out

    def search_classic(params: Any, key: jax.Array, states: JaxState) -> mctx.PolicyOutput[Any]:
        root = model.classic_root(params, states)
        slots = root.embedding[1] if model.slots else None
        out = mctx.gumbel_muzero_policy(
            params=params,
            rng_key=keyed(key),
            root=root,
            recurrent_fn=model.classic_step,
            num_simulations=config.simulations,
            invalid_actions=~states.legal_action_mask
            if slots is None
            else slots >= env.num_actions,
            max_depth=depth,
            gumbel_scale=config.gumbel_scale,
            max_num_considered_actions=min(config.max_considered, model.width),
        )
        return out if slots is None else in_actions(out, slots, env.num_actions)

    config.check_rules(env.rules)
    policy = search_dark if env.rules.variant == "dark" else search_classic

    sequential = config.batching == "sequential" or (
        config.batching == "auto" and jax.default_backend() == "cpu"
    )
    return one_game_at_a_time(policy) if sequential else policy
