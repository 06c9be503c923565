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

import asyncio
import contextlib
import queue
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgebench.models.base import ModelResponse
from judgebench.paths import cache_dir

_INSERT = (
    "INSERT OR REPLACE INTO responses (key, provider, model, spec, response, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
_Row = tuple[str, str, str, str, str, str]
_Waiter = tuple[_Row, asyncio.AbstractEventLoop, "asyncio.Future[None]"]

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a committed put survives a process kill (not a power cut), and costs no fsync.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=60000")
        self._conn.execute(_SCHEMA)
        self._writer: _Writer | None = None

    def get(self, key: str) -> ModelResponse | None:
        with self._lock:
            row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return ModelResponse.model_validate_json(row[0])

    def __contains__(self, key: str) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone()
        return row is not None

    def put(self, key: str, response: ModelResponse, *, provider: str, model: str, spec: str) -> None:
        """Store an answer (replacing an older one under the same key), committed before returning."""
        row = _row(key, response, provider=provider, model=model, spec=spec)
        with self._lock:
            self._conn.execute(_INSERT, row)

    async def aput(self, key: str, response: ModelResponse, *, provider: str, model: str, spec: str) -> None:
        """`put` for the event loop: returns once the answer is committed, like `put`, but the write
        happens on a writer thread that commits every answer queued meanwhile in one transaction, so
        many concurrent calls cost one commit and the loop never waits on the disk."""
        row = _row(key, response, provider=provider, model=model, spec=spec)
        with self._lock:
            if self._writer is None:
                self._writer = _Writer(self.path)
            writer = self._writer
        await writer.submit(row)

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
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return {
            "path": str(self.path),
            "entries": int(total),
            "size_bytes": size,
            "oldest": oldest,
            "newest": newest,
            "by_model": {str(spec): int(n) for spec, n in by_model},
        }

    def clear(self, *, spec: str | None = None) -> int:
        """Delete every stored answer (or only those of one model spec); returns how many."""
        with self._lock:
            if spec is None:
                cur = self._conn.execute("DELETE FROM responses")
            else:
                cur = self._conn.execute("DELETE FROM responses WHERE spec = ?", (spec,))
            removed = int(cur.rowcount)
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if spec is None:
            with self._lock:
                self._conn.execute("VACUUM")
        return removed

    def close(self) -> None:
        with self._lock:
            writer, self._writer = self._writer, None
            self._conn.close()
        if writer is not None:
            writer.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row(key: str, response: ModelResponse, *, provider: str, model: str, spec: str) -> _Row:
    created = datetime.now(UTC).isoformat(timespec="seconds")
    return (key, provider, model, spec, response.model_dump_json(), created)


def _resolve(waiters: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for fut in waiters:
        if fut.done():
            continue
        if error is None:
            fut.set_result(None)
        else:
            fut.set_exception(error)


class _Writer:
    """One thread with its own connection, committing queued rows in batches (group commit)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.SimpleQueue[_Waiter | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="judgebench-cache-writer", daemon=True)
        self._thread.start()

    def submit(self, row: _Row) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._queue.put((row, loop, fut))
        return fut

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=60)

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=60000")
        stop = False
        try:
            while not stop:
                first = self._queue.get()
                if first is None:
                    break
                batch = [first]
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        stop = True
                        break
                    batch.append(item)
                error: BaseException | None = None
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany(_INSERT, [row for row, _, _ in batch])
                    conn.execute("COMMIT")
                except sqlite3.Error as exc:
                    error = exc
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
                for _, loop, fut in batch:
                    by_loop.setdefault(loop, []).append(fut)
                for loop, waiters in by_loop.items():
                    # a closed loop raises RuntimeError: nobody waits there any more
                    with contextlib.suppress(RuntimeError):
                        loop.call_soon_threadsafe(_resolve, waiters, error)
        finally:
            conn.close()


def default_cache_path() -> Path:
    return cache_dir() / "responses.sqlite"


def default_cache() -> ResponseCache:
    """The user's response store (see the module docstring for where it lives)."""
    return ResponseCache(default_cache_path())
