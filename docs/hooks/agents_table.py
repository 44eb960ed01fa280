"""MkDocs hook: the parameter tables of ``docs/agents.md``, generated from the registry.

The page holds the marker ``<!-- agent-parameters -->``; :func:`on_page_markdown`
replaces it with one table per registered agent kind (its help line, then each
parameter's name, type, default, allowed values and help), read from
:mod:`jungle_agents`' registry at build time, so the documented parameters are always
the ones :func:`jungle_agents.make_agent` accepts. Kinds that plugins register through
the ``jungle.agents`` entry points (the learned agents of :mod:`jungle_train`) are
listed too when their package is installed.

The module needs no MkDocs to import; ``mkdocs.yml`` names it under ``hooks:``.

>>> text = on_page_markdown("# Agents\\n\\n" + MARKER + "\\n", page=None, config=None, files=None)
>>> "| `depth` | int | `3` |" in text and MARKER not in text
True
"""

from __future__ import annotations

from collections.abc import Mapping

from jungle_agents import Param, agent_kinds, kind_help, kind_params

__all__ = ["MARKER", "format_default", "on_page_markdown", "parameter_tables"]

MARKER = "<!-- agent-parameters -->"
"""The comment in a page that the tables replace."""


def format_default(value: bool | int | float | str) -> str:
    """A parameter value as a spec string writes it (``bool`` as ``0``/``1``).

    >>> format_default(True), format_default(1.0), format_default(3), format_default("")
    ('`1`', '`1.0`', '`3`', '(empty)')
    """
    if isinstance(value, bool):
        return f"`{int(value)}`"
    if value == "":
        return "(empty)"
    return f"`{value}`"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (no pipe, no line break)."""
    return text.replace("|", "\\|").replace("\n", " ")


def _table(params: Mapping[str, Param]) -> list[str]:
    if not params:
        return ["No parameters."]
    lines = [
        "| parameter | type | default | allowed | what it does |",
        "|---|---|---|---|---|",
    ]
    for name, param in params.items():
        allowed = ", ".join(format_default(c) for c in param.choices)
        lines.append(
            f"| `{name}` | {param.kind.__name__} | {format_default(param.default)} "
            f"| {allowed} | {_cell(param.help)} |"
        )
    return lines


def parameter_tables(heading: str = "###") -> str:
    """Markdown: for every registered agent kind, a ``heading`` with its name, its help
    line and the table of its parameters, kinds in alphabetical order.

    >>> tables = parameter_tables()
    >>> "### `random`" in tables and "### `minimax`" in tables
    True
    """
    lines: list[str] = []
    for kind in agent_kinds():
        table = _table(kind_params(kind))
        lines += [f"{heading} `{kind}`", "", _cell(kind_help(kind)), "", *table, ""]
    return "\n".join(lines)


def on_page_markdown(markdown: str, *, page: object, config: object, files: object) -> str:
    """MkDocs' event: the page's Markdown with :data:`MARKER` replaced by the tables
    (a page without the marker is returned unchanged)."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, parameter_tables())
