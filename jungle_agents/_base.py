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
from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np

from jungle_agents._fields import build_config, canonical_name, config_fields
from jungle_core import JungleError, Rules, State

__all__ = [
    "Agent",
    "AgentFactory",
    "AgentFailure",
    "AgentSpecError",
    "Measured",
    "Param",
    "Preset",
    "agent_kinds",
    "canonical_name",
    "describe_agents",
    "expand_preset",
    "kind_help",
    "kind_params",
    "load_plugins",
    "make_agent",
    "params_of",
    "parse_spec",
    "presets",
    "register_agent",
    "register_configured",
    "register_preset",
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


def params_of(
    cls: type, names: Sequence[str] | None = None, *, help_prefix: str = ""
) -> dict[str, Param]:
    """Spec parameters declared by the fields of an attrs class: a field with a ``help``
    in its ``metadata`` (and ``choices``, if only some values are allowed) is a parameter
    of its own type (``int``, ``float``, ``bool`` or ``str``, read from the annotation)
    and default, so that each is written once, on the field; a field with a ``section``
    in its metadata brings in its own class's parameters (see
    :mod:`jungle_agents._fields`). ``names`` picks parameters and their order (by
    default all, in declaration order); ``help_prefix`` starts each help text.

    >>> @attrs.frozen
    ... class Knobs:
    ...     depth: int = attrs.field(default=2, metadata={"help": "how deep"})
    ...     scale: float = 1.0
    >>> params_of(Knobs)
    {'depth': Param(kind=<class 'int'>, default=2, help='how deep', choices=())}
    """
    fields = {f.name: f for f in config_fields(cls, help_prefix)}
    chosen = list(fields) if names is None else names
    out: dict[str, Param] = {}
    for name in chosen:
        field = fields.get(name)
        if field is None:
            raise TypeError(f"{cls.__name__} declares no parameter {name!r}")
        out[name] = Param(field.kind, field.default, field.help, field.choices)
    return out


AgentFactory = Callable[..., Agent]
"""``factory(rules, **params) -> Agent``; params are the parsed spec parameters."""


@attrs.frozen
class _Kind:
    factory: Callable[..., Agent]
    params: Mapping[str, Param]
    help: str
    config: type | None = None
    """The settings class of a kind registered by :func:`register_configured`: the
    factory then takes ``(rules, settings)``."""

    def settings(self, values: Mapping[str, ParamValue], spec: str) -> object | None:
        """The kind's settings built from ``values`` (None for a kind without a class);
        the class's ``ValueError`` as an :class:`AgentSpecError` naming ``spec``."""
        if self.config is None:
            return None
        try:
            settings: object = build_config(self.config, values)
        except (ValueError, TypeError) as error:
            raise AgentSpecError(f"agent spec {spec!r}: {error}") from error
        return settings

    def build(self, rules: Rules, values: Mapping[str, ParamValue], spec: str) -> Agent:
        """The agent ``values`` describe (the factory's ``ValueError`` or ``TypeError``
        as an :class:`AgentSpecError` naming ``spec``)."""
        settings = self.settings(values, spec)
        try:
            if self.config is not None:
                return self.factory(rules, settings)
            return self.factory(rules, **values)
        except (ValueError, TypeError) as error:
            if isinstance(error, AgentSpecError):
                raise
            raise AgentSpecError(f"agent spec {spec!r}: {error}") from error


_REGISTRY: dict[str, _Kind] = {}
ENTRY_POINT_GROUP = "jungle.agents"
_plugins_loaded = False


@attrs.frozen
class Measured:
    """How strong a preset was measured: its ``score`` (wins plus half the draws, per
    game) against ``opponent`` (a spec) over ``games`` games, ``ms`` milliseconds a
    decision on average, and ``source``, where the figures and their commands are."""

    score: float
    opponent: str
    games: int
    ms: float
    source: str = "docs/results.md"


@attrs.frozen
class Preset:
    """A plain name for a full agent spec, with the rule set it was measured on
    (``rules``, a rule set's name) and its :class:`Measured` figures."""

    name: str
    spec: str
    rules: str
    measured: Measured
    help: str = ""

    def describe(self) -> str:
        """One line: the spec and its measured figures.

        >>> Preset("p", "minimax:depth=3", "DARK", Measured(0.88, "greedy", 200, 84.0)).describe()
        'minimax:depth=3 (DARK: 0.880 against greedy over 200 games, 84 ms a decision)'
        """
        m = self.measured
        return (
            f"{self.spec} ({self.rules}: {m.score:.3f} against {m.opponent} over {m.games} "
            f"games, {m.ms:g} ms a decision)" + (f"; {self.help}" if self.help else "")
        )


_PRESETS: dict[str, Preset] = {}


def register_preset(name: str, spec: str, rules: Rules, measured: Measured, help: str = "") -> None:
    """Make ``name`` stand for the agent ``spec``, measured on ``rules`` as ``measured``
    says: ``make_agent(name, rules)`` builds ``spec``'s agent (named by its own
    canonical spec, so records stay readable without the preset), and parameters after
    the name override the spec's (``name:simulations=512``). Registering the same
    name again replaces it; a kind's name cannot be a preset's.

    >>> from jungle_core import DARK
    >>> register_preset("deep", "minimax:depth=4", DARK, Measured(0.9, "greedy", 10, 300.0))
    >>> make_agent("deep", DARK).name, make_agent("deep:depth=2", DARK).name
    ('minimax:depth=4', 'minimax:depth=2')
    >>> forget = _PRESETS.pop("deep")
    """
    key = name.strip().lower()
    if not key or any(ch in key for ch in ":,= "):
        raise AgentSpecError(
            f"preset name {name!r} must be non-empty without ':', ',', '=' or spaces"
        )
    if key in _REGISTRY:
        raise AgentSpecError(f"preset name {key!r} is already an agent kind")
    kind, _ = parse_spec(spec)
    if kind in _PRESETS:
        raise AgentSpecError(f"preset {key!r} names another preset ({spec!r}), not a kind")
    _PRESETS[key] = Preset(key, spec.strip(), rules.name, measured, help)


def presets() -> dict[str, Preset]:
    """The registered presets by name, sorted (plugins loaded; a copy).

    >>> presets()["minimax-strong"].rules
    'CLASSIC'
    """
    load_plugins()
    return dict(sorted(_PRESETS.items()))


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
    if key in _PRESETS:
        raise AgentSpecError(f"agent kind {key!r} is already a preset's name")
    _REGISTRY[key] = _Kind(factory, dict(params or {}), help)


def register_configured(
    name: str,
    config: type,
    factory: Callable[[Rules, Any], Agent],
    help: str = "",
    *,
    params: Mapping[str, Param] | None = None,
    replace: bool = False,
) -> None:
    """Make ``name`` buildable by :func:`make_agent`, its parameters the fields of the
    attrs class ``config`` (:func:`params_of`): a spec's values build a ``config``
    (whose own checks run, also in :func:`check_spec`; a ``ValueError`` becomes an
    :class:`AgentSpecError` naming the spec) and ``factory(rules, settings)`` builds the
    agent, which names itself with :func:`canonical_name`. ``params`` replaces
    ``params_of(config)`` where the help texts are adapted to the kind (the same names).

    >>> from jungle_core import DARK
    >>> @attrs.frozen
    ... class Fixed:
    ...     action: int = attrs.field(default=0, metadata={"help": "the action"})
    ...     def __attrs_post_init__(self):
    ...         if self.action < 0:
    ...             raise ValueError("action must be >= 0")
    >>> class Always:
    ...     def __init__(self, rules, settings):
    ...         self.name, self.action = canonical_name("always", settings), settings.action
    ...     def act(self, state, rng):
    ...         return self.action
    >>> register_configured("always", Fixed, Always, "plays one action")
    >>> make_agent("always:action=3", DARK).name
    'always:action=3'
    >>> check_spec("always:action=-1")
    Traceback (most recent call last):
    ...
    jungle_agents._base.AgentSpecError: agent spec 'always:action=-1': action must be >= 0
    >>> unregister = _REGISTRY.pop("always")
    """
    declared = params_of(config)
    if params is not None and list(params) != list(declared):
        raise TypeError(f"params of {name!r} must be {list(declared)}, not {list(params)}")
    register_agent(name, factory, declared if params is None else params, help, replace=replace)
    key = name.strip().lower()
    _REGISTRY[key] = attrs.evolve(_REGISTRY[key], config=config)


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
    found = presets()
    if found:
        lines.append("presets (a plain name for a measured spec; name:key=value overrides):")
        lines += [f"    {name} = {preset.describe()}" for name, preset in found.items()]
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


def expand_preset(spec: str) -> tuple[str, dict[str, str]]:
    """The kind and parameters a spec stands for (:func:`parse_spec`), a preset's name
    replaced by its spec, whose parameters the spec's own override.

    >>> expand_preset("minimax-strong:time=1")
    ('minimax', {'time': '1', 'depth': '30', 'quiescence': '1'})
    >>> expand_preset("minimax:depth=2")
    ('minimax', {'depth': '2'})
    """
    name, raw = parse_spec(spec)
    load_plugins()
    preset = _PRESETS.get(name)
    if preset is None:
        return name, raw
    kind, base = parse_spec(preset.spec)
    return kind, {**base, **raw}


def _resolve(spec: str) -> tuple[_Kind, dict[str, ParamValue]]:
    """The kind a spec names (or its preset stands for) and every parameter's value
    (given or default)."""
    name, raw = expand_preset(spec)
    kind = _REGISTRY.get(name)
    if kind is None:
        raise AgentSpecError(
            f"unknown agent {name!r} in spec {spec!r}; valid agents: {', '.join(agent_kinds())}"
            + (f"; presets: {', '.join(sorted(_PRESETS))}" if _PRESETS else "")
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
    or compile a search). A kind registered with a settings class
    (:func:`register_configured`) has its values checked by that class here; other
    kinds' checks of their values run when the agent is built.

    >>> check_spec("minimax:depth=3")
    >>> check_spec("minimax:dept=3")
    Traceback (most recent call last):
    ...
    jungle_agents._base.AgentSpecError: minimax takes no parameter 'dept' ...
    """
    kind, values = _resolve(spec)
    kind.settings(values, spec)


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
    return kind.build(rules, values, spec)
