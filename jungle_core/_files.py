"""Files written whole or not at all: the one atomic write every package uses."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write"]


def _file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the process's umask."""
    umask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(umask)
    return 0o666 & ~umask


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the system lets a folder be fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], data: bytes, *, make_dirs: bool = True) -> None:
    """Write ``data`` to ``path`` whole or not at all, so that a crash at any moment leaves
    the old file or the new one, never a torn one: a temporary file ``.NAME.*.tmp`` in the
    same folder, fsynced, given the mode any new file gets (0o666 less the umask), renamed
    over ``path``, and the rename fsynced. ``make_dirs``: create a missing folder, else
    ``FileNotFoundError``.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     atomic_write(os.path.join(d, "x.txt"), b"hello")
    ...     open(os.path.join(d, "x.txt"), "rb").read(), os.listdir(d)
    (b'hello', ['x.txt'])
    """
    target = Path(path)
    if make_dirs:
        target.parent.mkdir(parents=True, exist_ok=True)
    elif not target.parent.is_dir():
        raise FileNotFoundError(f"no folder {str(target.parent)!r} to write {target.name!r} in")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            # mkstemp makes the file 0600; give it the mode any other new file would get
            os.fchmod(f.fileno(), _file_mode())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _sync_folder(target.parent)
