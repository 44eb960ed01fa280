"""``jungle play``: a human against an agent in the terminal, and ``jungle replay``.

:class:`PlaySession` and :func:`replay_session` read through an input function and
write through an output function (``input`` and ``print`` by default), so a test can
feed them scripted lines, raising ``EOFError`` at the end, and collect what they show.
A move the rules refuse, or text that is not a move, is answered with the board and the
legal moves, and the game goes on. :func:`add_play_parsers` adds both sub-commands to
the ``jungle`` command.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import numpy as np

import jungle_core as jc
from jungle_agents import Agent, make_agent
from jungle_agents.arena import (
    GameRecord,
    RecordError,
    decode_json,
    load_games,
    load_record,
    moves_text,
    replay,
    save_record,
)
from jungle_cli._args import add_command, add_rules, int_in

__all__ = ["Clock", "PlaySession", "load_any_record", "parse_clock", "replay_session"]

Input = Callable[[str], str]
Output = Callable[[str], None]

HELP = """commands:
  <move>        ?c1 reveals c1; c1-c2 moves from c1 to c2 (c1xc2 onto a piece)
  moves         list your legal moves
  hint          ask the hint agent for a move
  undo          take back your last move (and the reply to it)
  save FILE     save the game record as JSON
  load FILE     load a saved game and go on from its last position
  board         show the board again
  resign        give up the game
  quit          leave without finishing
  help          this text"""


@attrs.define
class Clock:
    """A chess clock: ``remaining[player]`` seconds, ``increment`` added after each move.

    >>> parse_clock("5+3")
    Clock(remaining=[300.0, 300.0], increment=3.0)
    """

    remaining: list[float]
    increment: float

    def spend(self, player: int, seconds: float) -> bool:
        """Charge a move's time; True if the player's flag fell (time ran out)."""
        self.remaining[player] -= seconds
        if self.remaining[player] < 0:
            return True
        self.remaining[player] += self.increment
        return False

    def text(self) -> str:
        """Both players' remaining time, ``m:ss``."""
        return "  ".join(
            f"player {p} {int(max(t, 0)) // 60}:{int(max(t, 0)) % 60:02d}"
            for p, t in enumerate(self.remaining)
        )


def parse_clock(text: str) -> Clock:
    """``MIN+INC`` (minutes, increment in seconds) as a :class:`Clock`; ``MIN`` alone is
    ``MIN+0``. Raises :class:`jungle_core.JungleError` with the expected form.

    >>> parse_clock("1.5").remaining
    [90.0, 90.0]
    """
    # at most 6 digits before the point: a clock of a million minutes is already absurd,
    # and longer numbers would overflow to an infinite clock
    number = r"(\d{1,6}(?:\.\d{1,6})?)"
    m = re.fullmatch(rf"\s*{number}\s*(?:\+\s*{number})?\s*", text, flags=re.ASCII)
    if m is None or float(m.group(1)) <= 0:
        shown = text if len(text) <= 30 else f"{text[:30]}..."
        raise jc.JungleError(
            f"--clock {shown!r} is not MIN+INC (minutes per player, then seconds added per "
            f"move), e.g. 5+3"
        )
    minutes = float(m.group(1))
    return Clock([minutes * 60.0, minutes * 60.0], float(m.group(2) or 0.0))


class PlaySession:
    """A game of a human (player ``side``) against an agent.

    ``input_fn(prompt)`` reads one line (raising ``EOFError`` at the end of input),
    ``output(text)`` shows text, ``clock_fn`` gives seconds (for the clock).
    """

    def __init__(
        self,
        rules: jc.Rules,
        opponent: str,
        side: int,
        *,
        seed: int = 0,
        clock: Clock | None = None,
        hint: str = "minimax:depth=2",
        input_fn: Input = input,
        output: Output = print,
        clock_fn: Callable[[], float] = time.monotonic,
    ) -> None:
        if side not in (0, 1):
            raise jc.JungleError(f"--side must be 0 (move first) or 1, not {side}")
        self.rules = rules
        self.opponent_spec = opponent
        self.opponent: Agent = make_agent(opponent, rules)
        self.hint_agent: Agent = make_agent(hint, rules)
        self.side = side
        self.seed = seed
        self.clock = clock
        self.input = input_fn
        self.out = output
        self.now = clock_fn
        self.chance_rng = np.random.default_rng(seed)
        self.agent_rng = np.random.default_rng(seed + 1)
        self.actions: list[int] = []
        self.outcomes: list[int] = []
        self.times: list[float] = []
        self.opening = 0  # a loaded record's random-opening plies (its ``opening``)
        self.state = jc.new_game(rules, seed=seed)
        self.result: str | None = None

    # ------------------------------------------------------------------ record

    def record(self) -> GameRecord:
        """The game so far as a record (``"unfinished"`` while it goes on)."""
        names = ["human", "human"]
        names[1 - self.side] = self.opponent.name
        return GameRecord.of_play(
            self.state,
            (names[0], names[1]),
            self.seed,
            self.actions,
            self.outcomes,
            self.times,
            opening=min(self.opening, len(self.actions)),
        )

    def _states(self) -> list[jc.State]:
        state = jc.new_game(self.rules, seed=self.seed)
        states = [state]
        for action, o in zip(self.actions, self.outcomes, strict=True):
            state = jc.step_outcome(state, action, o)
            states.append(state)
        return states

    # -------------------------------------------------------------------- play

    def _play(self, action: int, seconds: float) -> str:
        state = self.state
        text = jc.action_to_str(state, action)
        outs = jc.chance_outcomes(state, action)
        pick = int(self.chance_rng.integers(len(outs))) if len(outs) > 1 else 0
        o = outs[pick][0]
        self.state = jc.step_outcome(state, action, o)
        self.actions.append(action)
        self.outcomes.append(o)
        self.times.append(seconds)
        if o >= 0:
            letter = jc.RANK_LETTERS[(o & 7) + 1]
            owner = "yours" if o >> 3 == self.side else "the agent's"
            text += f" (turns up {jc.RANK_NAMES[(o & 7) + 1]} "
            text += f"{letter if o < 8 else letter.lower()}, {owner})"
        return text

    def _show(self) -> None:
        self.out(jc.render(self.state))
        if self.clock is not None:
            self.out(f"clock: {self.clock.text()}")

    def _finished(self) -> bool:
        result = jc.outcome(self.state)
        if result is None:
            return False
        if result.winner is None:
            self.result = f"draw ({result.reason.value})"
        elif result.winner == self.side:
            self.result = f"you win ({result.reason.value})"
        else:
            self.result = f"the agent wins ({result.reason.value})"
        self.out(f"game over: {self.result}")
        return True

    def _agent_turn(self) -> bool:
        start = self.now()
        action = self.opponent.act(self.state, self.agent_rng)
        seconds = self.now() - start
        text = self._play(action, seconds)
        self.out(f"{self.opponent.name} plays {text}")
        if self.clock is not None and self.clock.spend(1 - self.side, seconds):
            self.result = "you win on time"
            self.out(f"game over: the agent ran out of time: {self.result}")
            return True
        return False

    def run(self) -> str:
        """Play until the game ends, the human resigns or quits, or input ends; returns
        the result in words."""
        self.out(
            f"you are player {self.side} ({'upper' if self.side == 0 else 'lower'} "
            f"case), playing {self.opponent.name} on {self.rules.name}; type help"
        )
        self._show()
        while True:
            if self._finished():
                return self.result or ""
            if self.state.to_move != self.side:
                if self._agent_turn():
                    return self.result or ""
                self._show()
                continue
            start = self.now()
            try:
                line = self.input("your move> ")
            except EOFError:
                self.result = "quit (end of input)"
                self.out("end of input: leaving the game")
                return self.result
            seconds = self.now() - start
            if self.clock is not None and self.clock.remaining[self.side] - seconds < 0:
                self.clock.spend(self.side, seconds)
                self.result = "the agent wins on time"
                self.out(f"game over: your time ran out: {self.result}")
                return self.result
            outcome = self._command(line.strip(), seconds)
            if outcome is not None:
                return outcome

    def _command(self, line: str, seconds: float) -> str | None:
        word, _, rest = line.partition(" ")
        word = word.lower()
        rest = rest.strip()
        if not line:
            return None
        if word in ("help", "?", "h") and not rest:
            self.out(HELP)
        elif word in ("quit", "exit"):
            self.result = "quit"
            self.out("leaving the game")
            return self.result
        elif word == "resign":
            self.result = "resigned: the agent wins"
            self.out(f"game over: {self.result}")
            return self.result
        elif word in ("board", "show"):
            self._show()
        elif word in ("moves", "legal"):
            self.out(
                "legal moves: "
                + " ".join(jc.action_to_str(self.state, a) for a in jc.legal_actions(self.state))
            )
        elif word == "hint":
            action = self.hint_agent.act(self.state, np.random.default_rng(len(self.actions)))
            self.out(f"hint ({self.hint_agent.name}): {jc.action_to_str(self.state, action)}")
        elif word == "undo":
            self._undo()
        elif word == "save":
            if not rest:
                self.out("save needs a file name: save FILE")
            else:
                try:
                    save_record(self.record(), rest)
                    self.out(f"saved {len(self.actions)} plies to {rest}")
                except OSError as error:
                    self.out(f"cannot save to {rest}: {error}")
        elif word == "load":
            self._load(rest)
        else:
            try:
                action = jc.parse_action(self.state, line)
            except jc.IllegalActionError:
                shown = line if len(line) <= 30 else f"{line[:30]}..."
                self._refuse(f"{shown} is not legal in this position")
                return None
            except jc.JungleError as error:
                self._refuse(str(error))
                return None
            text = self._play(action, seconds)
            self.out(f"you play {text}")
            if self.clock is not None and self.clock.spend(self.side, seconds):
                self.result = "the agent wins on time"
                self.out(f"game over: your time ran out: {self.result}")
                return self.result
            self._show()
        return None

    def _refuse(self, why: str) -> None:
        # the board, not the position string, so that the player sees why; then the
        # moves that are legal here
        legal = " ".join(jc.action_to_str(self.state, a) for a in jc.legal_actions(self.state))
        self.out(why)
        self.out(jc.render(self.state))
        self.out(f"your legal moves: {legal}\n(type 'help' for the commands)")

    def _undo(self) -> None:
        # back to the position before the human's last move
        states = self._states()
        mine = [i for i in range(len(self.actions)) if states[i].to_move == self.side]
        if not mine:
            self.out("nothing to undo: you have not moved yet")
            return
        keep = mine[-1]
        del self.actions[keep:], self.outcomes[keep:], self.times[keep:]
        self.state = states[keep]
        self.out(f"took back your last move; back at ply {self.state.ply}")
        self._show()

    def _load(self, path: str) -> None:
        if not path:
            self.out("load needs a file name: load FILE")
            return
        try:
            record = load_any_record(path)
            states = replay(record)
            opponent = make_agent(self.opponent_spec, record.rules)
            hint_agent = make_agent(self.hint_agent.name, record.rules)
        except (OSError, jc.JungleError) as error:
            self.out(f"cannot load {path}: {error}")
            return
        self.rules = record.rules
        self.seed = record.seed
        self.opponent = opponent
        self.hint_agent = hint_agent
        self.actions = list(record.actions)
        self.outcomes = list(record.outcomes)
        self.times = list(record.times)
        self.opening = record.opening
        self.state = states[-1]
        self.out(f"loaded {path}: {len(self.actions)} plies of {self.rules.name}")
        self._show()


def load_any_record(path: str, game: int = 0) -> GameRecord:
    """A record from a JSON record file, or game ``game`` (0-based, file order) of a JSON
    Lines games file. A file that is one JSON value (not a games file's header or entry)
    is read as a record, so its error is the record's own."""
    data = Path(path).read_bytes()
    try:
        value = decode_json(data, path)
    except RecordError:
        value = None  # not one JSON value: JSON Lines, or not JSON at all
    games_line = type(value) is dict and (value.get("type") == "header" or "pair" in value)
    if (value is not None and not games_line) or (value is None and b"\n" not in data.strip()):
        return load_record(path)
    _, games = load_games(path)
    if not games:
        raise RecordError(f"{path} holds no game")
    if not 0 <= game < len(games):
        raise RecordError(f"{path} holds {len(games)} games; --game must be 0..{len(games) - 1}")
    return games[game].record


def replay_session(
    record: GameRecord, *, interactive: bool, input_fn: Input = input, output: Output = print
) -> None:
    """Step through a recorded game: the board after each ply.

    Interactive commands: Enter or ``n`` next, ``p`` previous, ``g N`` go to ply N,
    ``e`` the end, ``q`` quit. Otherwise every ply is printed in turn.
    """
    states = replay(record)
    texts = moves_text(record)
    output(
        f"{record.players[0]} (player 0) vs {record.players[1]} (player 1), "
        f"{record.rules.name}, seed {record.seed}: {record.plies} plies, "
        f"result {record.winner if record.winner is not None else 'draw'} ({record.reason})"
    )

    def show(ply: int) -> None:
        if ply > 0:
            who = states[ply - 1].to_move
            output(
                f"ply {ply}: player {who} plays {texts[ply - 1]} "
                f"({record.times[ply - 1] * 1000:.0f} ms)"
            )
        output(jc.render(states[ply]))

    if not interactive:
        for ply in range(len(states)):
            show(ply)
        return
    ply = 0
    show(ply)
    while True:
        try:
            line = input_fn("[Enter/n next, p previous, g N go to, e end, q quit]> ").strip()
        except EOFError:
            return
        word, _, rest = line.partition(" ")
        if word in ("", "n"):
            if ply == len(states) - 1:
                output("at the end of the game")
                continue
            ply += 1
        elif word == "p":
            if ply == 0:
                output("at the start of the game")
                continue
            ply -= 1
        elif word == "g":
            number = rest.strip()
            if not (number.isascii() and number.isdigit() and int(number) < len(states)):
                output(f"g needs a ply number 0..{len(states) - 1}")
                continue
            ply = int(number)
        elif word == "e":
            ply = len(states) - 1
        elif word == "q":
            return
        else:
            output(f"unknown command {line!r}")
            continue
        show(ply)


# ---------------------------------------------------------------- the commands


def _cmd_play(
    args: argparse.Namespace,
    input_fn: Callable[[str], str] = input,
    output: Callable[[str], None] = print,
    clock_fn: Callable[[], float] = time.monotonic,
) -> int:
    rules = jc.rules_by_name(args.rules)
    clock = parse_clock(args.clock) if args.clock else None
    session = PlaySession(
        rules,
        args.opponent,
        args.side,
        seed=args.seed,
        clock=clock,
        hint=args.hint,
        input_fn=input_fn,
        output=output,
        clock_fn=clock_fn,
    )
    session.run()
    return 0


def _cmd_replay(
    args: argparse.Namespace,
    input_fn: Callable[[str], str] = input,
    output: Callable[[str], None] = print,
) -> int:
    record = load_any_record(args.file, args.game)
    interactive = not args.all and sys.stdin.isatty() if args.interactive is None else True
    replay_session(record, interactive=interactive, input_fn=input_fn, output=output)
    return 0


def add_play_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``play`` and ``replay`` to the ``jungle`` command's sub-parsers.

    >>> parser = argparse.ArgumentParser()
    >>> add_play_parsers(parser.add_subparsers())
    >>> parser.parse_args(["play", "--clock", "5+3"]).opponent
    'minimax:depth=3'
    """
    play = add_command(
        sub,
        "play",
        summary="play against an agent in the terminal",
        description="Play a game against an agent in the terminal, typing moves such as ?c1 "
        "(reveal c1) or c1-c2; type help in the game for its commands (moves, hint, undo, "
        "save, load, resign). An optional clock gives each player MIN minutes and INC "
        "seconds more per move.",
        examples=[
            "jungle play",
            "jungle play --opponent greedy --side 1 --clock 5+3",
            "jungle play --rules classic --opponent minimax:depth=4",
        ],
    )
    add_rules(play)
    play.add_argument(
        "--opponent", default="minimax:depth=3", metavar="AGENT", help="agent spec to play"
    )
    play.add_argument(
        "--side", type=int, default=0, choices=(0, 1), help="your side: 0 moves first"
    )
    play.add_argument(
        "--clock",
        default=None,
        metavar="MIN+INC",
        help="minutes per player + seconds added per move, e.g. 5+3 (default: no clock)",
    )
    play.add_argument(
        "--seed",
        type=int_in(0, 2**63 - 1),
        default=0,
        metavar="N",
        help="seed of the chance outcomes",
    )
    play.add_argument(
        "--hint", default="minimax:depth=2", metavar="AGENT", help="agent spec giving hints"
    )
    play.set_defaults(func=_cmd_play)

    rep = add_command(
        sub,
        "replay",
        summary="step through a saved game",
        description="Show a saved game ply by ply: a record saved by jungle play or the "
        "browser page, or one game of a games file. In a terminal Enter steps forward, p "
        "back, g N jumps to ply N, e to the end; otherwise every ply is printed.",
        examples=["jungle replay game.json", "jungle replay games.jsonl --game 3 --all"],
    )
    rep.add_argument("file", help="a saved game (JSON) or a games file (JSON Lines)")
    rep.add_argument(
        "--game",
        type=int_in(0, 2**31 - 1),
        default=0,
        metavar="N",
        help="which game of a games file (0-based)",
    )
    rep.add_argument("--all", action="store_true", help="print every ply without stopping")
    rep.add_argument(
        "--interactive",
        action="store_const",
        const=True,
        default=None,
        help="step with Enter even when input is not a terminal",
    )
    rep.set_defaults(func=_cmd_replay)
