"""The run folder: one manifest plus one file per stage, written so that no crash leaves half a record.

JSONL stage files are append-only; each record is one `write` of a whole line followed by flush and
fsync, and readers ignore a trailing partial line (what a kill -9 mid-write can leave) and take the
last line per key. Whole-file outputs (manifest, metrics, report) are written to a temp file and
renamed into place (`judgebench.store.atomic_files`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from judgebench import __version__
from judgebench.errors import RunDirError
from judgebench.records import AuditFlag, CallKey, Judgment, PlannedKey, TranslationFailure, Variant
from judgebench.records.clock import now_iso
from judgebench.records.manifest import (
    DatasetEntry,
    HistoryEntry,
    ImportStage,
    Manifest,
    StageEntry,
    migrate,
)
from judgebench.records.sanitize import mask_url, replace_surrogates
from judgebench.store.answers_log import JudgmentLog, plan_keys, read_lines
from judgebench.store.atomic_files import atomic_write_json
from judgebench.store.file_index import BaseIndex, JsonlIndex, Signature, signature
from judgebench.store.torn_lines import repair_tail, repair_torn_lines, torn_seen

try:  # advisory locks: POSIX; elsewhere a run folder is not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
S = TypeVar("S", bound=StageEntry)
A = TypeVar("A", contravariant=True)

MANIFEST = "manifest.json"
VARIANTS = "variants.jsonl"
TRANSLATION_FAILURES = "translation_failures.jsonl"
AUDIT = "audit.jsonl"
JUDGMENTS = "judgments.jsonl"
PLAN = "plan.jsonl"
READINESS_JSON = "readiness.json"
METRICS_JSON = "metrics.json"
METRICS_CSV = "metrics.csv"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
BBE_JSON = "bbe.json"
BBE_NEIGHBOURS = "bbe_neighbours.jsonl"


def redact_command(argv: list[str]) -> list[str]:
    """The command line as recorded: credentials in URLs (user:token@, ?api-key=...) are masked."""
    return [mask_url(arg) for arg in argv]


def safe_run_path(path: str | Path, *, base: Path | None = None) -> Path:
    """Refuse a run name that climbs out of its folder (`../..`) when given relative to `base`."""
    raw = Path(path)
    if ".." in raw.parts:
        raise RunDirError(
            f"run path '{path}' contains '..'; give a path inside the working folder or an absolute path"
        )
    if raw.exists() and not raw.is_dir():
        raise RunDirError(f"run path '{path}' is a file, not a run folder")
    if base is not None and not raw.is_absolute():
        resolved = (base / raw).resolve()
        if not resolved.is_relative_to(base.resolve()):
            raise RunDirError(f"run path '{path}' escapes {base}")
        return resolved
    return raw


class JsonlAppender:
    """Append whole records to a JSONL file.

    Each line is written with one call and flushed to the OS before `append` returns, so a killed
    process (kill -9, Ctrl-C) never loses or halves an appended record. Against power loss the file is
    also fsynced, at most every `fsync_interval` seconds and on close (an fsync per record made a
    6,400-call run three times slower for no gain against process kills).
    """

    def __init__(self, path: Path, *, fsync_interval: float = 1.0) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fsync_interval = fsync_interval
        self._last_sync = time.monotonic()
        torn = torn_seen(path)
        model = _RECORD_MODELS.get(path.name)
        repair_tail(path, model.model_validate if model is not None else None)
        if torn and path.name in _REPAIRABLE:  # its one writer (holding the lock) makes it JSONL again
            repair_torn_lines(path)
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
        line = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            self._fh.write(line)
        except UnicodeEncodeError:  # a lone surrogate (no UTF-8 for it): U+FFFD, never a lost record
            self._fh.write(
                json.dumps(replace_surrogates(data), ensure_ascii=False, separators=(",", ":")) + "\n"
            )
        self._fh.flush()
        now = time.monotonic()
        if now - self._last_sync >= self._fsync_interval:
            os.fsync(self._fh.fileno())
            self._last_sync = now

    def fileno(self) -> int:
        return self._fh.fileno()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_jsonl(path: Path, model: type[T]) -> Iterator[T]:
    """Records of a run file. A torn line (a JSON object cut short by a killed writer, at the end or,
    when another writer appended after it, anywhere) is skipped with a warning, keeping any whole
    record appended onto it; any other bad line is an error naming the file and line
    (`answers.read_lines`, the one reading loop)."""
    for _, record in read_lines(path, model.model_validate):
        yield record


K = TypeVar("K", bound=Hashable)


def last_per_key(records: Iterable[T], key: Callable[[T], K]) -> dict[K, T]:
    """Later lines supersede earlier ones with the same key (INTERFACE: readers take the last)."""
    out: dict[K, T] = {}
    for record in records:
        out[key(record)] = record
    return out


class LineIndex(JsonlIndex[T, K]):
    """A `JsonlIndex` that also keeps every line it read or learnt, in file order, superseded ones
    too (held by reference: the latest records are the same objects). A figure over every answer
    (each re-ask's reply tokens) comes from the same one read."""

    def __init__(self, path: Path, model: type[T], key: Callable[[T], K]) -> None:
        self._model = model
        self._lines: list[T] = []
        super().__init__(path, self._read_lines, key)

    def _read_lines(self, path: Path) -> Iterator[T]:
        self._lines = []
        for record in read_jsonl(path, self._model):
            self._lines.append(record)
            yield record

    def _reset(self) -> None:
        self._lines = []

    def appended(self, record: T, st: os.stat_result) -> None:
        known = self._loaded
        super().appended(record, st)
        if known:
            self._lines.append(record)

    def lines(self) -> list[T]:
        """Every line of the file, in order (a missing file: none)."""
        return self._lines if self.latest() else []


class PlanIndex(BaseIndex[CallKey, CallKey]):
    """plan.jsonl's call keys (a planned call is its key): each line read as five strings, the
    `PlannedKey` model deciding only a line that is not exactly those (issue 26: a million planned
    calls were a million models held to learn which keys the plan lists)."""

    def _load(self, path: Path) -> dict[CallKey, CallKey]:
        return plan_keys(path)

    def appended(self, record: PlannedKey, st: os.stat_result) -> None:
        if self._loaded:
            key = record.key()
            self._learn(key, key, st)


JudgmentIndex = LineIndex[Judgment, CallKey]  # bbe_neighbours.jsonl (its records whole), read once

StageName = Literal["translate", "judge", "report", "bbe"]


class RunDir:
    """A run folder and its typed manifest. Stages record what they did under `manifest.stages`.

    One object per command, passed down from the API: its accessors read each file at most once and
    share what they read (`judgments()`, `plan()`, `variants()`, `neighbours()`, `manifest()`), and
    appends through `IndexedAppender` keep them in step, so no stage re-reads what it wrote."""

    def __init__(self, path: str | Path | RunDir) -> None:
        self.path = Path(path)
        self._indexes: dict[str, BaseIndex[Any, Any]] = {}
        self._manifest: tuple[Signature, Manifest] | None = None

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def file(self, name: str) -> Path:
        return self.path / name

    # -- the files, each read once and shared -------------------------------------------------------
    def judgments(self) -> JudgmentLog:
        """`judgments.jsonl` as light `Answer`s: the last per call key (and every line, `lines()`;
        whole records of chosen lines, `records()`)."""
        if JUDGMENTS not in self._indexes:
            self._indexes[JUDGMENTS] = JudgmentLog(self.file(JUDGMENTS))
        index = self._indexes[JUDGMENTS]
        assert isinstance(index, JudgmentLog)
        return index

    def neighbours(self) -> JudgmentIndex:
        """`bbe_neighbours.jsonl`: bbe's re-judged neighbours and repeat re-asks, last per call key."""
        if BBE_NEIGHBOURS not in self._indexes:
            self._indexes[BBE_NEIGHBOURS] = LineIndex(self.file(BBE_NEIGHBOURS), Judgment, Judgment.call_key)
        index = self._indexes[BBE_NEIGHBOURS]
        assert isinstance(index, LineIndex)
        return index

    def plan(self) -> PlanIndex:
        """`plan.jsonl`: the key of every call the judge stage planned."""
        if PLAN not in self._indexes:
            self._indexes[PLAN] = PlanIndex(self.file(PLAN))
        index = self._indexes[PLAN]
        assert isinstance(index, PlanIndex)
        return index

    def variants(self) -> JsonlIndex[Variant, tuple[str, str]]:
        """`variants.jsonl`: the last variant per (item, condition)."""
        return self._index(VARIANTS, Variant, _variant_key)

    def _index(self, name: str, model: type[T], key: Callable[[T], K]) -> JsonlIndex[T, K]:
        if name not in self._indexes:
            self._indexes[name] = JsonlIndex(self.file(name), lambda p: read_jsonl(p, model), key)
        index = self._indexes[name]
        assert isinstance(index, JsonlIndex)
        return index

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def load_manifest(self) -> Manifest | None:
        """The manifest, lifted to this release's layout (None when the run has none yet); read
        again only when the file changed since this object last read or wrote it."""
        try:
            now = signature(os.stat(self.manifest_path))
        except FileNotFoundError:
            return None
        if self._manifest is not None and self._manifest[0] == now:
            return self._manifest[1].model_copy(deep=True)
        manifest = self._read_manifest()
        self._manifest = (now, manifest.model_copy(deep=True))
        return manifest

    def _read_manifest(self) -> Manifest:
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RunDirError(f"{self.manifest_path}: not a readable manifest ({exc})") from exc
        if not isinstance(data, dict):
            raise RunDirError(f"{self.manifest_path}: manifest must be a JSON object")
        try:
            return Manifest.model_validate(migrate(data))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError too
            first = exc.errors()[0] if isinstance(exc, ValidationError) else None
            if first is not None:
                where = ".".join(str(x) for x in first["loc"])
                raise RunDirError(f"{self.manifest_path}: field '{where}': {first['msg']}") from None
            raise RunDirError(f"{self.manifest_path}: {exc}") from None

    def manifest(self) -> Manifest:
        """The manifest, or an empty one for a run that has none yet (nothing is written)."""
        return self.load_manifest() or Manifest(judgebench_version=__version__, created_at=now_iso())

    def init(self, *, dataset: DatasetEntry | None = None) -> Manifest:
        """Create the folder and manifest, or check that an existing run is for the same dataset."""
        manifest = self.load_manifest()
        if manifest is not None:
            if dataset is not None and manifest.dataset is not None:
                old = manifest.dataset.checksum
                if old and not manifest.dataset.same_data(dataset):
                    raise RunDirError(
                        f"run {self.path} holds dataset '{manifest.dataset.spec}' "
                        f"(checksum {old[:12]}); refusing to mix in '{dataset.spec}' "
                        f"(checksum {str(dataset.checksum)[:12]}): use a new --run folder"
                    )
            if dataset is not None and manifest.dataset is None:
                manifest.dataset = dataset
                self.save_manifest(manifest)
            elif (
                dataset is not None
                and dataset.data_dir
                and manifest.dataset
                and not manifest.dataset.data_dir
            ):
                # the local copy a later stage came from: recorded for the next one
                manifest.dataset = manifest.dataset.model_copy(update={"data_dir": dataset.data_dir})
                self.save_manifest(manifest)
            return manifest
        self.path.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(judgebench_version=__version__, created_at=now_iso(), dataset=dataset)
        self.save_manifest(manifest)
        return manifest

    def save_manifest(self, manifest: Manifest) -> None:
        atomic_write_json(self.manifest_path, manifest.model_dump(mode="json"))
        self._manifest = (signature(os.stat(self.manifest_path)), manifest.model_copy(deep=True))

    def _stamp(self, manifest: Manifest, stage: str, entry: S) -> S:
        stamped = entry.model_copy(
            update={
                "finished_at": entry.finished_at or now_iso(),
                "judgebench_version": __version__,
                "command": redact_command(sys.argv),
            }
        )
        manifest.history.append(
            HistoryEntry(stage=stage, at=stamped.finished_at, command=redact_command(sys.argv))
        )
        return stamped

    def record_stage(self, stage: StageName, entry: StageEntry) -> Manifest:
        """Record a stage's configuration and totals in the manifest, with the command line."""
        manifest = self.load_manifest() or self.init()
        setattr(manifest.stages, stage, self._stamp(manifest, stage, entry))
        self.save_manifest(manifest)
        return manifest

    def record_import(self, name: str, entry: ImportStage) -> Manifest:
        """Record an import of published results (one entry per evaluator)."""
        manifest = self.load_manifest() or self.init()
        manifest.stages.imports[name] = self._stamp(manifest, f"import:{name}", entry)
        self.save_manifest(manifest)
        return manifest

    @contextlib.contextmanager
    def lock(self, stage: StageName, *, wait: bool = False) -> Iterator[None]:
        """Hold this run folder's advisory lock for `stage` while the block runs: a second writer of
        the same stage is refused (naming the holder's pid), or with `wait` waits for it. The lock
        is the kernel's (flock), so a holder that dies, even by kill -9, releases it: a lock file
        left by a dead process is simply taken over."""
        self.path.mkdir(parents=True, exist_ok=True)
        path = self.path / f".{stage}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = _lock_holder(fd)
                    if not wait:
                        raise RunDirError(
                            f"run {self.path} is in use: another '{stage}' ({holder}) is writing it; "
                            "wait for it to finish, or pass --wait-lock to wait for it"
                        ) from None
                    logger.warning("waiting for the '%s' of %s (%s) to finish ...", stage, self.path, holder)
                    fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            for name in _WRITES.get(stage, ()):  # its files a reader found torn: whole JSONL again
                if torn_seen(self.path / name):
                    repair_torn_lines(self.path / name)
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def require(self, name: str, hint: str) -> Path:
        path = self.file(name)
        if not path.exists():
            raise RunDirError(f"{path} does not exist: {hint}")
        return path


# the JSONL files only one stage writes (under its lock): that stage repairs them (bbe_neighbours.jsonl,
# written by judge --repeats and by bbe, both under the bbe lock, is skipped over but not yet rewritten)
_WRITES: dict[str, tuple[str, ...]] = {
    "translate": (VARIANTS, AUDIT, TRANSLATION_FAILURES),
    "judge": (JUDGMENTS, PLAN),
}
_REPAIRABLE = frozenset(name for names in _WRITES.values() for name in names)
# the record each appended run file holds: a last line without its newline that is one is kept
_RECORD_MODELS: dict[str, type[BaseModel]] = {
    JUDGMENTS: Judgment,
    BBE_NEIGHBOURS: Judgment,
    PLAN: PlannedKey,
    VARIANTS: Variant,
    AUDIT: AuditFlag,
    TRANSLATION_FAILURES: TranslationFailure,
}


def _lock_holder(fd: int) -> str:
    """Who holds a run lock, as its file says ("pid 1234"), for the refusal message."""
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"pid {text}" if text.isdigit() else "pid unknown"


def _variant_key(variant: Variant) -> tuple[str, str]:
    return (variant.item_id, variant.condition)


class Appendable(Protocol[A]):
    """An index of a run file that learns the records appended to it (`JsonlIndex`, `JudgmentLog`)."""

    @property
    def path(self) -> Path: ...

    def before_append(self, st: os.stat_result) -> None: ...

    def appended(self, record: A, st: os.stat_result) -> None: ...


class IndexedAppender(Generic[A]):
    """A `JsonlAppender` for a file an index holds: each whole line appended is added to the
    index, so the stage that wrote it never reads the file again to learn what it holds."""

    def __init__(self, index: Appendable[A], *, fsync_interval: float = 1.0) -> None:
        self.index = index
        self._out = JsonlAppender(index.path, fsync_interval=fsync_interval)

    def append(self, record: A) -> None:
        fd = self._out.fileno()
        self.index.before_append(os.fstat(fd))
        self._out.append(record)  # type: ignore[arg-type]
        self.index.appended(record, os.fstat(fd))

    def close(self) -> None:
        self._out.close()

    def __enter__(self) -> IndexedAppender[A]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
