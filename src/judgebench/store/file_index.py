"""What one append-only run file holds, read once and then kept in step with what is appended to it.

A stage asks many times what a file holds (which calls are answered, which are planned): reading the
whole file each time made one `judge` read a 13,408-judgment `judgments.jsonl` in full four or five
times, and each `--until-settled` round six. An index reads the file once and learns each record
appended through its appender (`run_folder.IndexedAppender`); it reads the file again only when the file
changed by other means (another writer, a torn tail cut on open), which it tells from the file's
inode, size and modification time, so a cached answer is never one the file no longer gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

Signature = tuple[int, int, int]  # inode, size, modification time (ns)


def signature(st: os.stat_result) -> Signature:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _on_disk(path: Path) -> Signature | None:
    try:
        return signature(os.stat(path))
    except FileNotFoundError:
        return None


def _same(known: Signature | None, now: Signature | None) -> bool:
    """A missing file and an empty one hold the same records (an appender creates the file empty)."""
    if known is None or now is None:
        return (known or (0, 0, 0))[1] == 0 and (now or (0, 0, 0))[1] == 0
    return known == now


class BaseIndex(Generic[T, K]):
    """The last record per key of one JSONL file (INTERFACE: a later line supersedes an earlier one),
    read at most once while only its own appender writes the file (`_load` reads it; a subclass's
    `appended` learns each appended line through `_learn`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: Signature | None = None
        self._loaded = False
        self._latest: dict[K, T] = {}
        self.reads = 0  # full reads of the file so far (what the index exists to keep at one)

    def _load(self, path: Path) -> dict[K, T]:
        """Key -> the last record with that key, in file order of first appearance."""
        raise NotImplementedError

    def _reset(self) -> None:
        """Forget what `_load` kept besides the latest records (the file is missing)."""

    def latest(self) -> Mapping[K, T]:
        """Key -> the last record with that key, in file order of first appearance."""
        now = _on_disk(self.path)
        if not self._loaded or not _same(self._known, now):
            # the signature is taken before reading: a line appended meanwhile means one more read
            self._latest = {}
            if now is None:
                self._reset()
            else:
                self._latest = self._load(self.path)
                self.reads += 1
            self._known, self._loaded = now, True
        return self._latest

    def keys(self) -> set[K]:
        return set(self.latest())

    def held(self) -> Mapping[K, T] | None:
        """The latest records if this index already holds them for the file as it is now (read or
        learnt from its appender), else None: a caller that needs only a few records reads those."""
        if self._loaded and _same(self._known, _on_disk(self.path)):
            return self._latest
        return None

    def before_append(self, st: os.stat_result) -> None:
        """Called by the appender before it writes: a file changed by someone else is read again."""
        if self._loaded and not _same(self._known, signature(st)):
            self._loaded = False

    def _learn(self, key: K, record: T, st: os.stat_result) -> None:
        """A record the appender wrote as a whole line (`st` after the write), as a re-read would
        order it (last_per_key)."""
        self._latest[key] = record
        self._known = signature(st)


class JsonlIndex(BaseIndex[T, K]):
    """A `BaseIndex` whose records are what `read` yields of the file, keyed by `key`."""

    def __init__(self, path: Path, read: Callable[[Path], Iterable[T]], key: Callable[[T], K]) -> None:
        self._read = read
        self._key = key
        super().__init__(path)

    def _load(self, path: Path) -> dict[K, T]:
        latest: dict[K, T] = {}
        for record in list(self._read(path)):
            latest[self._key(record)] = record
        return latest

    def appended(self, record: T, st: os.stat_result) -> None:
        """Called by the appender once `record` is a whole line of the file (`st` after the write)."""
        if self._loaded:
            self._learn(self._key(record), record, st)
