"""The metrics file of a training run, and the names of the metrics in it.

The file is JSON Lines, one object per chunk of training, each line flushed and fsynced,
so it is readable while the run goes on and after a kill. A kill can stop the file on any
byte; the reader and the writer then agree on what the last line is: whole JSON without
its newline is a finished chunk's line (the reader counts it, and :class:`MetricsLog`
completes it with its newline before appending), anything else after the last newline
is torn (the reader skips it, and :class:`MetricsLog` cuts it off). Every line has ``step``
(environment steps so far) and ``time`` (seconds of training wall time so far), then the
metrics. Every learner writes the **common metrics** under the same names:

- ``score/<opponent>``: the learner's score ((wins + draws / 2) / games) in the
  evaluation games against ``<opponent>`` (an agent spec), on the lines of the steps
  where the run evaluated;
- ``loss``: the quantity the learner's updates descend, averaged over the chunk;
- ``decisions_per_s``: environment steps per second of the chunk, compile time left out
  (the seconds JAX spent compiling are ``compile_s``).

Beside them each learner writes its own (:data:`TITLES` lists every known name), among
them ``train_score/<opponent>`` (the score in its training games against that opponent)
for the learners that play an opponent. A name with a ``/`` is one member of a family:
``jungle plot`` draws each family in one panel, a line per member.

Files written before these names existed are read with their names translated
(:func:`upgrade`), so old runs still plot:

>>> upgrade({"step": 1, "steps_per_second": 9.0, "score_random": 0.5, "eval": {"greedy": 1.0}})
{'step': 1, 'decisions_per_s': 9.0, 'train_score/random': 0.5, 'score/greedy': 1.0}

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     log = MetricsLog(os.path.join(d, "metrics.jsonl"))
...     log.append({"step": 10, "time": 1.0, "loss": 0.5})
...     log.append({"step": 20, "time": 2.0, "loss": 0.25})
...     log.close()
...     log.truncate_after(10)
...     [m["step"] for m in read_metrics(os.path.join(d, "metrics.jsonl"))]
[10]
"""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path
from typing import Any

from jungle_train.common._checkpoint import atomic_write

__all__ = [
    "COMMON",
    "COMPILE_S",
    "DECISIONS_PER_S",
    "LOSS",
    "SCORE",
    "TITLES",
    "TRAIN_SCORE",
    "MetricsLog",
    "read_metrics",
    "upgrade",
]

SCORE = "score/"
"""Family of the evaluation scores: ``score/<opponent>``."""
LOSS = "loss"
"""The learner's training loss."""
DECISIONS_PER_S = "decisions_per_s"
"""Environment steps per second of training, compile time left out."""
TRAIN_SCORE = "train_score/"
"""Family of the scores in the training games: ``train_score/<opponent>``."""
COMPILE_S = "compile_s"
"""Seconds of the chunk that JAX spent tracing and compiling (JAX learners)."""

COMMON = (SCORE, LOSS, DECISIONS_PER_S)
"""The metrics every learner's run has (a family name ends in ``/``)."""

TITLES: dict[str, str] = {
    SCORE: "evaluation score (arena games)",
    LOSS: "loss",
    DECISIONS_PER_S: "decisions per second",
    TRAIN_SCORE: "score in training games",
    "win_rate/": "win rate in training games",
    "recent_score": "score of the latest training games",
    "epsilon": "exploration ε",
    "reward": "mean reward per decision",
    "episode_length": "game length",
    "episode_return": "return per game",
    "episodes": "games finished",
    "td_error": "mean |TD error|",
    "gamma": "discount γ",
    "learning_rate": "learning rate",
    "games": "games finished",
    "table_states": "states in the Q-table",
    "buffer": "transitions in replay",
    "policy_loss": "policy loss",
    "value_loss": "value loss",
    "afterstate_loss": "afterstate loss",
    "value_targets": "share of positions with a value target",
    "root_value": "mean root value of the search",
    "first_win_rate": "first player's win rate",
    "draw_rate": "draw rate",
    "labelled": "share of positions labelled",
    "mean_target": "mean value target",
    "games_ended": "games finished",
    "decisive": "decisive games",
}
"""Panel titles of the known metric names, in the order ``jungle plot`` draws them (a
family's entry ends in ``/``); the common ones first."""

_RENAMED = {
    "steps_per_second": DECISIONS_PER_S,
    "mean_reward": "reward",
    "win_rate": "recent_score",
    "game_length": "episode_length",
}
_RENAMED_PREFIX = {"score_": TRAIN_SCORE, "win_rate_": "win_rate/"}


def upgrade(line: dict[str, Any]) -> dict[str, Any]:
    """A metrics line with the names of older files translated to today's: the
    ``eval`` object (opponent → score) becomes ``score/<opponent>``,
    ``steps_per_second`` ``decisions_per_s``, ``score_<opponent>`` (training games)
    ``train_score/<opponent>``, ``win_rate_<opponent>`` ``win_rate/<opponent>``,
    ``mean_reward`` ``reward``, ``win_rate`` ``recent_score`` and ``game_length``
    ``episode_length``. A name the line already has in today's form wins; a line in
    today's names comes back equal."""
    out: dict[str, Any] = {}
    old: list[tuple[str, Any]] = []
    for name, value in line.items():
        if name == "eval" and isinstance(value, dict):
            old.extend((SCORE + str(opponent), score) for opponent, score in value.items())
        elif name in _RENAMED:
            old.append((_RENAMED[name], value))
        elif prefix := next((p for p in _RENAMED_PREFIX if name.startswith(p)), None):
            old.append((_RENAMED_PREFIX[prefix] + name[len(prefix) :], value))
        else:
            out[name] = value
    for name, value in old:
        out.setdefault(name, value)
    return out


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def _object(line: bytes) -> dict[str, Any] | None:
    """The JSON object on ``line``, or None where it is not one (torn, blank or other)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def _whole_end(data: bytes) -> tuple[int, bool]:
    """Where the whole lines of a metrics file's bytes end, and whether the last of them
    lacks its newline: a last line without one is whole when it is a JSON object (a
    proper prefix of a one-line object never is), torn otherwise.

    >>> _whole_end(b'{"step":1}\\n{"step":2}'), _whole_end(b'{"step":1}\\n{"st')
    ((21, True), (11, False))
    """
    if not data or data.endswith(b"\n"):
        return len(data), False
    start = data.rfind(b"\n") + 1
    if _object(data[start:]) is not None:
        return len(data), True
    return start, False


def read_metrics(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every whole line of a metrics file, in today's names (:func:`upgrade`): a last
    line without its newline counts when it is whole JSON (see the module docstring), a
    line that is not a JSON object is skipped, and a missing file has none."""
    p = Path(path)
    if not p.exists():
        return []
    out = []
    for line in p.read_bytes().split(b"\n"):
        entry = _object(line) if line.strip() else None
        if entry is not None:
            out.append(upgrade(entry))
    return out


class MetricsLog:
    """Append-only metrics file; see the module docstring."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            _seal(self.path)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def append(self, entry: dict[str, Any]) -> None:
        """Write one line (non-finite floats become null)."""
        self._file.write(json.dumps(_clean(entry), separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def truncate_after(self, step: int) -> None:
        """Drop the lines of steps after ``step`` (those a resumed run plays again);
        the lines kept are rewritten in today's names.

        A run appends a chunk's line before it writes the checkpoint of that chunk, so
        the file holds a line for every step a checkpoint reached; when it lacks the line
        of ``step`` (the file was cut after the run wrote it), a :class:`UserWarning`
        names the file and the step, and the run goes on without those lines."""
        self._file.close()
        keep = [m for m in read_metrics(self.path) if int(m.get("step", 0)) <= step]
        if step > 0 and not any(int(m.get("step", 0)) == step for m in keep):
            warnings.warn(
                f"{self.path}: no line for step {step}, where the run resumes; the file "
                "lost lines after the run wrote them, and their metrics are gone",
                stacklevel=2,
            )
        atomic_write(
            self.path, "".join(json.dumps(m, separators=(",", ":")) + "\n" for m in keep).encode()
        )
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def _seal(path: Path) -> None:
    """End the file on a whole line before appending: complete a whole last line with
    its newline, cut a torn one off (:func:`_whole_end`), each made durable (fsync)."""
    data = path.read_bytes()
    end, unterminated = _whole_end(data)
    if unterminated:
        with open(path, "ab") as f:
            f.write(b"\n")
            f.flush()
            os.fsync(f.fileno())
    elif end < len(data):
        atomic_write(path, data[:end])
