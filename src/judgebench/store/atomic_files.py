"""Whole-file writes that no crash can leave half done: a temp file in the same folder, then a rename.

Every stage output (manifest, metrics, report, plots, bbe.json, downloads) goes through here, so
a reader sees the old file or the new one, never a mix, and no `.tmp` file outlives a failed write.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, data: bytes, *, suffix: str = ".tmp") -> None:
    """Write via a temp file in the same folder and rename: readers see the old or the new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs are shared like any file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def atomic_write_many(files: Mapping[Path, bytes]) -> None:
    """Write a set of files that belong together (metrics and the report made from them): every
    temp file is written and synced first, then all are renamed in a row, so a kill leaves the old
    set whole, or (only in the instant of the renames) part of the new one; never a half file. A
    rename that would fail (a folder where a file goes) is found before the first one: then nothing
    is replaced, rather than a set half old, half new."""
    for path in files:
        if path.is_dir() and not path.is_symlink():  # a link is replaced itself, never what it names
            raise IsADirectoryError(
                errno.EISDIR,
                f"a folder is in the way of an output file; none of the {len(files)} files was "
                "written (move the folder, or write the outputs elsewhere)",
                str(path),
            )
    temps: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            temps.append((tmp, path))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
        for tmp, path in temps:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise


def remove_stale_temps(folder: Path) -> None:
    """Delete the temp files a killed writer left in `folder` (`.NAME.XXXX.tmp`): call it only while
    holding the folder's lock for that output, so no live writer's temp is taken."""
    if folder.is_dir():
        for stale in folder.glob(".*.tmp"):
            stale.unlink(missing_ok=True)
