"""jungle_core: the rules of Jungle (Dou Shou Qi) as immutable values and pure functions.

Two rule families are values of one :class:`Rules` type: ``DARK`` (the default, a 7x8
flip game where every piece starts face down) and ``CLASSIC`` (the traditional 9x7
game with dens, traps and rivers).

>>> import numpy as np
>>> from jungle_core import new_game, legal_actions, step, outcome, action_to_str
>>> s = new_game(seed=0)
>>> rng = np.random.default_rng(0)
>>> s = step(s, legal_actions(s)[0], rng)
>>> s.ply, outcome(s) is None
(1, True)
"""

from jungle_core._errors import (
    GameOverError,
    IllegalActionError,
    InvalidPositionError,
    JungleError,
    NotationError,
)
from jungle_core._extras import (
    DISTRIBUTION,
    EXTRA_OF,
    INSTALLS_TOO,
    MissingExtraError,
    import_optional,
)
from jungle_core._files import atomic_write
from jungle_core._game import (
    chance_outcomes,
    is_chance_action,
    legal_action_mask,
    legal_actions,
    new_game,
    outcome,
    perft,
    returns,
    score,
    step,
    step_outcome,
    transitions,
)
from jungle_core._interchange import (
    apply_move,
    from_interchange_fen,
    move_text,
    outcome_letter,
    parse_move,
    to_interchange_fen,
)
from jungle_core._notation import (
    action_to_str,
    describe_action,
    from_fen,
    parse_action,
    parse_square,
    render,
    square_name,
    to_fen,
    validate,
)
from jungle_core._rules import CLASSIC, DARK, DARK_STRICT, Rules
from jungle_core._state import (
    EMPTY,
    HIDDEN,
    HIDDEN_OWNED,
    RANK_LETTERS,
    RANK_NAMES,
    Outcome,
    Reason,
    State,
    piece_code,
    piece_owner,
    piece_rank,
)
from jungle_core._tables import can_take
from jungle_core._tensors import features, observation, observation_shape

__version__ = "0.2.0"

__all__ = [
    "CLASSIC",
    "DARK",
    "DARK_STRICT",
    "DISTRIBUTION",
    "EMPTY",
    "EXTRA_OF",
    "HIDDEN",
    "HIDDEN_OWNED",
    "INSTALLS_TOO",
    "RANK_LETTERS",
    "RANK_NAMES",
    "GameOverError",
    "IllegalActionError",
    "InvalidPositionError",
    "JungleError",
    "MissingExtraError",
    "NotationError",
    "Outcome",
    "Reason",
    "Rules",
    "State",
    "__version__",
    "action_to_str",
    "apply_move",
    "atomic_write",
    "can_take",
    "chance_outcomes",
    "describe_action",
    "features",
    "from_fen",
    "from_interchange_fen",
    "import_optional",
    "is_chance_action",
    "legal_action_mask",
    "legal_actions",
    "move_text",
    "new_game",
    "observation",
    "observation_shape",
    "outcome",
    "outcome_letter",
    "parse_action",
    "parse_move",
    "parse_square",
    "perft",
    "piece_code",
    "piece_owner",
    "piece_rank",
    "render",
    "returns",
    "rules_by_name",
    "score",
    "square_name",
    "step",
    "step_outcome",
    "to_fen",
    "to_interchange_fen",
    "transitions",
    "validate",
]


def rules_by_name(name: str) -> Rules:
    """A preset rule set by its (case-insensitive) name.

    >>> rules_by_name("classic") is CLASSIC
    True
    """
    presets = {"dark": DARK, "dark_strict": DARK_STRICT, "classic": CLASSIC}
    if not isinstance(name, str):
        raise TypeError(f"a rule set name is a str, not {type(name).__name__}")
    try:
        return presets[name.strip().lower().replace("-", "_")]
    except KeyError:
        raise JungleError(f"unknown rule set {name!r}; choose one of {sorted(presets)}") from None
