"""The Q-learners' one-ply look-ahead on the JAX core: exact, fast under ``jit(vmap)``.

:class:`JaxLookahead` scores every action of the player to move with the pure
:func:`jungle_train.tabular.expected_ply_reward` (the step cost, ``+10 V'``
for a capture, ``-8 V'`` for a loss, ``-0.5`` for a mutual removal, the shaping
``potential(after) - potential(before)`` and ``±100`` / 0 at the end of the game, in
expectation over the chance outcomes) and plays the best one, ties broken at random. It
works on one game; batch it with ``jax.vmap``:

>>> import jax
>>> from jungle_core import DARK, from_fen
>>> from jungle_core.jax_env import make
>>> env = make(DARK)
>>> s = env.from_state(from_fen("e7/8/8/8/8/8/Ew6 0 0 0 - -"))   # E a1 may take w b1
>>> values = jax.jit(JaxLookahead(env).action_values)(s)
>>> values.shape, round(float(values[59]), 3)                    # a1xb1, as the pure one
((280,), 18.4)

How it is computed (no child state per action)
-----------------------------------------------
Everything is in the mover's view ("self", relabelled as player 0, as
:mod:`jungle_train.jitted._greedy` does). The potential is a sum over self's face-up
pieces ``i`` of ``f_i(E)``, a function of ``i``'s code and square and of the set ``E``
of the opponent's face-up pieces only. An action changes at most two squares, ``sq``
and its target ``t``, and changes ``E`` at ``t`` only (an enemy removed there, or one
turned up there), so the potential of every child follows from a few per-game tables:

- each face-up code stands on at most one square, so the pieces are read by rank slot
  (``[8]`` rows and columns per side); per square ``s`` the distances to the 8 enemy
  slots (``[N, 8]``, the enemy on ``s`` itself left out) give the nearest distance
  ``d1``, the nearest enemies by rank, and the second-nearest distance; hence
  ``G[s, x]``, the term of self's rank ``x`` standing on ``s`` (``[N, 8]``), and
  ``f_i = G[i, rank(i)]``;
- ``Δremove[t]`` (``[N]``): the change of ``Σ f_i`` when the enemy on ``t`` goes (an own
  piece changes only when that enemy was among its nearest: the counts of the nearest
  enemies it takes / that take it, or the second-nearest level when it was the only one);
- ``Δadd[t, r]`` (``[N, 8]``): the change when an enemy of rank ``r`` turns up on ``t``
  (an own piece changes when ``t`` is at most as far as its nearest enemy: ``[N, 8]``
  distances to the own slots times ``[8, 8]`` rank tables).

A reveal's 16 outcomes then cost one ``[N, 16]`` expression. A move's battle result is
read from rank bit words with shifts; a move onto a face-down piece is expected over the
outcomes with a few ``[N, 8]`` sums per direction (the target's outcome weights times
the mover's rows of the ``[8, 8]`` battle tables). Neighbours are read as shifted slices
of a padded array and matrix products have constant right-hand sides, so nothing is
gathered per game (slow on CPU) and nothing of shape ``[A, 16]`` or ``[N, N]`` is built.

The game end: an elimination (counted from the face-down set and the face-up pieces),
the no-removal and ply-limit draws (0), and the opponent left without a legal action.
The last one cannot happen under the default DARK options (a face-up piece of the
opponent always has a neighbour it may move onto, and a face-down square can always be
revealed), so it is computed only for rule sets where it can (Greedy-style: the change
of the opponent's legal-action count, a sum of square and adjacent-pair terms).

Deviations: values are ``float32`` (within about 1e-4 of the pure float64); a finished
game is scored as if play went on (the caller masks finished games); ``act`` ties values
within ``1e-3`` (absolute), not the pure ``1e-9``. CLASSIC is refused.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt

from jungle_core.jax_env import JaxEnv, JaxState, jax_tables
from jungle_core.lowlevel import HIDDEN, HIDDEN_P0, HIDDEN_P1, NUM_CODES, BattleResult
from jungle_train.jitted._board import DELTAS, neighbour_shift, rank_bit, rank_words
from jungle_train.jitted._sampling import best_action
from jungle_train.tabular import (
    CAPTURE,
    LOSS,
    LOST,
    MUTUAL,
    OPP_WEIGHT,
    STEP_COST,
    THREAT_WEIGHT,
    VALUE,
    WIN,
)

__all__ = ["JaxLookahead"]

_CODES = 20
_FAR = 1000.0  # the distance to "no enemy"
_F32 = npt.NDArray[np.float32]


def _slots(values: jax.Array, onehot: jax.Array) -> jax.Array:
    """``[8]``: ``values`` (``[N]``) at the square of each rank slot of ``onehot``
    (``[N, 8]``, each column at most one square; 0 for an absent rank). A sum, not a
    per-game matrix product (slow under ``vmap`` on CPU)."""
    return jnp.sum(values[:, None] * onehot, axis=0)


class JaxLookahead:
    """The one-ply look-ahead of the Q-learners' reward for one DARK rule set, as pure
    functions of one game (``N = 56`` squares, ``A = 280`` actions); wrap the methods in
    ``jax.vmap`` / ``jax.jit``.

    Raises ``ValueError`` for a non-DARK rule set.

    >>> from jungle_core import CLASSIC
    >>> from jungle_core.jax_env import make
    >>> JaxLookahead(make(CLASSIC))
    Traceback (most recent call last):
    ...
    ValueError: JaxLookahead supports the DARK family only, not CLASSIC ...
    """

    def __init__(self, env: JaxEnv) -> None:
        rules = env.rules
        if not rules.is_dark:
            raise ValueError(
                f"JaxLookahead supports the DARK family only, not {rules.name} ({rules!r}): "
                "the look-ahead reads DARK moves (one step to a neighbour, no dens or water)"
            )
        self.env = env
        self.rules = rules
        self.num_squares = rules.num_squares
        self.num_actions = rules.num_actions
        self._cols = rules.cols
        t = jax_tables(rules)
        battle = t.battle.astype(np.int64).reshape(NUM_CODES, NUM_CODES)
        own_vs_enemy = battle[1:9, 9:17]  # [own rank, enemy rank]: self attacking
        enemy_vs_own = battle[9:17, 1:9]  # [enemy rank, own rank]: the opponent attacking
        if not np.array_equal(own_vs_enemy, enemy_vs_own):  # relabelling relies on it
            raise ValueError("the battle table must not depend on the owner")
        f32 = np.float32
        self._takes: _F32 = (own_vs_enemy == BattleResult.TAKE).astype(f32)  # [x, r]
        self._taken: _F32 = (enemy_vs_own.T == BattleResult.TAKE).astype(f32)  # [x, r]
        self._result: _F32 = np.stack(  # [4, x, r]: take, both, lose, forbidden
            [
                own_vs_enemy == BattleResult.TAKE,
                own_vs_enemy == BattleResult.BOTH,
                own_vs_enemy == BattleResult.LOSE,
                own_vs_enemy == BattleResult.FORBIDDEN,
            ]
        ).astype(f32)
        self._words = {
            name: rank_words(table)
            for name, table in (
                ("take", own_vs_enemy == BattleResult.TAKE),
                ("both", own_vs_enemy == BattleResult.BOTH),
                ("lose", own_vs_enemy == BattleResult.LOSE),
                ("taken", self._taken > 0),
            )
        }
        self._value: _F32 = np.array(VALUE[1:], dtype=f32)  # V' by rank index 0..7
        r, c = np.divmod(np.arange(rules.num_squares), rules.cols)
        self._rows: _F32 = r.astype(f32)
        self._cols_of: _F32 = c.astype(f32)
        self._inside: _F32 = np.stack(
            [
                (r + dr >= 0) & (r + dr < rules.rows) & (c + dc >= 0) & (c + dc < rules.cols)
                for dr, dc in DELTAS
            ]
        ).astype(f32)
        # The opponent (player 1 in self's view) left without a legal action: impossible
        # when any face-down square may be revealed and no attack is forbidden.
        self._stuck_possible = rules.reveal != "any" or bool(
            np.any(enemy_vs_own == BattleResult.FORBIDDEN)
        )
        self._stuck_reward = 0.0 if rules.no_moves == "draw" else WIN
        moves = np.zeros((_CODES, _CODES), dtype=np.float64)  # the opponent's x -> y
        for x in range(9, 17):
            for y in range(_CODES):
                moves[x, y] = (int(t.move_bits[NUM_CODES + x]) >> y) & 1
        self._opp_pair: _F32 = (moves + moves.T).astype(f32)
        self._opp_reveal: _F32 = np.array(
            [(int(t.reveal_bits[1]) >> code) & 1 for code in range(_CODES)], dtype=f32
        )

    def __repr__(self) -> str:
        return f"JaxLookahead(make({self.rules!r}))"

    # ------------------------------------------------------------------ traced code

    def _shift(self, x: jax.Array, d: int) -> jax.Array:
        """``x`` (``[N, ...]``) read at each square's neighbour in direction ``d``
        (:func:`jungle_train.jitted._board.neighbour_shift`)."""
        return neighbour_shift(x, d, self._cols)

    def _bit(self, name: str, own_rank: jax.Array, enemy_rank: jax.Array) -> jax.Array:
        """``bool[...]``: the rank relation ``name`` of self's rank index ``own_rank`` and
        the opponent's ``enemy_rank`` (``uint32``, 0..7), read with shifts (no gather)."""
        return rank_bit(self._words[name], own_rank, enemy_rank)

    def _relabelled(self, state: JaxState) -> tuple[jax.Array, jax.Array]:
        """``(rel: int32[N], mask: int32[])``: the board and face-down set with the
        player to move as player 0."""
        flip = state.current_player == 1
        b = state.board.astype(jnp.int32)
        face_up = (b >= 1) & (b <= 16)
        rel = jnp.where(flip & face_up, ((b - 1) ^ 8) + 1, b)
        rel = jnp.where(flip & (b >= HIDDEN_P0) & (b <= HIDDEN_P1), 37 - rel, rel)
        raw = state.face_down_mask.astype(jnp.int32)
        mask = jnp.where(flip, ((raw >> 8) & 0xFF) | ((raw & 0xFF) << 8), raw)
        return rel, mask

    def _values(self, state: JaxState) -> jax.Array:
        """``float32[A]``: the expected ply reward of every action (meaningful for the
        legal ones)."""
        f32 = jnp.float32
        rel, mask = self._relabelled(state)
        onehot = (rel[:, None] == jnp.arange(_CODES, dtype=jnp.int32)).astype(f32)  # [N, 20]
        own, enemy = onehot[:, 1:9], onehot[:, 9:17]  # [N, 8] rank one-hots
        is_own, is_enemy = jnp.sum(own, axis=1), jnp.sum(enemy, axis=1)
        takes, taken = jnp.asarray(self._takes), jnp.asarray(self._taken)

        # Where each face-up piece stands (a code appears at most once): by rank slot.
        rows, cols = jnp.asarray(self._rows), jnp.asarray(self._cols_of)
        own_row, own_col, own_here = _slots(rows, own), _slots(cols, own), jnp.sum(own, axis=0)
        en_row, en_col, en_here = _slots(rows, enemy), _slots(cols, enemy), jnp.sum(enemy, axis=0)
        # Nearest enemies of every square (other than one on it) and the second nearest.
        de = jnp.abs(rows[:, None] - en_row) + jnp.abs(cols[:, None] - en_col)  # [N, 8]
        de = jnp.where((en_here > 0) & (de > 0), de, _FAR)
        d1 = jnp.min(de, axis=1)
        ranks1 = ((de == d1[:, None]) & (d1[:, None] < _FAR)).astype(f32)  # [N, 8]
        de2 = jnp.where(de > d1[:, None], de, _FAR)
        d2 = jnp.min(de2, axis=1)
        ranks2 = ((de2 == d2[:, None]) & (d2[:, None] < _FAR)).astype(f32)
        s1 = jnp.where(d1 < _FAR, 1.0 / (1.0 + d1), 0.0)
        s2 = jnp.where(d2 < _FAR, 1.0 / (1.0 + d2), 0.0)
        can_count = ranks1 @ takes.T  # [N, 8]: nearest enemies own rank x takes
        hit_count = ranks1 @ taken.T  # those that take own rank x
        g = s1[:, None] * (OPP_WEIGHT * (can_count > 0) - THREAT_WEIGHT * (hit_count > 0))
        f = jnp.sum(g * own, axis=1)  # [N]: f_i of self's pieces, 0 elsewhere
        n_can = jnp.sum(can_count * own, axis=1)
        n_hit = jnp.sum(hit_count * own, axis=1)
        n1 = jnp.sum(ranks1, axis=1)
        own_takes, own_taken = own @ takes, own @ taken  # [N, 8] by enemy rank
        can2 = jnp.sum(ranks2 * own_takes, axis=1) > 0
        hit2 = jnp.sum(ranks2 * own_taken, axis=1) > 0
        f2 = s2 * (OPP_WEIGHT * can2 - THREAT_WEIGHT * hit2)

        def without(t_takes: jax.Array, t_hits: jax.Array) -> jax.Array:
            """``f_i`` of the piece on each square once one of its nearest enemies
            (``t_takes``: ``i`` takes it, ``t_hits``: it takes ``i``) is gone."""
            lower = s1 * (OPP_WEIGHT * (n_can - t_takes > 0) - THREAT_WEIGHT * (n_hit - t_hits > 0))
            return jnp.where(n1 > 1, lower, f2)

        # Δremove[t]: the enemy on t removed (each own i that had it among its nearest).
        rest = s1[:, None] * (
            OPP_WEIGHT * (n_can[:, None] - own_takes > 0)
            - THREAT_WEIGHT * (n_hit[:, None] - own_taken > 0)
        )  # [N (i), 8 (the enemy's rank)]
        alt = jnp.where(n1[:, None] > 1, rest, f2[:, None])
        by_rank = jnp.sum(ranks1 * is_own[:, None] * (alt - f[:, None]), axis=0)  # [8]
        d_remove = jnp.sum(enemy * by_rank, axis=1)  # [N]

        # Δadd[t, r]: an enemy of rank r turned up on t (t face down, so no own i on t).
        q1 = OPP_WEIGHT * own_takes - THREAT_WEIGHT * own_taken  # [N, 8]
        c1 = (n_can > 0).astype(f32)[:, None]
        h1 = (n_hit > 0).astype(f32)[:, None]
        q2 = OPP_WEIGHT * (1.0 - c1) * own_takes - THREAT_WEIGHT * (1.0 - h1) * own_taken
        d1_own, s1_own, f_own = _slots(d1, own), _slots(s1, own), _slots(f, own)  # [8]
        c1_own, h1_own = _slots(c1[:, 0], own), _slots(h1[:, 0], own)
        dt = jnp.abs(rows[:, None] - own_row) + jnp.abs(cols[:, None] - own_col)  # [N, 8]
        closer = ((own_here > 0) & (dt < d1_own)).astype(f32)
        level = ((own_here > 0) & (dt == d1_own)).astype(f32) * s1_own
        d_add = (
            (closer / (1.0 + dt)) @ (OPP_WEIGHT * takes - THREAT_WEIGHT * taken)
            - jnp.sum(closer * f_own, axis=1)[:, None]
            + (level * (1.0 - c1_own)) @ (OPP_WEIGHT * takes)
            - (level * (1.0 - h1_own)) @ (THREAT_WEIGHT * taken)
        )  # [N, 8]
        # The same for a single own i whose new enemy stands next to it (distance 1).
        adjacent_add = (d1 > 1)[:, None] * (0.5 * q1 - f[:, None]) + (d1 == 1)[:, None] * (0.5 * q2)

        # Outcome distributions of the face-down codes 17 / 18 / 19 and per square.
        select = jnp.array([0xFFFF, 0xFF, 0xFF00], jnp.int32)
        bits = (((mask & select)[:, None] >> jnp.arange(16, dtype=jnp.int32)) & 1).astype(f32)
        probs = bits / jnp.maximum(jnp.sum(bits, axis=1, keepdims=True), 1.0)  # [3, 16]
        down = onehot[:, 17:20]
        weights = (
            down[:, 0, None] * probs[0] + down[:, 1, None] * probs[1] + down[:, 2, None] * probs[2]
        )  # [N, 16]

        # Game end: pieces left, the draws, the opponent left without a legal action.
        n_own = jax.lax.population_count(mask & 0xFF).astype(f32) + jnp.sum(is_own)
        n_enemy = jax.lax.population_count((mask >> 8) & 0xFF).astype(f32) + jnp.sum(is_enemy)
        ply_draw = jnp.bool_(False)
        if self.rules.ply_limit:
            ply_draw = state.ply + 1 >= self.rules.ply_limit
        quiet_draw = ply_draw
        if self.rules.no_removal_limit:
            quiet_draw = quiet_draw | (state.plies_since_removal + 1 >= self.rules.no_removal_limit)

        def ending(own_left: jax.Array, enemy_left: jax.Array) -> jax.Array:
            """The end-of-game reward of an elimination (it comes before the draws)."""
            return jnp.where(enemy_left == 0, WIN, 0.0) + jnp.where(own_left == 0, LOSS, 0.0)

        stuck = self._stuck_terms(onehot) if self._stuck_possible else None

        def stuck_reward(count: jax.Array, draw: jax.Array) -> jax.Array:
            if stuck is None:
                return jnp.zeros_like(count)
            return jnp.where((count == 0) & ~draw, self._stuck_reward, 0.0)

        # Reveals: own outcome o < 8 adds a piece of self, an enemy outcome a piece of E.
        reveal_change = jnp.concatenate([g, d_add], axis=1)  # [N, 16]
        if stuck is not None:
            lopp, lopp_here, count, _ = stuck
            reveal_change = reveal_change + stuck_reward(
                count + lopp[:, 1:17] - lopp_here[:, None], quiet_draw
            )
        reveals = STEP_COST + jnp.sum(weights * reveal_change, axis=1)

        value = jnp.asarray(self._value)
        mover_rank = ((rel - 1) & 7).astype(jnp.uint32)  # meaningful on self's pieces
        loses_me = LOST * (own @ value)  # -8 V' of the mover
        results = [own @ jnp.asarray(self._result[k]) for k in range(4)]  # [N, 8] by rank
        # Per target square, parts of the expectation over a face-down piece's outcomes.
        w_enemy = weights[:, 8:]
        own_turned = jnp.sum(weights[:, :8] * g, axis=1)  # an own piece turns up
        w_enemy_add = w_enemy * d_add
        results_value = results[0] * value
        results_add = results[2] + results[3]
        results_adjacent = results[2] * adjacent_add
        enemy_value = enemy @ value
        end_take = ending(n_own, n_enemy - 1)
        end_both = ending(n_own - 1, n_enemy - 1)
        end_lose = ending(n_own - 1, n_enemy)
        moves = []
        for d in range(4):
            code_t = self._shift(rel[:, None], d)[:, 0]
            enemy_t = (code_t >= 9) & (code_t <= 16)
            is_down_t = code_t >= HIDDEN
            rank_t = ((code_t - 9) & 7).astype(jnp.uint32)
            take = enemy_t & self._bit("take", mover_rank, rank_t)
            both = enemy_t & self._bit("both", mover_rank, rank_t)
            lose = enemy_t & self._bit("lose", mover_rank, rank_t)
            hit = self._bit("taken", mover_rank, rank_t).astype(f32)
            g_t_mover = jnp.sum(self._shift(g, d) * own, axis=1)  # G[t, rank of the mover]

            # Onto a face-up enemy: the battle result of the mover and it.
            mover_without = jnp.where(enemy_t & (d1 == 1), without(take.astype(f32), hit), f)
            removed_t = self._shift(d_remove, d) - mover_without
            up = (
                jnp.where(
                    take,
                    removed_t + g_t_mover + CAPTURE * self._shift(enemy_value, d) + end_take,
                    0.0,
                )
                + jnp.where(both, removed_t + MUTUAL + end_both, 0.0)
                + jnp.where(lose, loses_me - f + end_lose, 0.0)
            )
            onto_empty = g_t_mover - f

            # Onto a face-down piece: expected over its outcomes (the own ones leave the
            # mover where it is; the enemy ones battle it).
            w_t = self._shift(w_enemy, d)
            down_change = (
                self._shift(own_turned, d)
                + jnp.sum(w_t * results[0], axis=1) * (g_t_mover - f + end_take)
                + CAPTURE * jnp.sum(w_t * results_value, axis=1)
                + jnp.sum(w_t * results[1], axis=1) * (MUTUAL - f + end_both)
                + jnp.sum(w_t * results[2], axis=1) * (loses_me - f + end_lose)
                + jnp.sum(self._shift(w_enemy_add, d) * results_add, axis=1)
                - jnp.sum(w_t * results_adjacent, axis=1)
            )

            if stuck is not None:
                lopp, lopp_here, count, rows = stuck
                lopp_t = self._shift(lopp, d)
                lopp_here_t = self._shift(lopp_here, d)
                e0 = jnp.asarray(self._opp_pair[0])
                # count' - count when sq is left empty and t then holds y (module docstring)
                base = lopp[:, 0] - lopp_here - self._shift(rows[:, 0], d)
                here_t = self._shift(onehot, d)
                base = base + jnp.sum(rows * here_t, axis=1) - lopp_here_t
                c_take = base + own @ e0[1:9] - jnp.sum(rows[:, 1:9] * own, axis=1)
                c_take = c_take + jnp.sum(lopp_t[:, 1:9] * own, axis=1)
                c_both = base + e0[0] - rows[:, 0] + lopp_t[:, 0]
                c_lose = lopp[:, 0] - lopp_here  # t keeps its piece
                c_lose_y = base[:, None] + e0[None, 1:17] - rows[:, 1:17] + lopp_t[:, 1:17]
                c_keep = lopp_t[:, 1:17] - lopp_here_t[:, None]  # sq keeps the mover
                gone_take = ply_draw | (n_enemy == 1)
                gone_both = ply_draw | (n_own == 1) | (n_enemy == 1)
                gone_lose = ply_draw | (n_own == 1)
                up = up + (
                    jnp.where(take, stuck_reward(count + c_take, gone_take), 0.0)
                    + jnp.where(both, stuck_reward(count + c_both, gone_both), 0.0)
                    + jnp.where(lose, stuck_reward(count + c_lose, gone_lose), 0.0)
                )
                onto_empty = onto_empty + stuck_reward(count + c_take, quiet_draw)
                keep = stuck_reward(count + c_keep, quiet_draw)
                stuck_change = jnp.concatenate(
                    [
                        keep[:, :8],
                        results[0] * stuck_reward(count + c_take, gone_take)[:, None]
                        + results[1] * stuck_reward(count + c_both, gone_both)[:, None]
                        + results[2] * stuck_reward(count + c_lose_y[:, 8:], gone_lose)
                        + results[3] * keep[:, 8:],
                    ],
                    axis=1,
                )

                down_change = down_change + jnp.sum(self._shift(weights, d) * stuck_change, axis=1)
            moves.append(
                STEP_COST
                + jnp.where(is_down_t, down_change, jnp.where(code_t == 0, onto_empty, up))
            )
        out = jnp.concatenate([reveals, jnp.stack(moves, axis=1).reshape(-1)])
        return out.astype(f32)

    def _stuck_terms(self, onehot: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
        """``(L: [N, 20], L here: [N], count: [], E rows: [N, 20])`` of the opponent's
        legal actions: ``count`` of them now, and ``L_s(x)``, the terms a square holding
        ``x`` contributes (its reveal and the moves to and from its neighbours)."""
        pair = jnp.asarray(self._opp_pair)
        reveal = jnp.asarray(self._opp_reveal)
        rows = onehot @ pair  # [N, 20]: E(b[s], .)
        lopp = jnp.broadcast_to(reveal, rows.shape)
        for d in range(4):
            lopp = lopp + self._shift(rows, d) * jnp.asarray(self._inside[d])[:, None]
        here = jnp.sum(lopp * onehot, axis=1)
        count = 0.5 * jnp.sum(here + onehot @ reveal)
        return lopp, here, count, rows

    # ------------------------------------------------------------------ public API

    def action_values(self, state: JaxState) -> jax.Array:
        """``float32[A]``: the pure ``expected_ply_reward(state, a)`` of every legal
        action ``a`` (the Q-learners' reward of the ply, for the player to move, in
        expectation over its chance outcomes), and ``-inf`` for the illegal ones. One
        game; ``jax.vmap`` for a batch.

        >>> from jungle_core import DARK, new_game
        >>> from jungle_core.jax_env import make
        >>> env = make(DARK)
        >>> values = jax.jit(JaxLookahead(env).action_values)(env.from_state(new_game()))
        >>> round(float(values[0]), 4), float(values[56])   # reveal a1; a1 north: illegal
        (-0.1, -inf)
        """
        values = self._values(state)
        return jnp.where(state.legal_action_mask, values, -jnp.inf).astype(jnp.float32)

    def act(self, state: JaxState, seed_word: jax.Array) -> jax.Array:
        """``int32[]``: the legal action of the best :meth:`action_values`, actions within
        ``1e-3`` of the best tied and one of them picked by
        :func:`jungle_train.jitted.best_action` from ``seed_word`` (``uint32[]``, e.g.
        one of ``jax.random.bits(key, (B,), jnp.uint32)``). With no legal action: 0.

        >>> from jungle_core import DARK, from_fen
        >>> from jungle_core.jax_env import make
        >>> env = make(DARK)
        >>> s = env.from_state(from_fen("e7/8/8/8/8/8/Ew6 0 0 0 - -"))
        >>> int(jax.jit(JaxLookahead(env).act)(s, jnp.uint32(3)))   # a1xb1
        59
        """
        return best_action(self.action_values(state), jnp.asarray(seed_word, jnp.uint32))
