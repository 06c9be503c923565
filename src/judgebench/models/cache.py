"""The response store: every answer a provider returned, content-addressed, so none is paid twice.

Lives at `paths.cache_dir() / "responses.sqlite"` (`$JUDGEBENCH_CACHE_DIR`, else
`$XDG_CACHE_HOME/judgebench`, else `~/.cache/judgebench`). The key is `models.base.cache_key`: a
hash of provider, model, base URL and every request parameter that can change the answer, so the
same call under the same settings is answered from here with no request. Only successful answers are
stored; errors never are. SQLite in WAL mode with a busy timeout lets several processes (two judges
running side by side) share one store; each put is committed at once, so an answer survives a
kill -9 of the process that received it. Bypass it with `--no-cache` (answers are still stored);
clear it with `ResponseCache.clear()` (`judgebench cache clear`) or by deleting the file.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgebench.config.paths import cache_dir
from judgebench.models.base import ModelResponse
from judgebench.records.clock import now_iso

logger = logging.getLogger(__name__)

_INSERT = (
    "INSERT OR REPLACE INTO responses (key, provider, model, spec, response, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
_Row = tuple[str, str, str, str, str, str]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key        TEXT PRIMARY KEY,
    provider   TEXT NOT NULL,
    model      TEXT NOT NULL,
    spec       TEXT NOT NULL,
    response   TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""


class ResponseCache:
    """A thread-safe handle on one SQLite response store."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._conn = self._open(self.path)
        except (sqlite3.Error, OSError) as exc:  # a full or read-only disk: go on without the store
            self._disable(exc)
            self._conn = self._open(":memory:")  # an empty stand-in: every get misses
        # Keys known to be stored, so a miss (every call of a fresh run) costs no disk read. Own
        # writes are added at once; other handles' and processes' writes are picked up by rowid
        # at most every REFRESH_S seconds.
        self._known: set[str] | None = None
        self._max_rowid = 0
        self._refreshed_at = 0.0

    REFRESH_S = 0.5

    @staticmethod
    def _open(path: Path | str) -> sqlite3.Connection:
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=60.0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed put survives a process kill (not a power cut), no fsync.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _disable(self, exc: BaseException) -> None:
        """Say once that the store cannot be used, and go on without it."""
        if self.disabled is not None:
            return
        first = str(exc).splitlines()[0] if str(exc) else ""
        self.disabled = f"{type(exc).__name__}: {first}"
        logger.warning(
            "warning: the response cache %s cannot be used (%s); going on without it "
            "(answers are still recorded in the run folder)",
            self.path,
            self.disabled,
        )

    def _sync_known(self) -> set[str]:
        """Bring the known-key set up to date (caller holds the lock)."""
        now = time.monotonic()
        if self._known is not None and now - self._refreshed_at < self.REFRESH_S:
            return self._known
        (top,) = self._conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM responses").fetchone()
        if self._known is None or top < self._max_rowid:  # first use, or cleared elsewhere
            self._known, self._max_rowid = set(), 0
        if top > self._max_rowid:
            rows = self._conn.execute(
                "SELECT rowid, key FROM responses WHERE rowid > ?", (self._max_rowid,)
            ).fetchall()
            self._known.update(key for _, key in rows)
            self._max_rowid = max(int(rowid) for rowid, _ in rows) if rows else top
        self._refreshed_at = now
        return self._known

    def get(self, key: str) -> ModelResponse | None:
        """The stored answer, or None. Answers another process stored in the last REFRESH_S seconds
        may not be seen yet (two processes asking the same call at the same moment may both pay)."""
        if self.disabled is not None:
            return None
        try:
            with self._lock:
                known = self._sync_known()
                if key not in known:
                    return None
                row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
                if row is None:  # deleted elsewhere
                    known.discard(key)
                    return None
        except (sqlite3.Error, OSError) as exc:
            self._disable(exc)
            return None
        try:
            return ModelResponse.model_validate_json(row[0])
        except (ValidationError, ValueError, TypeError) as exc:
            # a row written by another version (or damaged): the store is derived, so this is a
            # miss; the call is asked again and its answer replaces the row
            self._unreadable(key, exc)
            return None

    def _unreadable(self, key: str, exc: Exception) -> None:
        """Count a row that no longer reads as an answer; say so once per handle."""
        self.unreadable += 1
        if self.unreadable > 1:
            return
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        logger.warning(
            "warning: the response cache %s holds an answer this version cannot read (key %s...: %s); "
            "treated as not stored, so that call is asked again and its answer replaces the row",
            self.path,
            key[:12],
            first,
        )

    def __contains__(self, key: str) -> bool:
        """Exact (always asks the store)."""
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone()
        return row is not None

    def _remember(self, key: str) -> None:
        with self._lock:
            if self._known is not None:
                self._known.add(key)

    # Set when a write failed (a full disk, a read-only file): the reason, said once; later puts
    # are skipped. The store is an optimisation: the run folder stays the record.
    disabled: str | None = None
    # rows read that no longer validate as answers (each a miss; the first one is warned about)
    unreadable: int = 0

    def put(self, key: str, response: ModelResponse, *, provider: str, model: str, spec: str) -> bool:
        """Store an answer (replacing an older one under the same key), committed before returning.
        Never raises: a failed write disables the store for this handle, says so once and returns
        False (the caller still has the answer and records it in the run folder)."""
        if self.disabled is not None:
            return False
        try:
            row = _row(key, response, provider=provider, model=model, spec=spec)
        except ValueError as exc:  # this answer cannot be serialised (pydantic's error): skip it alone
            logger.warning("warning: an answer could not be stored in the response cache (%s)", exc)
            return False
        try:
            with self._lock:
                self._conn.execute(_INSERT, row)
        except (sqlite3.Error, OSError) as exc:
            self._disable(exc)
            return False
        self._remember(key)
        return True

    async def aput(self, key: str, response: ModelResponse, *, provider: str, model: str, spec: str) -> bool:
        """`put` for async callers (the client awaits it before reporting an answer). A commit in
        WAL mode with synchronous=NORMAL is a short write with no fsync, so it runs inline: a writer
        thread with group commit was measured and cost more CPU (GIL hand-offs) than it saved."""
        return self.put(key, response, provider=provider, model=model, spec=spec)

    def __len__(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def info(self) -> dict[str, Any]:
        """Where the store is, how big, and what it holds (for `judgebench cache info`)."""
        with self._lock:
            total, oldest, newest = self._conn.execute(
                "SELECT COUNT(*), MIN(created_at), MAX(created_at) FROM responses"
            ).fetchone()
            by_model = self._conn.execute(
                "SELECT spec, COUNT(*) FROM responses GROUP BY spec ORDER BY COUNT(*) DESC"
            ).fetchall()
        folder = self.path.parent
        size = (
            sum(p.stat().st_size for p in folder.glob(self.path.name + "*") if p.is_file())
            if folder.is_dir()
            else 0
        )
        return {
            "path": str(self.path),
            "entries": int(total),
            "size_bytes": size,
            "oldest": oldest,
            "newest": newest,
            "by_model": {str(spec): int(n) for spec, n in by_model},
            # set when the store could not be opened or written (this handle works without it)
            "disabled": self.disabled,
        }

    def clear(self, *, spec: str | None = None) -> int:
        """Delete every stored answer (or only those of one model spec); returns how many."""
        with self._lock:
            if spec is None:
                cur = self._conn.execute("DELETE FROM responses")
            else:
                cur = self._conn.execute("DELETE FROM responses WHERE spec = ?", (spec,))
            removed = int(cur.rowcount)
            self._known = None
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if spec is None:
            with self._lock:
                self._conn.execute("VACUUM")
        return removed

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row(key: str, response: ModelResponse, *, provider: str, model: str, spec: str) -> _Row:
    return (key, provider, model, spec, response.model_dump_json(), now_iso())


def default_cache_path() -> Path:
    return cache_dir() / "responses.sqlite"


def default_cache() -> ResponseCache:
    """The user's response store (see the module docstring for where it lives)."""
    return ResponseCache(default_cache_path())
