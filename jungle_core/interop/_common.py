"""Framework-free pieces the adapters share: rule-set lookup, per-player observations, bounds."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from jungle_core import Rules, State, observation, rules_by_name

__all__ = [
    "max_chance_nodes",
    "max_game_length",
    "observation_for",
    "resolve_rules",
]

_PIECES = 16


def resolve_rules(rules: Rules | str) -> Rules:
    """A :class:`Rules` value, or a preset looked up by name (``"dark"``, ``"classic"``, ...).

    >>> resolve_rules("classic").name
    'CLASSIC'
    """
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        return rules_by_name(rules)
    raise TypeError(f"rules must be a Rules value or a preset name, not {rules!r}")


def max_game_length(rules: Rules) -> int:
    """An upper bound on the number of decisions (plies) in a game; chance events not counted.

    Under a no-removal limit ``L`` a game has at most ``15 * L`` plies: every removal takes
    at least one of the 16 pieces, so at most 14 removals leave both sides a piece and the
    15th ends the game; between two removals (and before the first, and after the last)
    at most ``L - 1`` plies pass without one, the ``L``-th such ply ending the game in a
    draw. Counting ``R`` removals, a game lasts at most ``R + (R + 1)(L - 1) + 1`` plies,
    which is ``15 * L`` for ``R = 14`` (ending by the limit) and for ``R = 15`` (ending by
    the 15th removal). A ply limit ``P`` bounds it by ``P``. DARK: 1500; CLASSIC: 300.

    Raises :class:`ValueError` for a rule set with neither limit (its games are unbounded).

    >>> from jungle_core import DARK, CLASSIC
    >>> max_game_length(DARK), max_game_length(CLASSIC)
    (1500, 300)
    """
    bounds = []
    if rules.no_removal_limit:
        bounds.append((_PIECES - 1) * rules.no_removal_limit)
    if rules.ply_limit:
        bounds.append(rules.ply_limit)
    if not bounds:
        raise ValueError(
            f"rules {rules.name!r} have neither a no-removal limit nor a ply limit: "
            "their games have no maximum length"
        )
    return min(bounds)


def max_chance_nodes(rules: Rules) -> int:
    """The most chance events in one game: each of the 16 pieces turns face up at most once.

    >>> from jungle_core import DARK, CLASSIC
    >>> max_chance_nodes(DARK), max_chance_nodes(CLASSIC)
    (16, 0)
    """
    return _PIECES if rules.is_dark else 0


def observation_for(state: State, player: int) -> npt.NDArray[np.float32]:
    """The observation tensor (:func:`jungle_core.observation`) of ``state`` as seen by
    ``player`` (0 or 1).

    For the player to move it is :func:`jungle_core.observation` itself. For the other
    player of a DARK game, channels 4 and 5 ("the player to move" / "the opponent") are
    swapped so that channel 4 is always the viewer's own and 5 the viewer's opponent's;
    channels 0..3 do not depend on the viewer. The CLASSIC observation holds absolute
    planes only (channel 21 says who moves), so it is the same for both players.
    ``float32[7, 8, 6]`` (DARK) or ``float32[9, 7, 22]`` (CLASSIC), a fresh array.

    >>> from jungle_core import new_game, step_outcome
    >>> s = step_outcome(new_game(), 0, 7)     # a1 turns out to be player 0's Elephant
    >>> s.to_move, float(observation_for(s, 0)[0, 0, 4]), float(observation_for(s, 1)[0, 0, 4])
    (1, 1.0, 0.0)
    """
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    obs = observation(state)
    if state.rules.is_dark and player != state.to_move:
        obs[..., [4, 5]] = obs[..., [5, 4]]
    return obs
