"""The JAX core: the rules of :mod:`jungle_core` on thousands of games at once.

:func:`make` builds a :class:`JaxEnv` for a rule set (every DARK rule option, and CLASSIC
without repetition bans). Its functions are pure and work on one game; batch
them with ``jax.vmap`` and compile them with ``jax.jit``:

>>> import jax
>>> from jungle_core import DARK
>>> env = make(DARK)
>>> keys = jax.random.split(jax.random.key(0), 4)
>>> states = jax.vmap(env.init)(keys)
>>> states.board.shape, states.legal_action_mask.shape
((4, 56), (4, 280))
>>> actions = jax.numpy.zeros(4, dtype=jax.numpy.int32)   # reveal a1 in every game
>>> states = jax.jit(jax.vmap(env.step))(states, actions, keys)
>>> states.current_player.tolist(), int(states.face_down_mask[0]).bit_count()
([1, 1, 1, 1], 15)

Semantics of the awkward cases (the same in every function that plays an action):

- **Illegal action** (not set in ``legal_action_mask``, or out of ``[0, A)``): the game
  ends at once as a loss for the player who tried it: ``rewards`` is -1 for the mover
  and +1 for the other player, ``terminated`` becomes True, and nothing else changes
  (the board, the player to move and the counters stay as they were, so
  :meth:`JaxEnv.to_state` gives the position before the attempt; the pure core has no
  notion of forfeit).
- **Stepping a finished game** (``terminated`` or ``truncated`` already True) changes
  nothing and gives zero rewards, whatever the action.
- **Rewards** are the game result, given once, on the step that ends the game:
  ``rewards[p]`` is +1 if player ``p`` won, -1 if they lost, 0 for a draw; zero on
  every other step.
- **terminated** is exactly the pure ``outcome(state) is not None``: a den entered, an
  elimination, the no-removal draw, the ply-limit draw and the player to move without a
  legal action all *terminate* the game. The ply limit (CLASSIC's 300) is a rule of the
  game with an exact result (a draw), not an outside time limit, and the ply count is
  part of the state, so nothing about the position is cut short; **truncated** is
  therefore always False under the rules themselves. It is kept (pgx-style) for wrappers
  that cut episodes for their own reasons, and every function treats it like
  ``terminated``.
- **legal_action_mask** is the pure ``legal_action_mask(state)`` of the position, also
  in a finished game (where, as in the pure core, it may still list actions; the game
  is over by ``terminated``, not by an empty mask).
- **Chance**: an action that turns a piece face up (a reveal, or a DARK move onto a
  face-down piece) draws its (owner, rank) uniformly from the matching pieces still face
  down. :meth:`JaxEnv.step` samples it with its key; :meth:`JaxEnv.step_outcome` takes
  it as an argument; :meth:`JaxEnv.chance_probs` gives its distribution.

The observation is not a state field (pgx keeps one): :meth:`JaxEnv.observe` computes
it on demand, so a rollout that never looks at it never pays for it.

Speed: ``benchmarks/jax_speed.py`` measures random play with auto-reset inside
``lax.scan`` against pgx's ``animal_shogi`` and the pure core. The move generator avoids
per-game gathers (slow on CPU) and reads neighbours as slices of a padded board; see
:mod:`jungle_core._jax_rules`.

CLASSIC with ``repetition="ban_third"`` is refused: that rule needs the keys of every
position since the last capture (the pure state's ``history``), an unbounded,
hash-based sequence that has no faithful fixed-shape form here.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from jungle_core._extras import import_optional

try:
    import jax
    import jax.numpy as jnp
except ModuleNotFoundError:  # MissingExtraError, naming the `jax` extra to install
    import_optional("jax", "the JAX core (jungle_core.jax_env)")
    raise

from jungle_core._codes import HIDDEN, HIDDEN_P0, HIDDEN_P1
from jungle_core._errors import JungleError
from jungle_core._jax_rules import Kernel
from jungle_core._jax_tables import WALL, JaxTables, jax_tables
from jungle_core._rules import Rules
from jungle_core._state import State
from jungle_core._tensors import CLASSIC_CHANNELS, DARK_CHANNELS

__all__ = ["WALL", "JaxEnv", "JaxState", "JaxTables", "jax_tables", "make"]


@functools.partial(
    jax.tree_util.register_dataclass,
    data_fields=[
        "board",
        "face_down_mask",
        "current_player",
        "plies_since_removal",
        "ply",
        "legal_action_mask",
        "rewards",
        "terminated",
        "truncated",
    ],
    meta_fields=[],
)
@dataclasses.dataclass(frozen=True)
class JaxState:
    """One game (or a batch of games, with leading batch axes ``...``) as a pytree.

    ``N = rows * cols`` squares, ``A = 5 * N`` actions. The fields mirror the pure
    :class:`jungle_core.State`, so :meth:`JaxEnv.from_state` / :meth:`JaxEnv.to_state`
    copy them across unchanged:

    - ``board``: ``int8[..., N]``, square codes 0..19 as in :mod:`jungle_core._state`
      (0 empty, ``owner * 8 + rank`` face up, 17 face down of unknown owner, 18/19
      face down of known owner 0/1).
    - ``face_down_mask``: ``int32[...]``, bit ``owner * 8 + rank - 1`` set while that
      piece is face down.
    - ``current_player``: ``int32[...]``, the player to move (the pure ``to_move``).
    - ``plies_since_removal``: ``int32[...]``, plies in a row without a removal.
    - ``ply``: ``int32[...]``, the step count: plies played since the start (the pure
      ``ply``; an illegal action, which plays nothing, does not count).
    - ``legal_action_mask``: ``bool[..., A]``, True = legal.
    - ``rewards``: ``float32[..., 2]``, the result for players 0 and 1 on the step that
      ended the game, zeros otherwise.
    - ``terminated``: ``bool[...]``, the game is over (pure ``outcome(state) is not
      None``, or an illegal action was tried).
    - ``truncated``: ``bool[...]``, always False under the rules (see the module
      docstring); treated like ``terminated`` if a wrapper sets it.

    >>> from jungle_core import new_game
    >>> s = make().from_state(new_game())
    >>> s.board.dtype, s.face_down_mask.dtype, s.rewards.dtype, s.legal_action_mask.dtype
    (dtype('int8'), dtype('int32'), dtype('float32'), dtype('bool'))
    """

    board: jax.Array
    face_down_mask: jax.Array
    current_player: jax.Array
    plies_since_removal: jax.Array
    ply: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array

    @property
    def step_count(self) -> jax.Array:
        """``int32[...]``: the step count (pgx's name for it), the ``ply`` field itself.

        >>> from jungle_core import new_game
        >>> int(make().from_state(new_game()).step_count)
        0
        """
        return self.ply

    def replace(self, **changes: Any) -> JaxState:
        """A copy with some fields replaced.

        >>> from jungle_core import new_game
        >>> s = make().from_state(new_game())
        >>> bool(s.replace(terminated=jax.numpy.bool_(True)).terminated)
        True
        """
        return dataclasses.replace(self, **changes)


_OUTCOME_BITS = np.arange(16, dtype=np.int32)


def _owner_share_table() -> np.ndarray[Any, np.dtype[np.float32]]:
    """``float32[9 * 9, 2]``: player 0's / 1's share of the face-down pieces of unknown
    owner when ``n0`` / ``n1`` of theirs are face down, at ``n0 * 9 + n1``; computed as
    the pure ``_tensors._owner_probabilities`` does (float64 division, then float32), so
    the two observations agree bit for bit."""
    table = np.zeros((81, 2), dtype=np.float32)
    for n0 in range(9):
        for n1 in range(9):
            if n0 + n1:
                table[n0 * 9 + n1] = (n0 / (n0 + n1), n1 / (n0 + n1))
    return table


_OWNER_SHARE = _owner_share_table()


def _popcount(x: jax.Array) -> jax.Array:
    return jax.lax.population_count(x.astype(jnp.int32))


class JaxEnv:
    """The JAX core of one rule set; build it with :func:`make`.

    All methods but the converters are pure functions of arrays (one game each): wrap
    them in ``jax.vmap`` for a batch and ``jax.jit`` to compile. The rule set is fixed
    at construction, so tracing never branches on a traced value.

    Attributes: ``rules``; ``num_actions`` (``A``); ``num_squares`` (``N``);
    ``observation_shape`` (``(7, 8, 6)`` for DARK, ``(9, 7, 22)`` for CLASSIC);
    ``num_players`` (2).

    >>> from jungle_core import CLASSIC
    >>> env = make(CLASSIC)
    >>> env.num_actions, env.observation_shape
    (315, (9, 7, 22))
    """

    num_players = 2

    def __init__(self, rules: Rules) -> None:
        if rules.repetition != "none":
            raise JungleError(
                f"the JAX core does not support repetition={rules.repetition!r} (rules "
                f"{rules.name}): the ban needs the keys of every position since the last "
                "capture, an unbounded sequence with no fixed-shape form; use "
                "repetition='none' or the pure core"
            )
        self.rules = rules
        self._kernel = Kernel(rules)
        self._tables = jax_tables(rules)
        self.num_squares = rules.num_squares
        self.num_actions = rules.num_actions
        channels = DARK_CHANNELS if rules.variant == "dark" else CLASSIC_CHANNELS
        self.observation_shape = (rules.rows, rules.cols, channels)
        self._start_board = self._start()
        self._complete_jit = jax.jit(self._complete)

    def __repr__(self) -> str:
        return f"make({self.rules!r})"

    # --------------------------------------------------------------------- set-up

    def _start(self) -> np.ndarray[Any, np.dtype[np.int8]]:
        """``int8[N]``: the start board for every set-up but ``scattered``."""
        from jungle_core._game import new_game

        if self.rules.setup == "scattered":
            return np.zeros(self.num_squares, dtype=np.int8)
        return np.asarray(new_game(self.rules).board, dtype=np.int8)

    def _complete(
        self,
        board: jax.Array,
        mask: jax.Array,
        player: jax.Array,
        since: jax.Array,
        ply: jax.Array,
    ) -> JaxState:
        """A state from its position fields: legal mask and game end computed."""
        legal, summary = self._kernel.legal(board, player)
        over, _ = self._kernel.result(board, mask, player, since, ply, summary)
        return JaxState(
            board=board,
            face_down_mask=mask,
            current_player=player,
            plies_since_removal=since,
            ply=ply,
            legal_action_mask=legal,
            rewards=jnp.zeros(2, jnp.float32),
            terminated=over,
            truncated=jnp.zeros((), jnp.bool_),
        )

    def init(self, key: jax.Array) -> JaxState:
        """The start position. ``key`` picks the 16 squares of set-up ``scattered``
        (uniformly among sets of 16 distinct squares) and is unused by the others.

        >>> s = make().init(jax.random.key(0))
        >>> s.board[:8].tolist(), int(s.current_player), bool(s.terminated)
        ([17, 17, 17, 17, 17, 17, 17, 17], 0, False)
        """
        if self.rules.setup == "scattered":
            squares = jax.random.choice(key, self.num_squares, (16,), replace=False)
            board = jnp.zeros(self.num_squares, jnp.int8).at[squares].set(jnp.int8(HIDDEN))
        else:
            board = jnp.asarray(self._start_board)
        mask = 0xFFFF if self.rules.variant == "dark" else 0
        zero = jnp.zeros((), jnp.int32)
        return self._complete(board, jnp.full((), mask, jnp.int32), zero, zero, zero)

    # ---------------------------------------------------------------------- chance

    def _chance(self, state: JaxState, action: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``(a, bits)``: the action as int32 clipped into range, and ``int32[16]`` 0/1
        for the outcomes the step would draw from (all 0: the step turns nothing up)."""
        a = jnp.asarray(action, jnp.int32)
        in_range = (a >= 0) & (a < self.num_actions)
        a = jnp.clip(a, 0, self.num_actions - 1)
        live = in_range & state.legal_action_mask[a] & ~(state.terminated | state.truncated)
        chance = self._kernel.chance_bits(state.board, state.face_down_mask, a)
        chance = jnp.where(live, chance, 0)
        return a, (chance >> jnp.asarray(_OUTCOME_BITS)) & 1

    def chance_probs(self, state: JaxState, action: jax.Array) -> jax.Array:
        """``float32[16]``: the probability of each chance outcome of ``action``.

        Outcome ``i = owner * 8 + rank - 1`` is the piece the action turns face up
        (uniform over the matching pieces still face down). When the step turns nothing
        face up (an action without chance, an illegal action, or a finished game) all
        the mass is on index 0, and :meth:`step_outcome` ignores the outcome.

        >>> env = make()
        >>> s = env.init(jax.random.key(0))
        >>> probs = env.chance_probs(s, 0)   # reveal a1: any of the 16 pieces
        >>> probs.tolist()[:3], float(probs.sum())
        ([0.0625, 0.0625, 0.0625], 1.0)
        """
        _, bits = self._chance(state, action)
        count = jnp.sum(bits)
        no_chance = jnp.zeros(16, jnp.float32).at[0].set(1.0)
        return jnp.where(count > 0, bits.astype(jnp.float32) / jnp.maximum(count, 1), no_chance)

    # ----------------------------------------------------------------- transitions

    def step_outcome(self, state: JaxState, action: jax.Array, outcome: jax.Array) -> JaxState:
        """The state after ``action`` when its chance outcome is ``outcome``.

        ``outcome`` (``int32[]``, ``owner * 8 + rank - 1``) must have a positive
        :meth:`chance_probs` when the action has chance (an impossible outcome is not
        checked and gives an inconsistent state); it is ignored otherwise. Illegal
        actions and finished games follow the module docstring.

        >>> env = make()
        >>> s = env.step_outcome(env.init(jax.random.key(0)), 0, 15)  # a1: p1's Elephant
        >>> int(s.board[0]), int(s.current_player), int(s.ply)
        (16, 1, 1)
        """
        a, _ = self._chance(state, action)
        return self._play(state, action, a, jnp.asarray(outcome, jnp.int32))

    def step(self, state: JaxState, action: jax.Array, key: jax.Array) -> JaxState:
        """The state after ``action``, its chance outcome (if any) sampled with ``key``.

        >>> env = make()
        >>> s = env.step(env.init(jax.random.key(0)), 0, jax.random.key(1))
        >>> 1 <= int(s.board[0]) <= 16, int(s.face_down_mask).bit_count()
        (True, 15)
        """
        a, bits = self._chance(state, action)
        count = jnp.sum(bits)
        u = jax.random.uniform(key, (), jnp.float32)
        k = jnp.minimum((u * count).astype(jnp.int32), count - 1)
        outcome = jnp.argmax(jnp.cumsum(bits) > k).astype(jnp.int32)
        return self._play(state, action, a, outcome)

    def _play(
        self, state: JaxState, action: jax.Array, a: jax.Array, outcome: jax.Array
    ) -> JaxState:
        kernel = self._kernel
        raw = jnp.asarray(action, jnp.int32)
        legal = (raw >= 0) & (raw < self.num_actions) & state.legal_action_mask[a]
        done = state.terminated | state.truncated
        keep = done | ~legal
        padded, board, mask, player, since, ply = kernel.apply(
            state.board,
            state.face_down_mask,
            state.current_player,
            state.plies_since_removal,
            state.ply,
            a,
            outcome,
            ~keep,
        )
        legal_next, summary = kernel.legal(board, player, padded)
        over, winner = kernel.result(board, mask, player, since, ply, summary)
        won = jnp.where(winner == 0, jnp.float32(1.0), jnp.float32(-1.0))
        result = jnp.where(over & (winner >= 0), jnp.stack([won, -won]), jnp.float32(0.0))
        mover_lost = jnp.where(state.current_player == 0, jnp.float32(-1.0), jnp.float32(1.0))
        forfeit = jnp.stack([mover_lost, -mover_lost])
        rewards = jnp.where(done, 0.0, jnp.where(legal, result, forfeit)).astype(jnp.float32)
        return JaxState(
            board=board,  # unchanged by ``apply`` when ``keep``
            face_down_mask=jnp.where(keep, state.face_down_mask, mask),
            current_player=jnp.where(keep, state.current_player, player),
            plies_since_removal=jnp.where(keep, state.plies_since_removal, since),
            ply=jnp.where(keep, state.ply, ply),
            legal_action_mask=jnp.where(keep, state.legal_action_mask, legal_next),
            rewards=rewards,
            terminated=jnp.where(done, state.terminated, ~legal | over),
            truncated=state.truncated,
        )

    # ------------------------------------------------------------------ observation

    def observe(self, state: JaxState) -> jax.Array:
        """The observation for the player to move, equal to the pure
        :func:`jungle_core.observation`: ``float32[7, 8, 6]`` (DARK) or
        ``float32[9, 7, 22]`` (CLASSIC); channels as in :mod:`jungle_core._tensors`.

        >>> env = make()
        >>> obs = env.observe(env.init(jax.random.key(0)))
        >>> obs.shape, float(obs[0, 0, 0]), float(obs[0, 0, 3])
        ((7, 8, 6), 0.5, 0.0)
        """
        b = state.board.astype(jnp.int32)
        face_up = (b >= 1) & (b <= 16)
        if self.rules.variant != "dark":
            pieces = b[:, None] == jnp.arange(1, 17, dtype=jnp.int32)[None, :]
            t = self._tables
            n = self.num_squares
            terrain = np.stack(
                [
                    t.water[:n],
                    t.trap_of[:n] == 0,
                    t.trap_of[:n] == 1,
                    t.den_of[:n] == 0,
                    t.den_of[:n] == 1,
                ],
                axis=-1,
            ).astype(np.float32)
            side = jnp.broadcast_to(state.current_player.astype(jnp.float32), (n, 1))
            out = jnp.concatenate([pieces.astype(jnp.float32), jnp.asarray(terrain), side], axis=-1)
            return out.reshape(self.observation_shape)
        mask = state.face_down_mask
        n0 = _popcount(mask & 0xFF)
        n1 = _popcount((mask >> 8) & 0xFF)
        share = jnp.asarray(_OWNER_SHARE)[n0 * 9 + n1]
        owner0 = jnp.where(
            ((b >= 1) & (b <= 8)) | (b == HIDDEN_P0), 1.0, jnp.where(b == HIDDEN, share[0], 0.0)
        )
        owner1 = jnp.where(
            ((b >= 9) & (b <= 16)) | (b == HIDDEN_P1), 1.0, jnp.where(b == HIDDEN, share[1], 0.0)
        )
        rank = jnp.where(face_up, ((b - 1) & 7) + 1, 0).astype(jnp.float32) / 8.0
        first = state.current_player == 0
        out = jnp.stack(
            [
                owner0,
                owner1,
                rank,
                face_up.astype(jnp.float32),
                jnp.where(first, owner0, owner1),
                jnp.where(first, owner1, owner0),
            ],
            axis=-1,
        ).astype(jnp.float32)
        return out.reshape(self.observation_shape)

    # ------------------------------------------------------------------- converters

    def from_state(self, state: State) -> JaxState:
        """The JAX state of a pure :class:`jungle_core.State` of this rule set (rewards
        zero; ``terminated`` when the pure game is over).

        >>> from jungle_core import new_game
        >>> env = make()
        >>> env.to_state(env.from_state(new_game())) == new_game()
        True
        """
        if state.rules != self.rules:
            raise JungleError(
                f"from_state: the state's rules {state.rules.name} ({state.rules!r}) are "
                f"not this environment's {self.rules.name} ({self.rules!r})"
            )
        out: JaxState = self._complete_jit(
            jnp.asarray(np.asarray(state.board, dtype=np.int8)),
            jnp.asarray(state.face_down_mask, jnp.int32),
            jnp.asarray(state.to_move, jnp.int32),
            jnp.asarray(state.plies_since_removal, jnp.int32),
            jnp.asarray(state.ply, jnp.int32),
        )
        return out

    def from_position(
        self,
        board: jax.Array,
        face_down_mask: jax.Array,
        player: jax.Array,
        plies_since_removal: jax.Array,
    ) -> JaxState:
        """A state from its position fields, traceable (use it inside ``jit``; ``vmap``
        it for a batch): ``board: int8[N]``, ``face_down_mask``, ``player`` and
        ``plies_since_removal`` (``int32[]``); the legal mask and the game end are
        computed, ``ply`` is 0. For positions that are not the start (curricula, puzzles);
        the fields must describe a reachable position (each piece code once, the
        face-down mask matching the face-down squares) — they are not checked here.

        >>> import jax.numpy as jnp
        >>> from jungle_core import from_fen, legal_actions
        >>> env = make()
        >>> s = from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -")
        >>> board = jnp.asarray(env.from_state(s).board)
        >>> t = env.from_position(board, jnp.int32(0), jnp.int32(0), jnp.int32(0))
        >>> env.to_state(t) == s, int(t.legal_action_mask.sum()) == len(legal_actions(s))
        (True, True)
        """
        zero = jnp.zeros((), jnp.int32)
        return self._complete(
            jnp.asarray(board, jnp.int8),
            jnp.asarray(face_down_mask, jnp.int32),
            jnp.asarray(player, jnp.int32),
            jnp.asarray(plies_since_removal, jnp.int32),
            zero,
        )

    def to_state(self, state: JaxState) -> State:
        """The pure :class:`jungle_core.State` of one (unbatched) JAX state.

        >>> import jax
        >>> env = make()
        >>> env.to_state(env.init(jax.random.key(0))).ply
        0
        """
        board = np.asarray(state.board)
        if board.shape != (self.num_squares,):
            raise JungleError(
                f"to_state needs one unbatched game (board int8[{self.num_squares}]), "
                f"not a board of shape {board.shape}"
            )
        return State(
            self.rules,
            tuple(int(c) for c in board),
            int(state.current_player),
            int(state.face_down_mask),
            int(state.plies_since_removal),
            int(state.ply),
            (),
        )


@functools.cache
def _make(rules: Rules) -> JaxEnv:
    return JaxEnv(rules)


def make(rules: Rules | None = None) -> JaxEnv:
    """The JAX environment of a rule set (default DARK); one shared object per rule set,
    so jitted functions built from it are compiled once.

    Raises :class:`jungle_core.JungleError` (a ``ValueError``) for CLASSIC with
    ``repetition="ban_third"`` (see the module docstring).

    >>> from jungle_core import DARK, DARK_STRICT
    >>> make() is make(DARK), make(DARK_STRICT).rules.name
    (True, 'DARK_STRICT')
    """
    from jungle_core._rules import DARK

    return _make(DARK if rules is None else rules)
