"""Every ``--help`` of the ``jungle`` command: what the command does, its defaults and an
example, with no wording that points outside the project; ``--version``; one line on
stderr for a missing extra."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import jungle_cli
import jungle_core as jc
from jungle_cli import build_parser, main
from jungle_cli._args import has_shown_default
from jungle_cli._train import LEARNERS
from jungle_train._trainers import KINDS
from tests._requires import needs_jax


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` (itself first), with the words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*path, name))


COMMANDS = list(_commands(build_parser()))
SUB_COMMANDS = [(path, p) for path, p in COMMANDS if path]


def _pointers_outside(text: str) -> list[str]:
    """What in ``text`` points outside the project: a citation of the old specification
    document by its name (followed by a section sign, a number, its file suffix or a
    possessive), a section sign, a shared folder, an issue."""
    spec = "SP" + "EC"  # spelled apart, so this file is not itself such a citation
    return re.findall(spec + r"\s*(?:\u00a7|\d|\.md|'s)|\u00a7|shared/|\b[Ii]ssues?\b", text)


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def test_the_walk_finds_nested_commands() -> None:
    paths = {" ".join(path) for path, _ in SUB_COMMANDS}
    assert {"match", "play", "serve", "train", "train dqn", "ablate gamma"} <= paths


@pytest.mark.parametrize(
    ("path", "parser"), SUB_COMMANDS, ids=[" ".join(path) for path, _ in SUB_COMMANDS]
)
def test_every_help_explains_shows_defaults_and_an_example(
    path: tuple[str, ...], parser: argparse.ArgumentParser, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help([*path, "--help"], capsys)
    assert parser.description and len(parser.description.split()) >= 8
    assert re.search(r"^examples?:\n  jungle ", text, flags=re.MULTILINE)
    assert not _pointers_outside(text), path
    # the words the user reads (a metavar such as AGENT or SPEC is a placeholder, not prose)
    prose = [parser.description or "", parser.epilog or ""]
    prose += [action.help or "" for action in parser._actions]
    for words in prose:
        assert "SPEC" not in words, (path, words)
    flat = " ".join(text.split())
    for action in parser._actions:
        if not action.option_strings or not has_shown_default(action):
            continue
        # the option's own lines: from its flag to the next option or section
        flag = re.escape(action.option_strings[-1])  # exactly it: --hint, not --hint-time
        start = re.search(rf"^  {flag}(?=[ ,\n])", text, flags=re.MULTILINE).start()  # type: ignore[union-attr]
        block = re.split(r"\n  -|\n\n", text[start + 3 :], maxsplit=1)[0]
        block = " ".join(block.split())
        assert "default" in block and str(action.default) in block, (path, block)
    assert "(default: None)" not in flat and "(default: False)" not in flat


def test_top_level_help_is_for_users(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(["--help"], capsys)
    assert "tests call directly" not in text
    assert "Dou Shou Qi" in text and "examples:" in text and "docs" in text
    assert "SPEC" not in text and not _pointers_outside(text)
    # every command is listed once, under its group
    names = [path[0] for path, _ in SUB_COMMANDS if len(path) == 1]
    for name in names:
        assert len(re.findall(rf"^  {name} ", text, flags=re.MULTILINE)) == 1, name
    for group in ("play and watch:", "matches and tournaments:", "rules tools:", "training:"):
        assert group in text


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert _help(["--version"], capsys).strip() == f"jungle {jc.__version__} ({jc.DISTRIBUTION})"


def test_every_learner_kind_has_its_help() -> None:
    assert set(LEARNERS) == set(KINDS)
    train = dict(COMMANDS)[("train",)]
    assert all(kind in train.format_help() for kind in KINDS)


@needs_jax
def test_each_kinds_help_names_its_configs() -> None:
    from jungle_train._trainers import config_class

    for kind, learner in LEARNERS.items():
        named = config_class(kind)[1]
        assert set(learner.configs) == set(named), kind
        default = "cpu" if "cpu" in named else next(iter(named))
        assert learner.configs[0] == default, kind


def test_a_missing_extra_is_one_line_and_status_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing(args: argparse.Namespace) -> int:
        raise jc.MissingExtraError(
            "the agents list needs 'flax', which is not installed:\n"
            "pip install 'dou-shou-qi[train]'",
            extra="train",
            package="flax",
        )

    monkeypatch.setattr(jungle_cli, "_cmd_agents", missing)
    assert main(["agents"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "jungle: the agents list needs 'flax', which is not installed: "
        "pip install 'dou-shou-qi[train]'\n"
    )


def test_plot_without_matplotlib_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a module set to None in sys.modules cannot be imported: matplotlib "not installed"
    monkeypatch.delitem(sys.modules, "jungle_train.common._plots", raising=False)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["plot", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jungle: jungle plot") and err.endswith("\n")
    assert "needs 'matplotlib'" in err and "pip install 'dou-shou-qi[plot]'" in err
    assert err.count("\n") == 1
