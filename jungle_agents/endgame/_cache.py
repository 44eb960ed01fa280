"""Solved endgame tables kept on disk, so that each is solved once per machine.

A table is one ``.npz`` file (numpy's zip of ``.npy`` arrays, deflated; read with
``allow_pickle=False``) in :func:`cache_dir`, named
``<rules>-<codes>-v<format>-<key>.npz`` (``dark-4.6.12.14-v1-0123456789abcdef.npz``),
holding ``win_plies`` and ``loss_plies`` (``int16[2, squares**k]``) and ``header``, the
UTF-8 bytes of a JSON object: the format, the full key, the material, the shape, the
dtype and the SHA-256 of the two arrays. The key is a digest of everything a table depends
on: the format, the solver's source (:mod:`jungle_agents.endgame._solver`), the rules'
options and the core's move and battle tables for them, and the material; a change to any
of them names a new file, and the old one is never read again (nor removed: the folder
can be deleted at any time).

Writing is atomic: a temporary file in the same folder, flushed to disk, given the mode of
any new file (0o666 less the umask), then renamed over the name, so a reader sees a whole
file or none, and two processes solving the same table leave one of their two (equal)
files. Reading checks the file against its name: a file
that cannot be read, or whose header, shapes, dtypes, key or digest disagree, raises
:class:`EndgameCacheError` naming it (deleting it makes the next use solve it again). A
folder that cannot be made or written is not an error: the tables are solved in memory
as before, with one :class:`EndgameCacheWarning` per folder and process.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import warnings
import zipfile
import zlib
from pathlib import Path

import attrs
import numpy as np

from jungle_agents.endgame import _solver
from jungle_core import JungleError, Rules, atomic_write
from jungle_core.lowlevel import tables

__all__ = [
    "FORMAT",
    "EndgameCacheError",
    "EndgameCacheWarning",
    "cache_dir",
    "load",
    "save",
    "table_path",
]

FORMAT = 1
"""The layout of a table file; part of its name and key."""

ENV_VAR = "JUNGLE_CACHE_DIR"


class EndgameCacheError(JungleError):
    """A cached endgame table file is unreadable or not the table its name promises."""


class EndgameCacheWarning(UserWarning):
    """The cache folder cannot be written: tables are solved in memory, every run."""


def cache_dir() -> Path:
    """The folder for solved tables: ``$JUNGLE_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/jungle``, else ``~/.cache/jungle`` (read on every call, so setting
    the variable moves the cache for the tables solved afterwards).

    >>> cache_dir().is_absolute() or "JUNGLE_CACHE_DIR" in os.environ
    True
    """
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "jungle"


@functools.cache
def _solver_digest() -> str:
    """SHA-256 of the solver's source (its format version where the source is not a file)."""
    try:
        return hashlib.sha256(Path(_solver.__file__).read_bytes()).hexdigest()
    except OSError:
        return f"solver-unreadable-format-{FORMAT}"


@functools.cache
def table_key(rules: Rules, material: _solver.Material) -> str:
    """The hex digest every input of one table goes into (see the module docstring)."""
    t = tables(rules)
    options = {k: v for k, v in attrs.asdict(rules).items() if k != "name"}
    core = repr((t.step, t.dark_target_ok, t.dark_effect))
    text = json.dumps(
        [FORMAT, _solver_digest(), options, hashlib.sha256(core.encode()).hexdigest(), material],
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def table_path(directory: Path, rules: Rules, material: _solver.Material) -> Path:
    """Where the table of ``material`` under ``rules`` lives in ``directory``.

    >>> from jungle_core import DARK
    >>> table_path(Path("/c"), DARK, (8, 14)).name.startswith("dark-8.14-v1-")
    True
    """
    slug = re.sub(r"[^a-z0-9]+", "_", rules.name.lower()).strip("_") or "rules"
    codes = ".".join(map(str, material))
    return directory / f"{slug}-{codes}-v{FORMAT}-{table_key(rules, material)[:16]}.npz"


def _digest(win: np.ndarray, loss: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(win).data)
    h.update(np.ascontiguousarray(loss).data)
    return h.hexdigest()


def load(
    path: Path, rules: Rules, material: _solver.Material
) -> tuple[np.ndarray, np.ndarray] | None:
    """The table stored at ``path``, or None where there is no such file.

    :raises EndgameCacheError: the file exists but is unreadable or not this table.
    """
    shape = (2, (rules.rows * rules.cols) ** len(material))

    def bad(what: str) -> EndgameCacheError:
        return EndgameCacheError(
            f"endgame table cache file {path} cannot be read or is not the table its name says "
            f"({what}); delete it and the table will be solved again"
        )

    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            win, loss = data["win_plies"], data["loss_plies"]
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise bad(f"{type(error).__name__}: {error}") from error
    if not isinstance(header, dict):
        raise bad("the header is not an object")
    checks = [
        (header.get("format") == FORMAT, f"format {header.get('format')!r}, not {FORMAT}"),
        (header.get("key") == table_key(rules, material), "its key is another table's"),
        (header.get("material") == list(material), f"material {header.get('material')!r}"),
        (win.shape == shape and loss.shape == shape, f"shapes {win.shape}, {loss.shape}"),
        (win.dtype == np.int16 and loss.dtype == np.int16, f"dtypes {win.dtype}, {loss.dtype}"),
    ]
    for ok, what in checks:
        if not ok:
            raise bad(what)
    if header.get("sha256") != _digest(win, loss):
        raise bad("the arrays' SHA-256 differs from the header's")
    return win, loss


_warned: set[Path] = set()


def save(
    path: Path, rules: Rules, material: _solver.Material, win: np.ndarray, loss: np.ndarray
) -> bool:
    """Write the table atomically to ``path`` (see the module docstring); False, with
    one :class:`EndgameCacheWarning` per folder and process, where it cannot."""
    header = {
        "format": FORMAT,
        "key": table_key(rules, material),
        "rules": rules.name,
        "material": list(material),
        "shape": list(win.shape),
        "dtype": str(win.dtype),
        "sha256": _digest(win, loss),
    }
    encoded = np.frombuffer(json.dumps(header).encode(), np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, header=encoded, win_plies=win, loss_plies=loss)
    try:
        atomic_write(path, buffer.getvalue())
    except OSError as error:
        if path.parent not in _warned:
            _warned.add(path.parent)
            warnings.warn(
                f"cannot keep endgame tables in {path.parent} ({error.strerror or error}): "
                f"solving them in memory; set {ENV_VAR} to a writable folder to keep them",
                EndgameCacheWarning,
                stacklevel=4,
            )
        return False
    return True
