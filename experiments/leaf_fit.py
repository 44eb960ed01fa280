"""How well the search's hand-made leaf value predicts DARK results, and with which weights.

Replays arena games files and takes every position while some piece is face down (the
chance phase) and every fourth after it, labelled by the result for the player to move
(+1 a win, 0 a draw, -1 a loss). For each phase it prints

- each feature's correlation with the result: the material balance
  (:func:`jungle_train.azero.material_balance`), the difference of the two sides'
  Opp − Threat shaping potentials (:func:`jungle_train.jitted.potential`), the Greedy
  balance (``tanh(B / 300)``, :meth:`jungle_train.jitted.JaxGreedy.balance`) and the
  mover's best immediate capture (:func:`jungle_train.azero.capture_gain`);
- the mean squared error of ``tanh(a · (material + w · potentials))`` (``a`` fitted) for
  several potential weights ``w``: the hand-made value (``w`` =
  :data:`POTENTIAL_WEIGHT`) and the weight its leaf value would predict the results
  best with (``azero:potential=w``);
- the same error for a fitted ``tanh`` of all four features, five-fold cross-validated by
  game, so that a feature that only fits noise shows no gain.

With ``--value FILE`` (a value network's checkpoint, ``jungle train value``, or an
AlphaZero one, ``jungle train azero``, whose value head is read; repeatable, ``shipped``
for the shipped value network) it also prints, by the number of pieces still face
down, each network's correlation with the results beside the hand-made value's
(``material + POTENTIAL_WEIGHT · potentials``): the test a learned leaf value must pass
before it is worth a match, since a value that predicts the results of these games worse
than the hand-made one has nothing to add at the search's leaves.

With ``--search N`` (repeatable) the same table also has the root value of the search
``make_agent("azero", DARK)`` plays (the shipped DQN's prior, the hand-made leaf value,
no noise) at ``N`` simulations: what targets bootstrapped from the search's values
(TD(λ)) would teach a value network. Measured (2026-11-27, ``--every 16``: 8,022 of the
128,342 positions of docs/games/leaf-fit-games.txt): with pieces face down hand-made
+0.383, the search +0.389 at 64 simulations and +0.392 at 256; with every piece face up
+0.519, +0.556, +0.557. Searching barely moves the chance phase's fit.

With ``--values`` it prints instead which piece values make the material balance
(:func:`jungle_train.azero.material_balance`, ``(M_mover - M_other) / (M_mover +
M_other)``) predict the results best: the eight values (Rat to Elephant) and the scale
``a`` of ``tanh(a · balance)`` fitted by least squares (BFGS) for each phase and for all
positions, five-fold cross-validated by game, then the correlation of each named set of
:data:`jungle_train.azero.PIECE_VALUES` with the results, by pieces face down.
Measured (2026-11-27, the 128,342 positions of docs/games/leaf-fit-games.txt, 40 s):
fitted on all positions, Rat 92, Cat 0, Dog 39, Wolf 49, Leopard 50, Tiger 74, Lion 107,
Elephant 159 (held-out correlation +0.366, as the Greedy values'); in the chance phase
alone Lion 148 and Elephant 279 (+0.351 against +0.330), with every piece face up Rat
131 and Elephant 86 (+0.504 against +0.479). The rounded ``fitted`` set correlates
+0.353 with the results in the chance phase against the Greedy values' +0.330, +0.469 against
+0.474 with every piece face up. Played by the ``azero`` search it scored worse than
the Greedy values (``values=fitted`` in the screens' table of
experiments/readme-azero.md).

Positions of one game are correlated, which is why the folds split by game.

    .venv/bin/python experiments/leaf_fit.py docs/games/*minimax3*.jsonl
    .venv/bin/python experiments/leaf_fit.py --value shipped --value runs/value/agent.npz \
        docs/games/*minimax3*.jsonl
    .venv/bin/python experiments/leaf_fit.py --every 16 --search 64 --search 256 \
        $(cat docs/games/leaf-fit-games.txt)
    .venv/bin/python experiments/leaf_fit.py --values $(cat docs/games/leaf-fit-games.txt)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.optimize import minimize

import jungle_core as jc
from jungle_agents.arena import load_games
from jungle_core.jax_env import JaxEnv, JaxState, make
from jungle_core.lowlevel import apply
from jungle_train.azero import PIECE_VALUES, POTENTIAL_WEIGHT, capture_gain, material_balance
from jungle_train.common import load_checkpoint
from jungle_train.jitted import JaxGreedy, potential

FEATURES = ("material", "potentials", "greedy", "capture")
WEIGHTS = (0.0, POTENTIAL_WEIGHT, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08)
"""The potential weights whose error is printed."""

BUCKETS = (("all", 0, 16), ("1-16 face down", 1, 16), ("8-16", 8, 16), ("1-7", 1, 7), ("0", 0, 0))
"""The rows of the value networks' table: (label, fewest, most pieces face down)."""


def positions(paths: Sequence[str]) -> tuple[list[jc.State], np.ndarray, np.ndarray]:
    """The sampled positions of the DARK games in ``paths``, their labels (``float32[N]``,
    the result for the player to move) and their games' indices (``int64[N]``)."""
    states: list[jc.State] = []
    labels: list[float] = []
    games: list[int] = []
    index = 0
    for path in paths:
        for game in load_games(path)[1]:
            record = game.record
            if not record.rules.is_dark:
                continue
            state = jc.new_game(record.rules, seed=record.seed)
            moves = zip(record.actions, record.outcomes, strict=True)
            for ply, (action, chance) in enumerate(moves):
                if state.face_down_mask or ply % 4 == 0:
                    states.append(state)
                    labels.append(2.0 * record.score(state.to_move) - 1.0)
                    games.append(index)
                state = apply(state, action, chance)
            index += 1
    return states, np.array(labels, np.float32), np.array(games)


def features(states: Sequence[jc.State], batch: int = 512) -> np.ndarray:
    """``float32[N, 5]``: :data:`FEATURES` of each position for the player to move, and
    whether some piece is face down (1.0 or 0.0)."""
    env = make(jc.DARK)
    greedy = JaxGreedy(env)

    def one(x: JaxState) -> jax.Array:
        me = x.current_player
        return jnp.stack(
            [
                material_balance(x, me),
                potential(x, me, jc.DARK) - potential(x, 1 - me, jc.DARK),
                jnp.tanh(greedy.balance(x) / 300.0),
                capture_gain(jc.DARK, x),
                (x.face_down_mask != 0).astype(jnp.float32),
            ]
        )

    compute = jax.jit(jax.vmap(one))
    out = [np.asarray(compute(x)) for _, x in padded_batches(env, states, batch)]
    return np.concatenate(out)[: len(states)]


def padded_batches(
    env: JaxEnv, states: Sequence[jc.State], batch: int
) -> Iterator[tuple[int, JaxState]]:
    """``(start, [batch] JaxState)`` for each run of ``batch`` positions, the last one
    padded with its final position, so that every call has one compiled shape."""
    for start in range(0, len(states), batch):
        chunk = [env.from_state(s) for s in states[start : start + batch]]
        chunk += [chunk[-1]] * (batch - len(chunk))
        yield start, jax.tree.map(lambda *x: jnp.stack(x), *chunk)


def fit_tanh(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The weights ``w`` (``float64[K]``) of the least-squares fit ``y ≈ tanh(a @ w)``
    (BFGS, :func:`jax.scipy.optimize.minimize`)."""
    aa, yy = jnp.asarray(a), jnp.asarray(y)

    def loss(w: jax.Array) -> jax.Array:
        return jnp.mean((jnp.tanh(aa @ w) - yy) ** 2)

    return np.asarray(minimize(loss, jnp.zeros(a.shape[1]), method="BFGS").x, np.float64)


def tanh_error(a: np.ndarray, y: np.ndarray) -> float:
    """The mean squared error of :func:`fit_tanh` on its own data."""
    return float(np.mean((np.tanh(a @ fit_tanh(a, y)) - y) ** 2))


def cross_validated(a: np.ndarray, y: np.ndarray, games: np.ndarray, folds: int = 5) -> float:
    """The mean squared error of :func:`fit_tanh` on held-out games, ``folds``-fold."""
    errors = []
    for k in range(folds):
        train, test = games % folds != k, games % folds == k
        w = fit_tanh(a[train], y[train])
        errors.append(float(np.mean((np.tanh(a[test] @ w) - y[test]) ** 2)))
    return float(np.mean(errors))


def holdings(states: Sequence[jc.State]) -> tuple[np.ndarray, np.ndarray]:
    """``(mine, theirs)``, each ``float64[N, 8]``: whether the player to move (its
    opponent) still has its piece of each rank (Rat first), face up on the board or face
    down: ``State.in_play``)."""
    held = np.zeros((len(states), 16))
    for i, state in enumerate(states):
        row = [(state.in_play >> k) & 1 for k in range(16)]
        held[i] = row[8:] + row[:8] if state.to_move else row
    return held[:, :8], held[:, 8:]


def balance(values: np.ndarray, mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """``float64[N]``: the material balance ``(M_mine - M_theirs) / (M_mine + M_theirs)``
    by ``values`` (``[8]``, Rat to Elephant), 0 where nobody holds anything."""
    a, b = mine @ values, theirs @ values
    return np.where(a + b > 0, (a - b) / np.maximum(a + b, 1e-9), 0.0)


def fit_piece_values(mine: np.ndarray, theirs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``float64[9]``: the piece values (``[:8]``, scaled to a Leopard of 50) and the
    scale ``a`` (``[8]``) of the least-squares fit ``y ≈ tanh(a · balance)``, BFGS from
    the Greedy agent's values, ``PIECE_VALUES["spec"]`` (log-values fitted, so that each
    stays positive)."""
    m, t, yy = jnp.asarray(mine), jnp.asarray(theirs), jnp.asarray(y)

    def loss(w: jax.Array) -> jax.Array:
        v = jnp.exp(w[:8])
        a, b = m @ v, t @ v
        ratio = jnp.where(a + b > 0, (a - b) / jnp.maximum(a + b, 1e-9), 0.0)
        return jnp.mean((jnp.tanh(w[8] * ratio) - yy) ** 2)

    start = jnp.concatenate([jnp.log(jnp.asarray(PIECE_VALUES["spec"])), jnp.ones(1)])
    w = np.asarray(minimize(loss, start, method="BFGS").x, np.float64)
    values = np.exp(w[:8])
    return np.concatenate([values / values[4] * 50.0, w[8:]])


def piece_value_tables(
    states: Sequence[jc.State], y: np.ndarray, games: np.ndarray, folds: int = 5
) -> None:
    """Print the ``--values`` tables (the module's docstring)."""
    mine, theirs = holdings(states)
    down = np.array([s.face_down_mask.bit_count() for s in states])
    spec_values = np.asarray(PIECE_VALUES["spec"])
    print(f"{games.max() + 1} games, {len(states)} positions")
    print("piece values fitted (Rat .. Elephant, Leopard 50) and scale a, then the held-out")
    print("correlation of their balance with the result against the Greedy values', five folds:")
    for phase, chosen in (
        ("all", down >= 0),
        ("chance phase", down > 0),
        ("all face up", down == 0),
    ):
        m, t, yy, gg = mine[chosen], theirs[chosen], y[chosen], games[chosen]
        fitted, spec = [], []
        for k in range(folds):
            train, test = gg % folds != k, gg % folds == k
            w = fit_piece_values(m[train], t[train], yy[train])
            fitted.append(np.corrcoef(balance(w[:8], m[test], t[test]), yy[test])[0, 1])
            spec.append(np.corrcoef(balance(spec_values, m[test], t[test]), yy[test])[0, 1])
        w = fit_piece_values(m, t, yy)
        print(
            f"  {phase:<13}{len(yy):>8}  "
            + " ".join(f"{v:.0f}" for v in w[:8])
            + f"  a {w[8]:.2f}: {np.mean(fitted):+.3f} against {np.mean(spec):+.3f}"
        )
    print("correlation of each named set's balance with the result, by pieces face down:")
    print("  " + " " * 23 + "  ".join(f"{name:>7}" for name in PIECE_VALUES))
    for label, low, high in BUCKETS:
        chosen = (down >= low) & (down <= high)
        corr = [
            np.corrcoef(balance(np.asarray(v), mine[chosen], theirs[chosen]), y[chosen])[0, 1]
            for v in PIECE_VALUES.values()
        ]
        print(f"  {label:<15}{chosen.sum():>8}  " + "  ".join(f"{c:+7.3f}" for c in corr))


def value_correlations(
    states: Sequence[jc.State],
    y: np.ndarray,
    hand: np.ndarray,
    paths: Sequence[str],
    mixes: Sequence[float] = (),
    searches: Sequence[int] = (),
) -> list[tuple[str, int, list[float]]]:
    """For each row of :data:`BUCKETS` (the positions with that many pieces face down):
    its label, how many positions, and the correlation with the results ``y`` of the
    hand-made value ``hand`` (``float[N]``) and then of each value network in ``paths``
    (``""``: the shipped one), then of each network's mix with the hand-made value
    ``(1 - w) * network + w * hand`` for each ``w`` in ``mixes``, then of the agent's
    search's root value at each simulation count in ``searches`` (:func:`search_value`),
    in that order; NaN where a row has under two positions."""
    from jungle_train.players import ValueEvaluator

    values = [hand]
    for path in paths:
        kind = load_checkpoint(path).kind if path else "value"
        evaluate = azero_value(path) if kind == "azero" else ValueEvaluator(jc.DARK, path).evaluate
        values.append(
            np.concatenate([evaluate(states[i : i + 4096]) for i in range(0, len(states), 4096)])
            if states
            else np.zeros(0)
        )
    values += [(1.0 - w) * value + w * hand for value in values[1:] for w in mixes]
    values += [search_value(n)(states) for n in searches]
    down = np.array([s.face_down_mask.bit_count() for s in states], np.int64)
    rows = []
    for label, fewest, most in BUCKETS:
        chosen = (down >= fewest) & (down <= most)
        n = int(chosen.sum())
        rows.append(
            (
                label,
                n,
                [
                    float(np.corrcoef(v[chosen], y[chosen])[0, 1]) if n > 1 else float("nan")
                    for v in values
                ],
            )
        )
    return rows


def azero_value(path: str) -> Callable[[Sequence[jc.State]], np.ndarray]:
    """``evaluate(states) -> float32[N]``: the value head of the DARK AlphaZero checkpoint
    at ``path`` (the network alone, no hand-made value mixed in), for the player to move."""
    from jungle_train.azero import build_network, network_evaluation, params_from_arrays

    ckpt = load_checkpoint(path, kind="azero")
    network = build_network(jc.DARK, int(ckpt.config["channels"]), int(ckpt.config["conv_layers"]))
    params = params_from_arrays(ckpt.arrays, network, jc.DARK, path)
    env = make(jc.DARK)
    value = jax.jit(lambda x: network_evaluation(env, network, params, x).value)

    def evaluate(states: Sequence[jc.State]) -> np.ndarray:
        stacked = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in states])
        return np.asarray(value(stacked), np.float32)

    return evaluate


def search_value(simulations: int, batch: int = 64) -> Callable[[Sequence[jc.State]], np.ndarray]:
    """``evaluate(states) -> float32[N]``: the root value, for the player to move, of the
    search ``make_agent("azero", DARK)`` plays (the shipped DQN's prior, the hand-made
    leaf value; no noise) at ``simulations`` simulations, ``batch`` positions a call."""
    from jungle_train.azero import dqn_guide
    from jungle_train.azero.search import SearchConfig, make_search

    env = make(jc.DARK)
    guide, params = dqn_guide(env)
    config = SearchConfig(simulations=simulations, afterstate="parent", slots=True)
    search = make_search(env, guide, config)
    root = jax.jit(lambda x, key: search(params, key, x).search_tree.summary().value)

    def evaluate(states: Sequence[jc.State]) -> np.ndarray:
        out = [
            np.asarray(root(x, jax.random.key(start)), np.float32)
            for start, x in padded_batches(env, states, batch)
        ]
        return np.concatenate(out)[: len(states)] if out else np.zeros(0, np.float32)

    return evaluate


def main() -> None:
    """Read the games, compute the features and print the tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("games", nargs="+", help="arena games files (JSON Lines)")
    parser.add_argument(
        "--value",
        action="append",
        default=[],
        metavar="FILE",
        help="a value network's checkpoint to compare (repeatable; 'shipped': the shipped one)",
    )
    parser.add_argument(
        "--mix",
        action="append",
        type=float,
        default=[],
        metavar="W",
        help="--value: also each network's mix (1 - W) * network + W * hand-made, as the "
        "azero agent's heuristic=W mixes them (repeatable)",
    )
    parser.add_argument(
        "--search",
        action="append",
        type=int,
        default=[],
        metavar="N",
        help="also the root value of the azero agent's search at N simulations (repeatable)",
    )
    parser.add_argument(
        "--values",
        action="store_true",
        help="print only which piece values make the material balance fit best",
    )
    parser.add_argument(
        "--every", type=int, default=1, metavar="K", help="only every K-th position (default 1)"
    )
    args = parser.parse_args()
    if args.every < 1:
        parser.error(f"--every must be >= 1, not {args.every}")
    states, y, games = positions(args.games)
    states, y, games = states[:: args.every], y[:: args.every], games[:: args.every]
    if not states:
        raise SystemExit("no DARK positions in those files")
    if args.values:
        piece_value_tables(states, y, games)
        return
    x = features(states)
    if args.value or args.search:
        paths = ["" if p == "shipped" else p for p in args.value]
        hand = x[:, 0] + POTENTIAL_WEIGHT * x[:, 1]
        names = ", ".join(
            args.value
            + [f"{p} mixed at {w:g}" for p in args.value for w in args.mix]
            + [f"the search at {n} simulations" for n in args.search]
        )
        print(f"correlation with the result, by pieces face down: hand-made value, then {names}")
        rows = value_correlations(states, y, hand, paths, args.mix, args.search)
        for label, n, corr in rows:
            print(f"  {label:<15}{n:>8}  " + "  ".join(f"{c:+.3f}" for c in corr))
    print(f"{games.max() + 1} games, {len(states)} positions")
    for phase, chosen in (("chance phase", x[:, 4] > 0), ("all face up", x[:, 4] == 0)):
        f, yy, gg = x[chosen, :4], y[chosen], games[chosen]
        print(f"\n{phase}: {len(yy)} positions")
        print("  correlation with the result:")
        for i, name in enumerate(FEATURES):
            print(f"    {name:<11}{np.corrcoef(f[:, i], yy)[0, 1]:+.3f}")
        print("  tanh(a * (material + w * potentials)), a fitted: mean squared error")
        for w in WEIGHTS:
            error = tanh_error((f[:, 0] + w * f[:, 1])[:, None], yy)
            mark = "  (the hand-made value)" if w == POTENTIAL_WEIGHT else ""
            print(f"    w = {w:<6g}{error:.4f}{mark}")
        weights = fit_tanh(f, yy)
        print(
            "  tanh of all four, fitted: held-out error "
            f"{cross_validated(f, yy, gg):.4f}; weights "
            + ", ".join(f"{n} {v:+.3f}" for n, v in zip(FEATURES, weights, strict=True))
        )


if __name__ == "__main__":
    main()
