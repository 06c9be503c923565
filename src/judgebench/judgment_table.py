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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.json as pa_json

from judgebench.records import Judgment, PlannedKey
from judgebench.rundir import last_per_key, read_jsonl

__all__ = [
    "CALL_KEY",
    "TABLE_COLUMNS",
    "JudgmentTable",
    "judgment_table",
    "read_judgment_table",
    "read_plan_table",
]

CALL_KEY = ["judge", "item_id", "kind", "condition", "order"]
# the analysis frame's columns (analysis.frame.COLUMNS) plus the line each row was read from
TABLE_COLUMNS = [
    "judge",
    "item_id",
    "subset",
    "kind",
    "condition",
    "order",
    "verdict",
    "winner",
    "label",
    "confidence",
    "input_tokens",
    "output_tokens",
    "cost_usd",
]
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
    try:
        return JudgmentTable(_finish(_fast(path)), path)
    except (_Fallback, pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        records = list(last_per_key(read_jsonl(path, Judgment), key=lambda j: j.call_key()).values())
        return judgment_table(records)


def judgment_table(judgments: Sequence[Judgment]) -> JudgmentTable:
    """The same table from records already in memory."""
    return JudgmentTable(_finish(_from_records(judgments)), None, held=list(judgments))


def _lines(path: Path) -> int:
    """Non-empty lines as the exact reader counts them: newlines, plus an unterminated last line."""
    count, last = 0, b"\n"  # as if a newline came before the file: a leading blank line shows
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            if b"\r" in block or b"\n\n" in last + block[:1] or b"\n\n" in block:
                raise _Fallback  # blank lines or CR: let the exact reader decide what they hold
            count += block.count(b"\n")
            last = block[-1:]
    return count + (0 if last == b"\n" else 1)


def _fast(path: Path) -> pd.DataFrame:
    expected = _lines(path)
    opts = pa_json.ParseOptions(explicit_schema=_SCHEMA, unexpected_field_behavior="ignore")
    reader = pa_json.open_json(path, read_options=pa_json.ReadOptions(block_size=_BLOCK), parse_options=opts)
    parts: list[pd.DataFrame] = []
    rows = 0
    for batch in reader:
        _check(batch)
        rows += batch.num_rows
        parts.append(_columns(batch))
    if rows != expected:  # two records on one line, or a whitespace-only line
        raise _Fallback
    if not parts:
        return _from_records([])
    frame = pd.concat(parts, ignore_index=True)
    frame["line"] = np.arange(len(frame), dtype=np.int64)  # no blank lines: row i is line i
    return frame


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


def _columns(batch: pa.RecordBatch) -> pd.DataFrame:
    input_tokens, output_tokens = batch.column("usage").flatten()  # a null usage nulls both
    data: dict[str, Any] = {name: _strings(batch.column(name)) for name in TABLE_COLUMNS[:8]}
    data["label"] = _floats(batch.column("label"))
    data["confidence"] = _floats(batch.column("confidence"))
    data["input_tokens"] = _ints(input_tokens)
    data["output_tokens"] = _ints(output_tokens)
    data["cost_usd"] = _floats(batch.column("cost_usd"))
    return pd.DataFrame(data)


def _strings(column: pa.Array) -> np.ndarray[Any, np.dtype[np.object_]]:
    """Python strings, each distinct value one shared object (a million rows hold a few thousand)."""
    encoded = column.dictionary_encode()
    values = np.asarray([*encoded.dictionary.to_pylist(), None], dtype=object)
    codes = encoded.indices.fill_null(len(values) - 1).to_numpy(zero_copy_only=False)
    shared: np.ndarray[Any, np.dtype[np.object_]] = values.take(codes)
    return shared


def _floats(column: pa.Array) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.asarray(column.cast(_F64).fill_null(np.nan).to_numpy(zero_copy_only=False), dtype=float)


def _ints(column: pa.Array) -> np.ndarray[Any, np.dtype[np.int64]]:
    return np.asarray(column.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _from_records(judgments: Sequence[Judgment]) -> pd.DataFrame:
    rows = [
        (
            j.judge,
            j.item_id,
            j.subset,
            j.kind,
            j.condition,
            j.order,
            j.verdict,
            j.winner,
            float(j.label) if j.label is not None else np.nan,
            float(j.confidence) if j.confidence is not None else np.nan,
            j.usage.input_tokens if j.usage else 0,
            j.usage.output_tokens if j.usage else 0,
            j.cost_usd if j.cost_usd is not None else np.nan,
        )
        for j in judgments
    ]
    frame = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    frame["line"] = np.arange(len(frame), dtype=np.int64)
    return frame


def _finish(df: pd.DataFrame) -> pd.DataFrame:
    """Last line per call key, sorted by call key, verdicts stripped and lower-cased."""
    df = df.drop_duplicates(CALL_KEY, keep="last")
    codes = [pd.Categorical(df[c], categories=sorted(set(df[c]))).codes for c in reversed(CALL_KEY)]
    order = np.lexsort(codes) if len(df) else np.arange(0)
    df = df.iloc[order].reset_index(drop=True)
    verdicts = df["verdict"].tolist()
    normal = {v: v.strip().lower() for v in set(verdicts) if isinstance(v, str)}
    df["verdict"] = pd.Series([normal.get(v) if isinstance(v, str) else None for v in verdicts], dtype=object)
    return df


_PLAN_SCHEMA = pa.schema([(name, _STR) for name in CALL_KEY])


def read_plan_table(path: Path) -> pd.DataFrame | None:
    """plan.jsonl's call keys as a table (None when the run has no plan file), through the same
    fast path with the exact reader behind it."""
    if not path.exists():
        return None
    if path.stat().st_size == 0:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in CALL_KEY})
    try:
        expected = _lines(path)
        opts = pa_json.ParseOptions(explicit_schema=_PLAN_SCHEMA, unexpected_field_behavior="ignore")
        table = pa_json.read_json(path, parse_options=opts)
        if table.num_rows != expected or any(table.column(c).null_count for c in CALL_KEY):
            raise _Fallback
        data = {c: _strings(table.column(c).combine_chunks()) for c in CALL_KEY}
        return pd.DataFrame(data).drop_duplicates(ignore_index=True)
    except (_Fallback, pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        keys = dict.fromkeys(p.key() for p in read_jsonl(path, PlannedKey))
        return pd.DataFrame(list(keys), columns=CALL_KEY, dtype=object)
