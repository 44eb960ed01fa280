"""The arena's game loop: one seeded game between two agents, and the replay of a record.

:func:`play_game` plays a game and returns its :class:`GameRecord`; :func:`replay` rebuilds
every state of a record exactly (and refuses one that does not replay); :func:`moves_text`
writes its plies in the game's notation (``?c1``, ``c1-c2``, ``c1xc2``).
:func:`check_run_arguments` checks the numbers a game or a whole run is given, with the
messages the command line shows. ``openings=K`` starts a game after ``K`` uniformly random
plies (:data:`MAX_OPENINGS` at most), drawn from a seed of their own, so that two
deterministic agents do not play the same game over and over.

>>> from jungle_core import DARK
>>> from jungle_agents import make_agent
>>> record = play_game(DARK, make_agent("random", DARK), make_agent("greedy", DARK), seed=3)
>>> replay(record)[-1].ply == len(record.actions)
True
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from jungle_agents._base import Agent, AgentFailure
from jungle_agents.arena._records import MAX_OPENINGS, GameRecord, RecordError, result_fields
from jungle_core import (
    HIDDEN,
    RANK_LETTERS,
    IllegalActionError,
    JungleError,
    Rules,
    State,
    action_to_str,
    chance_outcomes,
    is_chance_action,
    legal_actions,
    new_game,
    outcome,
    step_outcome,
    to_fen,
)
from jungle_core.lowlevel import HIDDEN_P0, HIDDEN_P1, tables

__all__ = [
    "DEALS",
    "MAX_OPENINGS",
    "check_run_arguments",
    "deal_layout",
    "moves_text",
    "play_game",
    "play_game_as",
    "replay",
]

DEALS = ("independent", "duplicate")
"""How a game's chance outcomes are drawn (``deals=``): ``independent``, one draw from
the game's chance stream at each chance event (the default); ``duplicate``, the hidden
pieces dealt to their squares once, at the start (:func:`deal_layout`), so that two runs
with the same seed face the same hidden layout in the same game whatever their agents
play (common random numbers, as duplicate bridge deals the same hands to every table).
The two draw the outcomes with the same distribution."""

OnPly = Callable[[State, int, int, float], None]
"""``on_ply(state, action, outcome, seconds)``: called after each decision."""


def check_run_arguments(
    games_per_pair: int,
    seed: int,
    workers: int | None,
    max_plies: int | None,
    openings: int = 0,
) -> None:
    """Check the numbers a game or a run is given: ``TypeError`` for a non-int,
    :class:`jungle_core.JungleError` naming the range for one out of it.

    >>> check_run_arguments(2, 0, None, None, openings=65)
    Traceback (most recent call last):
    ...
    jungle_core._errors.JungleError: openings must be in 0..64, not 65
    """
    checks = (
        ("games per pair", games_per_pair, False, 1, 2**31 - 1),
        ("seed", seed, False, 0, 2**64 - 1),
        ("workers", workers, True, 1, 4096),
        ("max_plies", max_plies, True, 1, 2**31 - 1),
        ("openings", openings, False, 0, MAX_OPENINGS),
    )
    for what, value, optional, lo, hi in checks:
        if value is None and optional:
            continue
        _check_int(what, value, lo, hi)


def _check_int(what: str, value: object, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        shown = value if abs(value) < 10**20 else "a huge number"
        raise JungleError(f"{what} must be in {lo}..{hi}, not {shown}")


def _rngs(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    chance, first, second = np.random.SeedSequence(seed).spawn(3)
    return (
        np.random.default_rng(chance),
        np.random.default_rng(first),
        np.random.default_rng(second),
    )


def deal_layout(state: State, rng: np.random.Generator) -> dict[int, int]:
    """The identity (``owner * 8 + rank - 1``) under each face-down square of ``state``,
    dealt uniformly at random with ``rng``: a permutation of the face-down set over the
    face-down squares (per owner where the squares say whose pieces they hold). An
    agent never sees it, and face-down pieces never move, so turning squares up in any
    order reads outcomes distributed exactly as uniform draws from the face-down set at
    each chance event (:func:`jungle_core.chance_outcomes`). A start whose squares do not
    match its face-down set one to one raises :class:`jungle_core.JungleError`.

    >>> from jungle_core import DARK, new_game
    >>> layout = deal_layout(new_game(DARK), np.random.default_rng(0))
    >>> len(layout), sorted(layout.values()) == list(range(16))
    (16, True)
    """
    board = state.board
    mask = state.face_down_mask
    classes = (
        (HIDDEN, mask),
        (HIDDEN_P0, mask & 0xFF),
        (HIDDEN_P1, mask & 0xFF00),
    )
    present = [code for code, _ in classes if code in board]
    layout: dict[int, int] = {}
    for code, held in classes:
        squares = [sq for sq, c in enumerate(board) if c == code]
        if not squares:
            continue
        identities = [i for i in range(16) if held >> i & 1]
        if len(identities) != len(squares) or (code == HIDDEN and len(present) > 1):
            raise JungleError(
                f"cannot deal {to_fen(state)!r} in advance: {len(squares)} face-down squares "
                f"of code {code} for {len(identities)} face-down pieces"
            )
        for sq, i in zip(squares, rng.permutation(identities), strict=True):
            layout[sq] = int(i)
    return layout


def _chance_square(state: State, action: int) -> int:
    """The square whose face-down piece a chance action turns up (a reveal's own, a
    move's target)."""
    n = len(state.board)
    return action if action < n else tables(state.rules).step[action - n]


def _draw_outcome(state: State, action: int, rng: np.random.Generator) -> int:
    outs = chance_outcomes(state, action)
    if len(outs) == 1:
        return outs[0][0]
    u = rng.random()
    acc = 0.0
    for o, p in outs:
        acc += p
        if u < acc:
            return o
    return outs[-1][0]


def play_game(
    rules: Rules,
    agent0: Agent,
    agent1: Agent,
    seed: int,
    *,
    max_plies: int | None = None,
    on_ply: OnPly | None = None,
    deals: str = "independent",
    openings: int = 0,
    opening_seed: int | None = None,
) -> GameRecord:
    """Play one game, ``agent0`` moving first, and return its record.

    ``seed`` seeds the start (``new_game``), the chance outcomes and each agent's
    generator (three independent streams). ``max_plies`` stops an endless game (the
    record then says ``"unfinished"``); ``on_ply(state, action, outcome, seconds)`` is
    called after each decision; ``deals`` (:data:`DEALS`): ``"duplicate"`` deals the
    hidden pieces to their squares at the start (:func:`deal_layout`, from the chance
    stream), so the same seed hides the same pieces under the same squares whoever
    plays. An agent returning an illegal action raises
    :class:`jungle_core.IllegalActionError` naming the agent and the position; an agent
    that raises :class:`jungle_agents.AgentFailure` (an external engine that crashed,
    hung or answered an illegal move) forfeits: the record's ``reason`` is
    ``"forfeit"``, its ``note`` the error, and the other side wins.

    ``openings`` (0 to :data:`MAX_OPENINGS`): the first ``openings`` plies are not asked
    of the agents but drawn uniformly among the legal actions, their chance outcomes too,
    from a generator of ``opening_seed`` alone (default: ``seed``), so that two
    deterministic agents do not play one game over and over, and two games of one
    ``opening_seed`` start from the same position (for a given start: only
    ``setup="scattered"`` starts depend on ``seed``). The opening plies are recorded as
    any other (time 0.0; ``record.opening`` says how many); ``on_ply`` is not called for
    them, as they are not decisions; a game that ends inside its opening ends there. With
    ``deals="duplicate"`` the pieces still face down after the opening are dealt then.

    >>> from jungle_core import CLASSIC
    >>> from jungle_agents import make_agent
    >>> a, b = make_agent("greedy", CLASSIC), make_agent("greedy", CLASSIC)
    >>> one = play_game(CLASSIC, a, b, 1, max_plies=6, openings=2, opening_seed=9)
    >>> two = play_game(CLASSIC, a, b, 2, max_plies=6, openings=2, opening_seed=9)
    >>> one.opening, one.actions[:2] == two.actions[:2], one.times[:2]
    (2, True, (0.0, 0.0))
    """
    players = (agent0.name, agent1.name)
    return play_game_as(
        players,
        rules,
        agent0,
        agent1,
        seed,
        max_plies=max_plies,
        on_ply=on_ply,
        deals=deals,
        openings=openings,
        opening_seed=opening_seed,
    )


def play_game_as(
    players: tuple[str, str],
    rules: Rules,
    agent0: Agent,
    agent1: Agent,
    seed: int,
    *,
    max_plies: int | None = None,
    on_ply: OnPly | None = None,
    deals: str = "independent",
    openings: int = 0,
    opening_seed: int | None = None,
) -> GameRecord:
    """:func:`play_game`, the record naming the players ``players`` (the arena names
    them by the specs it made the agents from, not by the agents' own names)."""
    check_run_arguments(1, seed, None, max_plies, openings)
    if opening_seed is not None:
        _check_int("opening_seed", opening_seed, 0, 2**64 - 1)
    if deals not in DEALS:
        raise JungleError(f"deals must be one of {DEALS}, not {deals!r}")
    chance_rng, rng0, rng1 = _rngs(seed)
    agents = (agent0, agent1)
    rngs = (rng0, rng1)
    state = new_game(rules, seed=seed)
    actions: list[int] = []
    outcomes: list[int] = []
    times: list[float] = []
    if openings:
        limit = openings if max_plies is None else min(openings, max_plies)
        state = _play_opening(
            state, limit, seed if opening_seed is None else opening_seed, actions, outcomes, times
        )
    layout = deal_layout(state, chance_rng) if deals == "duplicate" else None
    opening = len(actions)
    while outcome(state) is None:
        if max_plies is not None and len(actions) >= max_plies:
            break
        me = state.to_move
        start = time.perf_counter()
        try:
            action = agents[me].act(state, rngs[me])
        except AgentFailure as error:  # the arena goes on: the game is this side's loss
            return GameRecord.of_play(
                state,
                players,
                seed,
                actions,
                outcomes,
                times,
                forfeit=(me, str(error)),
                opening=opening,
            )
        seconds = time.perf_counter() - start
        if not isinstance(action, int | np.integer) or action not in legal_actions(state):
            raise IllegalActionError(
                f"agent {agents[me].name!r} (player {me}) returned the illegal action "
                f"{action!r} in {to_fen(state)!r}"
            )
        action = int(action)
        if layout is None:
            o = _draw_outcome(state, action, chance_rng)
        else:
            o = (
                layout.get(_chance_square(state, action), -1)
                if is_chance_action(state, action)
                else -1
            )
        if on_ply is not None:
            on_ply(state, action, o, seconds)
        state = step_outcome(state, action, o)
        actions.append(action)
        outcomes.append(o)
        times.append(seconds)
    return GameRecord.of_play(state, players, seed, actions, outcomes, times, opening=opening)


def _play_opening(
    state: State,
    plies: int,
    opening_seed: int,
    actions: list[int],
    outcomes: list[int],
    times: list[float],
) -> State:
    """Play up to ``plies`` uniformly random plies from ``state`` (fewer where the game
    ends first), actions and chance outcomes alike drawn from ``opening_seed``'s own
    generator; append each to the lists (time 0.0: no agent decided it) and return the
    state reached."""
    rng = np.random.default_rng(np.random.SeedSequence([opening_seed, 1]))
    for _ in range(plies):
        if outcome(state) is not None:
            break
        legal = legal_actions(state)
        action = int(legal[int(rng.integers(len(legal)))])
        o = _draw_outcome(state, action, rng)
        state = step_outcome(state, action, o)
        actions.append(action)
        outcomes.append(o)
        times.append(0.0)
    return state


def replay(record: GameRecord) -> list[State]:
    """Every state of a recorded game, the start first, rebuilt from the record.

    Raises :class:`RecordError` when the record does not replay (an illegal action or outcome,
    or a result that differs from the recorded one).
    """
    state = new_game(record.rules, seed=record.seed)
    states = [state]
    for ply, (action, o) in enumerate(zip(record.actions, record.outcomes, strict=True)):
        try:
            state = step_outcome(state, action, o)
        except JungleError as error:
            raise RecordError(f"the record does not replay at ply {ply + 1}: {error}") from None
        states.append(state)
    winner, reason = result_fields(state)
    if record.reason == "forfeit" and reason == "unfinished":
        return states  # the game stopped where a player's agent failed to move
    if (winner, reason) != (record.winner, record.reason):
        raise RecordError(
            f"the record says {record.winner}/{record.reason} but replays to {winner}/{reason}"
        )
    return states


def moves_text(record: GameRecord) -> list[str]:
    """The notation of each ply of a record (``?c1`` reveals name the piece turned up).

    >>> from jungle_core import DARK
    >>> from jungle_agents import make_agent
    >>> r = play_game(DARK, make_agent("random", DARK), make_agent("random", DARK), 1)
    >>> moves_text(r)[0].startswith("?")
    True
    """
    states = replay(record)
    out = []
    for state, action, o in zip(states, record.actions, record.outcomes, strict=False):
        text = action_to_str(state, action)
        if o >= 0:
            letter = RANK_LETTERS[(o & 7) + 1]
            text += f"={letter if o < 8 else letter.lower()}"
        out.append(text)
    return out
