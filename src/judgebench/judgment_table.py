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
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from judgebench.records import Judgment, PlannedKey
from judgebench.records.judgments import ANALYSIS_COLUMNS, CallKey
from judgebench.rundir import last_per_key, read_jsonl

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
# every typed field of a Judgment (params, a free-form object, is left to the exact path's reader)
_SCHEMA = pa.schema(
    [
        *((name, _STR) for name in ("judge", "item_id", "subset", "kind", "condition", "order")),
        *((name, _STR) for name in ("raw", "winner", "verdict", "parse_error", "error", "reason")),
        ("label", _I64),
        *((name, _F64) for name in ("confidence", "prob_a", "prob_b", "prob_tie", "cost_usd", "latency_s")),
        *((name, _STR) for name in ("model", "cache_key", "prompt_hash", "template", "finish_reason")),
        ("usage", pa.struct([("input_tokens", _I64), ("output_tokens", _I64)])),
        ("from_cache", pa.bool_()),
        ("reask", _I64),
        ("raw_chars", _I64),
        ("raw_cap", _I64),
        *((name, _STR) for name in ("batch_id", "custom_id", "created_at")),
        ("perturbation", pa.struct([("field", _STR), ("operation", _STR)])),
    ]
)
_REQUIRED = ("judge", "item_id", "subset", "kind", "condition", "order")
_KINDS = {"pair", "tie_probe"}
_WINNERS = {"A", "B", "Tie", "invalid"}
_BLOCK = 16 << 20


class _Fallback(Exception):
    """The fast path cannot vouch for this file: read it the exact way."""


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
        """The whole records at `lines` (a second pass over the file validates only those lines)."""
        wanted = set(lines)
        if self.held is not None:
            return {i: self.held[i] for i in wanted}
        out: dict[int, Judgment] = {}
        if not wanted or self.path is None:
            return out
        last = max(wanted)
        with open(self.path, "rb") as fh:
            for number, raw in enumerate(fh):
                if number in wanted:
                    out[number] = Judgment.model_validate_json(raw)
                if number >= last:
                    break
        return out


def read_judgment_table(path: Path) -> JudgmentTable:
    """The last judgment per call key of `path` as columns, sorted by call key (the order `analyze`
    sums in), verdicts normalised as `analysis.frame.judgment_frame` does."""
    if not path.exists() or path.stat().st_size == 0:
        return JudgmentTable(_finish(_from_records([])), path, held=[])
    with open(path, "rb") as fh:  # one open: the fingerprint, the line count and the parse
        fingerprint = _fingerprint(fh)  # before reading: lines appended meanwhile make it stale
        cached = _cached(path, fingerprint)
        if cached is not None:
            return JudgmentTable(_to_frame(cached), path)
        try:
            settled = _settle(_fast(fh))
        except (_Fallback, pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
            settled = None
    if settled is None:  # a damaged or unusual file: the exact reader, which names a bad line
        records = list(last_per_key(read_jsonl(path, Judgment), key=lambda j: j.call_key()).values())
        return judgment_table(records)
    _store(path, fingerprint, settled)
    return JudgmentTable(_to_frame(settled), path)


# The derived table beside the log (`judgments.jsonl.table.parquet`): trusted only while the log has
# the size, modification time and first and last MiB it had when the table was made; any append or
# edit makes it stale and it is rebuilt. The log stays the record; the table is only a cache of it.
CACHE_SUFFIX = ".table.parquet"
_CACHE_FORMAT = "judgebench-judgment-table-1"
_EDGE = 1 << 20


def cache_path(path: Path) -> Path:
    return path.with_name(path.name + CACHE_SUFFIX)


def _fingerprint(fh: BinaryIO) -> str:
    stat = os.fstat(fh.fileno())
    fh.seek(0)
    head = fh.read(_EDGE)
    fh.seek(max(0, stat.st_size - _EDGE))
    tail = fh.read(_EDGE)
    parts = [_CACHE_FORMAT, str(stat.st_size), str(stat.st_mtime_ns)]
    parts += [hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest()]
    return "|".join(parts)


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


def _lines(fh: BinaryIO) -> int:
    """Non-empty lines as the exact reader counts them: newlines, plus an unterminated last line."""
    count, last = 0, b"\n"  # as if a newline came before the file: a leading blank line shows
    fh.seek(0)
    while block := fh.read(_BLOCK):
        if b"\r" in block or b"\n\n" in last + block[:1] or b"\n\n" in block:
            raise _Fallback  # blank lines or CR: let the exact reader decide what they hold
        count += block.count(b"\n")
        last = block[-1:]
    fh.seek(0)
    return count + (0 if last == b"\n" else 1)


def _fast(fh: BinaryIO) -> pa.Table:
    expected = _lines(fh)
    opts = pa_json.ParseOptions(explicit_schema=_SCHEMA, unexpected_field_behavior="ignore")
    reader = pa_json.open_json(fh, read_options=pa_json.ReadOptions(block_size=_BLOCK), parse_options=opts)
    parts: list[pa.Table] = []
    rows = 0
    for batch in reader:
        _check(batch)
        rows += batch.num_rows
        parts.append(_columns(batch))
    if rows != expected:  # two records on one line, or a whitespace-only line
        raise _Fallback
    return pa.concat_tables(parts) if parts else _from_records([])


def _check(batch: pa.RecordBatch) -> None:
    """What pydantic would refuse or coerce: a missing required field, a value outside a closed set."""
    for name in _REQUIRED:
        if batch.column(name).null_count:
            raise _Fallback
    kinds = set(batch.column("kind").unique().to_pylist())
    winners = set(batch.column("winner").drop_null().unique().to_pylist())
    labels = set(batch.column("label").drop_null().unique().to_pylist())
    if not kinds <= _KINDS or not winners <= _WINNERS or not labels <= {1, 2}:
        raise _Fallback
    perturbation = batch.column("perturbation")
    if perturbation.null_count < len(perturbation) and any(
        child.null_count > perturbation.null_count for child in perturbation.flatten()
    ):
        raise _Fallback  # a perturbation without its field or operation: pydantic refuses it


def _columns(batch: pa.RecordBatch) -> pa.Table:
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
        last = table.group_by(CALL_KEY, use_threads=False).aggregate([("line", "max")]).column("line_max")
        table = table.take(last)
        table = table.take(pc.sort_indices(table, sort_keys=[(k, "ascending") for k in CALL_KEY]))
    table = table.append_column("verdict_raw", table.column("verdict"))
    verdict = table.column("verdict").combine_chunks().dictionary_encode()
    normal = pa.array([v.strip().lower() for v in verdict.dictionary.to_pylist()], type=_STR)
    normalised = pc.take(normal, verdict.indices)
    return table.set_column(table.schema.get_field_index("verdict"), "verdict", normalised)


def _to_frame(table: pa.Table) -> pd.DataFrame:
    frame: pd.DataFrame = table.to_pandas()
    for name in [*TABLE_COLUMNS[:8], "verdict_raw"]:  # all missing: None, as in a frame of records
        if table.column(name).null_count == table.num_rows and table.num_rows:
            frame[name] = pd.Series([None] * table.num_rows, dtype=object)
    return frame


_PLAN_SCHEMA = pa.schema([(name, _STR) for name in CALL_KEY])


def read_plan_table(path: Path) -> pd.DataFrame | None:
    """plan.jsonl's call keys as a table (None when the run has no plan file), through the same
    fast path with the exact reader behind it, and the same derived cache beside the file
    (`plan.jsonl.table.parquet`, trusted only while the plan is unchanged)."""
    if not path.exists():
        return None
    if path.stat().st_size == 0:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in CALL_KEY})
    try:
        with open(path, "rb") as fh:
            fingerprint = _fingerprint(fh)  # the same derived cache as the judgments' (stale: rebuilt)
            cached = _cached(path, fingerprint)
            if cached is not None:
                held: pd.DataFrame = cached.to_pandas()
                return held
            expected = _lines(fh)
            opts = pa_json.ParseOptions(explicit_schema=_PLAN_SCHEMA, unexpected_field_behavior="ignore")
            table = pa_json.read_json(fh, parse_options=opts)
        if table.num_rows != expected or any(table.column(c).null_count for c in CALL_KEY):
            raise _Fallback
        unique_keys = table.group_by(CALL_KEY, use_threads=False).aggregate([])
        _store(path, fingerprint, unique_keys)
        keys: pd.DataFrame = unique_keys.to_pandas()
        return keys
    except (_Fallback, pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        exact = dict.fromkeys(p.key() for p in read_jsonl(path, PlannedKey))
        return pd.DataFrame(list(exact), columns=CALL_KEY, dtype=object)
