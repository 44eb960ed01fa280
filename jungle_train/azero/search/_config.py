"""The settings of the AlphaZero search (:class:`SearchConfig`), which
:func:`jungle_train.azero.search._search.make_search` builds a search from: simulations and
depth, root noise, the prior's mix, what a chance node is first worth, the chance order,
PUCT's constant, the price of a draw and the draw bounds, and the implementation
switches (slots, compact nodes, batching, key). Each field's docstring says what it does;
the strongest setting is in docs/results.md.
"""

from __future__ import annotations

import dataclasses

from jungle_core import Rules

__all__ = ["CHANCE_JITTER", "CHANCE_ORDERS", "SearchConfig", "stratified_order"]


CHANCE_JITTER = 0.01
"""``chance_order="shuffled"`` / ``"stratified"``: the most added to a chance logit
(under 1 % of an outcome's probability), enough to break the ties among equally likely
outcomes."""

CHANCE_ORDERS = ("index", "shuffled", "stratified")
"""The values of :attr:`SearchConfig.chance_order`."""

# "stratified": the ranks in the order they are first searched, a van der Corput
# sequence over the eight ranks (the bits of rank - 1 reversed), started at the Leopard
# so that every prefix of 1, 2, 4 and 8 ranks has a mean rank near the whole set's 4.5
# (5; 3, 4, 4.5) and no prefix of two or more is all weak or all strong pieces
_STRATIFIED_RANKS = (5, 1, 7, 3, 6, 2, 8, 4)


def stratified_order(mover: int) -> tuple[int, ...]:
    """``chance_order="stratified"``: the 16 outcome indices (``owner * 8 + rank - 1``)
    in the order a chance node searches them when ``mover`` played its action: the
    ranks of :data:`_STRATIFIED_RANKS` in turn, each first as the mover's opponent's
    piece, then as its own. Any prefix of even length holds as many pieces of either
    side, of the same ranks, the same for both players (mctx's index order searches
    player 0's eight pieces before any of player 1's).

    >>> stratified_order(0)[:4], stratified_order(1)[:4]
    ((12, 4, 8, 0), (4, 12, 0, 8))
    """
    opponent = 1 - mover
    return tuple(owner * 8 + rank - 1 for rank in _STRATIFIED_RANKS for owner in (opponent, mover))


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """The knobs of one search (DARK's Stochastic MuZero or CLASSIC's Gumbel MuZero)."""

    simulations: int = 32
    """Simulations per search (each expands one node; in DARK a decision and its chance
    outcome are two nodes, so a line of ``k`` decisions costs ``2k`` expansions)."""
    max_depth: int = 0
    """Deepest line searched, in decisions (0: only ``simulations`` bounds it)."""
    dirichlet_fraction: float = 0.0
    """DARK: share of Dirichlet noise mixed into the root prior (self-play: 0.25)."""
    dirichlet_alpha: float = 0.3
    """DARK: the Dirichlet noise's concentration."""
    temperature: float = 0.0
    """DARK: the action is drawn ∝ visits^(1/temperature); 0 plays the most visited."""
    pb_c_init: float = 1.25
    """DARK: PUCT's c1."""
    gumbel_scale: float = 0.0
    """CLASSIC: scale of the Gumbel noise at the root (self-play: 1.0; play: 0)."""
    max_considered: int = 16
    """CLASSIC: actions considered at the root by sequential halving."""
    afterstate: str = "head"
    """DARK: what a chance node is worth before any of its outcomes is searched:
    ``"head"``, the evaluator's afterstate value of the action; ``"parent"``, the value
    of the position the action is played in (no opinion on the action: a capture then
    shows its worth one expansion later, when its outcome is searched, and a poorly
    trained afterstate head cannot bury it); ``"expected"``, the position's value plus
    the expected change of the mover's material balance over the action's outcomes
    (:func:`jungle_train.azero._hand_value.expected_gain`: a capture's gain, a bump into a
    face-down piece averaged over the pieces it may be), so that an action's first
    visit already says what it wins or risks at once, not the parent's value again."""
    prior_mix: float = 0.0
    """Share of the uniform distribution over the legal actions mixed into every node's
    prior (root and interior). PUCT scores an unvisited action by its prior alone
    (mctx completes its Q by the minimum), so an action the network gives ~0 is never
    searched however good it is; a floor keeps captures the self-play games rarely
    offered within reach."""

    chance_order: str = "index"
    """DARK: the order in which a chance node's outcomes are first searched. mctx picks
    the outcome of largest ``probability / (visits + 1)``, ties to the lowest index, so
    under ``"index"`` (mctx's own) the equally likely pieces a reveal may turn up are
    searched in the order of their identities: a chance node with ``k`` < 16 visits has
    seen only player 0's ``k`` lowest ranks, and its value is theirs. ``"shuffled"``
    jitters each node's chance logits by less than :data:`CHANCE_JITTER` (drawn with
    the expansion's key), so the first ``k`` outcomes searched are a random sample of
    the possible ones and the visit counts stay within one of the probabilities.
    ``"stratified"`` jitters them by fixed amounts under :data:`CHANCE_JITTER` so that
    the outcomes come in :func:`stratified_order` (no randomness): the first ``k``
    searched are a spread of ranks, alternately the opponent's and the mover's, the
    same for both seats."""

    dead_draw: float = 0.0
    """DARK: a draw is worth ``-dead_draw`` to the root's mover (``+dead_draw`` to the
    other, still zero-sum), and so is every evaluated position in which neither side's
    material can still win (:func:`jungle_train.azero._hand_value.winning_material`: a dead
    draw, such as one Elephant against one), whatever its evaluation says;
    nothing is charged for the no-removal clock, so the search plays as before until a
    dead draw comes within its reach, and then keeps the game alive where it can. 0: off."""
    draw_bounds: bool = False
    """DARK: each side's material bounds its value (the one-sided form of
    :attr:`dead_draw`): in every evaluated position where the player to move's material
    can no longer win (:func:`jungle_train.azero._hand_value.winning_material`, which stays
    false once false: pieces only leave the game), its value (and each afterstate's) is
    at most a draw's, and where the opponent's can no longer win, at least a draw's; a
    draw's value is :attr:`dead_draw`'s (``-dead_draw`` for the root's mover, 0 without
    it). Where neither side can win that is the dead draw's value. A material lead that
    cannot become a win (an enemy Lion none of the side's pieces can remove) then counts
    for nothing, and trading into one is seen as giving the win away. False: off."""

    slots: bool = False
    """The tree's action axis holds each node's legal actions, ascending, in
    :data:`~jungle_train.azero.search._slots.DARK_SLOTS`
    (:data:`~jungle_train.azero.search._slots.CLASSIC_SLOTS`) slots (an unused slot is an
    illegal action), instead of all 280 (315) actions of the rules. The same search (the slots
    keep the actions' order, so mctx's ties still go to the lowest action), on rows of
    56 entries (DARK: 40 slots and the 16 chance outcomes) instead of 296: mctx reads
    and writes these rows at every level of every simulation, and they are most of a
    one-game search's time on a CPU. The output's ``action`` and ``action_weights``
    are the rules' actions either way; ``search_tree`` is in slots (the root's
    ``DecisionNode.slots`` maps them back, as the trainer's completed-Q target does:
    :func:`jungle_train.azero.completed_q_policy`). With Dirichlet noise at the root
    (self-play), the noise is drawn over the slots, not over all actions: more of its
    mass falls on the legal actions, so that search is not the same as the full one."""
    compact: bool = True
    """Store the tree's positions as :class:`~jungle_train.azero.search._slots.PackedState`
    (and, with ``afterstate="parent"``, one value a node): the same search, in less time on a CPU.
    False keeps them as they are (the reference of ``experiments/azero_speed.py``)."""
    rng: str = "auto"
    """The key mctx draws with: ``"rbg"`` (:func:`~jungle_train.azero.search._mctx_fast.search_key`:
    mctx's per-level tie-break noise is cheaper with it, 1.10 s → 0.53 s for a one-game
    search of 1,024 simulations on a CPU), ``"threefry"`` (the caller's key as it is) or
    ``"auto"``: ``rbg`` except for a search with root noise off the CPU, where JAX draws
    the Dirichlet noise's Gamma variates one after another with any key but a
    ``threefry`` one (one H200, 1,024 games at 64 simulations: 4.4 s a search against
    0.09 s; experiments/readme-azero.md)."""
    batching: str = "auto"
    """How a batch of ``B > 1`` positions is searched: ``"vectorized"`` (one mctx search
    over the batch, what a GPU wants), ``"sequential"`` (``lax.map`` over the games,
    one mctx search of batch 1 each, game ``i`` with ``jax.random.split(key, B)[i]``),
    or ``"auto"``: sequential when JAX's default backend is the CPU. On this CPU one
    game at a time stays faster: 16 DARK games in slots at 256 simulations took 0.75 s
    vectorized and 0.32–0.39 s sequential with a batched backward pass (1.34 s
    vectorized with mctx's own, which the search now uses; ``experiments/azero_speed.py``).
    A batch of one is always searched as it is."""

    def __post_init__(self) -> None:
        checks = [
            (self.simulations >= 1, "simulations must be >= 1"),
            (self.max_depth >= 0, "max_depth must be >= 0"),
            (0.0 <= self.dirichlet_fraction <= 1.0, "dirichlet_fraction must be in [0, 1]"),
            (self.dirichlet_alpha > 0.0, "dirichlet_alpha must be > 0"),
            (self.temperature >= 0.0, "temperature must be >= 0"),
            (self.pb_c_init > 0.0, "pb_c_init must be > 0"),
            (self.gumbel_scale >= 0.0, "gumbel_scale must be >= 0"),
            (self.max_considered >= 1, "max_considered must be >= 1"),
            (0.0 <= self.prior_mix <= 1.0, "prior_mix must be in [0, 1]"),
            (0.0 <= self.dead_draw < 1.0, "dead_draw must be in [0, 1)"),
            (
                self.afterstate in ("head", "parent", "expected"),
                "afterstate must be head|parent|expected",
            ),
            (self.rng in ("auto", "rbg", "threefry"), "rng must be auto|rbg|threefry"),
            (
                self.chance_order in CHANCE_ORDERS,
                f"chance_order must be {'|'.join(CHANCE_ORDERS)}",
            ),
            (
                self.batching in ("auto", "vectorized", "sequential"),
                "batching must be auto|vectorized|sequential",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"search config: {message}")

    def dark_only(self) -> tuple[str, ...]:
        """The knobs set here that only DARK's search has (CLASSIC's Gumbel MuZero
        has no chance nodes, no-removal clock or material test for them to act on).

        >>> SearchConfig(dead_draw=0.1, draw_bounds=True).dark_only()
        ('dead_draw', 'draw_bounds')
        """
        knobs = (
            ("dead_draw", self.dead_draw),
            ("draw_bounds", self.draw_bounds),
        )
        return tuple(name for name, value in knobs if value)

    def check_rules(self, rules: Rules) -> None:
        """Raise ``ValueError`` naming the first of :meth:`dark_only`'s knobs set for
        ``rules`` other than DARK.

        >>> from jungle_core import CLASSIC
        >>> SearchConfig(dead_draw=0.1).check_rules(CLASSIC)
        Traceback (most recent call last):
        ...
        ValueError: search config: dead_draw is for DARK rules, not CLASSIC
        """
        knobs = self.dark_only()
        if knobs and not rules.is_dark:
            raise ValueError(f"search config: {knobs[0]} is for DARK rules, not {rules.name}")
