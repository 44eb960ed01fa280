"""Rule sets: one :class:`Rules` type, whose values are the DARK and CLASSIC families.

A rule set is a plain frozen value. Everything the move generator needs that follows from
it (board geometry, terrain, neighbour tables) is computed once per rule set and cached,
so the hot path never re-derives it.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from jungle_core._errors import JungleError

__all__ = ["CLASSIC", "DARK", "DARK_STRICT", "Rules"]

Variant = Literal["dark", "classic"]
Reveal = Literal["any", "own"]
WeakerAttack = Literal["attacker_removed", "forbidden"]
EqualRank = Literal["both_removed", "forbidden", "attacker_wins"]
Setup = Literal["mixed_rows", "home_rows", "scattered", "classic"]
NoMoves = Literal["loses", "draw"]
Repetition = Literal["none", "ban_third"]

_CHOICES: dict[str, tuple[object, ...]] = {
    "variant": ("dark", "classic"),
    "reveal": ("any", "own"),
    "weaker_attack": ("attacker_removed", "forbidden"),
    "equal_rank": ("both_removed", "forbidden", "attacker_wins"),
    "setup": ("mixed_rows", "home_rows", "scattered", "classic"),
    "no_moves": ("loses", "draw"),
    "repetition": ("none", "ban_third"),
}


def _one_of(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    allowed = _CHOICES[attribute.name]
    if type(value) is not str or value not in allowed:
        raise JungleError(f"Rules.{attribute.name} must be one of {allowed!r}, not {value!r}")


# Counts are stored in the JAX core's int32 fields, so they stay below 2**31.
_INT_LIMIT = 2**31


def _non_negative(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if type(value) is not int or not 0 <= value < _INT_LIMIT:
        raise JungleError(
            f"Rules.{attribute.name} must be an int in 0..{_INT_LIMIT - 1}, not {value!r}"
        )


def _flag(instance: object, attribute: attrs.Attribute[bool], value: bool) -> None:
    if type(value) is not bool:
        raise JungleError(f"Rules.{attribute.name} must be True or False, not {value!r}")


def _label(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if type(value) is not str or not value.strip() or len(value) > 200:
        raise JungleError(f"Rules.{attribute.name} must be a short non-empty text, not {value!r}")


@attrs.frozen(cache_hash=True)
class Rules:
    """A rule set: the board, the set-up and every rule option (docs/rules.md).

    Build variations of the presets with :func:`attrs.evolve`; ``name`` is a label for
    reports and does not change the rules.

    >>> DARK.rows, DARK.cols, DARK.num_actions
    (7, 8, 280)
    >>> CLASSIC.rows, CLASSIC.cols, CLASSIC.num_actions
    (9, 7, 315)
    >>> attrs.evolve(DARK, equal_rank="attacker_wins").equal_rank
    'attacker_wins'

    Fields:

    - ``variant``: ``"dark"`` (face-down flip game) or ``"classic"`` (dens, traps, rivers).
    - ``rows``, ``cols``: board size; a square is ``row * cols + col``.
    - ``reveal``: ``"any"`` face-down piece may be revealed, or only one's ``"own"``
      (which needs known owners, i.e. ``setup="home_rows"``).
    - ``attack_face_down``: whether a face-up piece may move onto a face-down one.
    - ``weaker_attack``: a weaker piece attacking is ``"attacker_removed"`` or ``"forbidden"``.
    - ``equal_rank``: equal ranks are ``"both_removed"``, the attack is ``"forbidden"``,
      or the ``"attacker_wins"``.
    - ``setup``: ``"mixed_rows"``, ``"home_rows"``, ``"scattered"`` (DARK) or ``"classic"``.
    - ``no_removal_limit``: draw after this many plies in a row without a removal (0: never).
    - ``ply_limit``: draw after this many plies in all (0: never).
    - ``no_moves``: a player to move with no legal action ``"loses"`` or it is a ``"draw"``.
    - ``repetition``: ``"none"``, or ``"ban_third"``: a move that would make the same
      position stand for the third time is illegal (CLASSIC).
    """

    name: str = attrs.field(default="DARK", validator=_label)
    variant: Variant = attrs.field(default="dark", validator=_one_of)
    rows: int = attrs.field(default=7, validator=_non_negative)
    cols: int = attrs.field(default=8, validator=_non_negative)
    reveal: Reveal = attrs.field(default="any", validator=_one_of)
    attack_face_down: bool = attrs.field(default=True, validator=_flag)
    weaker_attack: WeakerAttack = attrs.field(default="attacker_removed", validator=_one_of)
    equal_rank: EqualRank = attrs.field(default="both_removed", validator=_one_of)
    setup: Setup = attrs.field(default="mixed_rows", validator=_one_of)
    no_removal_limit: int = attrs.field(default=100, validator=_non_negative)
    ply_limit: int = attrs.field(default=0, validator=_non_negative)
    no_moves: NoMoves = attrs.field(default="loses", validator=_one_of)
    repetition: Repetition = attrs.field(default="none", validator=_one_of)

    def __attrs_post_init__(self) -> None:
        if self.variant == "classic":
            if (self.rows, self.cols) != (9, 7) or self.setup != "classic":
                raise JungleError("CLASSIC rules need a 9x7 board and setup='classic'")
            if (self.equal_rank, self.weaker_attack) != ("attacker_wins", "forbidden"):
                raise JungleError(
                    "CLASSIC captures are fixed by its rules (equal ranks take each other, a "
                    "weaker piece cannot attack): keep equal_rank='attacker_wins' and "
                    "weaker_attack='forbidden'"
                )
        else:
            if (self.rows, self.cols) != (7, 8):
                raise JungleError(f"DARK rules need a 7x8 board, not {self.rows}x{self.cols}")
            if self.setup == "classic":
                raise JungleError("setup='classic' belongs to variant='classic'")
            if self.reveal == "own" and self.setup != "home_rows":
                raise JungleError(
                    "reveal='own' needs owners known from the start (setup='home_rows')"
                )
            if self.repetition != "none":
                raise JungleError("repetition is a CLASSIC option")

    @property
    def num_squares(self) -> int:
        """Number of squares, ``rows * cols``."""
        return self.rows * self.cols

    @property
    def num_actions(self) -> int:
        """Size of the action space: one reveal per square, then four moves per square."""
        return self.rows * self.cols * 5

    @property
    def is_dark(self) -> bool:
        """True for the face-down (DARK) family."""
        return self.variant == "dark"


DARK = Rules()
"""The library's default: the 7x8 flip game, every piece starting face down."""

DARK_STRICT = Rules(
    name="DARK_STRICT",
    setup="home_rows",
    reveal="own",
    attack_face_down=False,
    weaker_attack="forbidden",
    equal_rank="forbidden",
)
"""The DARK rules exactly as the AlphaDou report words them (very drawish)."""

CLASSIC = Rules(
    name="CLASSIC",
    variant="classic",
    rows=9,
    cols=7,
    setup="classic",
    equal_rank="attacker_wins",
    weaker_attack="forbidden",
    attack_face_down=False,
    no_removal_limit=0,
    ply_limit=300,
)
"""The traditional 9x7 game: dens, traps, rivers; draw after 300 plies."""
