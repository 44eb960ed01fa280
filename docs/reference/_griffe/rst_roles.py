"""A griffe extension: the packages' reST-flavoured docstrings as Markdown for mkdocstrings.

The docstrings are written for reading in the source and in ``help()``, with a few reST
habits that Markdown renders badly; this rewrites each docstring's text once, after
griffe has loaded it and before mkdocstrings parses it (nothing in the packages changes):

- roles: ``:func:`~pkg.mod.name``` becomes the code span ``name`` (a ``~`` keeps the
  last component, as Sphinx does), ``:class:`Rules``` becomes ``Rules``;
- doctest examples (``>>>`` lines, their ``...`` continuations and expected output up to
  a blank line) become fenced ``pycon`` blocks, instead of Markdown block quotes;
- a paragraph ending in ``::`` ends in ``:``, and the indented block after it becomes a
  fenced ``text`` block;
- simple reST tables (columns framed by ``===  ===`` rules) become Markdown tables.

It also leaves ``__post_init__`` / ``__attrs_post_init__`` (validation hooks) out of the
reference.
"""

from __future__ import annotations

import re
from typing import Any

try:
    from griffe import Extension
except ImportError:  # griffe comes with the docs extra; the doctests need only markdown()
    Extension = object  # type: ignore[assignment,misc]

_HOOKS = frozenset({"__post_init__", "__attrs_post_init__"})
"""Validation hooks that dataclasses and attrs call: no part of a class's interface."""

_ROLE = re.compile(r":(?:py:)?[a-z]+:`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    text = match.group(2)
    if match.group(1):
        text = text.rsplit(".", 1)[-1]
    return f"`{text}`"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_rule(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and set(stripped) <= {"=", " "} and "==" in stripped


def _table(lines: list[str], start: int) -> tuple[list[str], int] | None:
    """The Markdown of the simple table whose top rule is ``lines[start]``, and the index
    after it; None when the lines are not such a table."""
    rule = lines[start]
    pad = _indent(rule)
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", rule)]
    if len(spans) < 2:
        return None
    rows: list[list[str]] = []
    rules_seen = 1
    i = start + 1
    while i < len(lines):
        line = lines[i]
        if _is_rule(line):
            rules_seen += 1
            i += 1
            if rules_seen == 3 or (i >= len(lines) or not lines[i].strip()):
                break
            continue
        if not line.strip():
            i += 1
            continue
        cells = []
        for k, (lo, _) in enumerate(spans):
            hi = spans[k + 1][0] if k + 1 < len(spans) else len(line)
            cells.append(line[lo:hi].strip())
        if rows and not cells[0]:
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)
        i += 1
    if rules_seen == 2 and rows:  # no header row: rule, rows, rule
        rows.insert(0, [""] * len(spans))
    elif rules_seen != 3 or len(rows) < 2:
        return None
    prefix = " " * pad
    out = [prefix + "| " + " | ".join(rows[0]) + " |"]
    out.append(prefix + "|" + "---|" * len(spans))
    out += [
        prefix + "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows[1:]
    ]
    return out, i


def _fence(block: list[str], strip: int, lang: str, pad: int | None = None) -> list[str]:
    """``block`` as a fenced code block: ``strip`` columns cut from each line, the fence
    indented by ``pad`` (default ``strip``)."""
    prefix = " " * (strip if pad is None else pad)
    body = [line[strip:] if line.strip() else "" for line in block]
    return [f"{prefix}```{lang}", *(prefix + b if b else "" for b in body), f"{prefix}```"]


def markdown(text: str) -> str:
    """The Markdown of one docstring's text.

    >>> markdown("Use :func:`~jungle_core.step` or :class:`State`.")
    'Use `step` or `State`.'
    >>> markdown("An example:\\n\\n>>> 1 + 1\\n2").splitlines()
    ['An example:', '', '```pycon', '>>> 1 + 1', '2', '```']
    >>> markdown("A loop::\\n\\n    x = f(x)").splitlines()
    ['A loop:', '', '```text', 'x = f(x)', '```']
    >>> markdown("==  ===\\na   one\\nb   two\\n    more\\n==  ===").splitlines()
    ['|  |  |', '|---|---|', '| a | one |', '| b | two more |']
    """
    lines = text.split("\n")  # roles are replaced last: table columns need the raw widths
    out: list[str] = []
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            out.append(line)
            i += 1
            continue
        if in_fence:
            out.append(line)
            i += 1
            continue
        if stripped.startswith(">>>"):
            pad = _indent(line)
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            if out and out[-1].strip():
                out.append("")
            out += _fence(block, pad, "pycon")
            continue
        if _is_rule(line):
            table = _table(lines, i)
            if table is not None:
                rows, i = table
                if out and out[-1].strip():
                    out.append("")
                out += rows
                continue
        if stripped.endswith("::"):
            pad = _indent(line)
            head = line.rstrip()[:-1]
            if head.strip() != ":":
                out.append(head)
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            block = []
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > pad):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
                j -= 1
            if block:
                inner = min(_indent(b) for b in block if b.strip())
                out.append("")
                out += _fence(block, inner, "text", pad)
                i = j
                continue
            i += 1
            continue
        out.append(line)
        i += 1
    return _ROLE.sub(_role, "\n".join(out))


class RstRoles(Extension):
    """Rewrite every loaded docstring with :func:`markdown`: the package's own (which
    ``on_object`` does not see) and those of all its members."""

    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
        if pkg.docstring is not None:
            pkg.docstring.value = markdown(pkg.docstring.value)

    def on_class(self, *, cls: Any, **kwargs: Any) -> None:
        for name in _HOOKS & set(cls.members):
            del cls.members[name]

    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
