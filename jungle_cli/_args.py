"""Shared pieces of the ``jungle`` command's parsers: argument types, the help formatter
and the ``example:`` epilog every sub-command ends its ``--help`` with.

A number is parsed by :func:`int_in`, so a bad value is refused by the parser (usage and
exit status 2), never deep in a run. Every sub-command's parser is made by
:func:`add_command`, or by ``sub.add_parser(..., formatter_class=HelpFormatter,
epilog=examples(...))``, so that all of them show their defaults and examples alike:

>>> parser = argparse.ArgumentParser(prog="jungle")
>>> sub = parser.add_subparsers()
>>> demo = add_command(
...     sub, "demo", summary="play one random game",
...     description="Play one game of random moves.", examples=["jungle demo --seed 3"],
... )
>>> _ = demo.add_argument("--seed", type=int, default=0, help="seed of the game")
>>> text = demo.format_help()
>>> "(default: 0)" in text, text.rstrip().splitlines()[-2:]
(True, ['example:', '  jungle demo --seed 3'])
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["HelpFormatter", "add_command", "add_rules", "examples", "has_shown_default", "int_in"]


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse ``type``: a decimal int in ``lo..hi``.

    >>> int_in(1, 10)("3")
    3
    >>> int_in(1, 10)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 0 is not in 1..10
    """

    def parse(text: str) -> int:
        digits = text.strip().removeprefix("-").removeprefix("+")
        if not (digits.isascii() and digits.isdigit() and len(digits) <= 20):
            shown = text if len(text) <= 30 else f"{text[:30]}..."
            raise argparse.ArgumentTypeError(f"{shown!r} is not a whole number in {lo}..{hi}")
        value = int(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{value} is not in {lo}..{hi}")
        return value

    parse.__name__ = f"int in {lo}..{hi}"
    return parse


def add_rules(p: argparse.ArgumentParser, names: str = "dark | dark_strict | classic") -> None:
    """Add ``--rules NAME`` (default ``dark``) to ``p``; ``names`` lists the rule sets the
    command accepts (any name :func:`jungle_core.rules_by_name` knows is passed on)."""
    p.add_argument("--rules", default="dark", metavar="RULES", help=f"rule set: {names}")


def has_shown_default(action: argparse.Action) -> bool:
    """Whether ``action``'s default means something to show in its help: not ``None``
    (no value: the help says what happens then), not a flag's ``False``, not an empty
    list (a repeatable option given no times), not suppressed.

    >>> parser = argparse.ArgumentParser()
    >>> [has_shown_default(parser.add_argument(o, **kw)) for o, kw in [
    ...     ("--games", {"default": 200}), ("--out", {}), ("--all", {"action": "store_true"}),
    ...     ("--plugin", {"action": "append", "default": []})]]
    [True, False, False, False]
    """
    default = action.default
    if default is None or default is False or default is argparse.SUPPRESS:
        return False
    return not (isinstance(default, (list, tuple)) and not default)


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The ``jungle`` command's help layout: each option's default after its help, and
    descriptions and epilogs kept as written.

    A default is added as ``(default: VALUE)`` where :func:`has_shown_default` says it
    means something and the help does not already say it (an explicit ``(default: all
    cores)`` for an option whose default is ``None``). A paragraph of the description or
    epilog is re-wrapped to the terminal's width unless one of its lines is indented: a
    list, a table or a command line keeps its layout.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text.lower() or not has_shown_default(action):
            return text
        return super()._get_help_string(action)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = textwrap.dedent(text).strip("\n").split("\n\n")
        filled = []
        for paragraph in paragraphs:
            lines = paragraph.splitlines()
            if any(line[:1].isspace() for line in lines):
                filled.append("\n".join(indent + line for line in lines))
            else:
                filled.append(
                    textwrap.fill(
                        " ".join(paragraph.split()),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                        break_on_hyphens=False,
                    )
                )
        return "\n\n".join(filled)


def examples(*commands: str) -> str:
    """An epilog of example command lines, headed ``example:`` (``examples:`` for more
    than one), each line indented so that the help keeps it whole.

    >>> print(examples("jungle demo", "jungle perft --depth 4  # 4 plies deep"))
    examples:
      jungle demo
      jungle perft --depth 4  # 4 plies deep
    """
    if not commands:
        raise ValueError("examples needs at least one command line")
    head = "example:" if len(commands) == 1 else "examples:"
    return "\n".join([head, *(f"  {command}" for command in commands)])


def add_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    summary: str,
    description: str,
    examples: Sequence[str],
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """Add the sub-command ``name`` to ``sub``: ``summary`` is its line in the parent's
    list, ``description`` the paragraph(s) its own ``--help`` opens with, and
    ``examples`` the command lines its ``--help`` ends with (at least one). Other
    keyword arguments go to :meth:`argparse._SubParsersAction.add_parser`."""
    return sub.add_parser(
        name,
        help=summary,
        description=description,
        epilog=_examples(*examples),
        formatter_class=HelpFormatter,
        **kwargs,
    )


_examples = examples  # add_command's parameter of the same name hides the function
