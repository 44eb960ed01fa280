"""The Greedy agent on the JAX core: exact action values, fast under ``jit(vmap)``.

:class:`JaxGreedy` equals :class:`jungle_agents.GreedyAgent` (DARK rules): for every
legal action, the probability-weighted mean of H (material, position, mobility, safety;
:func:`jungle_agents.greedy_heuristic`) over the action's chance outcomes, H scored for
the player to move. It works on one game; batch it with ``jax.vmap``:

>>> import jax
>>> from jungle_core import DARK, new_game
>>> from jungle_core.jax_env import make
>>> env = make(DARK)
>>> greedy = JaxGreedy(env)
>>> values = jax.jit(greedy.action_values)(env.from_state(new_game()))
>>> values.shape, values.dtype, round(float(values[51]), 2)   # ?d7, as the pure agent
((280,), dtype('float32'), 109.0)

How it is computed (and why it needs no per-action child state)
----------------------------------------------------------------
H is a sum of one term per square and one per pair of adjacent squares, plus a term of
the face-down set. In the player-to-move's view ("self"), with ``b[s]`` the code on
square ``s`` (codes relabelled so that self is player 0)::

    H = C(mask) + sum_s f_s(b[s]) + sum_{adjacent {s, s'}} E(b[s], b[s'])

- ``C``: face-down material, ``30 * (#self face down - 0.8 * #opponent face down)``;
- ``f_s(x)``: the material of a face-up ``x`` (``V``, or ``-0.8 V`` for the opponent's),
  its position term when it is self's, and ``2`` (the mobility weight) when self may
  reveal ``x`` (a face-down code): a legal reveal;
- ``E(x, y)``: the safety of the pair plus ``2`` for each of the moves ``x -> y`` and
  ``y -> x`` self could make (a legal move is one directed pair of adjacent squares).

So "mobility" (the legal actions self would have) is itself a sum of square and pair
terms, and every action changes at most two adjacent squares, ``sq`` (the mover, or the
revealed piece) and ``t`` (the target), and the face-down set. With
``L_s(x) = f_s(x) + sum_{neighbours n of s} E(x, b[n])`` for every square and code
(``float32[N, 20]``: one ``[N, 20] @ [20, 20]`` matmul of the one-hot board with E, read
back at the four neighbours by shifted slices), a child in which ``sq`` holds ``x`` and
``t`` holds ``y`` has::

    H(child) - H = L_sq(x) - L_sq(p) + L_t(y) - L_t(q)
                   + E(x, y) + E(p, q) - E(x, q) - E(p, y) + (change of C)

with ``p = b[sq]``, ``q = b[t]``; a reveal changes one square: ``L_s(o + 1) - L_s(q)``
for outcome ``o``. The expectation over the (up to 16) outcomes is linear, so:

- the 56 reveals are ``L[:, 1:17] @ w`` (``w`` the outcome distribution) ``- L_s(q)``;
- a move's value is five coefficients of the pair ``(p, q)`` (see
  :meth:`JaxGreedy._move_tables`) times values of ``L`` at ``sq`` and ``t``. Without
  chance, the coefficients come from the battle result, read from rank bit rows with
  shifts; onto a face-down piece they are per-game ``[8 ranks, 3 codes]`` tables
  averaged over the outcome distribution once per game, plus one ``[N, 16] @ [16, 8]``
  matmul for the outcomes that leave the turned-up piece on ``t``.

Each of the 224 moves is an elementwise expression over the 56 squares, once per
direction, with ``t``'s values read as a shifted slice of a padded array (no per-game
gathers, which XLA compiles to slow scalar loops on CPU). Nothing of shape ``[A, 16]``
or ``[A, 16, N]`` is ever built; the largest per-game arrays are ``[N, 20]``. The
module therefore computes the neighbourhood of each square itself instead of calling
:class:`jungle_core._jax_rules.Kernel` per child: the rules it reads (the battle table,
the move and reveal bit tables of :func:`jungle_core._jax_tables.jax_tables`) are the
cores' own, and the legal actions are the state's ``legal_action_mask``.

Deviations from the pure agent
------------------------------
- Values are ``float32`` (the pure agent sums in ``float64``): they agree within about
  1e-4 (the tests ask for 1e-3).
- :meth:`JaxGreedy.act` counts actions as tied when their values are within ``1e-3``
  (absolute) of the best, where the pure agent uses ``1e-9``: float32 rounding is far
  above ``1e-9``, while distinct values differ by far more than ``1e-3`` (on the tests'
  few hundred positions the two tie sets are the same).
- A finished game: the pure agent refuses to evaluate it (``GameOverError``); here the
  values are those of the position as if play went on (the caller masks finished games).

Every DARK rule option is supported (the tables follow the rule set); CLASSIC is
refused (the pure agent uses a different evaluation there).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt

from jungle_agents import GreedyWeights
from jungle_core.jax_env import JaxEnv, JaxState, jax_tables
from jungle_core.lowlevel import HIDDEN, HIDDEN_OWNED, HIDDEN_P0, HIDDEN_P1, NUM_CODES, BattleResult
from jungle_train.jitted._board import DELTAS, neighbour_shift, rank_bit, rank_words

__all__ = ["TIE_TOLERANCE", "JaxGreedy"]

TIE_TOLERANCE = 1e-3
"""Actions whose value is within this (absolute) distance of the best are tied."""

_CODES = 20  # board codes 0..19 (the kernel's WALL, 20, matches none of them)
_F32 = npt.NDArray[np.float32]


def _fmix32(h: jax.Array) -> jax.Array:
    """MurmurHash3's 32-bit finaliser (a bijection of ``uint32`` with full avalanche)."""
    h = h ^ (h >> 16)
    h = h * jnp.uint32(0x85EBCA6B)
    h = h ^ (h >> 13)
    h = h * jnp.uint32(0xC2B2AE35)
    return h ^ (h >> 16)


class JaxGreedy:
    """The Greedy agent for one DARK rule set, as pure functions of one game.

    Built from a :class:`jungle_core.jax_env.JaxEnv` and the heuristic's weights (default
    :class:`jungle_agents.GreedyWeights`). ``N = 56`` squares, ``A = 280``
    actions. The methods take one unbatched :class:`JaxState`; wrap them in
    ``jax.vmap`` / ``jax.jit``.

    Raises ``ValueError`` for a non-DARK rule set.

    >>> from jungle_core import CLASSIC
    >>> from jungle_core.jax_env import make
    >>> JaxGreedy(make(CLASSIC))
    Traceback (most recent call last):
    ...
    ValueError: JaxGreedy supports the DARK family only, not CLASSIC ...
    """

    def __init__(self, env: JaxEnv, weights: GreedyWeights | None = None) -> None:
        rules = env.rules
        if not rules.is_dark:
            raise ValueError(
                f"JaxGreedy supports the DARK family only, not {rules.name} ({rules!r}): "
                "the pure GreedyAgent scores CLASSIC with a different evaluation"
            )
        self.env = env
        self.rules = rules
        self.weights = weights or GreedyWeights()
        self.num_squares = rules.num_squares
        self.num_actions = rules.num_actions
        self._cols = rules.cols
        r, c = np.divmod(np.arange(rules.num_squares), rules.cols)
        self._inside = np.stack(
            [
                (r + dr >= 0) & (r + dr < rules.rows) & (c + dc >= 0) & (c + dc < rules.cols)
                for dr, dc in DELTAS
            ]
        ).astype(np.float32)
        """``float32[4, N]``: 1 where the square has a neighbour in direction ``d``."""
        self._build_tables()

    def __repr__(self) -> str:
        return f"JaxGreedy(make({self.rules!r}), {self.weights!r})"

    # ---------------------------------------------------------------- static tables

    def _build_tables(self) -> None:
        """The numpy tables of H in player 0's view (the traced code relabels the board
        so that the player to move is player 0)."""
        w = self.weights
        rules = self.rules
        t = jax_tables(rules)
        battle = t.battle.astype(np.int64)
        rows, cols = rules.rows, rules.cols
        codes = np.arange(_CODES)
        mine = (codes >= 1) & (codes <= 8)
        theirs = (codes >= 9) & (codes <= 16)
        rank = ((codes - 1) & 7) + 1
        value = np.array([w.values[int(r)] for r in rank], dtype=np.float64)
        ok = np.zeros((_CODES, _CODES), dtype=np.float64)  # player 0's move x -> y
        for x in range(1, 9):
            move_bits = int(t.move_bits[x])
            for y in range(_CODES):
                ok[x, y] = (move_bits >> y) & 1
        reveal = np.array([(int(t.reveal_bits[0]) >> c) & 1 for c in codes], dtype=np.float64)

        safety = np.zeros((_CODES, _CODES), dtype=np.float64)
        for x in range(1, 9):
            for y in range(9, 17):
                s = 0.0
                if battle[x * NUM_CODES + y] == BattleResult.TAKE:
                    s += w.take
                if battle[y * NUM_CODES + x] == BattleResult.TAKE:
                    s -= w.taken
                safety[x, y] = safety[y, x] = w.safety * s
        pair = safety + w.mobility * (ok + ok.T)  # E(x, y), symmetric

        material = np.where(mine, value, np.where(theirs, -w.opp_material * value, 0.0))
        square = material + w.mobility * reveal  # f_s(x) without the position term
        r_, c_ = np.divmod(np.arange(rows * cols), cols)
        centre = np.where((c_ == cols // 2 - 1) | (c_ == cols // 2), w.centre, 0.0)
        place = np.stack(
            [
                w.position * (w.advance * r_ + centre),
                w.position * (w.advance * (rows - 1 - r_) + centre),
            ]
        )
        # C(mask) changes by this when outcome o (owner * 8 + rank - 1) leaves the set.
        outcome_owner_mine = np.arange(16) < 8
        d_mask = np.where(outcome_owner_mine, -w.face_down, w.opp_material * w.face_down)

        self._pair: _F32 = pair.astype(np.float32)
        self._square: _F32 = square.astype(np.float32)
        self._mine: _F32 = mine.astype(np.float32)
        self._place: _F32 = place.astype(np.float32)
        self._d_mask: _F32 = d_mask.astype(np.float32)
        self._face_down_value = float(w.face_down)
        self._opp_material = float(w.opp_material)
        self._move_tables(battle, pair, d_mask)

    def _move_tables(
        self,
        battle: npt.NDArray[np.int64],
        pair: npt.NDArray[np.float64],
        d_mask: npt.NDArray[np.float64],
    ) -> None:
        """The coefficients of a move's value (the mover ``p`` is one of player 0's
        face-up codes 1..8).

        A move's expected change of H is (``sq`` the mover's square, ``t`` the target,
        ``q`` the code on it)::

            K + A * (L_sq(0) - L_sq(p)) + TAKE * L_t(p) + BOTH * L_t(0)
              + STAY * L_t(q) + sum_o turned_o * w_o * L_t(o + 1) - L_t(q)

        ``K`` collects the pair terms and the change of C, ``A`` is the chance that the
        mover leaves ``sq``, ``TAKE`` that it ends on ``t``, ``BOTH`` that ``t`` ends
        empty, ``STAY`` that ``t`` keeps its face-up piece (a lost attack);
        ``turned_o`` marks the outcomes after which ``t`` holds the piece turned up (one's
        own, an attack the rules forbid, or a lost attack).

        - A target without chance (empty, or an opponent's face-up piece): ``A = 1``, the
          battle result gives ``TAKE``, ``BOTH``, ``STAY``, and ``K`` follows from the
          pair value ``E(p, q)`` (see :meth:`_fixed_coefficients`), all computed from
          rank bit rows with shifts (``_words``: ``(low, high)`` uint32 pairs, byte
          ``rank - 1`` the row of an attacker's rank, bit ``rank - 1`` a defender's).
        - ``_chance``: ``float32[8 (p), 3 (q = 17, 18, 19), 16 (o), 4]``: per outcome
          ``o``, ``K, A, TAKE, BOTH`` (averaged with the game's outcome distribution).
        - ``_turned_up``: ``float32[16 (o), 8 (p)]``, ``turned_o``.
        """
        take, both, lose = BattleResult.TAKE, BattleResult.BOTH, BattleResult.LOSE
        w = self.weights

        def pair_terms(p: int, q: int, x: int, y: int) -> float:
            return float(pair[x, y] + pair[p, q] - pair[x, q] - pair[p, y])

        codes = battle.reshape(20, 20)
        attack = codes[1:9, 9:17]  # [a - 1, b - 1]: player 0's rank a attacks 1's rank b
        defend = codes[9:17, 1:9].T  # [a - 1, b - 1]: player 1's rank b attacks 0's rank a
        self._words = {
            "take": rank_words(attack == take),
            "both": rank_words(attack == both),
            "lose": rank_words(attack == lose),
            "taken": rank_words(defend == take),
        }

        # The pair terms of a move without chance, in the form the traced code uses:
        # TAKE -> K = E(p, q) + k_take, BOTH -> K = E(p, q) + k_both, LOSE -> K = 0, with
        # E(p, q) = safety * (take * [p takes q] - taken * [q takes p]) + mobility * [p
        # may attack q] for a face-up q and E(p, 0) for an empty one. Checked here
        # against the general pair table, for every mover and target.
        self._k_take = float(pair[0, 1] - pair[0, 0] - pair[1, 1])
        self._k_both = float(pair[0, 0] - pair[0, 0] - pair[1, 0])
        self._e_empty = float(pair[1, 0])
        for p in range(1, 9):
            for q in (0, *range(9, 17)):
                result = take if q == 0 else battle[p * NUM_CODES + q]
                if result == take:
                    want = pair_terms(p, q, 0, p)
                    got = self._k_take + self._pair_value(p, q, battle)
                elif result == both:
                    want = pair_terms(p, q, 0, 0)
                    got = self._k_both + self._pair_value(p, q, battle)
                elif result == lose:
                    want, got = pair_terms(p, q, 0, q), 0.0
                else:
                    continue
                if abs(want - got) > 1e-9:
                    raise RuntimeError(f"move terms of {p} onto {q}: {got} != {want} ({w!r})")

        chance = np.zeros((8, 3, 16, 4), dtype=np.float64)
        turned_up = np.zeros((16, 8), dtype=np.float64)
        for p in range(1, 9):
            for o in range(16):
                u = o + 1
                result = BattleResult.FORBIDDEN if u <= 8 else battle[p * NUM_CODES + u]
                stay = result not in (take, both, lose)  # own piece, or the turn just ends
                x = p if stay else 0
                y = p if result == take else 0 if result == both else u
                turned_up[o, p - 1] = float(stay or result == lose)
                for k, q in enumerate((HIDDEN, *HIDDEN_OWNED)):
                    chance[p - 1, k, o] = (
                        d_mask[o] + pair_terms(p, q, x, y),
                        float(not stay),
                        float(result == take),
                        float(result == both),
                    )
        self._chance: _F32 = chance.astype(np.float32)
        self._turned_up: _F32 = turned_up.astype(np.float32)

    def _pair_value(self, p: int, q: int, battle: npt.NDArray[np.int64]) -> float:
        """E(p, q) of player 0's face-up ``p`` next to an empty or opponent's ``q``, as
        :meth:`_fixed_coefficients` computes it (checked against the table)."""
        w = self.weights
        if q == 0:
            return self._e_empty
        takes = battle[p * NUM_CODES + q] == BattleResult.TAKE
        taken = battle[q * NUM_CODES + p] == BattleResult.TAKE
        may = battle[p * NUM_CODES + q] != BattleResult.FORBIDDEN
        return float(w.safety * (w.take * takes - w.taken * taken) + w.mobility * may)

    # ------------------------------------------------------------------ traced code

    def _shift(self, x: jax.Array, d: int) -> jax.Array:
        """``x`` (``[N, k]``) read at each square's neighbour in direction ``d``
        (:func:`jungle_train.jitted._board.neighbour_shift`)."""
        return neighbour_shift(x, d, self._cols)

    def _bit(self, name: str, attacker: jax.Array, defender: jax.Array) -> jax.Array:
        """``bool[...]``: the rank relation ``name`` of :attr:`_words` for player 0's
        rank index ``attacker`` and player 1's ``defender`` (``uint32``, 0..7)."""
        return rank_bit(self._words[name], attacker, defender)

    def _fixed_coefficients(
        self, mover_rank: jax.Array, q: jax.Array
    ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
        """``(K, A, TAKE, BOTH, STAY)``, each ``float32[N]``, of the moves of self's
        pieces (rank index ``mover_rank``) onto targets holding ``q`` without chance
        (empty or the opponent's face-up piece; see :meth:`_move_tables`). Meaningful
        for legal moves only."""
        w = self.weights
        theirs = (q >= 9) & (q <= 16)
        empty = q == 0
        target_rank = ((q - 9) & 7).astype(jnp.uint32)
        takes = theirs & self._bit("take", mover_rank, target_rank)
        both = theirs & self._bit("both", mover_rank, target_rank)
        loses = theirs & self._bit("lose", mover_rank, target_rank)
        taken = theirs & self._bit("taken", mover_rank, target_rank)
        f32 = jnp.float32
        pair = jnp.where(
            empty,
            f32(self._e_empty),
            w.safety * (w.take * takes.astype(f32) - w.taken * taken.astype(f32))
            + w.mobility * (takes | both | loses).astype(f32),
        )
        take = (empty | takes).astype(f32)
        both_f = both.astype(f32)
        k = take * (pair + self._k_take) + both_f * (pair + self._k_both)
        return k, jnp.ones_like(k), take, both_f, loses.astype(f32)

    def _parts(self, state: JaxState) -> tuple[jax.Array, jax.Array]:
        """``(h: float32[], delta: float32[A])``: H of the position for the player to
        move, and each action's expected change of it (meaningful for legal actions)."""
        me = state.current_player.astype(jnp.int32)
        flip = me == 1
        b = state.board.astype(jnp.int32)
        face_up = (b >= 1) & (b <= 16)
        # Relabel so that the player to move is player 0 (own pieces 1..8, own 18).
        rel = jnp.where(flip & face_up, ((b - 1) ^ 8) + 1, b)
        rel = jnp.where(flip & (b >= HIDDEN_P0) & (b <= HIDDEN_P1), 37 - rel, rel)
        raw_mask = state.face_down_mask.astype(jnp.int32)
        mask = jnp.where(flip, ((raw_mask >> 8) & 0xFF) | ((raw_mask & 0xFF) << 8), raw_mask)
        place = jnp.where(flip, jnp.asarray(self._place[1]), jnp.asarray(self._place[0]))

        code_range = jnp.arange(_CODES, dtype=jnp.int32)
        onehot = (rel[:, None] == code_range).astype(jnp.float32)  # [N, 20]
        square = jnp.asarray(self._square)[None, :] + place[:, None] * jnp.asarray(self._mine)
        # L_s(x) = f_s(x) + sum over neighbours n of E(x, b[n]): the rows E(b[n], .) of
        # every square, read from its neighbours (E is symmetric).
        rows_of = onehot @ jnp.asarray(self._pair)  # [N, 20]
        local = square
        for d in range(4):
            local = local + self._shift(rows_of, d) * jnp.asarray(self._inside[d])[:, None]
        local_here = jnp.sum(local * onehot, axis=1)  # L_s(b[s])
        square_here = jnp.sum(square * onehot, axis=1)  # f_s(b[s])

        own_down = jax.lax.population_count(mask & 0xFF).astype(jnp.float32)
        opp_down = jax.lax.population_count((mask >> 8) & 0xFF).astype(jnp.float32)
        h = self._face_down_value * (own_down - self._opp_material * opp_down) + 0.5 * (
            jnp.sum(square_here) + jnp.sum(local_here)
        )

        # Outcome distributions of turning up a face-down code 17 / 18 / 19: [3, 16].
        select = jnp.array([0xFFFF, 0xFF, 0xFF00], jnp.int32)
        bits = ((mask & select)[:, None] >> jnp.arange(16, dtype=jnp.int32)) & 1
        bits_f = bits.astype(jnp.float32)
        probs = bits_f / jnp.maximum(jnp.sum(bits_f, axis=1, keepdims=True), 1.0)
        down_here = onehot[:, HIDDEN:]  # [N, 3]: which face-down code stands on s
        # [N, 16]; three products rather than a per-game matmul (slow in a batch on CPU)
        outcome_probs = (
            down_here[:, 0, None] * probs[0]
            + down_here[:, 1, None] * probs[1]
            + down_here[:, 2, None] * probs[2]
        )
        weighted = local[:, 1:17] * outcome_probs  # w_o * L_s(o + 1)

        reveals = (
            jnp.sum(weighted, axis=1) + down_here @ (probs @ jnp.asarray(self._d_mask)) - local_here
        )

        # Moves: the mover's rank on sq (self's face-up codes 1..8), per-game chance
        # coefficients by that rank, and sums over turned-up outcomes by target square.
        mover = onehot[:, 1:9]  # [N, 8]
        mover_rank = ((rel - 1) & 7).astype(jnp.uint32)
        chance_game = jnp.einsum("kq,pkqc->pkc", probs, jnp.asarray(self._chance))  # [8, 3, 4]
        chance = (mover @ chance_game.reshape(8, -1)).reshape(-1, 3, 4)  # [N, 3, 4]
        turned_by_rank = weighted @ jnp.asarray(self._turned_up)  # [N (t), 8 (p)]

        leave = local[:, 0] - local_here  # L_sq(0) - L_sq(p)
        moves = []
        for d in range(4):
            q = self._shift(rel[:, None], d)[:, 0]  # the code on t
            down_t = self._shift(down_here, d)  # [N, 3]
            k, a, take, both, stay = self._fixed_coefficients(mover_rank, q)
            is_down = q >= HIDDEN
            chance_t = (  # [N, 4]: the coefficients of the face-down code on t
                down_t[:, 0, None] * chance[:, 0]
                + down_t[:, 1, None] * chance[:, 1]
                + down_t[:, 2, None] * chance[:, 2]
            )
            k = jnp.where(is_down, chance_t[:, 0], k)
            a = jnp.where(is_down, chance_t[:, 1], a)
            take = jnp.where(is_down, chance_t[:, 2], take)
            both = jnp.where(is_down, chance_t[:, 3], both)
            stay = jnp.where(is_down, 0.0, stay)
            local_t = self._shift(local, d)
            local_t_here = self._shift(local_here[:, None], d)[:, 0]
            mover_at_t = jnp.sum(local_t[:, 1:9] * mover, axis=1)  # L_t(p)
            turned = jnp.sum(self._shift(turned_by_rank, d) * mover, axis=1)
            moves.append(
                k
                + a * leave
                + take * mover_at_t
                + both * local_t[:, 0]
                + (stay - 1.0) * local_t_here
                + turned
            )
        delta = jnp.concatenate([reveals, jnp.stack(moves, axis=1).reshape(-1)])
        return h, delta

    def balance(self, state: JaxState) -> jax.Array:
        """``float32[]``: half of H for the player to move minus H for the other player,
        the same position scored from both sides (H weighs the opponent's material by
        0.8, so H alone is not zero-sum; this is: it changes sign with the mover). One
        game; ``jax.vmap`` for a batch.

        >>> from jungle_core import DARK, from_fen
        >>> from jungle_core.jax_env import make
        >>> env = make(DARK)
        >>> s = env.from_state(from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -"))
        >>> greedy = JaxGreedy(env)
        >>> mine = float(jax.jit(greedy.balance)(s))
        >>> theirs = float(jax.jit(greedy.balance)(s.replace(current_player=jnp.int32(1))))
        >>> mine > 0, mine == -theirs
        (True, True)
        """
        other = state.replace(current_player=1 - state.current_player)
        return 0.5 * (self._parts(state)[0] - self._parts(other)[0])

    def action_values(self, state: JaxState) -> jax.Array:
        """``float32[A]``: the pure :meth:`jungle_agents.GreedyAgent.action_values` of
        every legal action (the expected H of its result, for the player to move), and
        ``-inf`` for the illegal ones. One game; ``jax.vmap`` for a batch.

        >>> from jungle_core import DARK, from_fen
        >>> from jungle_core.jax_env import make
        >>> env = make(DARK)
        >>> s = env.from_state(from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -"))
        >>> values = jax.jit(JaxGreedy(env).action_values)(s)
        >>> [(a, round(float(v), 2)) for a, v in enumerate(values) if v > -jnp.inf]
        [(57, 61.5), (59, 86.0)]
        """
        h, delta = self._parts(state)
        return jnp.where(state.legal_action_mask, h + delta, -jnp.inf).astype(jnp.float32)

    def act(self, state: JaxState, bits: jax.Array) -> jax.Array:
        """``int32[]``: the best legal action; actions within :data:`TIE_TOLERANCE`
        (absolute) of the best value are tied and one of them is picked uniformly at
        random from ``bits`` (``uint32[]``, e.g. one of
        ``jax.random.bits(key, (B,), jnp.uint32)``): the tied action ``a`` with the
        largest ``fmix32(fmix32(bits) + (a + 1) * 0x9E3779B9)`` (MurmurHash3's
        finaliser; 280 integer hashes cost far less than a random draw per action).
        Ties are judged on the values' changes from the position's H, which float32
        holds more precisely than the values themselves. With no legal action: 0.

        >>> from jungle_core import DARK, new_game
        >>> from jungle_core.jax_env import make
        >>> env, s = make(DARK), make(DARK).from_state(new_game())
        >>> act = jax.jit(JaxGreedy(env).act)
        >>> sorted({int(act(s, jnp.uint32(i))) for i in range(20)})   # ?d7, ?e7
        [51, 52]
        """
        legal = state.legal_action_mask
        _, delta = self._parts(state)
        best = jnp.max(jnp.where(legal, delta, -jnp.inf))
        tied = legal & (delta >= best - TIE_TOLERANCE)
        index = jnp.arange(self.num_actions, dtype=jnp.uint32)
        # SplitMix-style: a Weyl sequence over the actions from a mixed seed, mixed again.
        seed = _fmix32(jnp.asarray(bits, jnp.uint32))
        key = _fmix32(seed + (index + 1) * jnp.uint32(0x9E3779B9))
        score = jnp.where(tied, (key >> 1).astype(jnp.int32), -1)
        return jnp.argmax(score).astype(jnp.int32)
