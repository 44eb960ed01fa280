"""The endgame tables' disk cache (``jungle_agents.endgame._cache``): a table solved once is
read back equal; a damaged or mismatching file raises ``EndgameCacheError`` naming it; a
changed format or solver names a new file; a folder that cannot be written still plays;
processes writing the same table at once leave a valid file. Each test uses its own
temporary folder (``JUNGLE_CACHE_DIR``) and three-piece tables (0.2 s to solve)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from jungle_agents import endgame
from jungle_agents.endgame import (
    EndgameCacheError,
    EndgameCacheWarning,
    EndgameTables,
    _cache,
    _solver,
    cache_dir,
)
from jungle_core import DARK, from_fen

RAT_CAT_ELEPHANT = (1, 2, 16)  # a Rat and a Cat against an Elephant (codes ascending)
ELEPHANT_TIGERS = (8, 14, 15)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "tables"
    monkeypatch.setenv("JUNGLE_CACHE_DIR", str(where))
    _cache._warned.clear()
    return where


def _count_solves(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    solved: list[tuple[int, ...]] = []
    real = _solver.solve

    def counting(rules: object, material: tuple[int, ...], fresh: object) -> object:
        solved.append(material)
        return real(rules, material, fresh)  # type: ignore[arg-type]

    monkeypatch.setattr(endgame, "solve", counting)
    return solved


def _one_file(folder: Path) -> Path:
    files = sorted(folder.glob("*.npz"))
    assert len(files) == 1, files
    return files[0]


def test_the_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUNGLE_CACHE_DIR", "/x/tables")
    monkeypatch.setenv("XDG_CACHE_HOME", "/y")
    assert cache_dir() == Path("/x/tables")
    monkeypatch.delenv("JUNGLE_CACHE_DIR")
    assert cache_dir() == Path("/y/jungle")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "jungle"


def test_a_solved_table_is_read_back_equal_without_solving(
    folder: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    solved = _count_solves(monkeypatch)
    with caplog.at_level(logging.INFO, logger="jungle.endgame"):
        first = EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    assert RAT_CAT_ELEPHANT in solved
    path = _one_file(folder)  # its two-piece sub-tables stay in memory
    assert path.name.startswith("dark-1.2.16-v1-") and str(path) in caplog.text
    assert not list(folder.glob(".*"))  # no temporary file left
    solved.clear()
    again = EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    assert solved == []
    for a, b in zip(first, again, strict=True):
        assert b.dtype == np.int16
        np.testing.assert_array_equal(a, b)
    memory = EndgameTables(persist=False).distances(DARK, RAT_CAT_ELEPHANT)
    np.testing.assert_array_equal(memory[0], again[0])
    # the probes read from the file agree with a fresh solve
    s = from_fen("8/8/8/8/3E4/8/rc6 0 0 0 - -")
    assert EndgameTables().probe(s) == EndgameTables(persist=False).probe(s)


def test_a_truncated_file_raises_naming_it(folder: Path) -> None:
    EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    path = _one_file(folder)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(EndgameCacheError, match="delete it") as caught:
        EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("where", [0.3, 0.5, 0.7])
def test_a_flipped_byte_raises_naming_the_file(folder: Path, where: float) -> None:
    EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    path = _one_file(folder)
    data = bytearray(path.read_bytes())
    data[int(len(data) * where)] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(EndgameCacheError) as caught:
        EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    assert str(path) in str(caught.value)


def test_a_file_of_another_table_under_the_name_raises(folder: Path) -> None:
    tables = EndgameTables()
    tables.distances(DARK, RAT_CAT_ELEPHANT)
    source = _one_file(folder)
    target = _cache.table_path(folder, DARK, ELEPHANT_TIGERS)
    source.rename(target)
    with pytest.raises(EndgameCacheError, match="key"):
        EndgameTables().distances(DARK, ELEPHANT_TIGERS)


def test_arrays_that_disagree_with_the_header_raise(folder: Path) -> None:
    """A file rewritten by hand (valid zip, wrong contents) fails the digest check."""
    EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    path = _one_file(folder)
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["win_plies"][0, 100] += 1
    with path.open("wb") as out:
        np.savez_compressed(out, **arrays)
    with pytest.raises(EndgameCacheError, match="SHA-256"):
        EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)


def test_a_stale_format_or_solver_is_not_used(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    old = _one_file(folder)
    solved = _count_solves(monkeypatch)
    for change in ("format", "solver"):
        _cache.table_key.cache_clear()
        if change == "format":
            monkeypatch.setattr(_cache, "FORMAT", 2)
        else:
            monkeypatch.setattr(_cache, "_solver_digest", lambda: "another solver")
        EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
        assert solved.count(RAT_CAT_ELEPHANT) == (1 if change == "format" else 2)
    _cache.table_key.cache_clear()
    assert old.exists() and len(list(folder.glob("*.npz"))) == 3


def test_the_rules_are_part_of_the_key(folder: Path) -> None:
    import attrs

    limited = attrs.evolve(DARK, no_removal_limit=20)  # same name, other rules
    a = _cache.table_path(folder, DARK, RAT_CAT_ELEPHANT)
    b = _cache.table_path(folder, limited, RAT_CAT_ELEPHANT)
    assert a != b and a.name.split("-")[:3] == b.name.split("-")[:3]


def _deny(*args: object, **kwargs: object) -> None:
    raise PermissionError(13, "Permission denied")


@pytest.mark.parametrize("how", ["under a file", "read-only"])
def test_a_folder_that_cannot_be_written_still_plays(
    folder: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if how == "under a file":
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.write_text("not a folder")
        monkeypatch.setenv("JUNGLE_CACHE_DIR", str(folder / "tables"))
    else:
        folder.mkdir(parents=True)
        folder.chmod(0o500)
        if os.geteuid() == 0:  # root writes into read-only folders: refuse as the OS would
            monkeypatch.setattr(tempfile, "mkstemp", _deny)
    tables = EndgameTables()
    with pytest.warns(EndgameCacheWarning, match="in memory") as caught:
        tables.distances(DARK, RAT_CAT_ELEPHANT)
        tables.distances(DARK, ELEPHANT_TIGERS)
    assert len(caught) == 1  # once per folder
    s = from_fen("8/8/8/8/3E4/8/rc6 1 0 0 - -")
    assert tables.probe(s) == EndgameTables(persist=False).probe(s)
    if how == "read-only":
        folder.chmod(0o700)
        assert list(folder.iterdir()) == []


def test_a_read_only_folder_still_serves_its_tables(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    folder.chmod(0o500)
    monkeypatch.setattr(tempfile, "mkstemp", _deny)
    solved = _count_solves(monkeypatch)
    try:
        again = EndgameTables().distances(DARK, RAT_CAT_ELEPHANT)
    finally:
        folder.chmod(0o700)
    assert solved == []
    np.testing.assert_array_equal(first[1], again[1])


def test_no_file_without_persist(folder: Path) -> None:
    EndgameTables(persist=False).distances(DARK, RAT_CAT_ELEPHANT)
    assert not folder.exists()


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import numpy as np
    from jungle_agents.endgame import _cache
    from jungle_core import DARK
    path, role = Path(sys.argv[1]), sys.argv[2]
    material = (1, 2, 16)
    win, loss = np.load(sys.argv[3]), np.load(sys.argv[4])
    for _ in range(8):
        if role == "write":
            assert _cache.save(path, DARK, material, win, loss)
        else:
            got = _cache.load(path, DARK, material)
            assert got is None or (got[0] == win).all()
    """
)


def test_processes_writing_the_same_table_at_once_leave_a_valid_file(folder: Path) -> None:
    win, loss = EndgameTables(persist=False).distances(DARK, RAT_CAT_ELEPHANT)
    folder.mkdir(parents=True)
    np.save(folder.parent / "win.npy", win)
    np.save(folder.parent / "loss.npy", loss)
    path = _cache.table_path(folder, DARK, RAT_CAT_ELEPHANT)
    args = [str(path), "", str(folder.parent / "win.npy"), str(folder.parent / "loss.npy")]
    children = [
        subprocess.Popen([sys.executable, "-c", _WRITER, args[0], role, *args[2:]])
        for role in ("write", "write", "read")
    ]
    assert [child.wait(timeout=120) for child in children] == [0, 0, 0]
    got = _cache.load(path, DARK, RAT_CAT_ELEPHANT)
    assert got is not None
    np.testing.assert_array_equal(got[0], win)
    np.testing.assert_array_equal(got[1], loss)
    assert [p.name for p in folder.iterdir()] == [path.name]  # no temporary file left
