"""Pairwise items from the user's own files: JSONL, a JSON array, CSV or TSV.

Parsing keeps track of where each record starts (line numbers even inside a JSON array), so that
`validate.build_items` can name the exact line of a bad record.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from judgebench.data.catalog import DatasetRequest, Listing, spec_names
from judgebench.data.dataset import Dataset, sample_path, select_subset, sha256_file
from judgebench.data.validate import (
    DEFAULT_SUBSET,
    REQUIRED,
    AmbiguousFieldError,
    RawRecord,
    build_items,
    candidates,
    check_mapping,
    resolve_column,
)
from judgebench.errors import InputError
from judgebench.outside import check_depth, loads, raw_decoder
from judgebench.records import Item

if TYPE_CHECKING:
    from _csv import Reader

FORMATS: dict[str, str] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".jsonlines": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
}
_WS = " \t\r\n"


def read_text(path: Path, shown: str) -> str:
    """The file as text. Refuses empty files and bytes that are not UTF-8 (a BOM is allowed)."""
    if path.is_dir():
        raise InputError("is a folder, not a dataset file", path=shown)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", path=shown) from None
    return decode_bytes(raw, shown)


def decode_bytes(raw: bytes, shown: str) -> str:
    """Bytes of a dataset file as text, or an error naming the line and offset of the first bad byte."""
    if not raw.strip():
        raise InputError("the file is empty" + (" (whitespace only)" if raw else ""), path=shown)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = raw.count(b"\n", 0, start) + 1
        column = start - (raw.rfind(b"\n", 0, start) + 1) + 1
        raise InputError(
            f"not UTF-8: byte 0x{raw[start]:02x} at byte offset {start} (column {column}); "
            "save the file as UTF-8",
            path=shown,
            line=line,
        ) from None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _decode_error(exc: json.JSONDecodeError, shown: str) -> InputError:
    return InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", path=shown, line=exc.lineno)


def parse_jsonl(text: str, shown: str) -> list[RawRecord]:
    """One JSON object per line; blank lines are skipped."""
    records: list[RawRecord] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            data = loads(line)
        except json.JSONDecodeError as exc:
            hint = ""
            if not records and line.strip() == "[":
                hint = "; this looks like a JSON array: name the file .json"
            raise InputError(
                f"not valid JSON: {exc.msg} (column {exc.colno}){hint}", path=shown, line=number
            ) from None
        records.append(RawRecord(index=len(records), line=number, data=data))
    return records


def parse_json(text: str, shown: str) -> list[RawRecord]:
    """A JSON array of objects (or objects one after another), each with the line it starts on."""
    try:
        check_depth(text)
    except json.JSONDecodeError as exc:
        raise _decode_error(exc, shown) from None
    records: list[RawRecord] = []
    pos = _skip_ws(text, 0)
    counted = [0, 1]  # offset up to which newlines are counted, and the line there (linear, not n^2)

    def decode(at: int) -> int:
        try:
            data, end = raw_decoder(text, at)
        except json.JSONDecodeError as exc:
            raise _decode_error(exc, shown) from None
        counted[1] += text.count("\n", counted[0], at)
        counted[0] = at
        records.append(RawRecord(index=len(records), line=counted[1], data=data))
        return end

    if text[pos] == "{":  # JSONL-like content in a .json file
        while pos < len(text):
            pos = _skip_ws(text, decode(pos))
        return records
    if text[pos] != "[":
        raise InputError(
            'expected a JSON array of item objects, e.g. [{"instruction": ..., ...}]',
            path=shown,
            line=_line_of(text, pos),
        )
    pos = _skip_ws(text, pos + 1)
    if pos < len(text) and text[pos] == "]":
        pos += 1
    else:
        while True:
            if pos < len(text):
                pos = _skip_ws(text, decode(pos))
            if pos >= len(text):
                raise InputError(
                    "not valid JSON: the file ends before the array is closed",
                    path=shown,
                    line=_line_of(text, len(text)),
                )
            if text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
                continue
            if text[pos] == "]":
                pos += 1
                break
            raise InputError(
                f"not valid JSON: expected ',' or ']' after an item, found {text[pos]!r}",
                path=shown,
                line=_line_of(text, pos),
            )
    rest = _skip_ws(text, pos)
    if rest < len(text):
        raise InputError("not valid JSON: extra data after the array", path=shown, line=_line_of(text, rest))
    return records


def _raise_csv_field_limit() -> None:
    """The csv module refuses fields over 128 KiB; let large ones through so validation names them."""
    limit = sys.maxsize
    while True:
        try:
            if csv.field_size_limit() < limit:
                csv.field_size_limit(limit)
            return
        except OverflowError:  # C long is 32-bit on some platforms
            limit //= 2


def parse_csv(
    text: str, shown: str, *, delimiter: str, mapping: Mapping[str, str]
) -> tuple[list[str], list[RawRecord]]:
    """Rows as dicts keyed by the header. The header must name every required field."""
    _raise_csv_field_limit()
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise InputError(f"not valid CSV: {exc}", path=shown, line=1) from None
    header = [name.strip() for name in header]
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise InputError(f"column '{name}' appears twice in the header", path=shown, line=1)
        seen.add(name)
    missing = []
    for field in REQUIRED:
        try:
            column = resolve_column(field, header, mapping)
        except AmbiguousFieldError as exc:
            raise InputError(str(exc), path=shown, line=1, field=exc.field) from None
        if column is None:
            missing.append(f"'{field}' (looked for: {', '.join(candidates(field, mapping))})")
    if missing:
        raise InputError(
            f"the header lacks column(s) {'; '.join(missing)}; it has: {', '.join(header)}. "
            "Name other columns with --field FIELD=COLUMN",
            path=shown,
            line=1,
            field=missing[0].split("'")[1],
        )
    records = [
        RawRecord(index=index, line=line, data=data)
        for index, (line, data) in enumerate(csv_rows(reader, header, shown))
    ]
    return header, records


def csv_rows(reader: Reader, header: list[str], shown: str) -> Iterator[tuple[int, dict[str, str]]]:
    """The non-blank rows after the header as (line, column -> cell); a broken row or one with another
    field count than the header is an error naming the file and line (a cell may span lines)."""
    line = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"not valid CSV: {exc}", path=shown, line=line) from None
        if any(cell.strip() for cell in row):
            if len(row) != len(header):
                raise InputError(
                    f"the row has {len(row)} fields, the header has {len(header)}", path=shown, line=line
                )
            yield line, dict(zip(header, row, strict=True))
        line = reader.line_num + 1


def load_file(
    path: str | Path,
    *,
    mapping: Mapping[str, str] | None = None,
    default_subset: str = DEFAULT_SUBSET,
    id_prefix: str | None = None,
) -> list[Item]:
    """Items of a pairwise file; the format follows the extension. Ids default to `<stem>/<index>`."""
    shown = str(path)
    file = Path(path)
    fields = check_mapping(mapping)
    fmt = FORMATS.get(file.suffix.lower())
    if fmt is None:
        raise InputError(
            f"unknown file type '{file.suffix or '(none)'}': use {', '.join(FORMATS)}", path=shown
        )
    if not file.exists():
        raise InputError("no such file", path=shown)
    text = read_text(file, shown)
    prefix = id_prefix if id_prefix is not None else file.stem
    columns: list[str] | None = None
    if fmt == "jsonl":
        records = parse_jsonl(text, shown)
    elif fmt == "json":
        records = parse_json(text, shown)
    else:
        columns, records = parse_csv(text, shown, delimiter="," if fmt == "csv" else "\t", mapping=fields)
    return build_items(
        records,
        path=shown,
        default_id=lambda index: f"{prefix}/{index}",
        mapping=fields,
        default_subset=default_subset,
        columns=columns,
    )


# --- the registered families (data/catalog.py): a file of the user's own, and the bundled sample ---


def _file_dataset(request: DatasetRequest, path: Path, source: str, shown: str, **kw: str) -> Dataset:
    items = load_file(path, mapping=request.mapping, **kw)
    if request.subset is not None:
        items = select_subset(items, request.subset, shown=request.spec)
    files = {shown: sha256_file(path)}
    return Dataset(spec=request.spec, items=items, source=source, subset=request.subset, files=files)


def load_path(request: DatasetRequest) -> Dataset:
    """SPEC as the path of a .jsonl/.json/.csv/.tsv file."""
    path = Path(request.spec).expanduser()
    if not path.exists():
        raise InputError(f"no such file; SPEC is {spec_names()}", path=request.spec)
    return _file_dataset(request, path, str(path.resolve()), request.spec)


def load_sample(request: DatasetRequest) -> Dataset:
    """`sample`: the bundled sample set (a JSONL file of items)."""
    path = sample_path()
    if not path.is_file():
        raise InputError(
            "the bundled sample set is missing: judgebench expects data/sample.jsonl of its source "
            "checkout (or set JUDGEBENCH_DATA)",
            path=str(path),
        )
    return _file_dataset(request, path, str(path), str(path), id_prefix="sample")


def sample_listing(name: str, data_dir: str | None) -> list[Listing]:
    return [Listing(name, "bundled sample set", "yes" if sample_path().is_file() else "missing")]
