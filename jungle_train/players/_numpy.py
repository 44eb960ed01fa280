"""The learned agents as players: checkpoints in, legal actions out, numpy only.

These classes are what ``make_agent("dqn", DARK)`` (and ``qlearn``, ``approxq``) build;
they import neither JAX nor the trainers, so arena worker processes load them quickly.
``path=""`` plays the checkpoint shipped in ``jungle_train/checkpoints/``; any other path
plays that checkpoint (a file written by ``jungle train ... --out DIR``: ``DIR/agent.npz``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from jungle_core import Rules, State, legal_action_mask, new_game, observation
from jungle_core.lowlevel import NUM_CODES, BattleResult, tables
from jungle_train.common import CheckpointError, load_checkpoint

__all__ = [
    "SHIPPED",
    "DQNAgent",
    "arrays_to_params",
    "conv_numpy",
    "coordinate_planes",
    "network_numpy",
    "shipped_checkpoint",
]

SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints"
"""The folder of the shipped checkpoints (``dqn.npz``, ``qlearn.npz``, ``approxq.npz``)."""


def shipped_checkpoint(kind: str) -> str:
    """The path of the shipped checkpoint of ``kind``; :class:`CheckpointError` (saying
    which command makes it) when it is missing.

    >>> shipped_checkpoint("dqn").endswith("dqn.npz")
    True
    """
    path = SHIPPED / f"{kind}.npz"
    if not path.exists():
        raise CheckpointError(
            f"{path}: no shipped {kind} checkpoint; make one with "
            f"`jungle train {kind} --out DIR` and pass path=DIR/agent.npz"
        )
    return str(path)


def network_numpy(params: dict[str, Any], x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The DQN's MLP forward pass in numpy (ReLU hidden layers, no dropout):
    ``float32[..., obs]`` → ``float32[..., 280]``. ``params`` is flax's
    ``{"Dense_0": {"kernel", "bias"}, ...}``; equal to ``jungle_train.dqn.QNetwork``.

    >>> p = {"Dense_0": {"kernel": np.eye(2, dtype=np.float32), "bias": np.zeros(2, np.float32)},
    ...      "Dense_1": {"kernel": np.ones((2, 1), np.float32), "bias": np.ones(1, np.float32)}}
    >>> network_numpy(p, np.array([1.0, -2.0], np.float32)).tolist()
    [2.0]
    """
    layers = sorted(params, key=lambda name: int(name.rsplit("_", 1)[-1]))
    h = np.asarray(x, np.float32)
    for i, name in enumerate(layers):
        h = h @ params[name]["kernel"] + params[name]["bias"]
        if i < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return h


def coordinate_planes(rows: int = 7, cols: int = 8) -> np.ndarray[Any, Any]:
    """``float32[rows, cols, 2]``: each square's row and column, scaled to [-1, 1].

    >>> coordinate_planes()[0, 0].tolist(), coordinate_planes()[6, 7].tolist()
    ([-1.0, -1.0], [1.0, 1.0])
    """
    r, c = np.meshgrid(np.linspace(-1, 1, rows), np.linspace(-1, 1, cols), indexing="ij")
    return np.stack([r, c], axis=-1).astype(np.float32)


FIELD_PLANES = 8
"""Planes of the ``fields`` part of an observation: one per rank of the opponent."""
BATTLE_PLANES = 4
"""Planes of the ``battles`` part of an observation: one per move direction."""
DANGER_PLANES = 8
"""Planes of the ``dangers`` part of an observation: one per rank of the player to move."""
OBSERVATIONS = {
    "spec": (False, 0),
    "spec+clock": (True, 0),
    "spec+clock+fields": (True, FIELD_PLANES),
    "spec+clock+fields+battles": (True, FIELD_PLANES + BATTLE_PLANES),
    "spec+clock+fields+battles+dangers": (True, FIELD_PLANES + BATTLE_PLANES + DANGER_PLANES),
}
"""The DQN's observations: name → ``(the clock scalar?, per-square planes)``, after
the 336 floats of :func:`jungle_core.observation`."""


def square_distances(rows: int = 7, cols: int = 8) -> np.ndarray[Any, Any]:
    """``float32[squares, squares]``: the Manhattan distance between squares.

    >>> square_distances()[0, [0, 1, 9]].tolist()
    [0.0, 1.0, 2.0]
    """
    r, c = np.divmod(np.arange(rows * cols), cols)
    dist: np.ndarray[Any, Any] = (
        np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])
    ).astype(np.float32)
    return dist


@functools.cache
def field_table(rows: int = 7, cols: int = 8) -> np.ndarray[Any, Any]:
    """``float32[squares, squares]``: ``1 / (1 + Manhattan distance)`` between squares.

    >>> field_table()[0, [0, 1, 9]].tolist()
    [1.0, 0.5, 0.3333333432674408]
    """
    table: np.ndarray[Any, Any] = (1.0 / (1.0 + square_distances(rows, cols))).astype(np.float32)
    return table


def enemy_fields(state: State) -> np.ndarray[Any, Any]:
    """``float32[squares * 8]``: the DQN's ``fields`` planes for the player to move,
    square-major (index ``sq * 8 + rank - 1``): for each rank of the opponent, ``1 / (1 +
    Manhattan distance)`` from the square to that piece while it is face up on the
    board, else 0. A convolution reads at each square how near every enemy rank is, and
    in which direction it gets nearer, however far away it stands (DARK; the JAX twin is
    ``jungle_train.dqn.enemy_fields``).

    >>> from jungle_core import from_fen
    >>> f = enemy_fields(from_fen("8/8/8/8/8/8/T1e5 0 0 0 - -")).reshape(56, 8)
    >>> f[0, 7].item(), f[2, 7].item(), f[0, 0].item()   # the enemy Elephant on c1
    (0.3333333432674408, 1.0, 0.0)
    """
    rows, cols = state.rules.rows, state.rules.cols
    table = field_table(rows, cols)
    out = np.zeros((rows * cols, FIELD_PLANES), np.float32)
    lo = (1 - state.to_move) * 8
    for sq, code in enumerate(state.board):
        if lo < code <= lo + 8:
            out[:, code - lo - 1] = table[:, sq]
    return out.reshape(-1)


@functools.cache
def battle_table(rules: Rules) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``(neighbour int32[squares, 4] (-1 off the board), value float32[codes, codes])``:
    ``value[p, q]`` is what face-up ``p`` moving onto face-up ``q`` does for the mover:
    1 it takes, 0.5 both are removed, -1 it is removed, 0 otherwise (no battle).

    >>> from jungle_core import DARK
    >>> _, value = battle_table(DARK)
    >>> value[8, 10].item(), value[8, 16].item(), value[8, 9].item()  # Elephant onto Dog, E, Rat
    (1.0, 0.5, -1.0)
    """
    t = tables(rules)
    neighbour = np.asarray(t.step, np.int32).reshape(-1, 4)
    codes = {BattleResult.TAKE: 1.0, BattleResult.BOTH: 0.5, BattleResult.LOSE: -1.0}
    battle = np.asarray(t.battle).reshape(NUM_CODES, NUM_CODES)
    value = np.vectorize(lambda r: codes.get(int(r), 0.0))(battle).astype(np.float32)
    return neighbour, value


def _neighbour_codes(state: State) -> np.ndarray[Any, Any]:
    """``int64[squares, 4]``: the code on each square's neighbour in each direction (0,
    empty, off the board)."""
    neighbour, _ = battle_table(state.rules)
    board = np.asarray(state.board, np.int64)
    codes: np.ndarray[Any, Any] = np.where(neighbour >= 0, board[neighbour], 0)
    return codes


def battle_planes(state: State) -> np.ndarray[Any, Any]:
    """``float32[squares * 4]``: the DQN's ``battles`` planes for the player to move,
    square-major (index ``sq * 4 + d``): for each of the mover's face-up pieces and each
    direction, what moving onto the face-up enemy there does (:func:`battle_table`'s
    values; 0 for an empty, face-down or own square). The network reads a move's
    immediate result at the square it starts from, instead of inferring the capture rule
    (an Elephant never takes a Rat) from rank / 8 (the JAX twin is
    ``jungle_train.dqn.battle_planes``).

    >>> from jungle_core import from_fen
    >>> battle_planes(from_fen("8/8/8/8/8/8/Er6 0 0 0 - -")).reshape(56, 4)[0].tolist()
    [0.0, 0.0, 0.0, -1.0]
    """
    _, value = battle_table(state.rules)
    board = np.asarray(state.board, np.int64)
    lo = state.to_move * 8
    mine = (board > lo) & (board <= lo + 8)
    target = _neighbour_codes(state)
    planes = np.where(mine[:, None], value[board[:, None], target], 0.0).astype(np.float32)
    return planes.reshape(-1)


@functools.cache
def danger_table(rules: Rules) -> np.ndarray[Any, Any]:
    """``float32[2, codes, 8]``: ``danger[p, e, r - 1]`` is what face-up enemy ``e`` moving
    onto player ``p``'s piece of rank ``r`` does to that piece: 1 it is taken, 0.5 both
    are removed, 0 otherwise (``e`` not an enemy, or removed by the attack).

    >>> from jungle_core import DARK
    >>> danger = danger_table(DARK)
    >>> danger[0, 16, [0, 1, 7]].tolist()   # an enemy Elephant onto Rat, Cat, Elephant
    [0.0, 1.0, 0.5]
    """
    _, value = battle_table(rules)
    danger = np.zeros((2, NUM_CODES, DANGER_PLANES), np.float32)
    for player in (0, 1):
        mine, theirs = player * 8, (1 - player) * 8
        enemy = value[theirs + 1 : theirs + 9, mine + 1 : mine + 9]
        danger[player, theirs + 1 : theirs + 9] = np.maximum(enemy, 0.0)
    return danger


def danger_planes(state: State) -> np.ndarray[Any, Any]:
    """``float32[squares * 8]``: the DQN's ``dangers`` planes for the player to move,
    square-major (index ``sq * 8 + rank - 1``): for each square and each rank of the
    mover, the worst that a face-up enemy next to the square does to a piece of that rank
    standing there by moving onto it (:func:`danger_table`'s values: 1 taken, 0.5 both
    removed). The network reads at a move's target square whether the piece moved there
    can be taken in the reply, which the ``battles`` planes (moves from the square a
    piece stands on) do not say (the JAX twin is ``jungle_train.dqn.danger_planes``).

    >>> from jungle_core import from_fen
    >>> d = danger_planes(from_fen("8/8/8/8/8/8/1e6 0 0 0 - -")).reshape(56, 8)
    >>> d[0].tolist()   # a1, next to the enemy Elephant on b1
    [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]
    """
    danger = danger_table(state.rules)[state.to_move]
    planes: np.ndarray[Any, Any] = danger[_neighbour_codes(state)].max(axis=1).astype(np.float32)
    return planes.reshape(-1)


def extra_inputs(state: State, observation_name: str) -> np.ndarray[Any, Any]:
    """``float32[k]``: what an observation adds after the 336 floats of
    :func:`jungle_core.observation` (the clock, then the per-square planes, square-major),
    for the player to move.

    >>> from jungle_core import new_game
    >>> [extra_inputs(new_game(), name).shape[0] for name in OBSERVATIONS]
    [0, 1, 449, 673, 1121]
    """
    clock, planes = OBSERVATIONS[observation_name]
    parts = []
    if clock:
        parts.append(np.array([state.plies_since_removal / state.rules.no_removal_limit]))
    if planes:
        squares = state.rules.rows * state.rules.cols
        per_square = [enemy_fields(state).reshape(squares, FIELD_PLANES)]
        if planes > FIELD_PLANES:
            per_square.append(battle_planes(state).reshape(squares, BATTLE_PLANES))
        if planes > FIELD_PLANES + BATTLE_PLANES:
            per_square.append(danger_planes(state).reshape(squares, DANGER_PLANES))
        parts.append(np.concatenate(per_square, axis=-1).reshape(-1))
    return np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)


def conv_numpy(
    params: dict[str, Any],
    x: np.ndarray[Any, Any],
    rows: int = 7,
    cols: int = 8,
    square_planes: int = 0,
) -> np.ndarray[Any, Any]:
    """``jungle_train.dqn.ConvQNetwork``'s forward pass in numpy: ``float32[obs]`` →
    ``float32[280]`` (one position); the last ``square_planes * squares`` floats are
    per-square planes (square-major)."""
    squares = rows * cols
    x = np.asarray(x, np.float32)
    board = x[: squares * 6].reshape(rows, cols, 6)
    per_square = x[x.shape[0] - square_planes * squares :].reshape(rows, cols, square_planes)
    scalars = x[squares * 6 : x.shape[0] - square_planes * squares]
    extra = np.broadcast_to(scalars, (rows, cols, scalars.shape[0]))
    h = np.concatenate([board, extra, per_square, coordinate_planes(rows, cols)], axis=-1)
    convs = sorted(
        (n for n in params if n.startswith("ShiftConv_")), key=lambda n: int(n.rsplit("_", 1)[-1])
    )
    for name in convs:
        pad = np.pad(h, ((1, 1), (1, 1), (0, 0)))
        views = np.concatenate(
            [pad[r : r + rows, c : c + cols] for r in range(3) for c in range(3)], axis=-1
        )
        dense = params[name]["Dense_0"]
        h = np.maximum(views @ dense["kernel"] + dense["bias"], 0.0)
    context = np.maximum(
        h.mean(axis=(0, 1)) @ params["Dense_0"]["kernel"] + params["Dense_0"]["bias"], 0.0
    )
    h = h + context
    head = h @ params["Dense_1"]["kernel"] + params["Dense_1"]["bias"]
    q = np.concatenate([head[..., 0].reshape(squares), head[..., 1:].reshape(squares * 4)])
    if "Dense_2" in params:  # the dueling value head
        value = context @ params["Dense_2"]["kernel"] + params["Dense_2"]["bias"]
        q = value + q - q.mean()
    out: np.ndarray[Any, Any] = q
    return out


def arrays_to_params(
    arrays: Mapping[str, np.ndarray[Any, Any]], source: str, what: str
) -> dict[str, Any]:
    """A playing checkpoint's ``params/<layer>/.../<name>`` arrays as flax's nested
    parameter dict (float32); :class:`CheckpointError` naming ``source`` for any other array.

    >>> arrays_to_params({"params/Dense_0/bias": np.zeros(2)}, "f.npz", "DQN")
    {'Dense_0': {'bias': array([0., 0.], dtype=float32)}}
    """
    params: dict[str, Any] = {}
    for key, value in arrays.items():
        parts = key.split("/")
        if len(parts) < 3 or parts[0] != "params":
            raise CheckpointError(f"{source}: unexpected array {key!r} in a {what} checkpoint")
        node = params
        for part in parts[1:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = np.asarray(value).astype(np.float32)
    return params


class DQNAgent:
    """Plays the argmax of a DQN checkpoint's action values over the legal actions, with
    probability ``epsilon`` a uniformly random legal action instead.

    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> agent = DQNAgent(DARK)
    >>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    True
    """

    def __init__(self, rules: Rules, path: str = "", epsilon: float = 0.0) -> None:
        if not rules.is_dark:
            raise ValueError(f"the DQN agent plays DARK rules, not {rules.name}")
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], not {epsilon!r}")
        source = path or shipped_checkpoint("dqn")
        ckpt = load_checkpoint(source, kind="dqn")
        self.rules = rules
        self.epsilon = epsilon
        self.name = "dqn" if not path else f"dqn:path={path}"
        self.config = dict(ckpt.config)
        self.step = ckpt.step
        self.params = arrays_to_params(ckpt.arrays, source, "DQN")
        self.observation = str(self.config.get("observation", "spec"))
        if self.observation not in OBSERVATIONS:
            raise CheckpointError(f"{source}: unknown observation {self.observation!r}")
        self.planes = OBSERVATIONS[self.observation][1]
        self.conv = self.config.get("network", "mlp") == "conv"
        try:
            self.q_values(new_game(rules))  # the shapes fit the config
        except (KeyError, ValueError) as error:
            raise CheckpointError(
                f"{source}: the network does not fit its config ({error})"
            ) from None

    def q_values(self, state: State) -> np.ndarray[Any, Any]:
        """``float32[280]``: the network's action values for the player to move."""
        obs = observation(state).reshape(-1)
        obs = np.concatenate([obs, extra_inputs(state, self.observation)])
        values: np.ndarray[Any, Any] = (
            conv_numpy(self.params, obs, square_planes=self.planes)
            if self.conv
            else network_numpy(self.params, obs)
        )
        return values

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The legal action with the highest value (or, with ``epsilon``, at random)."""
        legal = legal_action_mask(state)
        if self.epsilon > 0 and rng.random() < self.epsilon:
            choices = np.flatnonzero(legal)
            return int(choices[int(rng.integers(len(choices)))])
        q = np.where(legal, self.q_values(state), -np.inf)
        return int(np.argmax(q))
