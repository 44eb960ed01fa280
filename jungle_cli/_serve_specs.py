"""Which agent specs ``jungle serve`` accepts from a request, checked without building one.

A request may name any agent of the registry with its parameters, within the server's own
bounds, and nothing that reaches outside the server's shipped data:

- **No server-side path or program.** A text parameter without a fixed set of choices
  (``path=``, ``value_path=``, an engine's ``cmd=``) names a file or a command on the
  server: a request may only leave it at its default (the shipped checkpoint). The
  server then never opens, tests or runs anything a client names, so no answer tells
  whether a path exists or is readable, and no request blocks on a FIFO or ``/dev/stdin``.
  The operator may allow whole specs at start (``--allow-agent``, :attr:`allowed`), and
  the server's own hint agent (``--hint``) is allowed by construction.
- **Every number in a range.** :data:`RANGES` bounds each numeric parameter of the
  built-in agents (search simulations, depths, seconds); any other numeric parameter
  (a plugin's) lies in ``-1e6..1e6``. An out-of-range value would otherwise overflow a
  JAX int32, allocate a search tree of billions of nodes or build gigabytes of tables.
- **Checked, not built.** Parsing uses the registry's own parameter types
  (:func:`jungle_agents.kind_params`), never :func:`jungle_agents.make_agent`: building an
  agent may load a checkpoint or compile a search (seconds, hundreds of MB), which the
  decision workers do, not the server's event loop.

>>> policy = SpecPolicy()
>>> policy.check("minimax:depth=2")
'minimax:depth=2'
>>> policy.check("azero-fast")  # a preset is checked as the spec it stands for
'azero:simulations=1024'
>>> policy.check("azero-strong")
Traceback (most recent call last):
...
jungle_cli._views.BadRequestError: azero:endgame=4 is out of range: this server accepts 0..3
>>> policy.check("dqn:path=/etc/shadow")
Traceback (most recent call last):
...
jungle_cli._views.BadRequestError: dqn:path names a file or program on the server, ...
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jungle_agents import (
    MAX_DEPTH,
    AgentSpecError,
    check_spec,
    expand_preset,
    kind_params,
    parse_spec,
)
from jungle_cli._views import BadRequestError

__all__ = ["RANGES", "SPEC_LIMIT", "SpecPolicy"]

SPEC_LIMIT = 200
"""Characters of an agent spec a request may send."""

GENERIC = (-1e6, 1e6)
"""The range of a numeric parameter :data:`RANGES` does not name (a plugin's)."""

RANGES: dict[tuple[str, str], tuple[float, float]] = {
    ("minimax", "depth"): (1, MAX_DEPTH),
    ("minimax", "qdepth"): (0, 16),
    ("minimax", "time"): (0, 60),
    ("azero", "simulations"): (1, 8192),
    ("azero", "face_down_simulations"): (0, 8192),
    ("azero", "time"): (0, 60),
    ("azero", "endgame"): (0, 3),  # 4 pieces: 1.7 GB of tables per material
    **{(kind, "epsilon"): (0, 1) for kind in ("approxq", "dqn", "qlearn", "value")},
}
"""The bounds ``(low, high)`` of the built-in agents' numeric parameters on the server."""

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,31}")
_REGISTRY_NAMES = {("minimax", "eval")}  # a registered evaluation's name: no path


def _normal(spec: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    name, raw = parse_spec(spec)
    return name, tuple(sorted(raw.items()))


class SpecPolicy:
    """The server's check of agent specs (module docstring); ``allowed`` are specs the
    operator allows whole, file parameters included."""

    def __init__(self, allowed: Sequence[str] = ()) -> None:
        self.allowed = frozenset(_normal(spec) for spec in allowed)

    def check(self, spec: str) -> str:
        """The agent's display name (its kind and the parameters not at their default, as
        written), or :class:`BadRequestError` saying what the server refuses.

        >>> SpecPolicy().check("azero:simulations=1000000000000")
        Traceback (most recent call last):
        ...
        jungle_cli._views.BadRequestError: azero:simulations=1000000000000 is out of range: ...
        """
        if not isinstance(spec, str) or len(spec) > SPEC_LIMIT:
            raise BadRequestError(f"an agent spec is a text of at most {SPEC_LIMIT} characters")
        try:
            check_spec(spec)
            name, raw = expand_preset(spec)  # a preset is checked as the spec it stands for
            params = kind_params(name)
        except AgentSpecError as error:
            raise BadRequestError(str(error)) from None
        operator = _normal(spec) in self.allowed
        shown = {}
        for key, text in raw.items():
            param = params[key]
            value = param.parse(text, f"{name}:{key}")
            if param.kind is str and not param.choices and not operator:
                named = (name, key) in _REGISTRY_NAMES and _NAME.fullmatch(text.lower())
                if value != param.default and not named:
                    raise BadRequestError(
                        f"{name}:{key} names a file or program on the server, which no request "
                        f"may do: this server plays the registry's agents with their shipped "
                        f"checkpoints (its operator may allow a spec with --allow-agent)"
                    )
            if param.kind in (int, float) and not operator:
                low, high = RANGES.get((name, key), GENERIC)
                number = float(value)
                if not low <= number <= high:
                    raise BadRequestError(
                        f"{name}:{key}={text[:24]} is out of range: this server accepts "
                        f"{low:g}..{high:g}"
                    )
            if value != param.default:
                shown[key] = f"{key}={text}"
        if name == "engine" and not operator:
            raise BadRequestError(
                "engine runs a program on the server, which no request may do (its operator "
                "may allow a spec with --allow-agent)"
            )
        written = [shown[key] for key in params if key in shown]  # the registry's order
        return f"{name}:{','.join(written)}" if written else name
