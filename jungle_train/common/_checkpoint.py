"""Checkpoints: named numpy arrays and a JSON header in one ``.npz`` file, written
atomically and checked when read. Never pickle: a checkpoint is data, not code.

Layout of the file (a plain NumPy ``.npz`` zip, readable with ``np.load(path,
allow_pickle=False)``):

- every array under its own name (``params/0003``, ``q_values``, ...);
- ``__meta__``: ``uint8[n]``, UTF-8 JSON: ``{"format": "jungle-checkpoint/1", "kind":
  ..., "config": {...}, "step": ..., ...}`` (the learner's kind, its config, the step
  count, and whatever else the writer adds);
- ``__digest__``: ``uint8[64]``, the SHA-256 (hex) of the header and of every array's
  name, dtype, shape and bytes, so a truncated or edited file is refused.

Writing goes to a temporary file in the same folder, is flushed and fsynced, gets the
user's normal file mode (``0o666`` less the umask) and is renamed over the target (the
folder fsynced after, so the rename lasts), so a kill at any moment leaves either the old
checkpoint or the new one, never half of one. A kill mid-write can leave the temporary
file behind (``.run.npz.<random>.tmp``): reading never looks at it, and the next
:func:`save_checkpoint` to the same path removes it (a checkpoint file has one writer).
A file cut or damaged from outside is refused with :class:`CheckpointError` naming it,
whatever byte it ends on: never loaded as garbage.

>>> import tempfile, os
>>> import numpy as np
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "run.npz")
...     save_checkpoint(path, {"w": np.arange(3.0)}, kind="toy", config={"lr": 0.1}, step=7)
...     ckpt = load_checkpoint(path, kind="toy", config={"lr": 0.1})
>>> ckpt.arrays["w"].tolist(), ckpt.step
([0.0, 1.0, 2.0], 7)
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from jungle_core import atomic_write
from jungle_train.common._config import config_diff
from jungle_train.common._errors import CheckpointError

__all__ = ["Checkpoint", "atomic_write", "load_checkpoint", "save_checkpoint"]

FORMAT = "jungle-checkpoint/1"
_META = "__meta__"
_DIGEST = "__digest__"


@attrs.frozen
class Checkpoint:
    """A checkpoint read back: ``arrays`` by name, and the JSON header ``meta`` (with
    ``kind``, ``config`` and ``step``)."""

    path: str
    arrays: Mapping[str, np.ndarray[Any, Any]]
    meta: Mapping[str, Any]

    @property
    def kind(self) -> str:
        """The learner's kind (``"dqn"``, ``"qlearn"``, ``"approxq"``)."""
        return str(self.meta["kind"])

    @property
    def config(self) -> Mapping[str, Any]:
        """The learner's config as JSON."""
        config: Mapping[str, Any] = self.meta["config"]
        return config

    @property
    def step(self) -> int:
        """The step count when it was written."""
        return int(self.meta["step"])


def _digest(meta: bytes, arrays: Mapping[str, np.ndarray[Any, Any]]) -> bytes:
    h = hashlib.sha256(meta)
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"\x00{name}\x00{a.dtype.str}\x00{a.shape}\x00".encode())
        h.update(a.tobytes())
    return h.hexdigest().encode()


def _temporaries(path: Path) -> list[Path]:
    """The temporary files :func:`atomic_write` makes for ``path`` that are there now."""
    return sorted(path.parent.glob(f".{glob.escape(path.name)}.*.tmp"))


def save_checkpoint(
    path: str | os.PathLike[str],
    arrays: Mapping[str, np.ndarray[Any, Any]],
    *,
    kind: str,
    config: Mapping[str, Any],
    step: int,
    **extra: Any,
) -> None:
    """Write ``arrays`` and a header (``kind``, ``config``, ``step`` and ``extra``, all
    JSON) to ``path`` atomically; the folder is created when missing, and the temporary
    files a killed earlier write of ``path`` left there are removed."""
    arrays = {name: np.asarray(a) for name, a in arrays.items()}
    for name, a in arrays.items():
        if name.startswith("__"):
            raise ValueError(f"array name {name!r} is reserved")
        if a.dtype.hasobject:
            raise ValueError(f"array {name!r} holds Python objects; a checkpoint holds data only")
    header = {"format": FORMAT, "kind": kind, "config": dict(config), "step": int(step), **extra}
    meta = json.dumps(header, sort_keys=True, allow_nan=False).encode()
    buffer = io.BytesIO()
    contents: dict[str, Any] = {
        **arrays,
        _META: np.frombuffer(meta, dtype=np.uint8),
        _DIGEST: np.frombuffer(_digest(meta, arrays), dtype=np.uint8),
    }
    np.savez(buffer, **contents)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in _temporaries(target):  # a write of this file killed midway
        leftover.unlink(missing_ok=True)
    atomic_write(target, buffer.getvalue())


def load_checkpoint(
    path: str | os.PathLike[str],
    *,
    kind: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`, checking its digest.

    With ``kind`` / ``config``, a checkpoint of another kind of learner or written with
    another config is refused. Every failure raises :class:`CheckpointError` naming the
    file and what is wrong.

    >>> load_checkpoint("/nonexistent/run.npz")
    Traceback (most recent call last):
    ...
    jungle_train.common._errors.CheckpointError: /nonexistent/run.npz: cannot read ...
    """
    where = str(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (FileNotFoundError, IsADirectoryError, PermissionError) as error:
        raise CheckpointError(f"{where}: cannot read the checkpoint: {error.strerror}") from None
    except Exception as error:  # a torn zip fails in many ways (zipfile, zlib, numpy): each refused
        raise CheckpointError(
            f"{where}: not a readable checkpoint (truncated or not an .npz file: "
            f"{type(error).__name__}: {error})"
        ) from None
    meta_bytes = arrays.pop(_META, None)
    digest = arrays.pop(_DIGEST, None)
    if meta_bytes is None or digest is None:
        raise CheckpointError(f"{where}: not a jungle checkpoint (no header or digest)")
    meta_raw = meta_bytes.astype(np.uint8).tobytes()
    if digest.astype(np.uint8).tobytes() != _digest(meta_raw, arrays):
        raise CheckpointError(
            f"{where}: the checkpoint's contents do not match its digest "
            "(the file was changed or damaged after it was written)"
        )
    try:
        meta = json.loads(meta_raw)
    except ValueError as error:
        raise CheckpointError(f"{where}: the checkpoint header is not JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{where}: not a {FORMAT} checkpoint")
    if kind is not None and meta.get("kind") != kind:
        raise CheckpointError(f"{where}: a checkpoint of {meta.get('kind')!r}, not of {kind!r}")
    if config is not None and dict(meta.get("config", {})) != dict(config):
        diff = "; ".join(config_diff(meta.get("config", {}), config)[:4])
        raise CheckpointError(
            f"{where}: written with another config (checkpoint vs this run: {diff})"
        )
    return Checkpoint(where, arrays, meta)
