"""The game as OpenSpiel (pyspiel) Python games: ``python_jungle_dark``, ``python_jungle_classic``.

Importing this module registers both games with pyspiel (``pip install
'dou-shou-qi[interop]'``):

>>> import pyspiel
>>> import jungle_core.interop.openspiel
>>> game = pyspiel.load_game("python_jungle_dark")
>>> state = game.new_initial_state()
>>> state.apply_action(3)                 # ?d1: turn the piece on d1 face up ...
>>> state.is_chance_node(), len(state.chance_outcomes())
(True, 16)
>>> state.apply_action(7)                 # ... chance: it is player 0's Elephant
>>> state.current_player(), state.history_str()
(1, '3, 7')

How the Jungle rules map onto OpenSpiel:

- **DARK** (``python_jungle_dark``) is an explicitly stochastic game of perfect
  information, like OpenSpiel's ``banqi``: nothing is secret, the state carries the set
  of (owner, rank) pairs still face down. An action that turns a piece face up (a reveal,
  or a move onto a face-down piece) does not finish the turn: it leads to a **chance
  node** whose outcomes are the pieces still face down that the square may hold, outcome
  ``owner * 8 + rank - 1`` (0..15), uniformly (:func:`jungle_core.chance_outcomes`).
  Applying the outcome finishes the turn (:func:`jungle_core.step_outcome`). Actions
  are the core's action integers (:func:`jungle_core.legal_actions`), 280 of them;
  ``max_chance_outcomes`` is 16.
- **CLASSIC** (``python_jungle_classic``) is deterministic, 315 actions.
- Action strings are the core's move notation (:func:`jungle_core.action_to_str`:
  ``?d1``, ``c1-c2``, ``c1xc2``); a chance outcome
  reads ``d1=E`` (the square, then the piece letter: upper case player 0, lower case 1).
- Observation tensor: :func:`jungle_core.observation`, shape ``[rows, cols, channels]``
  (``float32[7, 8, 6]`` / ``float32[9, 7, 22]``) as seen by the requested player (see
  :func:`jungle_core.interop.observation_for`); at a chance node, the position before
  the piece turns up. Observation string: the ASCII board (:func:`jungle_core.render`).
- Returns: +1 / -1 for a win / loss, 0 for a draw, at the end only (terminal reward).
- ``max_game_length`` counts decisions, not chance events (OpenSpiel's convention): 1500
  for DARK (at most 15 removals, each followed by at most 100 plies without one — see
  :func:`jungle_core.interop.max_game_length`), 300 for CLASSIC (its ply limit).
- ``game.new_initial_state(fen)`` starts from a position string
  (:func:`jungle_core.from_fen`).
- Cloning a state is cheap (the core state is an immutable value shared by the clones).
  Serialization uses pyspiel's generic mechanism for Python games (a pickled ``__dict__``);
  the only thing in that dict is the node, which pickles as plain data — the rule set's
  fields, the position string, the repetition history and the pending action — and is
  rebuilt (and validated) with :func:`jungle_core.from_fen`.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from jungle_core import (
    CLASSIC,
    DARK,
    RANK_LETTERS,
    GameOverError,
    IllegalActionError,
    Rules,
    State,
    action_to_str,
    chance_outcomes,
    from_fen,
    import_optional,
    is_chance_action,
    legal_actions,
    new_game,
    observation_shape,
    outcome,
    render,
    returns,
    square_name,
    step_outcome,
    to_fen,
)
from jungle_core.interop._common import (
    max_chance_nodes,
    max_game_length,
    observation_for,
)
from jungle_core.lowlevel import tables

# Without OpenSpiel: MissingExtraError, naming the extra that installs it.
import_optional("pyspiel", "the OpenSpiel adapter (jungle_core.interop.openspiel)")
import pyspiel  # noqa: E402
from open_spiel.python.observation import IIGObserverForPublicInfoGame  # noqa: E402

__all__ = [
    "CLASSIC_GAME_TYPE",
    "DARK_GAME_TYPE",
    "JungleClassicGame",
    "JungleDarkGame",
    "JungleGame",
    "JungleState",
]

DARK_SHORT_NAME = "python_jungle_dark"
CLASSIC_SHORT_NAME = "python_jungle_classic"


def _game_type(short_name: str, long_name: str, rules: Rules) -> Any:
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=(
            pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
            if rules.is_dark
            else pyspiel.GameType.ChanceMode.DETERMINISTIC
        ),
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={},
    )


def _game_info(rules: Rules) -> Any:
    return pyspiel.GameInfo(
        num_distinct_actions=rules.num_actions,
        max_chance_outcomes=16 if rules.is_dark else 0,
        num_players=2,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=max_game_length(rules),
    )


DARK_GAME_TYPE = _game_type(DARK_SHORT_NAME, "Python Jungle (DARK flip rules, 7x8)", DARK)
"""The pyspiel ``GameType`` of ``python_jungle_dark``."""
CLASSIC_GAME_TYPE = _game_type(CLASSIC_SHORT_NAME, "Python Jungle (CLASSIC rules, 9x7)", CLASSIC)
"""The pyspiel ``GameType`` of ``python_jungle_classic``."""


class _Node:
    """What a :class:`JungleState` holds: the core state and the action awaiting chance.

    Immutable, so ``copy.deepcopy`` (pyspiel's ``Clone`` of a Python state) shares it
    instead of copying; it pickles (pyspiel's ``serialize``) as plain data only.
    """

    __slots__ = ("pending", "state")

    def __init__(self, state: State, pending: int) -> None:
        self.state = state
        self.pending = pending

    def __copy__(self) -> _Node:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> _Node:
        return self

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        s = self.state
        return (_restore_node, (attrs.asdict(s.rules), to_fen(s), s.history, self.pending))


def _restore_node(
    rules_fields: dict[str, Any], fen: str, history: tuple[int, ...], pending: int
) -> _Node:
    """Rebuild a pickled :class:`_Node`, validating the position string on the way."""
    state = from_fen(fen, Rules(**rules_fields))
    if history:
        state = attrs.evolve(state, history=tuple(history))
    if pending >= 0:
        chance_outcomes(state, pending)  # raises IllegalActionError when it is not legal
        if not is_chance_action(state, pending):
            raise IllegalActionError(f"pending action {pending} draws no chance in {fen!r}")
    return _Node(state, int(pending))


class JungleState(pyspiel.State):  # type: ignore[misc]
    """A pyspiel state wrapping a core :class:`jungle_core.State` (see the module docstring).

    ``jungle_state`` is the core state; ``pending_action`` the action whose chance
    outcome is awaited at a chance node (-1 at a decision or terminal node).
    """

    def __init__(self, game: JungleGame, state: State | None = None) -> None:
        super().__init__(game)
        self._node = _Node(state if state is not None else new_game(game.rules), -1)

    @property
    def jungle_state(self) -> State:
        """The core state (at a chance node: the position before the piece turns up)."""
        return self._node.state

    @property
    def pending_action(self) -> int:
        """The action awaiting its chance outcome, or -1."""
        return self._node.pending

    # ----------------------------------------------------------- the pyspiel API

    def current_player(self) -> int:
        """The player to move (0 or 1), ``PlayerId.CHANCE`` or ``PlayerId.TERMINAL``."""
        node = self._node
        if node.pending >= 0:
            return int(pyspiel.PlayerId.CHANCE)
        if outcome(node.state) is not None:
            return int(pyspiel.PlayerId.TERMINAL)
        return node.state.to_move

    def is_terminal(self) -> bool:
        """True once the game is over (never at a chance node)."""
        node = self._node
        return node.pending < 0 and outcome(node.state) is not None

    def _legal_actions(self, player: int) -> list[int]:
        return list(legal_actions(self._node.state))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``(outcome, probability)`` pairs of the pending action, outcome ``owner*8+rank-1``."""
        node = self._node
        if node.pending < 0:
            raise ValueError(f"chance_outcomes() asked at a decision node: {to_fen(node.state)!r}")
        return list(chance_outcomes(node.state, node.pending))

    def _apply_action(self, action: int) -> None:
        node = self._node
        action = int(action)
        if node.pending >= 0:
            self._node = _Node(step_outcome(node.state, node.pending, action), -1)
            return
        state = node.state
        if outcome(state) is not None:
            raise GameOverError(
                f"cannot play action {action}: the game is over in {to_fen(state)!r}"
            )
        if is_chance_action(state, action):
            chance_outcomes(state, action)  # raises IllegalActionError when illegal
            self._node = _Node(state, action)
        else:
            self._node = _Node(step_outcome(state, action, -1), -1)

    def _action_to_string(self, player: int, action: int) -> str:
        node = self._node
        if player == pyspiel.PlayerId.CHANCE:
            return _outcome_to_string(node, int(action))
        try:
            return action_to_str(node.state, int(action))
        except IllegalActionError:
            return f"action {action}"

    def returns(self) -> list[float]:
        """``[+1, -1]``, ``[-1, +1]`` or ``[0, 0]`` at the end; ``[0, 0]`` before it."""
        if not self.is_terminal():
            return [0.0, 0.0]
        return list(returns(self._node.state))

    def __str__(self) -> str:
        node = self._node
        text = render(node.state)
        if node.pending >= 0:
            move = action_to_str(node.state, node.pending)
            text += f"\nchance node: {move} turns a piece face up"
        return text


def _outcome_to_string(node: _Node, outcome_index: int) -> str:
    if not 0 <= outcome_index < 16:
        return f"outcome {outcome_index}"
    owner, rank_index = divmod(outcome_index, 8)
    letter = RANK_LETTERS[rank_index + 1]
    letter = letter if owner == 0 else letter.lower()
    if node.pending < 0:
        return f"={letter}"
    state = node.state
    rules = state.rules
    n = rules.num_squares
    # A reveal names its square; a DARK move turns up the piece on the neighbour it moves to.
    square = node.pending if node.pending < n else tables(rules).step[node.pending - n]
    return f"{square_name(rules, square)}={letter}"


class _BoardObserver:
    """A pyspiel Python observer: the observation tensor as seen by the player, and the board."""

    def __init__(self, rules: Rules, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        shape = observation_shape(new_game(rules))
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: JungleState, player: int) -> None:
        self.dict["observation"][...] = observation_for(state.jungle_state, int(player))

    def string_from(self, state: JungleState, player: int) -> str:
        return str(state)


class JungleGame(pyspiel.Game):  # type: ignore[misc]
    """A pyspiel game over one rule set; use the registered subclasses below.

    ``rules`` is the core :class:`jungle_core.Rules` value the game plays.
    """

    def __init__(self, game_type: Any, rules: Rules, params: dict[str, Any] | None) -> None:
        super().__init__(game_type, _game_info(rules), params or {})
        self.rules = rules

    def new_initial_state(self, fen: str | None = None) -> JungleState:
        """The start position, or the position string ``fen`` when given."""
        if fen is None:
            return JungleState(self)
        if not isinstance(fen, str):
            raise TypeError(f"new_initial_state takes a position string, not {fen!r}")
        return JungleState(self, from_fen(fen, self.rules))

    def max_chance_nodes_in_history(self) -> int:
        """At most 16 chance events per game: each piece turns face up once (0 for CLASSIC)."""
        return max_chance_nodes(self.rules)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        """The observer pyspiel asks for: the board for public observations, the history
        for perfect-recall information states (the game has no private information)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return _BoardObserver(self.rules, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class JungleDarkGame(JungleGame):
    """``python_jungle_dark``: the DARK rules, chance nodes at every reveal."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(DARK_GAME_TYPE, DARK, params)


class JungleClassicGame(JungleGame):
    """``python_jungle_classic``: the CLASSIC rules, deterministic."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(CLASSIC_GAME_TYPE, CLASSIC, params)


pyspiel.register_game(DARK_GAME_TYPE, JungleDarkGame)
pyspiel.register_game(CLASSIC_GAME_TYPE, JungleClassicGame)
