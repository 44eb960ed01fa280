"""The MkDocs hook that writes docs/agents.md's parameter tables from the agent registry."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from jungle_agents import agent_kinds, check_spec, kind_params

ROOT = Path(__file__).resolve().parent.parent
HOOK = ROOT / "docs" / "hooks" / "agents_table.py"


def _hook() -> ModuleType:
    """The hook module, loaded from its file as MkDocs loads it."""
    spec = importlib.util.spec_from_file_location("agents_table", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _render(markdown: str) -> str:
    out = _hook().on_page_markdown(markdown, page=None, config=None, files=None)
    assert isinstance(out, str)
    return out


def test_every_kind_and_every_minimax_parameter_is_listed() -> None:
    text = _render(f"# Agents\n\n{_hook().MARKER}\n\nafter\n")
    assert _hook().MARKER not in text
    assert text.startswith("# Agents\n\n") and text.endswith("\n\nafter\n")
    for kind in agent_kinds():
        assert f"### `{kind}`" in text
    minimax = text.split("### `minimax`", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in minimax.splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert names == list(kind_params("minimax"))
    assert "| `tiebreak` | str | `approach` | `approach`, `random` |" in minimax


def test_listed_defaults_are_specs_the_registry_accepts() -> None:
    text = _render(_hook().MARKER)
    greedy = text.split("### `greedy`", 1)[1].split("\n### ", 1)[0]
    for row in (line for line in greedy.splitlines() if line.startswith("| `")):
        name, default = row.split("`")[1], row.split("`")[3]
        check_spec(f"greedy:{name}={default}")


def test_a_page_without_the_marker_is_unchanged() -> None:
    page = "# Arena\n\nno tables here | not even | this\n"
    assert _render(page) == page


def test_the_agents_page_holds_the_marker() -> None:
    assert _hook().MARKER in (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
