"""``experiments/leaf_fit.py``: the positions it samples from games files, and the value
networks' correlations by the number of pieces face down."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jungle_agents.arena import load_games, play_match, replay
from jungle_core import DARK
from jungle_train.players._value import ValueEvaluator
from tests._requires import needs_jax
from tests._scripts import load_experiment


def test_positions_and_value_correlations_agree_with_the_replayed_games(tmp_path: Path) -> None:
    script = load_experiment("leaf_fit")
    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 4, seed=3, workers=1, out=path)
    states, y, games = script.positions([path])

    # every position with a piece face down, every fourth ply after, labelled for its mover
    want_states, want_labels, want_games = [], [], []
    for index, game in enumerate(load_games(path)[1]):
        record = game.record
        for ply, state in enumerate(replay(record)[:-1]):
            if state.face_down_mask or ply % 4 == 0:
                want_states.append(state)
                want_labels.append(2.0 * record.score(state.to_move) - 1.0)
                want_games.append(index)
    assert states == want_states
    assert y.tolist() == want_labels
    assert games.tolist() == want_games
    assert len(set(y.tolist())) > 1, "all four games ended alike: nothing to correlate"

    hand = np.linspace(-1.0, 1.0, len(states))  # any value: the rows must select its positions
    rows = script.value_correlations(states, y, hand, ["", ""])
    down = np.array([s.face_down_mask.bit_count() for s in states])
    net = ValueEvaluator(DARK).evaluate(states)
    assert [label for label, _, _ in rows] == [label for label, _, _ in script.BUCKETS]
    checked = 0
    for (_, n, corr), (_, fewest, most) in zip(rows, script.BUCKETS, strict=True):
        chosen = (down >= fewest) & (down <= most)
        assert n == chosen.sum()
        assert len(corr) == 3
        if n > 1 and np.std(y[chosen]) > 0:
            assert np.isclose(corr[0], np.corrcoef(hand[chosen], y[chosen])[0, 1])
            assert np.isclose(corr[1], np.corrcoef(net[chosen], y[chosen])[0, 1])
            assert corr[1] == corr[2]  # the shipped network twice: the same column
            checked += 1
        else:
            assert n > 1 or all(np.isnan(c) for c in corr)
    assert checked >= 3, "too few rows with results to correlate"
    assert rows[0][1] == len(states)
    assert rows[1][1] + rows[4][1] == len(states)  # some face down, or none


@needs_jax
def test_an_alphazero_checkpoint_and_its_mixes_are_correlated_too(tmp_path: Path) -> None:
    """``--value`` with an AlphaZero checkpoint reads its value head (the network alone,
    for the player to move), and ``--mix w`` adds ``(1 - w) * network + w * hand``."""
    import jax
    import jax.numpy as jnp

    from jungle_core.jax_env import make
    from jungle_train.azero._guides import build_network
    from jungle_train.azero._net import network_evaluation, planes_shape
    from jungle_train.common._checkpoint import save_checkpoint
    from jungle_train.jitted._pytree_io import params_to_arrays

    script = load_experiment("leaf_fit")
    games = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 4, seed=3, workers=1, out=games)
    states, y, _ = script.positions([games])
    assert len(set(y.tolist())) > 1, "all four games ended alike: nothing to correlate"
    network = build_network(DARK, 4, 1)
    params = network.init(jax.random.key(1), jnp.zeros((1, *planes_shape(DARK))))
    path = str(tmp_path / "agent.npz")
    config = {"rules": "dark", "channels": 4, "conv_layers": 1}
    save_checkpoint(path, params_to_arrays(params), kind="azero", config=config, step=0)

    net = script.azero_value(path)(states)
    env = make(DARK)
    stacked = jax.tree.map(lambda *x: jnp.stack(x), *[env.from_state(s) for s in states])
    want = np.asarray(network_evaluation(env, network, params, stacked).value)
    np.testing.assert_allclose(net, want, rtol=1e-5, atol=1e-6)
    assert net.shape == (len(states),) and np.std(net) > 0

    hand = np.linspace(-1.0, 1.0, len(states))
    rows = script.value_correlations(states, y, hand, [path], mixes=[0.25])
    _, n, corr = rows[0]  # every position
    assert n == len(states) and len(corr) == 3
    assert np.isclose(corr[1], np.corrcoef(net, y)[0, 1], atol=1e-5)
    assert np.isclose(corr[2], np.corrcoef(0.75 * net + 0.25 * hand, y)[0, 1], atol=1e-5)


def test_the_search_column_is_the_agents_root_value_for_the_mover(tmp_path: Path) -> None:
    """``--search N``: the root value of the DQN-guided search, for the player to move
    whichever seat that is; it sees a capture that wins the game, which the hand-made
    value (material and potentials) does not."""
    from jungle_core import from_fen

    script = load_experiment("leaf_fit")
    wins = ["8/8/8/8/8/8/Ew6 0 0 0 - -", "8/8/8/8/8/8/eW6 1 0 0 - -"]  # take the last piece
    stuck = ["8/8/8/8/8/8/We6 0 0 0 - -", "8/8/8/8/8/8/wE6 1 0 0 - -"]  # a Wolf by an Elephant
    states = [from_fen(f) for f in wins + stuck]
    value = script.search_value(16, batch=4)(states)
    features = script.features(states)
    hand = features[:, 0] + script.POTENTIAL_WEIGHT * features[:, 1]
    assert value.shape == (4,)
    assert value[0] == value[1] > 0.8 > hand[0] == hand[1] > 0  # both seats alike
    assert value[2] == value[3] < 0 and hand[2] == hand[3] < 0

    games = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 2, seed=3, workers=1, out=games)
    states, y, _ = script.positions([games])
    assert len(set(y.tolist())) > 1, "both games ended alike: nothing to correlate"
    hand = np.linspace(-1.0, 1.0, len(states))
    rows = script.value_correlations(states, y, hand, [], searches=[4])
    _, n, corr = rows[0]  # every position
    want = script.search_value(4)(states)
    assert n == len(states) and len(corr) == 2
    assert np.isclose(corr[1], np.corrcoef(want, y)[0, 1], atol=1e-6)


@needs_jax
def test_piece_value_fit_reads_the_holdings_and_recovers_known_values(tmp_path: Path) -> None:
    """``--values``: the holdings of each position give the material balance the search's
    hand-made value computes (:func:`material_balance`, any named set of values), and the
    fit recovers the values and scale of results made from a known balance."""
    from jungle_core.jax_env import make
    from jungle_train.azero._hand_value import PIECE_VALUES, material_balance

    script = load_experiment("leaf_fit")
    path = str(tmp_path / "games.jsonl")
    play_match(DARK, "greedy", "random", 4, seed=3, workers=1, out=path)
    states, _, _ = script.positions([path])
    mine, theirs = script.holdings(states)
    assert mine.shape == theirs.shape == (len(states), 8)
    env = make(DARK)
    for state, m, t in list(zip(states, mine, theirs, strict=True))[::7]:
        x = env.from_state(state)
        for values in PIECE_VALUES.values():
            got = script.balance(np.asarray(values), m[None], t[None])[0]
            assert np.isclose(got, float(material_balance(x, state.to_move, values)), atol=1e-6)
    assert (mine.sum(1) < 8).any() and (theirs.sum(1) < 8).any(), "no removal to weigh"

    rng = np.random.default_rng(0)
    mine = (rng.random((4000, 8)) < 0.6).astype(float)
    theirs = (rng.random((4000, 8)) < 0.6).astype(float)
    truth = np.array([90.0, 10.0, 40.0, 50.0, 50.0, 75.0, 105.0, 160.0])
    y = np.tanh(2.0 * script.balance(truth, mine, theirs))
    fitted = script.fit_piece_values(mine, theirs, y)
    assert np.allclose(fitted[:8], truth, rtol=0.05, atol=2.0)
    assert np.isclose(fitted[8], 2.0, rtol=0.05)
