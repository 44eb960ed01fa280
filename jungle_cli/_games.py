"""The games ``jungle serve`` keeps: one :class:`ServedGame` per game id.

Everything here is plain Python over the rules core and the arena (no web framework), so
it is tested directly; :mod:`jungle_cli._serve` puts it behind HTTP.

A served game is a record in the making: the start (rules and seed), the actions, the
chance outcome of each and its thinking time, exactly a :class:`GameRecord`. Every
change goes through the core's own checks (``parse_action``, ``legal_actions``,
``step_outcome``, ``replay``), so a request the core refuses changes nothing.

Choices made here:

- Chance outcomes are drawn from a generator seeded by :mod:`secrets`, not from the
  game's recorded seed: the seed is in every saved record, and a player who knew it could
  otherwise foresee each reveal.
- A resignation, a flag fall or an agent overrunning its move limit ends the game on the
  page, but a saved record keeps the core's own result (``"unfinished"``), so that every
  saved record replays with :func:`jungle_agents.arena.replay`.
- Undo against an agent goes back to the position before the human's last move (as
  ``jungle play``); between two humans, or two agents, one ply. Clocks are not rewound.
- A game's players are named by the game: a new game's by its seats, a loaded record's by
  the record's own players (so the banner of a loaded game of two agents names those
  agents, whatever the New-game form says). A seat that someone else takes over in a
  loaded game is named ``"greedy, then human"`` once the newcomer has moved.
- Hints come from a hint agent of their own, never the opponent (whose hint against
  ``random`` would be a random move): by default :data:`DEFAULT_HINT`.

>>> from jungle_core import DARK
>>> game = ServedGame.create(DARK, ("human", "random"))
>>> game.play_text("?d1", seconds=1.0)
'?d1'
>>> game.ply, game.seat_to_move()
(1, 'random')
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import jungle_core as jc
from jungle_agents.arena import GameRecord, moves_text, replay
from jungle_cli._play import Clock, parse_clock
from jungle_cli._serve_specs import SPEC_LIMIT, SpecPolicy
from jungle_cli._views import (
    SERVED_RULES,
    BadRequestError,
    ConflictError,
    board_view,
    field,
    move_target,
    position_view,
)

__all__ = [
    "DEFAULT_HINT",
    "HUMAN",
    "MODES",
    "RULE_SETS",
    "ServedGame",
    "request_options",
    "request_rules",
    "request_seats",
]

HUMAN = "human"
MODES = ("human-agent", "human-human", "agent-agent")
RULE_SETS = SERVED_RULES
OPEN = SpecPolicy()  # no spec allowed beyond the registry's and the shipped checkpoints

DEFAULT_HINT = "minimax:depth=3,time=1"
"""The hint agent unless the server or the game names another: the strongest agent
measured on DARK (minimax depth 3: 0.880 against Greedy and 0.975 against Random over 200
games each) that also answers fast (0.008 s median, 0.40 s at the 95th percentile, 1.4 s
at worst), with a one-second budget (iterative deepening up to depth 3) that caps its
slowest answers without changing the usual ones."""

REASONS = {
    "elimination": "no piece left",
    "no_removal_limit": "no removal for too long",
    "ply_limit": "the ply limit was reached",
    "no_legal_actions": "no legal move left",
    "den_entered": "a piece entered the den",
    "resignation": "resignation",
    "time": "time ran out",
    "move_limit": "the agent overran the move time limit",
    "agent_failure": "the agent failed",
}


class ServedGame:
    """One game on the server: seats, moves so far, clocks and how it ended.

    ``seats[p]`` is ``"human"`` or an agent spec (checked by a
    :class:`jungle_cli._serve_specs.SpecPolicy`, never built here: the decision workers
    build agents), the one who moves for player ``p`` from now on; :attr:`names` are the
    game's players (a loaded record's own, see the module notes). Build one with
    :meth:`create` or :meth:`from_record`.
    """

    def __init__(
        self,
        rules: jc.Rules,
        seats: tuple[str, str],
        *,
        seed: int,
        clock: Clock | None = None,
        hint: str = DEFAULT_HINT,
        delay: float = 0.5,
        now: Callable[[], float] = time.monotonic,
        policy: SpecPolicy = OPEN,
    ) -> None:
        self.id = secrets.token_urlsafe(16)
        self.rules = rules
        self.seats = seats
        self.seat_names = tuple(s if s == HUMAN else policy.check(s) for s in seats)
        self.recorded: tuple[str, str] | None = None  # a loaded record's players
        self.loaded_plies = 0  # plies of the loaded record still in the game
        self.opening = 0  # the loaded record's random-opening plies (its ``opening``)
        self.seed = seed
        self.clock = clock
        self.hint = hint
        self.delay = delay
        self.paused = False
        self.now = now
        self.chance_rng = np.random.default_rng(secrets.randbits(64))
        self.agent_rng = np.random.default_rng(secrets.randbits(64))
        self.states: list[jc.State] = [jc.new_game(rules, seed=seed)]
        self.actions: list[int] = []
        self.outcomes: list[int] = []
        self.times: list[float] = []
        self.ended: tuple[int | None, str] | None = None
        self.message = ""
        self.thinking = False
        self.hinting = False
        self.generation = 0
        self.version = 0
        self.turn_started = now()
        self.touched = now()
        self.title = ""
        self._texts: tuple[int, list[str]] = (-1, [])

    # ------------------------------------------------------------ building

    @classmethod
    def create(
        cls,
        rules: jc.Rules,
        seats: Sequence[str],
        *,
        clock: str | None = None,
        hint: str | None = None,
        delay: float = 0.5,
        now: Callable[[], float] = time.monotonic,
        policy: SpecPolicy = OPEN,
    ) -> ServedGame:
        """A new game; bad agent specs (``policy``'s check) or clock texts raise
        :class:`BadRequestError`. ``hint`` is the hint agent's spec (:data:`DEFAULT_HINT`
        when not given).

        >>> from jungle_core import DARK
        >>> ServedGame.create(DARK, ("human", "minmax"))
        Traceback (most recent call last):
        ...
        jungle_cli._views.BadRequestError: unknown agent 'minmax' in spec 'minmax'; ...
        """
        if len(seats) != 2:
            raise BadRequestError("a game has two seats")
        agents = [s for s in seats if s != HUMAN]
        hint = hint or DEFAULT_HINT
        for spec in (*agents, hint):
            policy.check(spec)
        try:
            parsed_clock = parse_clock(clock) if clock else None
            if not 0 <= delay <= 60:
                raise ValueError(f"delay must be 0..60 seconds, not {delay}")
        except ValueError as error:
            raise BadRequestError(str(error)) from None
        return cls(
            rules,
            (seats[0], seats[1]),
            seed=secrets.randbits(31),
            clock=parsed_clock,
            hint=hint,
            delay=delay,
            now=now,
            policy=policy,
        )

    @classmethod
    def from_record(cls, record: GameRecord, seats: Sequence[str], **kwargs: Any) -> ServedGame:
        """A game positioned at the end of a (validated) record, to replay or play on;
        its players are the record's, ``seats`` those who play on from its end.

        >>> from jungle_core import DARK
        >>> old = ServedGame.create(DARK, ("human", "human"))
        >>> _ = old.play_text("?d1")
        >>> record = GameRecord.of_play(
        ...     old.state, ("greedy", "random"), old.seed, old.actions, old.outcomes, old.times
        ... )
        >>> game = ServedGame.from_record(record, ("human", "human"))
        >>> game.names
        ('greedy', 'random')
        >>> _ = game.play_text("?e7")  # player 1 moves on: a human now
        >>> game.names
        ('greedy', 'random, then human')
        """
        game = cls.create(record.rules, seats, **kwargs)
        game.seed = record.seed
        game.states = replay(record)
        game.actions = list(record.actions)
        game.outcomes = list(record.outcomes)
        game.times = list(record.times)
        game.recorded = record.players
        game.loaded_plies = record.plies
        game.opening = record.opening
        game.title = f"{record.players[0]} vs {record.players[1]} (loaded)"
        return game

    # ------------------------------------------------------------- queries

    @property
    def names(self) -> tuple[str, str]:
        """The game's two players, as the banner and a saved record name them: the seats'
        names, or a loaded record's players (``"greedy, then human"`` for a seat whose new
        occupant has moved since the record ended).

        >>> from jungle_core import DARK
        >>> ServedGame.create(DARK, ("human", "minimax:depth=2")).names
        ('human', 'minimax:depth=2')
        """
        if self.recorded is None:
            return (self.seat_names[0], self.seat_names[1])
        names = list(self.recorded)
        for player in (0, 1):
            moved = any(
                self.states[i].to_move == player for i in range(self.loaded_plies, self.ply)
            )
            if moved and self.seat_names[player] != names[player]:
                names[player] = f"{names[player]}, then {self.seat_names[player]}"
        return (names[0], names[1])

    @property
    def state(self) -> jc.State:
        """The current position."""
        return self.states[-1]

    @property
    def ply(self) -> int:
        """Plies played."""
        return len(self.actions)

    def result(self) -> tuple[int | None, str] | None:
        """``(winner, reason)`` once the game is over (core result or resign/time), else None."""
        if self.ended is not None:
            return self.ended
        found = jc.outcome(self.state)
        return None if found is None else (found.winner, found.reason.value)

    def seat_to_move(self) -> str | None:
        """The seat to move (``"human"`` or a spec), None when the game is over."""
        if self.result() is not None:
            return None
        return self.seats[self.state.to_move]

    def record(self) -> GameRecord:
        """The game as an arena record (the core's result; see the module notes)."""
        return GameRecord.of_play(
            self.state,
            self.names,
            self.seed,
            self.actions,
            self.outcomes,
            self.times,
            opening=min(self.opening, self.ply),
        )

    def texts(self) -> list[str]:
        """The move list in the library's notation (``moves_text``), cached per version."""
        if self._texts[0] != self.version:
            self._texts = (self.version, moves_text(self.record()))
        return self._texts[1]

    def last_move(self, ply: int) -> tuple[int, int] | None:
        """``(from, to)`` squares of the move that led to ply ``ply``."""
        if ply == 0:
            return None
        state, action = self.states[ply - 1], self.actions[ply - 1]
        n = self.rules.num_squares
        start = action if action < n else (action - n) // 4
        return start, move_target(state, action, jc.action_to_str(state, action))

    def clock_view(self) -> dict[str, Any] | None:
        """Both players' remaining seconds, counting the running turn."""
        if self.clock is None:
            return None
        remaining = list(self.clock.remaining)
        running = None
        if self.result() is None and not self.paused:
            running = self.state.to_move
            remaining[running] -= self.now() - self.turn_started
        return {"remaining": remaining, "increment": self.clock.increment, "running": running}

    def view(self) -> dict[str, Any]:
        """The whole game as JSON for the page."""
        self.check_flag()
        state = self.state
        legal: list[dict[str, Any]] = []
        if self.seat_to_move() == HUMAN:
            n = self.rules.num_squares
            for action in jc.legal_actions(state):
                text = jc.action_to_str(state, action)
                legal.append(
                    {
                        "action": action,
                        "text": text,
                        "from": action if action < n else (action - n) // 4,
                        "to": move_target(state, action, text),
                    }
                )
        result = self.result()
        texts = self.texts()
        return {
            "id": self.id,
            "version": self.version,
            "board": board_view(self.rules),
            "seats": list(self.seats),
            "names": list(self.names),
            "seat_names": list(self.seat_names),
            "title": self.title,
            "hint_agent": self.hint,
            "position": position_view(state, self.last_move(self.ply)),
            "moves": [
                {"ply": i + 1, "player": self.states[i].to_move, "text": t}
                for i, t in enumerate(texts)
            ],
            "legal": legal,
            "thinking": self.thinking,
            "paused": self.paused,
            "delay": self.delay,
            "clock": self.clock_view(),
            "result": None
            if result is None
            else {"winner": result[0], "reason": result[1], "text": self.result_text()},
            "message": self.message,
        }

    def result_text(self) -> str:
        """The result banner: who won and why.

        >>> from jungle_core import DARK
        >>> game = ServedGame.create(DARK, ("human", "human"))
        >>> game.resign()
        >>> game.result_text()
        'player 1 (human) wins: player 0 resigned'
        """
        result = self.result()
        if result is None:
            return ""
        winner, reason = result
        why = REASONS.get(reason, reason)
        if reason == "resignation":
            why = f"player {1 - (winner or 0)} resigned"
        elif reason == "elimination" and winner is not None:
            why = f"player {1 - winner} has no piece left"
        elif reason == "no_legal_actions" and winner is not None:
            why = f"player {1 - winner} has no legal move"
        elif reason == "den_entered" and winner is not None:
            why = f"player {winner} entered the den"
        elif reason in ("time", "move_limit", "agent_failure") and self.message:
            why = self.message
        if winner is None:
            return f"draw: {why}"
        return f"player {winner} ({self.names[winner]}) wins: {why}"

    # ----------------------------------------------------------- changes

    def changed(self) -> None:
        """Mark a change (new version); the server wakes those waiting for one."""
        self.version += 1
        self.touched = self.now()

    def check_flag(self) -> None:
        """End the game when the player to move has used up their clock."""
        clock = self.clock
        if clock is None or self.result() is not None or self.paused:
            return
        mover = self.state.to_move
        if clock.remaining[mover] - (self.now() - self.turn_started) < 0:
            clock.remaining[mover] = 0.0
            self.message = f"player {mover} ran out of time"
            self.ended = (1 - mover, "time")
            self.generation += 1
            self.changed()

    def _require_turn(self, human: bool) -> None:
        self.check_flag()
        seat = self.seat_to_move()
        if seat is None:
            raise ConflictError(f"the game is over ({self.result_text()})")
        if human and seat != HUMAN:
            raise ConflictError(f"it is not your turn: {seat} (player {self.state.to_move}) moves")

    def play(self, action: int, seconds: float | None = None, *, human: bool = True) -> str:
        """Play a legal ``action`` (checked by the core); returns its notation."""
        self._require_turn(human)
        state = self.state
        if isinstance(action, bool) or not isinstance(action, int):
            raise BadRequestError(f"an action is an integer, not {action!r}")
        if action not in jc.legal_actions(state):
            raise BadRequestError(
                f"{jc.describe_action(state, action)} is not legal in {jc.to_fen(state)!r}"
                if 0 <= action < self.rules.num_actions
                else f"action {action} is outside 0..{self.rules.num_actions - 1}"
            )
        text = jc.action_to_str(state, action)
        outs = jc.chance_outcomes(state, action)
        if len(outs) == 1:
            o = outs[0][0]
        else:
            o = outs[int(self.chance_rng.choice(len(outs), p=[p for _, p in outs]))][0]
        if seconds is None:
            seconds = self.now() - self.turn_started
        self.states.append(jc.step_outcome(state, action, o))
        self.actions.append(action)
        self.outcomes.append(o)
        self.times.append(seconds)
        if self.clock is not None and self.clock.spend(state.to_move, seconds):
            self.clock.remaining[state.to_move] = 0.0
            self.message = f"player {state.to_move} ran out of time"
            self.ended = (1 - state.to_move, "time")
        self.turn_started = self.now()
        self.message = self.message if self.ended else ""
        if human:
            self.paused = False  # a loaded game goes on once the human plays in it
        self.changed()
        return text

    def play_text(self, text: str, seconds: float | None = None) -> str:
        """Play a move written in the library's notation (``parse_action``'s checks).

        >>> from jungle_core import DARK
        >>> ServedGame.create(DARK, ("human", "human")).play_text("a1-a2")
        Traceback (most recent call last):
        ...
        jungle_cli._views.BadRequestError: a1-a2 is not legal in '????????/8/8/8/8/8/...'
        """
        self._require_turn(True)
        if not isinstance(text, str) or len(text) > 32:
            raise BadRequestError(f"a move is a short text such as '?c1' or 'c1-c2', not {text!r}")
        try:
            action = jc.parse_action(self.state, text)
        except jc.JungleError as error:
            raise BadRequestError(str(error)) from None
        return self.play(action, seconds)

    def undo(self) -> int:
        """Take back moves (see the module notes); returns the plies taken back.

        >>> from jungle_core import DARK
        >>> game = ServedGame.create(DARK, ("human", "human"))
        >>> _ = game.play_text("?d1"), game.play_text("?e7")
        >>> game.undo(), game.ply
        (1, 1)
        """
        if self.ply == 0:
            raise ConflictError("nothing to undo: no move has been played")
        keep = self.ply - 1
        if HUMAN in self.seats and self.seats != (HUMAN, HUMAN):
            side = self.seats.index(HUMAN)
            mine = [i for i in range(self.ply) if self.states[i].to_move == side]
            if not mine:
                raise ConflictError("nothing to undo: you have not moved yet")
            keep = mine[-1]
        taken = self.ply - keep
        del self.states[keep + 1 :], self.actions[keep:], self.outcomes[keep:], self.times[keep:]
        self.loaded_plies = min(self.loaded_plies, keep)
        self.ended = None
        self.message = ""
        self.generation += 1
        self.turn_started = self.now()
        if HUMAN not in self.seats:
            self.paused = True  # watching two agents: stay at the position taken back to
        self.changed()
        return taken

    def resign(self) -> None:
        """The human to move (or the human seat) gives up the game."""
        self.check_flag()
        if self.result() is not None:
            raise ConflictError(f"the game is over ({self.result_text()})")
        if HUMAN not in self.seats:
            raise ConflictError("only a human player can resign")
        loser = (
            self.state.to_move
            if self.seats[self.state.to_move] == HUMAN
            else (self.seats.index(HUMAN))
        )
        self.ended = (1 - loser, "resignation")
        self.generation += 1
        self.changed()


# ------------------------------------------------------------------ new-game requests


def request_rules(data: dict[str, Any]) -> jc.Rules:
    """The rule set a new-game request names (``"rules"``, one of :data:`RULE_SETS`)."""
    name = field(data, "rules", str, "dark")
    if name.lower() not in RULE_SETS:
        raise BadRequestError(f"rules must be one of {list(RULE_SETS)}, not {name!r}")
    return jc.rules_by_name(name)


def request_seats(data: dict[str, Any]) -> tuple[str, str]:
    """The two seats of a new-game request: its ``"mode"`` (:data:`MODES`), ``"agent"``,
    ``"agent1"`` (the second agent watched) and ``"side"`` (the human's, 0 or 1).

    >>> request_seats({"mode": "human-agent", "agent": "greedy", "side": 1})
    ('greedy', 'human')
    """
    mode = field(data, "mode", str, "human-agent")
    if mode not in MODES:
        raise BadRequestError(f"mode must be one of {list(MODES)}, not {mode!r}")
    agent = field(data, "agent", str, "random")
    if len(agent) > SPEC_LIMIT:
        raise BadRequestError("agent spec too long")
    if mode == "human-human":
        return HUMAN, HUMAN
    if mode == "agent-agent":
        agent1 = field(data, "agent1", str, agent)
        if len(agent1) > SPEC_LIMIT:
            raise BadRequestError("agent spec too long")
        return agent, agent1
    side = field(data, "side", int, 0)
    if side not in (0, 1):
        raise BadRequestError(f"side must be 0 (move first) or 1, not {side}")
    return (HUMAN, agent) if side == 0 else (agent, HUMAN)


def request_options(data: dict[str, Any], default_hint: str) -> dict[str, Any]:
    """The keywords of :meth:`ServedGame.create` a new-game request gives: ``"clock"``,
    ``"hint"`` (the hint agent's spec; ``default_hint`` when empty) and ``"delay"``.

    >>> request_options({"clock": "5+3"}, "greedy")
    {'clock': '5+3', 'hint': 'greedy', 'delay': 0.5}
    """
    clock = field(data, "clock", str, None)
    hint = field(data, "hint", str, None)
    if (clock and len(clock) > 20) or (hint and len(hint) > SPEC_LIMIT):
        raise BadRequestError("clock or hint text too long")
    return {
        "clock": clock or None,
        "hint": hint or default_hint,
        "delay": field(data, "delay", float, 0.5),
    }
