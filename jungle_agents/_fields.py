"""An agent kind's settings declared once, as the fields of an attrs class.

A field is a spec parameter when its ``metadata`` holds a ``help`` line (and ``choices``
where only some values are allowed): its type (``int``, ``float``, ``bool`` or ``str``,
or a ``Literal`` of strings), default, help and choices are read from the field, so the
registry's parameters, the agent's canonical name and the docs' table all come from the
one declaration. A field whose ``metadata`` holds a ``section`` (a help prefix, possibly
empty) and whose type is another such class contributes that class's parameters, by
their own names: a kind's settings may gather several classes (Minimax's search, its
DARK weights and its evaluation). The class validates its values when built (a
``ValueError`` from ``__attrs_post_init__``), which the registry reports as an
:class:`~jungle_agents.AgentSpecError` naming the spec.

This module knows nothing of the registry: :func:`jungle_agents.params_of` turns
:func:`config_fields` into its parameters.
"""

from __future__ import annotations

import contextlib
import typing
from collections.abc import Collection, Iterator, Mapping
from typing import Any

import attrs

__all__ = ["ConfigField", "build_config", "canonical_name", "config_fields", "spec_text"]

_KINDS: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}


@attrs.frozen
class ConfigField:
    """One spec parameter read from a field: the path of attribute names that reaches it
    (a section's fields are one step deeper), its value type, default, help and choices."""

    path: tuple[str, ...]
    kind: type
    default: bool | int | float | str
    help: str
    choices: tuple[bool | int | float | str, ...]

    @property
    def name(self) -> str:
        """The parameter's name in a spec: the field's own name."""
        return self.path[-1]


def _kind_of(annotation: object) -> tuple[type | None, tuple[str, ...]]:
    """The value type an annotation denotes and, for a ``Literal``, its choices."""
    if isinstance(annotation, type):
        return _KINDS.get(annotation.__name__), ()
    if isinstance(annotation, str):
        return _KINDS.get(annotation), ()
    if typing.get_origin(annotation) is typing.Literal:
        args = typing.get_args(annotation)
        if args and all(isinstance(arg, str) for arg in args):
            return str, tuple(args)
    return None, ()


def _resolved(cls: type) -> tuple[attrs.Attribute[Any], ...]:
    """The attrs fields of ``cls`` with their annotations resolved to types."""
    with contextlib.suppress(NameError, TypeError):  # unresolved: read as written
        attrs.resolve_types(cls)
    return tuple(attrs.fields(cls))


def _walk(cls: type, prefix: tuple[str, ...], help_prefix: str) -> Iterator[ConfigField]:
    for field in _resolved(cls):
        meta = field.metadata
        if "section" in meta:
            inner = field.type
            if not (isinstance(inner, type) and attrs.has(inner)):
                raise TypeError(f"{cls.__name__}.{field.name}: a section must be an attrs class")
            yield from _walk(inner, (*prefix, field.name), help_prefix + str(meta["section"]))
            continue
        if "help" not in meta:
            continue
        kind, literal = _kind_of(field.type)
        default = field.default
        if kind is None or not isinstance(default, bool | int | float | str):
            raise TypeError(
                f"{cls.__name__}.{field.name} is not a parameter: it needs an int, float, bool "
                "or str type, a plain default and a help text in its metadata"
            )
        choices = tuple(meta.get("choices", literal))
        yield ConfigField(
            (*prefix, field.name), kind, default, help_prefix + str(meta["help"]), choices
        )


def config_fields(cls: type, help_prefix: str = "") -> tuple[ConfigField, ...]:
    """The spec parameters ``cls`` declares, in declaration order (sections expanded in
    place); :class:`TypeError` for a malformed declaration or two parameters of one name.

    >>> @attrs.frozen
    ... class Knobs:
    ...     depth: int = attrs.field(default=2, metadata={"help": "how deep"})
    ...     scale: float = 1.0
    >>> [(f.name, f.kind.__name__, f.default) for f in config_fields(Knobs)]
    [('depth', 'int', 2)]
    """
    found = tuple(_walk(cls, (), help_prefix))
    seen: set[str] = set()
    for field in found:
        if field.name in seen:
            raise TypeError(f"{cls.__name__} declares the parameter {field.name!r} twice")
        seen.add(field.name)
    return found


def build_config(cls: type, values: Mapping[str, object]) -> Any:
    """An instance of ``cls`` with the parameters named in ``values`` set (the others at
    their defaults; sections built the same way). The class's own checks run: a bad
    value raises its ``ValueError``.

    >>> @attrs.frozen
    ... class Knobs:
    ...     depth: int = attrs.field(default=2, metadata={"help": "how deep"})
    >>> build_config(Knobs, {"depth": 5})
    Knobs(depth=5)
    """
    kwargs: dict[str, object] = {}
    for field in _resolved(cls):
        if "section" in field.metadata and isinstance(field.type, type):
            kwargs[field.name] = build_config(field.type, values)
        elif "help" in field.metadata and field.name in values:
            kwargs[field.name] = values[field.name]
    return cls(**kwargs)


def spec_text(value: object) -> str:
    """A value as a spec writes it: a bool as ``0``/``1``, a float in ``g`` format.

    >>> spec_text(True), spec_text(0.25), spec_text(30), spec_text("value")
    ('1', '0.25', '30', 'value')
    """
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def canonical_name(kind: str, config: attrs.AttrsInstance, *, always: Collection[str] = ()) -> str:
    """The spec naming an agent of ``kind`` with the settings ``config``: ``kind``, then
    ``:`` and ``name=value`` for every parameter that differs from its default (and those
    in ``always``), in declaration order, as specs are written (``minimax:depth=2,tt=0``).
    The same settings always give the same name, however the spec that built them was
    written.

    >>> @attrs.frozen
    ... class Knobs:
    ...     depth: int = attrs.field(default=2, metadata={"help": "how deep"})
    ...     tt: bool = attrs.field(default=True, metadata={"help": "a table"})
    >>> canonical_name("knobs", Knobs()), canonical_name("knobs", Knobs(tt=False))
    ('knobs', 'knobs:tt=0')
    >>> canonical_name("knobs", Knobs(), always=("depth",))
    'knobs:depth=2'
    """
    parts = []
    for field in config_fields(type(config)):
        value: Any = config
        for step in field.path:
            value = getattr(value, step)
        if value != field.default or field.name in always:
            parts.append(f"{field.name}={spec_text(value)}")
    return f"{kind}:{','.join(parts)}" if parts else kind
