"""The traced rules of the JAX core: legal moves, transitions and game end for one game.

Every function here works on one unbatched game (``board: int8[N]``, scalars for the
rest) and is written without Python branching on traced values, so
:mod:`jungle_core.jax_env` can ``vmap`` and ``jit`` it freely. Python ``if``/``for``
appear only on *static* things: the rule set and its options, fixed when the kernel is
built, and the four directions (each one vectorised over all squares).

The semantics mirror :mod:`jungle_core._game` exactly (the property tests compare the
two action by action); the docstrings name the pure function each piece mirrors.

Speed notes (XLA on CPU): gathers with per-game indices compile to scalar loops, so the
move generator avoids them. A square's neighbours are read by slicing the board padded
with ``WALL`` (a shift of the grid, checked against the step table at build time), and
the per-piece tables (which codes may a piece move onto) are bit words indexed by
shifts. The few per-game gathers left are scalars (the action's squares).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt

from jungle_core._codes import HIDDEN, HIDDEN_P0, HIDDEN_P1, NUM_CODES
from jungle_core._jax_tables import WALL, JaxTables, jax_tables
from jungle_core._rules import Rules
from jungle_core._tables import BattleResult

__all__ = ["Kernel"]

_FORBIDDEN = BattleResult.FORBIDDEN
_TAKE = BattleResult.TAKE
_BOTH = BattleResult.BOTH
_LOSE = BattleResult.LOSE

_DELTAS = ((-1, 0), (1, 0), (0, -1), (0, 1))
"""(row, column) step of each direction, as in :mod:`jungle_core._tables`."""

# Per-square bits of the move generator: 0..3 the moves by direction, then these.
_REVEAL = 4
_P0 = 5
_P1 = 6
_LEGAL = (1 << _REVEAL) | 0xF


def _attack_words(battle: npt.NDArray[np.int8], results: tuple[int, ...]) -> tuple[int, int]:
    """``(low, high)``: byte ``a - 1`` of ``low`` (attacker ranks 1..4) or ``a - 5`` of
    ``high`` (ranks 5..8) has bit ``b - 1`` set when rank ``a`` attacking an opponent's
    rank ``b`` has one of the battle ``results`` (player 0 attacking player 1 stands for
    both: the table depends only on the ranks)."""
    low = high = 0
    for a in range(1, 9):
        row = 0
        for b in range(1, 9):
            if int(battle[a * NUM_CODES + 8 + b]) in results:
                row |= 1 << (b - 1)
        if a <= 4:
            low |= row << ((a - 1) * 8)
        else:
            high |= row << ((a - 5) * 8)
    return low, high


def _rank_row(code: jax.Array, words: tuple[int, int]) -> jax.Array:
    """``uint32``: the 8-bit row of ``words`` for the rank of face-up ``code`` (bit
    ``b - 1``: this rank vs an opponent's rank ``b``), elementwise."""
    rank_minus_1 = (code.astype(jnp.uint32) - 1) & 7
    word = jnp.where(rank_minus_1 >= 4, jnp.uint32(words[1]), jnp.uint32(words[0]))
    return (word >> ((rank_minus_1 & 3) * 8)) & 0xFF


def _materialise(x: jax.Array) -> jax.Array:
    """``x`` itself, computed once. XLA on CPU fuses cheap producers into every consumer
    and recomputes them per element read; a reduction (here, over ``x`` and zeros) is
    where fusion stops, so the value is written once and read by all its consumers."""
    return jnp.max(jnp.stack([x, jnp.zeros_like(x)], axis=-1), axis=-1)


def _or_all(x: jax.Array) -> jax.Array:
    """The bitwise OR of all elements of an unsigned ``x`` (a scalar)."""
    out: jax.Array = jax.lax.reduce(
        x, jnp.zeros((), x.dtype), jax.lax.bitwise_or, tuple(range(x.ndim))
    )
    return out


class Kernel:
    """The traced rules of one rule set (built once per rule set by the environment).

    Arrays (one game): ``board: int8[N]`` square codes as in :mod:`jungle_core._state`;
    ``mask: int32[]`` face-down bits (``owner * 8 + rank - 1``); ``player: int32[]`` the
    player to move; ``since: int32[]`` plies since a removal; ``ply: int32[]`` plies
    played. Inside the move generator a square's legal moves are ``dirs: uint32[N]``,
    bit ``d`` for direction ``d``, unpacked into the ``bool[A]`` mask at the end.

    >>> from jungle_core import DARK
    >>> Kernel(DARK).n
    56
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        t: JaxTables = jax_tables(rules)
        self.t = t
        n = self.n = t.num_squares
        self.is_dark = rules.variant == "dark"
        rows, cols = t.rows, t.cols
        r, c = np.divmod(np.arange(n), cols)
        self._cols = cols
        # The neighbour read as a shift must be the step table of jungle_core._tables.
        for d, (dr, dc) in enumerate(_DELTAS):
            inside = (r + dr >= 0) & (r + dr < rows) & (c + dc >= 0) & (c + dc < cols)
            expected = np.where(inside, np.arange(n) + dr * cols + dc, n)
            if not np.array_equal(t.step[:, d], expected):
                raise RuntimeError(f"step table of {rules.name} is not a grid shift (d={d})")
        self._pad = cols
        if self.is_dark:
            self._move_words = _attack_words(
                t.battle, (_TAKE, _BOTH, _LOSE)
            )  # any battle that is not FORBIDDEN
            self._hidden_bits = (7 << HIDDEN) if rules.attack_face_down else 0
            return
        # CLASSIC: every jump in direction d is a straight line of a fixed length.
        self._take_words = _attack_words(t.battle, (_TAKE,))
        self._jump_length = [0, 0, 0, 0]
        for sq in range(n):
            for d, (dr, dc) in enumerate(_DELTAS):
                landing = int(t.jump_land[sq, d])
                if landing == n:
                    continue
                k = (
                    (landing // cols - sq // cols) // dr
                    if dr
                    else (landing % cols - sq % cols) // dc
                )
                line = [sq + i * (dr * cols + dc) for i in range(1, k)]
                crossed = [int(x) for x in t.jump_cross[sq, d] if x != n]
                if landing != sq + k * (dr * cols + dc) or crossed != line:
                    raise RuntimeError(f"jump from {sq} in direction {d} is not a straight line")
                if self._jump_length[d] not in (0, k):
                    raise RuntimeError(f"jumps in direction {d} differ in length")
                self._jump_length[d] = k
        self._pad = max([cols, *(k * cols for k in self._jump_length)])
        step = t.step
        land = t.jump_land
        self._sq_water = t.water[:n]
        self._step_water = t.water[step].T  # bool[4, N]
        self._step_den = t.den_of[step].T
        self._step_trap = t.trap_of[step].T
        self._has_jump = np.not_equal(land, n).T
        self._land_den = t.den_of[land].T
        self._land_trap = t.trap_of[land].T

    # ------------------------------------------------------------------ neighbours

    def padded(self, board: jax.Array) -> jax.Array:
        """``int8[N + 2 * pad]``: the board between two runs of ``WALL``, so that every
        neighbour read below is a plain slice."""
        wall = jnp.full((self._pad,), WALL, jnp.int8)
        return jnp.concatenate([wall, board, wall])

    def _read(self, padded: jax.Array, dr: int, dc: int, masked: bool = True) -> jax.Array:
        """``int8[N]``: the code ``dr`` rows and ``dc`` columns away from each square
        (``WALL`` off the board), read from :meth:`padded`: off the top or bottom edge
        lands in the padding; off the left or right edge is masked (unless ``masked`` is
        False: for callers that use only squares whose read stays on the board)."""
        n, cols = self.n, self._cols
        start = self._pad + dr * cols + dc
        shifted = jax.lax.slice(padded, (start,), (start + n,))
        if dc == 0 or not masked:
            return shifted
        c = np.arange(n) % cols
        inside = (c + dc >= 0) & (c + dc < cols)
        return jnp.where(jnp.asarray(inside), shifted, jnp.int8(WALL))

    def neighbours(self, board: jax.Array) -> jax.Array:
        """``int8[4, N]``: the code on each square's neighbour in direction ``d`` (WALL
        off the board), equal to ``board[step[sq, d]]``."""
        padded = self.padded(board)
        return jnp.stack([self._read(padded, dr, dc) for dr, dc in _DELTAS])

    # --------------------------------------------------------------- legal actions

    def legal(
        self, board: jax.Array, player: jax.Array, padded: jax.Array | None = None
    ) -> tuple[jax.Array, jax.Array]:
        """``(mask: bool[A], summary: uint32[])``: the legal actions (mirrors
        ``_game.legal_action_mask``), reveals first, then move ``sq * 4 + d`` at
        ``N + sq * 4 + d``; and the OR over all squares of the per-square bits (bits 0..3
        a legal move, ``_REVEAL`` a legal reveal, ``_P0``/``_P1`` a face-up piece of
        player 0/1), which :meth:`result` reads. ``padded`` is :meth:`padded` of the
        board when the caller has it (:meth:`apply` does)."""
        if padded is None:
            padded = self.padded(board)
        if self.is_dark:
            bits = self._dark_bits(board, player, padded)
        else:
            bits = self._classic_dirs(board, player, padded)
        b = board.astype(jnp.int32)
        bits = (
            bits
            | jnp.where((b >= 1) & (b <= 8), jnp.uint32(1 << _P0), jnp.uint32(0))
            | jnp.where((b >= 9) & (b <= 16), jnp.uint32(1 << _P1), jnp.uint32(0))
        )
        # Computed once (see _materialise), then unpacked by broadcasts and one reduction.
        bits = _materialise(bits)
        reveals = ((bits >> _REVEAL) & 1).astype(jnp.bool_)
        moves = ((bits[:, None] >> jnp.arange(4, dtype=jnp.uint32)) & 1).astype(jnp.bool_)
        mask = jnp.concatenate([reveals, moves.reshape(-1)])
        return mask, _or_all(bits)

    def legal_mask(self, board: jax.Array, player: jax.Array) -> jax.Array:
        """``bool[A]``: the legal actions (see :meth:`legal`)."""
        return self.legal(board, player)[0]

    def move_row_bits(self, board: jax.Array, player: jax.Array) -> jax.Array:
        """``uint32[N]`` (DARK): bit ``q`` set when the piece on the square may move onto
        a square holding code ``q`` (the ``move_bits`` table of :func:`jax_tables`, read
        without a gather)."""
        c = board.astype(jnp.uint32)
        me = player.astype(jnp.uint32)
        mine = (c >= me * 8 + 1) & (c <= me * 8 + 8)
        attack = _rank_row(c, self._move_words)
        bits = jnp.uint32(1 | self._hidden_bits) | (attack << ((1 - me) * 8 + 1))
        return jnp.where(mine, bits, jnp.uint32(0))

    def _dark_bits(self, board: jax.Array, player: jax.Array, padded: jax.Array) -> jax.Array:
        """``uint32[N]``: bit ``d`` set when the move in direction ``d`` is legal, bit
        ``_REVEAL`` when revealing the square is (mirrors ``_moves.dark_legal``)."""
        codes = board.astype(jnp.uint32)
        bits = self.t.reveal_bits
        reveal_bits = jnp.where(player == 0, jnp.uint32(bits[0]), jnp.uint32(bits[1]))
        out = ((reveal_bits >> codes) & 1) << _REVEAL
        row_bits = self.move_row_bits(board, player)
        for d, (dr, dc) in enumerate(_DELTAS):
            target = self._read(padded, dr, dc).astype(jnp.uint32)
            out = out | (((row_bits >> target) & 1) << d)
        return out

    def _classic_dirs(self, board: jax.Array, player: jax.Array, padded: jax.Array) -> jax.Array:
        """``uint32[N]``, bit ``d`` set when the move in direction ``d`` is legal (mirrors
        ``_moves.classic_actions`` and ``_moves.landing``)."""
        p = board.astype(jnp.int32)
        me = player
        rank = ((p - 1) & 7) + 1
        mine = (p >= me * 8 + 1) & (p <= me * 8 + 8)
        rat = rank == 1
        jumper = (rank == 6) | (rank == 7)
        take_row = _rank_row(board, self._take_words)
        dirs = jnp.zeros(self.n, jnp.uint32)
        first = player == 0
        for d, (dr, dc) in enumerate(_DELTAS):
            near = self._read(padded, dr, dc).astype(jnp.int32)
            step_water = jnp.asarray(self._step_water[d])
            k = self._jump_length[d]
            if k:
                # Only squares with a jump (a constant mask) use these reads, and their
                # reads stay on the board, so no edge masking is needed.
                blocked = jnp.zeros(self.n, jnp.bool_)
                for i in range(1, k):
                    code = self._read(padded, i * dr, i * dc, masked=False)
                    blocked = blocked | (code == 1) | (code == 9)
                far = self._read(padded, k * dr, k * dc, masked=False).astype(jnp.int32)
                jump = step_water & jumper & jnp.asarray(self._has_jump[d]) & ~blocked
                q = jnp.where(jump, far, near)
            else:
                jump = jnp.zeros(self.n, jnp.bool_)
                q = near
            valid = (near != WALL) & (~step_water | rat | jump)
            dest_water = step_water & ~jump
            # Terrain of the destination, already compared with the player to move.
            own_den = jnp.where(
                jump,
                jnp.where(first, self._land_den[d] == 0, self._land_den[d] == 1),
                jnp.where(first, self._step_den[d] == 0, self._step_den[d] == 1),
            )
            own_trap = jnp.where(
                jump,
                jnp.where(first, self._land_trap[d] == 0, self._land_trap[d] == 1),
                jnp.where(first, self._step_trap[d] == 0, self._step_trap[d] == 1),
            )
            opponent = (q >= (1 - me) * 8 + 1) & (q <= (1 - me) * 8 + 8)
            takes = ((take_row >> ((q - 1) & 7).astype(jnp.uint32)) & 1) == 1
            attack = opponent & (jnp.asarray(self._sq_water) == dest_water) & (own_trap | takes)
            ok = mine & valid & ~own_den & ((q == 0) | attack)
            dirs = dirs | (ok.astype(jnp.uint32) << d)
        return dirs

    # ---------------------------------------------------------------------- chance

    def chance_bits(self, board: jax.Array, mask: jax.Array, action: jax.Array) -> jax.Array:
        """``int32[]``: the face-down bits ``action`` draws its outcome from; 0 when it
        turns nothing face up (mirrors ``_moves.chance_mask``; ``action`` must be in range)."""
        if not self.is_dark:
            return jnp.zeros((), jnp.int32)
        code = board[self._target(action)]
        select = jnp.where(
            code == HIDDEN,
            0xFFFF,
            jnp.where(code == HIDDEN_P0, 0xFF, jnp.where(code == HIDDEN_P1, 0xFF00, 0)),
        )
        return mask & select

    def _target(self, action: jax.Array) -> jax.Array:
        """``int32[]`` (DARK): the square an in-range action reveals or moves onto
        (clipped onto the board for an off-board move, which is never legal)."""
        n = self.n
        move = jnp.clip(action - n, 0, 4 * n - 1)
        step = jnp.asarray(self.t.step).reshape(-1)[move]
        return jnp.minimum(jnp.where(action < n, action, step), n - 1)

    # ----------------------------------------------------------------- transitions

    def apply(
        self,
        board: jax.Array,
        mask: jax.Array,
        player: jax.Array,
        since: jax.Array,
        ply: jax.Array,
        action: jax.Array,
        outcome: jax.Array,
        play: jax.Array,
    ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
        """The next ``(padded, board, mask, player, since, ply)`` (``padded``: the new
        board as :meth:`padded` gives it) after a legal ``action`` whose
        chance outcome (if it has one) is ``outcome`` (mirrors ``_moves.apply``). When
        ``play`` is False the board comes back unchanged (the other values are the
        caller's to discard): the scatter then writes the squares' own codes back, which
        spares the caller a select over the whole board."""
        n = self.n
        a = action.astype(jnp.int32)
        is_reveal = a < n
        move = jnp.clip(a - n, 0, 4 * n - 1)
        sq = jnp.where(is_reveal, a, move >> 2)
        p = board[sq].astype(jnp.int32)
        if self.is_dark:
            target = self._target(a)
        else:
            d = move & 3
            rank = ((p - 1) & 7) + 1
            step = jnp.asarray(self.t.step)[sq, d]
            land = jnp.asarray(self.t.jump_land)[sq, d]
            jump = jnp.asarray(self.t.water)[step] & ((rank == 6) | (rank == 7))
            target = jnp.minimum(jnp.where(jump, land, step), n - 1)
        q = board[target].astype(jnp.int32)
        o = jnp.clip(outcome.astype(jnp.int32), 0, 15)
        turned = q >= HIDDEN
        q_up = jnp.where(turned, o + 1, q)
        new_mask = jnp.where(turned, mask & ~(jnp.int32(1) << o), mask)
        if self.is_dark:
            result = jnp.asarray(self.t.battle)[p * NUM_CODES + q_up].astype(jnp.int32)
            result = jnp.where(q == 0, _TAKE, result)
            own = ((q_up - 1) >> 3) == player
            result = jnp.where((turned & own) | is_reveal, _FORBIDDEN, result)
        else:  # a legal CLASSIC move always enters its destination
            result = jnp.full((), _TAKE, jnp.int32)
        new_target = jnp.where(result == _TAKE, p, jnp.where(result == _BOTH, 0, q_up))
        new_sq = jnp.where(result == _FORBIDDEN, p, 0)
        removed = ((result == _TAKE) & (q != 0)) | (result == _BOTH) | (result == _LOSE)
        # One scatter of two squares (the same square twice for a reveal, which writes
        # the same value twice). A scatter is also where XLA stops fusing: a select
        # over all squares would be recomputed inside every consumer of the new board.
        new_sq = jnp.where(sq == target, new_target, new_sq)
        new_sq = jnp.where(play, new_sq, p)
        new_target = jnp.where(play, new_target, jnp.where(sq == target, p, q))
        # Written into the padded board, which the move generator reads next.
        new_padded = (
            self.padded(board)
            .at[jnp.stack([sq, target]) + self._pad]
            .set(jnp.stack([new_sq, new_target]).astype(jnp.int8), unique_indices=False)
        )
        new_board = jax.lax.slice(new_padded, (self._pad,), (self._pad + n,))
        return (
            new_padded,
            new_board,
            new_mask,
            1 - player,
            jnp.where(removed, 0, since + 1),
            ply + 1,
        )

    # ------------------------------------------------------------------- game end

    def result(
        self,
        board: jax.Array,
        mask: jax.Array,
        player: jax.Array,
        since: jax.Array,
        ply: jax.Array,
        summary: jax.Array,
    ) -> tuple[jax.Array, jax.Array]:
        """``(over: bool[], winner: int32[])`` of a position, given the ``summary`` bits of
        :meth:`legal`; winner -1 for a draw or a game that goes on (mirrors
        ``_moves.outcome``, rule for rule and in its order)."""
        rules = self.rules
        b = board.astype(jnp.int32)
        has0 = ((mask & 0xFF) != 0) | (((summary >> _P0) & 1) != 0)
        has1 = ((mask & 0xFF00) != 0) | (((summary >> _P1) & 1) != 0)
        # From the last rule to the first, so that the first rule that applies wins.
        stuck = (summary & _LEGAL) == 0
        if rules.reveal == "any":
            stuck = stuck & (mask == 0)
        over = stuck
        winner = jnp.where(stuck, -1 if rules.no_moves == "draw" else 1 - player, -1)
        if rules.ply_limit:
            limit = ply >= rules.ply_limit
            over = over | limit
            winner = jnp.where(limit, -1, winner)
        if rules.no_removal_limit:
            limit = since >= rules.no_removal_limit
            over = over | limit
            winner = jnp.where(limit, -1, winner)
        eliminated = ~(has0 & has1)
        over = over | eliminated
        winner = jnp.where(eliminated, jnp.where(has0 == has1, -1, jnp.where(has0, 0, 1)), winner)
        if not self.is_dark:
            den0, den1 = self.t.dens
            in1 = (b[den1] >= 1) & (b[den1] <= 8)
            in0 = (b[den0] >= 9) & (b[den0] <= 16)
            over = over | in0 | in1
            winner = jnp.where(in1, 0, jnp.where(in0, 1, winner))
        return over, winner.astype(jnp.int32)
