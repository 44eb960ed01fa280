"""Soak: the JAX core against the pure core on a million random steps (``make soak``).

Every rule set of ``test_jax_equivalence.FAMILIES`` (DARK, DARK_STRICT, the other DARK
option combinations, CLASSIC and its variants) plays ``--batch`` random games side by
side in both cores. Each step, the pure core picks a random legal action in every game,
and one jitted, vmapped call of the JAX core plays it from the JAX core's *own* state
(never re-synchronised from the pure one) with each of the 16 chance outcomes. Then,
for every game, as in ``property_tests/test_jax_equivalence.py``:

- ``chance_probs`` equals the pure ``chance_outcomes``;
- for every chance outcome of the action (all 16 outcome indices of an action without
  chance: the JAX core must ignore the outcome), the JAX successor equals the pure
  ``step_outcome``: board, face-down set, player to move, both counters, the legal
  mask, the terminal flag (``truncated`` stays False) and the rewards;
- the observation of the position before the step equals the pure ``observation``.

The game goes on with one of those outcomes drawn at random, in both cores; a finished
game is replaced by a new one. The script prints the counts and the time and exits
non-zero on the first difference (naming the rule set, the position and the action).

    python -m property_tests.soak [--steps 1000000] [--batch 512] [--seed 0] [--rules NAME]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jungle_core import (
    Rules,
    State,
    chance_outcomes,
    legal_action_mask,
    legal_actions,
    new_game,
    observation,
    outcome,
    returns,
    step_outcome,
    to_fen,
)
from jungle_core.jax_env import JaxEnv, JaxState, make
from property_tests.test_jax_equivalence import FAMILIES

RULE_SETS: list[Rules] = [rules for family in ("dark", "classic") for rules in FAMILIES[family]]


class Difference(AssertionError):
    """The two cores disagree."""


def _checker(env: JaxEnv) -> Any:
    """``check(states[B], actions[B]) -> (every[B, 16], probs[B, 16], obs[B, ...])``."""
    outcomes16 = jnp.arange(16, dtype=jnp.int32)

    def one(state: JaxState, action: jax.Array) -> tuple[JaxState, jax.Array, jax.Array]:
        every = jax.vmap(lambda o: env.step_outcome(state, action, o))(outcomes16)
        return every, env.chance_probs(state, action), env.observe(state)

    return jax.jit(jax.vmap(one))


def _stack(states: list[JaxState]) -> JaxState:
    out: JaxState = jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *states)
    return out


def soak_rules(rules: Rules, steps: int, batch: int, seed: int) -> dict[str, int]:
    """Play ``steps`` steps (``batch`` games at a time) of one rule set in both cores;
    raises :class:`Difference` on the first disagreement. Returns the counts."""
    env = make(rules)
    check = _checker(env)
    rng = np.random.default_rng(seed)
    next_seed = seed * 1_000_003
    pure: list[State] = []
    for _ in range(batch):
        pure.append(new_game(rules, seed=next_seed))
        next_seed += 1
    jx = _stack([env.from_state(s) for s in pure])
    counts = {"steps": 0, "successors": 0, "chance_steps": 0, "games": 0}
    n_actions = env.num_actions
    forfeit_free = np.zeros(2, dtype=np.float32)
    while counts["steps"] < steps:
        picks = rng.random((batch, 2))
        actions = np.empty(batch, dtype=np.int32)
        for b, state in enumerate(pure):
            legal = legal_actions(state)
            actions[b] = legal[min(int(picks[b, 0] * len(legal)), len(legal) - 1)]
        every, probs, obs = jax.device_get(check(jx, jnp.asarray(actions)))
        chosen = np.zeros(batch, dtype=np.int64)
        for b, state in enumerate(pure):
            action = int(actions[b])
            where = f"{rules.name}: action {action} in {to_fen(state)!r}"
            if not np.array_equal(obs[b], observation(state)):
                raise Difference(f"observation differs, {where}")
            options = chance_outcomes(state, action)
            want_probs = np.zeros(16, dtype=np.float32)
            for o, p in options:
                want_probs[max(o, 0)] += p
            if not np.array_equal(probs[b], want_probs):
                raise Difference(f"chance_probs {probs[b]} != {want_probs}, {where}")
            if options[0][0] < 0:
                nxt = step_outcome(state, action, -1)
                pairs = [(o, nxt) for o in range(16)]
            else:
                pairs = [(o, step_outcome(state, action, o)) for o, _ in options]
                counts["chance_steps"] += 1
            for o, want in pairs:
                _compare(every, b, o, want, n_actions, forfeit_free, f"outcome {o}, {where}")
            counts["successors"] += len(options)
            k = min(int(picks[b, 1] * len(pairs)), len(pairs) - 1)
            chosen[b], pure[b] = pairs[k]
        counts["steps"] += batch
        jx = jax.tree.map(functools.partial(_pick, chosen=chosen), every)
        finished = [b for b, s in enumerate(pure) if outcome(s) is not None]
        if finished:
            counts["games"] += len(finished)
            fresh = []
            for b in finished:
                pure[b] = new_game(rules, seed=next_seed)
                next_seed += 1
                fresh.append(env.from_state(pure[b]))
            rows = np.array(finished)
            new = _stack(fresh)
            jx = jax.tree.map(functools.partial(_set_rows, rows=rows), jx, new)
    return counts


def _pick(x: np.ndarray[Any, Any], chosen: np.ndarray[Any, Any]) -> Any:
    return x[np.arange(len(chosen)), chosen]


def _set_rows(x: np.ndarray[Any, Any], y: Any, rows: np.ndarray[Any, Any]) -> Any:
    x = np.array(x)
    x[rows] = y
    return x


def _compare(
    every: JaxState,
    b: int,
    o: int,
    want: State,
    n_actions: int,
    zero: np.ndarray[Any, Any],
    where: str,
) -> None:
    got_board = every.board[b, o]
    if (
        tuple(got_board.tolist()) != want.board
        or int(every.face_down_mask[b, o]) != want.face_down_mask
        or int(every.current_player[b, o]) != want.to_move
        or int(every.plies_since_removal[b, o]) != want.plies_since_removal
        or int(every.ply[b, o]) != want.ply
    ):
        raise Difference(f"next state differs, {where}: want {to_fen(want)!r}")
    if not np.array_equal(every.legal_action_mask[b, o], legal_action_mask(want)):
        raise Difference(f"legal mask differs after {where}")
    result = outcome(want)
    if bool(every.terminated[b, o]) != (result is not None) or bool(every.truncated[b, o]):
        raise Difference(f"terminated {bool(every.terminated[b, o])} but {result}, {where}")
    rewards = np.asarray(returns(want), dtype=np.float32) if result is not None else zero
    if not np.array_equal(every.rewards[b, o], rewards):
        raise Difference(f"rewards {every.rewards[b, o]} != {rewards}, {where}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="steps in all")
    parser.add_argument("--batch", type=int, default=512, help="games played side by side")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rules", action="append", default=None, help="only these rule sets (by name)"
    )
    args = parser.parse_args(argv)
    rule_sets = [r for r in RULE_SETS if args.rules is None or r.name in args.rules]
    if not rule_sets:
        parser.error(f"no rule set named {args.rules}; names: {[r.name for r in RULE_SETS]}")
    per_rules = -(-args.steps // len(rule_sets))
    per_rules = -(-per_rules // args.batch) * args.batch
    total = {"steps": 0, "successors": 0, "chance_steps": 0, "games": 0}
    start = time.perf_counter()
    print(f"soak: {len(rule_sets)} rule sets, {per_rules:,} steps each, batch {args.batch}")
    for i, rules in enumerate(rule_sets):
        t0 = time.perf_counter()
        try:
            counts = soak_rules(rules, per_rules, args.batch, args.seed + i)
        except Difference as error:
            print(f"DIFFERENCE: {error}", file=sys.stderr)
            return 1
        for key, value in counts.items():
            total[key] += value
        print(
            f"  {rules.name:<62} {counts['steps']:>9,} steps  {counts['chance_steps']:>8,} "
            f"with chance  {counts['successors']:>10,} successors  {counts['games']:>6,} games "
            f"finished  {time.perf_counter() - t0:6.1f} s",
            flush=True,
        )
    print(
        f"soak: {total['steps']:,} steps ({total['chance_steps']:,} with chance, "
        f"{total['successors']:,} successor states compared, {total['games']:,} games "
        f"finished) over {len(rule_sets)} rule sets in {time.perf_counter() - start:.0f} s: "
        f"no difference"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
