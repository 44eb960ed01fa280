"""The agent protocol, and the registry that builds agents from spec strings.

An agent spec is ``name`` or ``name:key=value,key=value`` (e.g. ``minimax:depth=3,tt=0``).
Every agent kind registers a factory with the parameters it accepts. Other packages add
kinds without this package importing them: a distribution declares an entry point in the
group ``jungle.agents`` naming a function that calls :func:`register_agent` (the learned
agents of :mod:`jungle_train` come in this way); the registry loads every such entry point
the first time it is asked for a kind, in every process (arena workers included).
"""

from __future__ import annotations

import importlib.metadata
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import attrs
import numpy as np

from jungle_core import JungleError, Rules, State

__all__ = [
    "Agent",
    "AgentFactory",
    "AgentFailure",
    "AgentSpecError",
    "Param",
    "agent_kinds",
    "describe_agents",
    "kind_help",
    "kind_params",
    "load_plugins",
    "make_agent",
    "params_of",
    "parse_spec",
    "register_agent",
]

ParamValue = int | float | bool | str


@runtime_checkable
class Agent(Protocol):
    """A game-playing agent: it sees only the state and returns a legal action.

    ``act`` gets the state to move in and a numpy ``Generator`` (the agent's only source
    of randomness, so a seeded game replays exactly); it returns one action integer (the
    encoding of docs/rules.md) that is legal in ``state``. ``name`` labels the agent in reports.

    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> agent = make_agent("random", DARK)
    >>> isinstance(agent, Agent)
    True
    >>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    True
    """

    name: str

    def act(self, state: State, rng: np.random.Generator) -> int:
        """A legal action for the player to move in ``state``."""
        ...


class AgentFailure(JungleError):
    """An agent could not give a move: an external engine that crashed, hung or answered
    an illegal move. The arena records the game as a forfeit by that agent's side, with
    this message, and goes on; any other exception from an agent stops the run."""


class AgentSpecError(JungleError):
    """An agent spec string names an unknown agent or a bad parameter."""


@attrs.frozen
class Param:
    """One parameter an agent kind accepts in its spec string.

    - ``kind``: ``int`` (at most 18 digits), ``float`` (finite: ``nan`` and ``inf`` are
      refused for every float parameter), ``bool`` (written ``0``/``1``/``true``/``false``)
      or ``str``.
    - ``default``: the value when the spec does not name it.
    - ``help``: one line for error messages and ``jungle agents``.
    - ``choices``: the allowed values, when only some are.
    """

    kind: type
    default: ParamValue
    help: str = ""
    choices: tuple[ParamValue, ...] = ()

    def parse(self, text: str, where: str) -> ParamValue:
        """The value ``text`` denotes, or :class:`AgentSpecError` naming ``where``.

        >>> Param(int, 3).parse("4", "minimax:depth")
        4
        >>> Param(bool, False).parse("1", "minimax:tt")
        True
        """
        value: ParamValue
        try:
            if self.kind is bool:
                low = text.strip().lower()
                if low in ("1", "true", "yes", "on"):
                    value = True
                elif low in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise ValueError(text)
            elif self.kind is int:
                if len(text.strip()) > 18:
                    raise ValueError(text)
                value = int(text)
            elif self.kind is float:
                value = float(text)
                if not math.isfinite(value):
                    raise ValueError(text)
            else:
                value = text
        except ValueError:
            shown = text if len(text) <= 40 else f"{text[:40]}..."
            raise AgentSpecError(
                f"{where}={shown!r} is not a valid {self.kind.__name__}"
                + (" (write 0 or 1)" if self.kind is bool else "")
                + (" (a finite number)" if self.kind is float else "")
            ) from None
        if self.choices and value not in self.choices:
            raise AgentSpecError(f"{where}={text!r} must be one of {list(self.choices)}")
        return value


_KINDS: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}


def params_of(
    cls: type[attrs.AttrsInstance], names: Sequence[str] | None = None, *, help_prefix: str = ""
) -> dict[str, Param]:
    """Spec parameters declared by the fields of an attrs class: a field with a ``help``
    in its ``metadata`` (and ``choices``, if only some values are allowed) is a parameter
    of its own type (``int``, ``float``, ``bool`` or ``str``) and default, so that each is
    written once, on the field. ``names`` picks fields and their order (by default every
    field with a ``help``, in order); ``help_prefix`` starts each help text.

    >>> @attrs.frozen
    ... class Knobs:
    ...     depth: int = attrs.field(default=2, metadata={"help": "how deep"})
    ...     scale: float = 1.0
    >>> params_of(Knobs)
    {'depth': Param(kind=<class 'int'>, default=2, help='how deep', choices=())}
    """
    fields = {f.name: f for f in attrs.fields(cls)}
    chosen = [n for n, f in fields.items() if "help" in f.metadata] if names is None else names
    out: dict[str, Param] = {}
    for name in chosen:
        field = fields[name]
        kind = _KINDS.get(field.type if isinstance(field.type, str) else field.type.__name__)
        if kind is None or "help" not in field.metadata or field.default is attrs.NOTHING:
            raise TypeError(
                f"{cls.__name__}.{name} is not a parameter: it needs an int, float, bool or "
                "str type, a plain default and a help text in its metadata"
            )
        out[name] = Param(
            kind,
            field.default,
            help_prefix + field.metadata["help"],
            tuple(field.metadata.get("choices", ())),
        )
    return out


AgentFactory = Callable[..., Agent]
"""``factory(rules, **params) -> Agent``; params are the parsed spec parameters."""


@attrs.frozen
class _Kind:
    factory: AgentFactory
    params: Mapping[str, Param]
    help: str


_REGISTRY: dict[str, _Kind] = {}
ENTRY_POINT_GROUP = "jungle.agents"
_plugins_loaded = False


def load_plugins() -> None:
    """Load every ``jungle.agents`` entry point once per process (see the module
    docstring); one that fails to load is reported as a warning, not fatal."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            entry.load()()
        except Exception as error:
            warnings.warn(
                f"agent plugin {entry.name!r} ({entry.value}) failed to load: "
                f"{type(error).__name__}: {error}",
                stacklevel=2,
            )


def register_agent(
    name: str,
    factory: AgentFactory,
    params: Mapping[str, Param] | None = None,
    help: str = "",
    *,
    replace: bool = False,
) -> None:
    """Make ``name`` buildable by :func:`make_agent`.

    ``factory(rules, **params)`` gets the rule set and every parameter of ``params`` (the
    spec's value or the default). Registering a taken name raises unless ``replace``.

    >>> from jungle_core import DARK
    >>> class Always:
    ...     def __init__(self, rules, action):
    ...         self.name, self.action = f"always:{action}", action
    ...     def act(self, state, rng):
    ...         return self.action
    >>> register_agent("always", Always, {"action": Param(int, 0)}, "plays one action")
    >>> make_agent("always:action=3", DARK).act(None, None)
    3
    >>> unregister = _REGISTRY.pop("always")
    """
    key = name.strip().lower()
    if not key or any(ch in key for ch in ":,= "):
        raise AgentSpecError(
            f"agent name {name!r} must be non-empty without ':', ',', '=' or spaces"
        )
    if key in _REGISTRY and not replace:
        raise AgentSpecError(f"agent kind {key!r} is already registered")
    _REGISTRY[key] = _Kind(factory, dict(params or {}), help)


def agent_kinds() -> tuple[str, ...]:
    """The registered agent names, sorted.

    >>> {"random", "greedy", "minimax"} <= set(agent_kinds())
    True
    """
    load_plugins()
    return tuple(sorted(_REGISTRY))


def kind_help(name: str) -> str:
    """The one-line description the agent kind ``name`` was registered with.

    >>> kind_help("random")
    'uniformly random legal actions'
    """
    return _kind(name).help


def kind_params(name: str) -> dict[str, Param]:
    """The parameters the agent kind ``name`` takes, by name (a copy).

    >>> sorted(kind_params("random"))
    []
    >>> kind_params("minimax")["depth"].kind
    <class 'int'>
    """
    return dict(_kind(name).params)


def _kind(name: str) -> _Kind:
    load_plugins()
    kind = _REGISTRY.get(name.strip().lower())
    if kind is None:
        raise AgentSpecError(f"unknown agent {name!r}; valid agents: {', '.join(agent_kinds())}")
    return kind


def describe_agents() -> str:
    """A help text: every agent kind with its parameters and their defaults.

    >>> "minimax" in describe_agents()
    True
    """
    lines = []
    for key in agent_kinds():
        kind = _REGISTRY[key]
        lines.append(f"{key}: {kind.help}")
        for pname, p in kind.params.items():
            choices = f" (one of {list(p.choices)})" if p.choices else ""
            lines.append(f"    {pname}={p.default!r}: {p.help}{choices}")
    return "\n".join(lines)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``name:key=value,...`` into the name and the raw parameter texts.

    >>> parse_spec("minimax:depth=3,tt=0")
    ('minimax', {'depth': '3', 'tt': '0'})
    >>> parse_spec(" Random ")
    ('random', {})
    """
    text = spec.strip()
    name, _, rest = text.partition(":")
    name = name.strip().lower()
    if not name:
        raise AgentSpecError(
            f"agent spec {spec!r} has no agent name; choose one of {agent_kinds()}"
        )
    params: dict[str, str] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key = key.strip().lower()
            if not eq or not key:
                raise AgentSpecError(
                    f"{item.strip()!r} in agent spec {spec!r} is not key=value "
                    f"(write e.g. 'minimax:depth=3,tt=1')"
                )
            if key in params:
                raise AgentSpecError(f"parameter {key!r} is given twice in agent spec {spec!r}")
            params[key] = value.strip()
    return name, params


def _resolve(spec: str) -> tuple[_Kind, dict[str, ParamValue]]:
    """The kind a spec names and every parameter's value (given or default)."""
    name, raw = parse_spec(spec)
    load_plugins()
    kind = _REGISTRY.get(name)
    if kind is None:
        raise AgentSpecError(
            f"unknown agent {name!r} in spec {spec!r}; valid agents: {', '.join(agent_kinds())}"
        )
    values: dict[str, ParamValue] = {}
    for key, text in raw.items():
        param = kind.params.get(key)
        if param is None:
            valid = ", ".join(f"{k} ({p.kind.__name__})" for k, p in kind.params.items())
            raise AgentSpecError(
                f"{name} takes no parameter {key!r} (in spec {spec!r}); "
                f"valid parameters: {valid or 'none'}"
            )
        values[key] = param.parse(text, f"{name}:{key}")
    for key, param in kind.params.items():
        values.setdefault(key, param.default)
    return kind, values


def check_spec(spec: str) -> None:
    """Refuse a spec whose agent or parameters are unknown or malformed, as
    :func:`make_agent` would, without building the agent (which may load a checkpoint
    or compile a search); the agent's own checks of its values run when it is built.

    >>> check_spec("minimax:depth=3")
    >>> check_spec("minimax:dept=3")
    Traceback (most recent call last):
    ...
    jungle_agents._base.AgentSpecError: minimax takes no parameter 'dept' ...
    """
    _resolve(spec)


def make_agent(spec: str, rules: Rules) -> Agent:
    """Build an agent from a spec string for a rule set.

    Unknown names and unknown or malformed parameters raise :class:`AgentSpecError`,
    whose message lists what is valid.

    >>> from jungle_core import DARK
    >>> make_agent("minimax:depth=2", DARK).name
    'minimax:depth=2'
    >>> make_agent("minmax", DARK)
    Traceback (most recent call last):
    ...
    jungle_agents._base.AgentSpecError: unknown agent 'minmax' in spec 'minmax'; valid agents: ...
    >>> make_agent("greedy:depth=2", DARK)
    Traceback (most recent call last):
    ...
    jungle_agents._base.AgentSpecError: greedy takes no parameter 'depth' ...
    """
    kind, values = _resolve(spec)
    try:
        return kind.factory(rules, **values)
    except (ValueError, TypeError) as error:
        if isinstance(error, AgentSpecError):
            raise
        raise AgentSpecError(f"agent spec {spec!r}: {error}") from error


def canonical_spec(name: str, values: Mapping[str, ParamValue], params: Mapping[str, Param]) -> str:
    """The spec string naming only the parameters that differ from their defaults."""
    parts = []
    for key, value in values.items():
        param = params.get(key)
        if param is not None and value == param.default:
            continue
        text = (
            str(int(value))
            if isinstance(value, bool)
            else f"{value:g}"
            if isinstance(value, float)
            else str(value)
        )
        parts.append(f"{key}={text}")
    return f"{name}:{','.join(parts)}" if parts else name
