"""judgments.jsonl read as columns: the fields the analysis needs, one row per call key.

Why: a multilingual study is about a million judgments; validating each line into a `Judgment` model
costs about 8 KB of memory and tens of microseconds a line, while the metrics need nine short fields.
The fast path streams the file through pyarrow's JSON reader with the full `Judgment` schema (so a
field of the wrong type is still noticed), checks the closed value sets (kind, winner, label) and the
required fields batch by batch, and keeps only the analysis columns. Anything it cannot vouch for (a
torn line, a bad record, a value pydantic would coerce) sends the whole file down the exact path,
`read_jsonl(path, Judgment)`, which salvages torn lines and names the bad line as every other reader
does. Both paths give the same table, and `judgments.jsonl` stays the append-only log.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import ValidationError

from judgebench.records import Judgment, PlannedKey
from judgebench.records.judgments import ANALYSIS_COLUMNS, CallKey
from judgebench.store.jsonl_columns import Fallback as _Fallback
from judgebench.store.jsonl_columns import parse_pieces
from judgebench.store.judgment_schema import arrow_schema, closed_values, nested_checks, required_fields
from judgebench.store.run_folder import last_per_key, read_jsonl

__all__ = [
    "CALL_KEY",
    "SCORE_COLUMNS",
    "TABLE_COLUMNS",
    "JudgmentTable",
    "judgment_table",
    "read_judgment_table",
    "read_plan_table",
]

CALL_KEY = list(CallKey._fields)
TABLE_COLUMNS = list(ANALYSIS_COLUMNS)  # the analysis frame's (analysis.frame.COLUMNS)
# what bbe scores with besides (the verdict as written: bbe takes only 1, 2 and tie as they stand)
SCORE_COLUMNS = ["verdict_raw", "prob_a", "prob_b", "prob_tie"]
_STR = pa.string()
_F64 = pa.float64()
_I64 = pa.int64()
# every typed field of a Judgment as pyarrow parses it, derived from the model (judgment_schema: params,
# a free-form object, is left to the exact path's reader); its required fields and closed value sets
_SCHEMA = arrow_schema(Judgment)
_REQUIRED = required_fields(Judgment)
_CLOSED = {name: values - {None} for name, values in closed_values(Judgment).items()}
# the nested objects' fields that must be there when the object is (a perturbation's field, operation)
_NESTED_REQUIRED = {name: {k for k, _, must in fields if must} for name, fields in nested_checks(Judgment)}


@dataclass
class JudgmentTable:
    """The analysis columns of a run's judgments (`frame`: one row per call key, sorted by call key;
    its `line` column says where the row's whole record is) and the way back to those records, read
    only for the rows a page or an export shows."""

    frame: pd.DataFrame
    path: Path | None = None
    held: Sequence[Judgment] | None = None  # records in memory: `line` indexes them

    def analysis_frame(self) -> pd.DataFrame:
        return self.frame[TABLE_COLUMNS]

    def records(self, lines: Iterable[int]) -> dict[int, Judgment]:
        """The whole records at `lines`: read at their byte offsets where the table knows them (the
        record must still have its row's call key there), else by one pass up to the last line."""
        wanted = set(lines)
        if self.held is not None:
            return {i: self.held[i] for i in wanted}
        out: dict[int, Judgment] = {}
        if not wanted or self.path is None:
            return out
        if "offset" in self.frame.columns:
            rows = self.frame[self.frame["line"].isin(list(wanted))]
            keys = zip(*(rows[c].tolist() for c in ["line", "offset", *CALL_KEY]), strict=True)
            with open(self.path, "rb") as fh:
                for line, offset, *key in sorted(keys, key=lambda k: k[1]):
                    record = _at_line_start(_from_before(fh, offset))
                    if record is not None and list(record.call_key()) == key:
                        out[line] = record  # else a file rewritten since: the pass below
        missing = wanted - out.keys()
        if not missing:
            return out
        last = max(missing)
        with open(self.path, "rb") as fh:
            for number, raw in enumerate(fh):
                if number in missing:
                    out[number] = Judgment.model_validate_json(raw)
                if number >= last:
                    break
        return out


def _from_before(fh: BinaryIO, offset: int) -> bytes:
    """The byte before `offset` (a newline where a line starts there; one stands in at 0) and the
    line from `offset` on."""
    if offset == 0:
        fh.seek(0)
        return b"\n" + fh.readline()
    fh.seek(offset - 1)
    return fh.read(1) + fh.readline()


def _at_line_start(raw: bytes) -> Judgment | None:
    """The record of a line read from one byte before its offset: None unless that byte ends the
    line before (the offset is still a line start) and the line is a whole record."""
    if raw[:1] != b"\n":
        return None
    try:
        return Judgment.model_validate_json(raw[1:])
    except ValidationError:
        return None


def read_judgment_table(path: Path) -> JudgmentTable:
    """The last judgment per call key of `path` as columns, sorted by call key (the order `analyze`
    sums in), verdicts normalised as `analysis.frame.judgment_frame` does."""
    if not path.exists() or path.stat().st_size == 0:
        return JudgmentTable(_finish(_from_records([])), path, held=[])
    with open(path, "rb") as fh:  # one open: the fingerprint, the line scan and the parse
        fingerprint, size = _fingerprint(fh)  # before reading: lines appended meanwhile make it stale
        cached = _cached(path, fingerprint)
        if cached is not None:
            return JudgmentTable(_to_frame(cached), path)
        try:
            settled = _settle(_fast(fh, size))
        except (_Fallback, pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
            settled = None
    if settled is None:  # a damaged or unusual file: the exact reader, which names a bad line
        records = list(last_per_key(read_jsonl(path, Judgment), key=lambda j: j.call_key()).values())
        return judgment_table(records)
    _store(path, fingerprint, settled)
    return JudgmentTable(_to_frame(settled), path)


# The derived table beside the log (`judgments.jsonl.table.parquet`): trusted only while the log has
# the inode, size, modification and change times and first and last MiB it had when the table was
# made; any append or edit makes it stale and it is rebuilt. The change time (st_ctime) is set by the
# system on every write and cannot be set back by a user, so an edit in the middle at the same length
# with the modification time put back (`touch -r`, `cp -p`, `rsync -t`) is seen too (issue 41). The
# log stays the record; the table is only a cache of it.
CACHE_SUFFIX = ".table.parquet"
_CACHE_FORMAT = "judgebench-judgment-table-3"
_EDGE = 1 << 20


def cache_path(path: Path) -> Path:
    return path.with_name(path.name + CACHE_SUFFIX)


def _fingerprint(fh: BinaryIO) -> tuple[str, int]:
    """The cache key of the file open as `fh`, and the size it was taken at (what the parse reads)."""
    stat = os.fstat(fh.fileno())
    fh.seek(0)
    head = fh.read(_EDGE)
    fh.seek(max(0, stat.st_size - _EDGE))
    tail = fh.read(_EDGE)
    parts = [_CACHE_FORMAT, str(stat.st_dev), str(stat.st_ino), str(stat.st_size)]
    parts += [str(stat.st_mtime_ns), str(stat.st_ctime_ns)]
    parts += [hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest()]
    return "|".join(parts), stat.st_size


def _cached(path: Path, fingerprint: str) -> pa.Table | None:
    cache = cache_path(path)
    try:
        meta = pq.read_schema(cache).metadata or {}
        if meta.get(b"judgebench") != fingerprint.encode():
            return None
        table: pa.Table = pq.read_table(cache)
        return table
    except (OSError, pa.ArrowException):  # none yet, unreadable or half-written: rebuild it
        return None


def _store(path: Path, fingerprint: str, table: pa.Table) -> None:
    """Write the cache atomically; a read-only run folder simply goes without one."""
    cache = cache_path(path)
    tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table.replace_schema_metadata({"judgebench": fingerprint}), tmp)
        os.replace(tmp, cache)
    except OSError:
        tmp.unlink(missing_ok=True)


def judgment_table(judgments: Sequence[Judgment]) -> JudgmentTable:
    """The same table from records already in memory."""
    return JudgmentTable(_finish(_from_records(judgments)), None, held=list(judgments))


def _fast(fh: BinaryIO, size: int) -> pa.Table:
    """The analysis columns of the first `size` bytes of the file, with each line's byte offset
    (`offset`), so that whole records are read back by seeking, not by scanning: memory holds one
    piece's whole records at a time."""
    parts: list[pa.Table] = []
    for piece, offsets in parse_pieces(fh, size, _SCHEMA):
        _check(piece)
        parts.append(_columns(piece).append_column("offset", pa.array(offsets)))
    return pa.concat_tables(parts) if parts else _from_records([]).append_column("offset", pa.array([], _I64))


def _check(batch: pa.Table) -> None:
    """What pydantic would refuse or coerce: a missing required field, a value outside a closed set."""
    for name in _REQUIRED:
        if batch.column(name).null_count:
            raise _Fallback
    for name, values in _CLOSED.items():
        if not set(batch.column(name).drop_null().unique().to_pylist()) <= values:
            raise _Fallback
    for name, required in _NESTED_REQUIRED.items():
        column = batch.column(name)
        if required and column.null_count < len(column):
            children = zip(column.type, column.flatten(), strict=True)
            if any(child.null_count > column.null_count for f, child in children if f.name in required):
                raise _Fallback  # a nested object without a required field (a perturbation's operation)


def _columns(batch: pa.Table) -> pa.Table:
    input_tokens, output_tokens = batch.column("usage").flatten()  # a null usage nulls both
    data: dict[str, pa.Array] = {name: batch.column(name) for name in TABLE_COLUMNS[:8]}
    data["label"] = batch.column("label").cast(_F64)
    data["confidence"] = batch.column("confidence")
    data["input_tokens"] = input_tokens.fill_null(0)
    data["output_tokens"] = output_tokens.fill_null(0)
    data["cost_usd"] = batch.column("cost_usd")
    for name in SCORE_COLUMNS[1:]:
        data[name] = batch.column(name)
    return pa.table(data)


def _from_records(judgments: Sequence[Judgment]) -> pa.Table:
    columns: dict[str, list[Any]] = {name: [] for name in TABLE_COLUMNS}
    for j in judgments:
        for name in TABLE_COLUMNS[:8]:
            columns[name].append(getattr(j, name))
        columns["label"].append(None if j.label is None else float(j.label))
        columns["confidence"].append(j.confidence)
        columns["input_tokens"].append(j.usage.input_tokens if j.usage else 0)
        columns["output_tokens"].append(j.usage.output_tokens if j.usage else 0)
        columns["cost_usd"].append(j.cost_usd)
        for name in SCORE_COLUMNS[1:]:
            columns.setdefault(name, []).append(getattr(j, name))
    types = dict.fromkeys(TABLE_COLUMNS[:8], _STR) | {"input_tokens": _I64, "output_tokens": _I64}
    return pa.table({name: pa.array(values, type=types.get(name, _F64)) for name, values in columns.items()})


def _finish(table: pa.Table) -> pd.DataFrame:
    return _to_frame(_settle(table))


def _settle(table: pa.Table) -> pa.Table:
    """Last line per call key, sorted by call key (UTF-8 byte order is code-point order: Python's
    string order), verdicts stripped and lower-cased."""
    table = table.append_column("line", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    if table.num_rows:
        table = table.take(_last_per_key_sorted(table))
    table = table.append_column("verdict_raw", table.column("verdict"))
    verdict = table.column("verdict").combine_chunks().dictionary_encode()
    normal = pa.array([v.strip().lower() for v in verdict.dictionary.to_pylist()], type=_STR)
    normalised = pc.take(normal, verdict.indices)
    return table.set_column(table.schema.get_field_index("verdict"), "verdict", normalised)


def _sorted_codes(column: pa.ChunkedArray) -> tuple[np.ndarray[Any, np.dtype[np.int64]], pa.Array]:
    """Each row's rank among the column's distinct strings in sorted order (-1 for a null), and
    those strings in that order."""
    encoded = column.combine_chunks().dictionary_encode()
    order = pc.sort_indices(encoded.dictionary)
    rank = np.empty(len(encoded.dictionary), dtype=np.int64)
    rank[np.asarray(order)] = np.arange(len(encoded.dictionary), dtype=np.int64)
    indices = encoded.indices
    codes = rank[np.asarray(indices.fill_null(0))]
    if indices.null_count:
        codes[np.asarray(indices.is_null())] = -1
    return codes, encoded.dictionary.take(order)


def _last_per_key_sorted(table: pa.Table) -> pa.Array:
    """The rows to keep, in call-key order: each key column ranked by its sorted distinct values, one
    stable sort on those ranks (lines of a key stay in file order), and the last row of each run of
    equal keys, which is the key's last line."""
    ranks = [_sorted_codes(table.column(name))[0] for name in CALL_KEY]  # no nulls: _check refused them
    order = np.lexsort(ranks[::-1])  # the last key given is the primary one
    same_as_next = np.ones(len(order), dtype=bool)
    same_as_next[-1:] = False  # the last row ends its run
    for rank in ranks:
        ordered = rank[order]
        same_as_next[:-1] &= ordered[1:] == ordered[:-1]
    return pa.array(order[~same_as_next])


# the columns the analysis groups and compares on: categories in sorted order (as strings sort), so
# a million rows hold small integer codes, not a million Python strings per column
CATEGORICAL = [*TABLE_COLUMNS[:8], "verdict_raw"]


def _to_frame(table: pa.Table) -> pd.DataFrame:
    frame: pd.DataFrame = table.drop_columns(CATEGORICAL).to_pandas()
    for at, name in enumerate(CATEGORICAL):
        column = table.column(name)
        if column.null_count == table.num_rows and table.num_rows:  # all missing: None, as in records
            frame.insert(at, name, pd.Series([None] * table.num_rows, dtype=object))
        else:
            frame.insert(at, name, pd.Series(_categorical(column), copy=False))
    ordered: pd.DataFrame = frame[table.column_names]
    return ordered


def _categorical(column: pa.ChunkedArray) -> pd.Categorical:
    """`column` as a pandas Categorical whose categories are its distinct strings in sorted order."""
    codes, values = _sorted_codes(column)
    return pd.Categorical.from_codes(codes, categories=pd.Index(values.to_pylist(), dtype=object))


_PLAN_SCHEMA = pa.schema([(name, _STR) for name in CALL_KEY])


def read_plan_table(path: Path) -> pd.DataFrame | None:
    """plan.jsonl's call keys as a table (None when the run has no plan file), through the same
    fast path with the exact reader behind it, and the same derived cache beside the file
    (`plan.jsonl.table.parquet`, trusted only while the plan is unchanged). Its columns are
    categoricals, as the judgment table's key columns are (a million planned keys as strings were
    80 MB of a report's memory)."""
    if not path.exists():
        return None
    if path.stat().st_size == 0:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in CALL_KEY})
    try:
        with open(path, "rb") as fh:
            fingerprint, size = _fingerprint(fh)  # the same derived cache as the judgments' (stale: rebuilt)
            cached = _cached(path, fingerprint)
            if cached is not None:
                return _key_frame(cached)
            pieces = [piece for piece, _ in parse_pieces(fh, size, _PLAN_SCHEMA)]
        table = pa.concat_tables(pieces) if pieces else pa.table({c: pa.array([], _STR) for c in CALL_KEY})
        if any(table.column(c).null_count for c in CALL_KEY):
            raise _Fallback
        unique_keys = table.group_by(CALL_KEY, use_threads=False).aggregate([])
        _store(path, fingerprint, unique_keys)
        return _key_frame(unique_keys)
    except (_Fallback, pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        exact = list(dict.fromkeys(p.key() for p in read_jsonl(path, PlannedKey)))
        columns = {c: pa.array([k[i] for k in exact], _STR) for i, c in enumerate(CALL_KEY)}
        return _key_frame(pa.table(columns))


def _key_frame(table: pa.Table) -> pd.DataFrame:
    """Call keys as categorical columns (`_categorical`: categories in sorted order)."""
    return pd.DataFrame({c: pd.Series(_categorical(table.column(c)), copy=False) for c in CALL_KEY})
