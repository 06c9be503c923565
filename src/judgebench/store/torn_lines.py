"""Torn lines of the append-only run files: noted when a reader skips them, repaired by the writer.

A killed writer can leave a line cut short, and another writer may append a whole record onto it.
Readers (`run_folder.read_jsonl`) skip the fragment and keep the record; the next stage that writes the
file, holding the run's lock for it, rewrites it once, atomically, as valid JSONL (`repair_torn_lines`),
so pandas, jq or a user's script can read it again; the fragments go to a `.torn` sidecar, kept.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from judgebench.store.atomic_files import atomic_write_bytes
from judgebench.store.file_index import Signature, signature

__all__ = ["TORN_SUFFIX", "note_torn", "repair_tail", "repair_torn_lines", "torn_seen"]

logger = logging.getLogger("judgebench.store.run_folder")

# Files a reader in this process found torn lines in, with their signature then.
_TORN: dict[str, Signature | None] = {}
TORN_SUFFIX = ".torn"


def torn_seen(path: Path) -> bool:
    """Whether a reader found torn lines in `path` as it is now (unchanged since)."""
    key = str(path.resolve())
    return key in _TORN and _TORN[key] == _signature_of(path)


def _signature_of(path: Path) -> Signature | None:
    try:
        return signature(path.stat())
    except OSError:
        return None


def repair_torn_lines(path: Path) -> int:
    """Make `path` valid JSONL again: each torn line (a killed writer's fragment, possibly with a whole
    record appended onto it) becomes the record it carries, or goes; the fragments are appended to
    `path` + `.torn` (kept, never thrown away). One atomic rewrite, by the stage writing the file
    (holding the run's lock for it), so no other writer's line can be lost; returns the lines repaired."""
    _TORN.pop(str(path.resolve()), None)
    data = path.read_bytes()
    lines = data.split(b"\n")
    kept: list[bytes] = []
    fragments: list[bytes] = []
    for raw in lines[:-1]:  # the last piece follows the final newline (empty: repair_tail ran)
        start = _torn_at(raw)
        if start is None:
            kept.append(raw)
            continue
        fragments.append(raw[:start] if start > 0 else raw)
        if start > 0:
            kept.append(raw[start:])
    if not fragments:
        return 0
    sidecar = _keep_fragments(path, fragments)  # the fragments first: a kill now leaves them twice
    atomic_write_bytes(path, b"".join(k + b"\n" for k in kept) + lines[-1])
    logger.warning(
        "warning: %s: repaired %d torn line(s) (a writer was killed mid-line): the file is whole JSONL "
        "again, the fragments are kept in %s",
        path,
        len(fragments),
        sidecar,
    )
    return len(fragments)


def repair_tail(path: Path, validate: Callable[[Any], object] | None = None) -> None:
    """Make the file end with a newline before an append, so appends stay whole lines. A last line
    without one that is a whole record (JSON Lines allows it: editors and `pandas.to_json(lines=True)`
    write it; a kill between a record and its newline leaves it) gets its newline: it may be a paid
    answer, and cutting it made the resume pay again. "Whole" is what the readers take: a JSON object
    that `validate` (the file's record model) accepts. Anything else is a line cut short by a kill
    mid-write: it goes to the `.torn` sidecar (kept) and is cut."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "rb+") as fh:
        start = _last_line_start(fh, size)
        fh.seek(start)
        tail = fh.read()
        if tail.endswith(b"\n"):
            return
        if _is_record(tail, validate):
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
            return
        if tail.strip():
            _keep_fragments(path, [tail])
            logger.warning(
                "warning: %s: cut a last line left unfinished by a killed writer (%d bytes; kept in %s)",
                path,
                len(tail),
                path.with_name(path.name + TORN_SUFFIX),
            )
        fh.truncate(start)


def _last_line_start(fh: BinaryIO, size: int, chunk: int = 1 << 16) -> int:
    """Where the file's last line starts (after its last newline but the final byte), read from the
    end: a million-line log is not read whole to find it."""
    end = size - 1  # a final newline ends the last line, it does not start one
    while end > 0:
        begin = max(0, end - chunk)
        fh.seek(begin)
        found = fh.read(end - begin).rfind(b"\n")
        if found != -1:
            return begin + found + 1
        end = begin
    return 0


def _is_record(raw: bytes, validate: Callable[[Any], object] | None) -> bool:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False
    if not isinstance(data, dict):
        return False
    if validate is None:
        return True
    try:
        validate(data)
    except ValueError:  # pydantic's ValidationError is one
        return False
    return True


def _keep_fragments(path: Path, fragments: list[bytes]) -> Path:
    """Append fragments to the `.torn` sidecar, synced before the file loses them (a kill then
    leaves them twice, never lost)."""
    sidecar = path.with_name(path.name + TORN_SUFFIX)
    with open(sidecar, "ab") as fh:
        fh.write(b"".join(f + b"\n" for f in fragments))
        fh.flush()
        os.fsync(fh.fileno())
    return sidecar


def _torn_at(raw: bytes) -> int | None:
    """None for a line that parses (or is not a record at all: the reader names it); else where the
    whole record appended onto a fragment starts (0: no record in it, the line is all fragment)."""
    if not raw.strip() or not raw.lstrip().startswith(b"{"):
        return None
    try:
        json.loads(raw.decode("utf-8"))
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass
    start = raw.find(b"{", 1)
    while start != -1:
        try:
            if isinstance(json.loads(raw[start:].decode("utf-8")), dict):
                return start
        except (json.JSONDecodeError, UnicodeDecodeError):
            pass
        start = raw.find(b"{", start + 1)
    return 0


def note_torn(path: Path) -> None:
    """A reader skipped torn lines of `path` (its writer repairs it when it next opens it)."""
    _TORN[str(path.resolve())] = _signature_of(path)
