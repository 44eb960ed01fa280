"""The project without JAX, as the bare install and PyPy have it (JAX has no PyPy build;
``pyproject.toml`` puts JAX and its libraries in the ``jax`` and ``train`` extras, for CPython
only): what needs no JAX works, what does says so, naming the extra ``train``.

These tests play that install on CPython: a child process whose import system refuses every
package of :data:`~jungle_train.common._errors.JAX_LIBRARIES`. ``make test-pypy`` runs the rest of
the suite under a real PyPy; tests/core/test_extras.py refuses matplotlib as well.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jungle_agents.arena import load_games
from jungle_core import JungleError, MissingExtraError
from jungle_train.common._errors import JAX_LIBRARIES, import_train_module
from tests._requires import modules_needing_jax

ROOT = Path(__file__).resolve().parent.parent

# `python -c` this, then the CLI's arguments: the `jungle` command with JAX refused.
WITHOUT_JAX = textwrap.dedent(
    f"""
    import importlib.abc, sys

    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in {sorted(JAX_LIBRARIES)!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, Refuse())
    from jungle_cli import main

    code = main(sys.argv[1:])
    assert not [m for m in sys.modules if m.partition(".")[0] in {sorted(JAX_LIBRARIES)!r}]
    sys.exit(code)
    """
)


def _jungle_without_jax(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_JAX, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )


def test_the_cli_plays_and_trains_without_jax_and_names_what_needs_it(tmp_path: Path) -> None:
    listed = _jungle_without_jax("agents")
    assert listed.returncode == 0, listed.stderr
    assert {"dqn:", "qlearn:", "approxq:", "value:", "azero:"} <= set(listed.stdout.split())
    # the learned agents that play with numpy, from their shipped checkpoints
    for a, b in (("dqn", "value"), ("qlearn", "approxq")):
        out = tmp_path / f"{a}-{b}.jsonl"
        played = _jungle_without_jax(
            "match", a, b, "--games", "2", "--workers", "1", "--out", str(out)
        )
        assert played.returncode == 0, played.stderr
        assert len(load_games(out)[1]) == 2
    trained = _jungle_without_jax(
        "train", "qlearn", "--steps", "40", "--eval-games", "2", "--out", str(tmp_path / "q")
    )
    assert trained.returncode == 0, trained.stderr
    assert (tmp_path / "q" / "agent.npz").exists()
    # what runs on JAX: one line naming it and the extra `train`, exit 2, nothing written
    azero = _jungle_without_jax("match", "azero", "random", "--games", "1", "--workers", "1")
    assert azero.returncode == 2
    assert "the agent 'azero' needs" in azero.stderr and "Traceback" not in azero.stderr
    assert "pip install 'dou-shou-qi[train]'" in azero.stderr
    dqn = _jungle_without_jax("train", "dqn", "--steps", "10", "--out", str(tmp_path / "d"))
    assert dqn.returncode == 2
    assert "the learner 'dqn' needs" in dqn.stderr and "is not installed" in dqn.stderr
    assert "pip install 'dou-shou-qi[train]'" in dqn.stderr
    assert not (tmp_path / "d").exists()


def test_import_train_module_names_train_for_a_missing_jax_library_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "probe_needs_mctx.py").write_text("import mctx\n")
    (tmp_path / "probe_needs_other.py").write_text("import no_such_library_anywhere\n")
    (tmp_path / "probe_needs_a_jax_part.py").write_text("import jax.no_such_part_of_jax\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "mctx", None)  # what an install without mctx looks like
    with pytest.raises(MissingExtraError, match=r"the probe needs 'mctx', which is not") as e:
        import_train_module("probe_needs_mctx", "the probe")
    assert isinstance(e.value, ImportError) and isinstance(e.value, JungleError)
    assert (e.value.extra, e.value.package) == ("train", "mctx")
    with pytest.raises(ModuleNotFoundError) as other:
        import_train_module("probe_needs_other", "the other probe")
    assert not isinstance(other.value, MissingExtraError)
    assert other.value.name == "no_such_library_anywhere"
    with pytest.raises(ModuleNotFoundError) as part:  # jax is there: not a missing extra
        import_train_module("probe_needs_a_jax_part", "the third probe")
    assert not isinstance(part.value, MissingExtraError)


def test_the_scan_follows_imports_through_modules_and_packages(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/direct.py": "import jax.numpy as jnp\n",
        "pkg/through.py": "from pkg import direct\n",
        "pkg/in_body.py": "def f():\n    import jax\n",
        "pkg/typing_only.py": "import typing\nif typing.TYPE_CHECKING:\n    import jax\n",
        "pkg/guarded.py": "try:\n    import optax\nexcept ImportError:\n    optax = None\n",
        "pkg/clean.py": "import numpy\nfrom pkg import in_body, typing_only\n",
        "heavy/__init__.py": "import flax\n",
        "heavy/light.py": "x = 1\n",
        "tests/test_x.py": "import heavy.light\n",
        "tests/test_y.py": "from pkg.clean import numpy\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    # a guarded import counts: the scan is for what pytest may collect, so it errs on
    # the side of leaving a file out
    assert modules_needing_jax(tmp_path, ("pkg", "heavy", "tests")) == [
        "heavy/__init__.py",
        "heavy/light.py",
        "pkg/direct.py",
        "pkg/guarded.py",
        "pkg/through.py",
        "tests/test_x.py",
    ]


def test_the_agents_and_the_cli_import_no_jax_and_the_jax_modules_are_found() -> None:
    files = modules_needing_jax(ROOT)
    assert not [f for f in files if f.startswith(("jungle_agents/", "jungle_cli/"))]
    for needed in (
        "jungle_core/jax_env.py",
        "jungle_train/dqn/__init__.py",
        "jungle_train/dqn/_learner.py",
        "jungle_train/azero/__init__.py",
        "jungle_train/jitted/_trainer.py",
    ):
        assert needed in files
    for free in (
        "jungle_core/__init__.py",
        "jungle_train/__init__.py",
        "jungle_train/common/_errors.py",
        "jungle_train/common/_run.py",
        "jungle_train/tabular/qlearn.py",
        "jungle_train/tabular/approxq.py",
        "jungle_train/players/_numpy.py",
        "jungle_train/players/_value.py",
        "jungle_train/_registry.py",
        "jungle_train/_presets.py",
        "jungle_train/_azero_settings.py",
    ):
        assert free not in files
