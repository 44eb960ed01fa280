"""The DARK evaluation of the Minimax agent (docs/agents.md), with an incremental form.

The evaluation of a state for player ``r`` ("self") is::

    count    * (|self pieces| - |opp pieces|)          face-down pieces included
  + rank     * (sum of self's revealed ranks - sum of opp's revealed ranks)
  + own_face_down * |self face down| - opp_face_down * |opp face down|
  + sum over adjacent pairs (self revealed p, opp revealed q) of
        take * [p can take q] - taken * [q can take p]

with the default weights ``count=1, rank=10, own_face_down=5, opp_face_down=10, take=20,
taken=15``. "Can take" is the rule set's own battle table (under the DARK defaults the
base rule: higher rank takes, the Rat takes the Elephant, the Elephant never the Rat;
equal ranks count under ``equal_rank="attacker_wins"``).

Every term is a sum over single squares (``piece[code]``), over the face-down set
(``face_down_value(mask)``) or over adjacent square pairs (``pair[c1 * NUM_CODES + c2]``), so a
ply that changes two squares changes the value by a local sum: the search evaluates the
children of its frontier nodes from the parent's value without building them.
"""

from __future__ import annotations

import attrs

from jungle_agents._pairs import pair_table
from jungle_core import Rules, State
from jungle_core.lowlevel import HIDDEN, NUM_CODES, tables

__all__ = ["DarkEvaluator", "DarkWeights"]


@attrs.frozen
class DarkWeights:
    """The weights of the DARK Minimax evaluation (defaults as in docs/agents.md).

    >>> DarkWeights().rank, DarkWeights(rank=5.0).rank
    (10.0, 5.0)
    """

    count: float = attrs.field(default=1.0, metadata={"help": "piece count difference"})
    """Per piece (face up or down) of self, minus per piece of the opponent."""
    rank: float = attrs.field(default=10.0, metadata={"help": "revealed rank sum difference"})
    """Per rank point of self's revealed pieces, minus the opponent's."""
    own_face_down: float = attrs.field(default=5.0, metadata={"help": "own face-down pieces"})
    """Per face-down piece of self."""
    opp_face_down: float = attrs.field(
        default=10.0, metadata={"help": "opponent's face-down pieces (subtracted)"}
    )
    """Subtracted per face-down piece of the opponent."""
    take: float = attrs.field(default=20.0, metadata={"help": "adjacent pair where self can take"})
    """Per adjacent (self p, opp q) pair where p can take q."""
    taken: float = attrs.field(
        default=15.0, metadata={"help": "adjacent pair where self can be taken"}
    )
    """Subtracted per adjacent (self p, opp q) pair where q can take p."""

    def max_ply_change(self) -> float:
        """An upper bound on how much one ply can change the evaluation (for Star1).

        A ply changes at most two squares and the face-down set by one piece; each square
        takes part in at most four adjacent pairs and a removal takes at most two pieces.

        >>> DarkWeights().max_ply_change() > 0
        True
        """
        pair = max(abs(self.take), abs(self.taken))
        piece = abs(self.count) + 8 * abs(self.rank)
        face_down = abs(self.count) + max(abs(self.own_face_down), abs(self.opp_face_down))
        # before and after: two squares' pieces, their pairs (<= 7 distinct pairs each time)
        return 2 * (2 * piece + 7 * pair) + face_down


class DarkEvaluator:
    """The DARK evaluation for one rule set, one player ("self") and one set of weights.

    ``piece[code]`` (codes 0 .. NUM_CODES - 1) and ``pair[c1 * NUM_CODES + c2]`` are the
    single-square and adjacent-pair terms; ``face_down_value(mask)`` the face-down term.

    >>> from jungle_core import DARK, from_fen
    >>> ev = DarkEvaluator(DARK, 0)
    >>> ev.evaluate(from_fen("8/8/8/8/8/8/Ee6 0 0 0 - -"))  # E takes e? no: equal ranks
    0.0
    >>> ev.evaluate(from_fen("8/8/8/8/8/8/Ew6 0 0 0 - -"))  # 10*(8-4) + 20 (E can take w)
    60.0
    """

    def __init__(self, rules: Rules, player: int, weights: DarkWeights | None = None) -> None:
        w = weights or DarkWeights()
        self.rules = rules
        self.player = player
        self.weights = w
        t = tables(rules)
        self.step = t.step
        self._effect = t.dark_effect
        self.neighbours: tuple[tuple[int, ...], ...] = tuple(
            tuple(nb for _, nb in pairs) for pairs in t.neighbours
        )
        # right and up neighbours: each adjacent pair once
        self.forward: tuple[tuple[int, ...], ...] = tuple(
            tuple(nb for d, nb in pairs if d in (1, 3)) for pairs in t.neighbours
        )
        piece = [0.0] * NUM_CODES
        for code in range(1, HIDDEN):  # the face-up codes
            owner, rank = (code - 1) >> 3, ((code - 1) & 7) + 1
            sign = 1.0 if owner == player else -1.0
            piece[code] = sign * (w.count + w.rank * rank)
        self.piece: tuple[float, ...] = tuple(piece)
        self.pair = pair_table(rules, player, w.take, w.taken)
        self._own_shift = player * 8
        self._opp_shift = (1 - player) * 8
        self._fd_cache: dict[int, float] = {}
        self._reveal_cache: dict[int, float] = {}
        self._pair_mean_cache: dict[int, float] = {}
        # the change of the face-down term when outcome o (= code - 1) leaves the set
        self.face_down_change_on_reveal: tuple[float, ...] = tuple(
            -(w.count + w.own_face_down) if o >> 3 == player else w.count + w.opp_face_down
            for o in range(16)
        )

    def max_ply_change(self) -> float:
        """An upper bound on how much one ply can change the evaluation (for Star1)."""
        return self.weights.max_ply_change()

    def face_down_value(self, mask: int) -> float:
        """The face-down terms (count and face-down weights) of a face-down mask.

        >>> from jungle_core import DARK
        >>> DarkEvaluator(DARK, 0).face_down_value(0xFFFF)   # 8*(1+5) - 8*(1+10)
        -40.0
        """
        value = self._fd_cache.get(mask)
        if value is None:
            w = self.weights
            own = ((mask >> self._own_shift) & 0xFF).bit_count()
            opp = ((mask >> self._opp_shift) & 0xFF).bit_count()
            value = own * (w.count + w.own_face_down) - opp * (w.count + w.opp_face_down)
            self._fd_cache[mask] = value
        return value

    def isolated_reveal_delta(self, mask: int) -> float:
        """The expected change of the value when a face-down piece with no face-up
        neighbour is turned up, its piece drawn uniformly from ``mask`` (non-zero).

        >>> from jungle_core import DARK
        >>> DarkEvaluator(DARK, 0).isolated_reveal_delta(0xFFFF)   # (-6*8 + 11*8) / 16
        2.5
        """
        value = self._reveal_cache.get(mask)
        if value is None:
            total = 0.0
            count = 0
            for o in range(16):
                if mask >> o & 1:
                    total += self.piece[o + 1] + self.face_down_change_on_reveal[o]
                    count += 1
            value = self._reveal_cache[mask] = total / count
        return value

    def pair_mean(self, mask: int, code: int) -> float:
        """The mean pair term of a piece drawn uniformly from ``mask`` next to ``code``."""
        key = mask * 32 + code
        value = self._pair_mean_cache.get(key)
        if value is None:
            total = 0.0
            count = 0
            for o in range(16):
                if mask >> o & 1:
                    total += self.pair[(o + 1) * NUM_CODES + code]
                    count += 1
            value = self._pair_mean_cache[key] = total / count
        return value

    def evaluate(self, state: State) -> float:
        """The evaluation of ``state`` for this evaluator's player (terminal or not)."""
        board = state.board
        piece = self.piece
        pair = self.pair
        forward = self.forward
        value = self.face_down_value(state.face_down_mask)
        for sq, c in enumerate(board):
            if 0 < c < HIDDEN:
                value += piece[c]
                row = c * NUM_CODES
                for nb in forward[sq]:
                    value += pair[row + board[nb]]
        return value

    def child_change(
        self, board: tuple[int, ...], me: int, action: int, o: int
    ) -> tuple[tuple[tuple[int, int], ...], float]:
        """The squares a DARK action changes, as ``(square, new code)`` pairs, and the
        change of the value, for the player ``me`` to move and chance outcome ``o``
        (-1: none), from the core's table of a DARK move's effect."""
        n = len(board)
        piece = self.piece
        if action < n:
            changes: tuple[tuple[int, int], ...] = ((action, o + 1),)
        else:
            sq, d = divmod(action - n, 4)
            t = self.step[sq * 4 + d]
            p = board[sq]
            q = board[t]
            if q >= HIDDEN:
                q = o + 1
            # the core's statement of a DARK move's effect on the two squares
            left, landed, _ = self._effect[p * NUM_CODES + q]
            # (a piece of the mover's own turned up: the mover stays, only t changes)
            changes = ((t, landed),) if left else ((sq, left), (t, landed))
        after = dict(changes)
        pair = self.pair
        nbrs = self.neighbours
        delta = self.face_down_change_on_reveal[o] if o >= 0 else 0.0
        for view_after in (False, True):
            sign = 1.0 if view_after else -1.0
            local = 0.0
            for x, new in changes:
                cx = new if view_after else board[x]
                local += piece[cx]
                row = cx * NUM_CODES
                for nb in nbrs[x]:
                    if nb in after:
                        if nb < x:
                            continue  # a pair of two changed squares, counted once
                        cn = after[nb] if view_after else board[nb]
                    else:
                        cn = board[nb]
                    local += pair[row + cn]
            delta += sign * local
        return changes, delta
