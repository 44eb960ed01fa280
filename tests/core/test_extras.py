"""The bare install and the extras: each optional package's absence is one typed error
naming the extra that installs it, and the bare install plays without any of them.

The child processes here play an install without the ``jax``, ``train`` and ``plot``
extras on this interpreter: an import hook refuses JAX, its libraries and matplotlib, as if
they were not installed.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jungle_agents.arena import load_games
from jungle_core import JungleError, MissingExtraError, import_optional
from jungle_core._extras import EXTRA_OF, INSTALLS_TOO

ROOT = Path(__file__).resolve().parents[2]

REFUSED = ("jax", "jaxlib", "flax", "optax", "flashbax", "mctx", "matplotlib")
"""What the children's imports refuse: the packages of the extras jax, train and plot."""

# `python -c` this, then the CLI's arguments: the `jungle` command with REFUSED missing.
WITHOUT_EXTRAS = textwrap.dedent(
    f"""
    import importlib.abc, sys

    REFUSED = {REFUSED!r}

    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in REFUSED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, Refuse())
    from jungle_cli import main

    code = main(sys.argv[1:])
    assert not [m for m in sys.modules if m.partition(".")[0] in REFUSED]
    sys.exit(code)
    """
)


def _jungle(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("package", sorted(EXTRA_OF))
def test_import_optional_names_the_extra_of_each_optional_package(
    package: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = f"probe_needs_{package}"
    (tmp_path / f"{probe}.py").write_text(f"import {package}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, package, None)  # what an install without it looks like
    with pytest.raises(MissingExtraError) as refused:
        import_optional(probe, "the probe")
    error = refused.value
    assert isinstance(error, ImportError) and isinstance(error, JungleError)
    assert (error.extra, error.package) == (EXTRA_OF[package], package)
    assert str(error).startswith(f"the probe needs {package!r}, which is not installed")
    assert f"pip install 'dou-shou-qi[{EXTRA_OF[package]}]'" in str(error)


def test_a_wider_extra_is_named_only_where_it_installs_the_missing_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "probe_needs_jax.py").write_text("import jax\n")
    (tmp_path / "probe_needs_matplotlib.py").write_text("import matplotlib\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "jax", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert "jax" in INSTALLS_TOO["train"]
    with pytest.raises(MissingExtraError) as jax:
        import_optional("probe_needs_jax", "the learner", extra="train")
    assert jax.value.extra == "train" and "dou-shou-qi[train]" in str(jax.value)
    with pytest.raises(MissingExtraError) as plot:  # train does not install matplotlib
        import_optional("probe_needs_matplotlib", "the learner's plot", extra="train")
    assert plot.value.extra == "plot"


def test_on_another_interpreter_the_jax_family_is_said_to_need_cpython(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "probe_needs_flax.py").write_text("import flax\n")
    (tmp_path / "probe_needs_ray.py").write_text("import ray\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "flax", None)
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setattr(platform, "python_implementation", lambda: "PyPy")
    with pytest.raises(MissingExtraError, match=r"\[train\]' on CPython \(JAX has no build"):
        import_optional("probe_needs_flax", "the DQN")
    with pytest.raises(MissingExtraError) as ray:
        import_optional("probe_needs_ray", "the ray backend")
    assert "CPython" not in str(ray.value)


def test_the_bare_install_lists_the_agents_and_plays_the_shipped_learned_ones(
    tmp_path: Path,
) -> None:
    listed = _jungle("agents")
    assert listed.returncode == 0, listed.stderr
    assert {"dqn:", "qlearn:", "approxq:", "value:", "azero:"} <= set(listed.stdout.split())
    games = tmp_path / "dqn-qlearn.jsonl"  # two shipped learned agents, played with numpy
    match = _jungle("match", "dqn", "qlearn", "--games", "2", "--workers", "1", "--out", str(games))
    assert match.returncode == 0, match.stderr
    assert len(load_games(games)[1]) == 2


def test_a_tournament_without_matplotlib_leaves_out_only_the_heat_map(tmp_path: Path) -> None:
    """The tables are the tournament's result; the heat map, which needs the plot extra, is
    skipped with one line that names the extra to install."""
    out = tmp_path / "tournament"
    agents = "random,greedy,qlearn"
    tour = _jungle(
        "tournament", "--agents", agents, "--games", "2", "--workers", "1", "--out", str(out)
    )
    assert tour.returncode == 0, tour.stderr
    assert (out / "results.csv").exists() and (out / "results.md").exists()
    assert len(load_games(out / "games.jsonl")[1]) == 6
    assert not (out / "heatmap.png").exists()
    notes = [line for line in tour.stderr.splitlines() if "dou-shou-qi[plot]" in line]
    assert len(notes) == 1 and "Traceback" not in tour.stderr


def test_what_needs_a_missing_extra_says_which_in_one_line_and_writes_nothing(
    tmp_path: Path,
) -> None:
    run = tmp_path / "dqn-run"
    train = _jungle("train", "dqn", "--steps", "10", "--out", str(run))
    assert train.returncode == 2
    assert train.stderr.count("\n") == 1 and "pip install 'dou-shou-qi[train]'" in train.stderr
    assert not run.exists()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.jsonl").write_text("")
    plot = _jungle("plot", str(tmp_path / "run"), "--out", str(tmp_path / "curves.png"))
    assert plot.returncode == 2
    assert plot.stderr.count("\n") == 1 and "pip install 'dou-shou-qi[plot]'" in plot.stderr
    assert not (tmp_path / "curves.png").exists()
