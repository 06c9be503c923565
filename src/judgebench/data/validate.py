"""Turn raw records from any file format into validated `Item`s, with errors a user can act on.

Every loader (LLMBar, JSONL, JSON, CSV) ends here, so a bad record gets the same precise message
whatever its format: the file, the line (or item), the field and what is wrong.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from judgebench.errors import ConfigError, InputError
from judgebench.records import Item, Label
from judgebench.records.sanitize import surrogate_problem

# A generous cap per text field: the longest LLMBar field is ~20 kB. A field this large is almost
# certainly a broken export (a whole file pasted into a cell), and would cost a fortune to judge.
MAX_FIELD_BYTES = 1_000_000

# The canonical field names (those of `Item`) and the names other datasets commonly use for them.
FIELDS: tuple[str, ...] = ("id", "subset", "instruction", "output_1", "output_2", "label")
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("item_id",),
    "subset": ("category",),
    "instruction": ("input", "prompt", "question"),
    "output_1": ("response_a", "answer_a", "output_a"),
    "output_2": ("response_b", "answer_b", "output_b"),
    "label": ("winner", "preference"),
}
REQUIRED: tuple[str, ...] = ("instruction", "output_1", "output_2")
DEFAULT_SUBSET = "default"

# Label spellings, compared after lower-casing and removing spaces. Arena-style verdicts are accepted
# only where they name a winner; ties are refused because every item needs a gold winner.
_LABELS: dict[str, Label] = {
    "1": 1,
    "2": 2,
    "1.0": 1,  # pandas writes integer columns with gaps as floats
    "2.0": 2,
    "a": 1,
    "b": 2,
    "model_a": 1,
    "model_b": 2,
    "output_1": 1,
    "output_2": 2,
    "response_a": 1,
    "response_b": 2,
    "a>b": 1,
    "a>>b": 1,
    "b>a": 2,
    "b>>a": 2,
}
_TIES = frozenset({"tie", "a=b", "b=a", "tie(bothbad)", "draw", "equal", "same", "0"})
LABEL_HELP = "1/2, A/B, model_a/model_b, or arena style A>B, A>>B, B>A, B>>A"


class AmbiguousFieldError(ConfigError):
    """Two columns could both be the same field; the user must say which."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class RawRecord:
    """One record as parsed from a file, before validation: where it was and what it held."""

    index: int  # 0-based position among the file's records
    line: int | None  # 1-based line where the record starts, when the format has lines
    data: Any


def check_mapping(mapping: Mapping[str, str] | None) -> dict[str, str]:
    """A field mapping is {canonical field: name in the file}; refuse keys that are not fields."""
    if not mapping:
        return {}
    out: dict[str, str] = {}
    for key, value in mapping.items():
        if key not in FIELDS:
            raise ConfigError(
                f"field mapping: '{key}' is not a dataset field; map one of {', '.join(FIELDS)} "
                f"to a column name, e.g. instruction=prompt"
            )
        if not isinstance(value, str) or not value:
            raise ConfigError(f"field mapping: '{key}' needs a column name, got {value!r}")
        out[key] = value
    shared = [column for column, count in Counter(out.values()).items() if count > 1]
    if shared:
        names = [key for key, column in out.items() if column == shared[0]]
        raise ConfigError(f"field mapping: {' and '.join(names)} both read column '{shared[0]}'")
    return out


def candidates(field: str, mapping: Mapping[str, str]) -> tuple[str, ...]:
    """Names that may hold `field`: only the mapped one if mapped, else the field and its aliases."""
    if field in mapping:
        return (mapping[field],)
    return (field, *ALIASES[field])


def resolve_column(field: str, keys: Iterable[str], mapping: Mapping[str, str]) -> str | None:
    """The key that holds `field` among `keys`, or None. Two aliases at once is ambiguous."""
    present = set(keys)
    names = candidates(field, mapping)
    if field in mapping:
        return names[0] if names[0] in present else None
    if field in present:
        return field
    found = [name for name in names if name in present]
    if len(found) > 1:
        raise AmbiguousFieldError(
            f"both '{found[0]}' and '{found[1]}' could be the '{field}' field; "
            f"say which with --field {field}={found[0]}",
            field,
        )
    return found[0] if found else None


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


def parse_label(value: Any) -> Label:
    """A gold label as 1 or 2; raises ValueError with the reason for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"label {json.dumps(value)} is a boolean; expected {LABEL_HELP}")
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"label {value!r} is not 1 or 2")
        if value == 1:
            return 1
        if value == 2:
            return 2
        if value == 0:
            raise ValueError("label 0 reads as a tie; items need a gold winner, 1 or 2")
        raise ValueError(f"label {value!r} is outside {{1, 2}}")
    if isinstance(value, str):
        key = "".join(value.split()).lower()
        if key in _LABELS:
            return _LABELS[key]
        if key in _TIES:
            raise ValueError(f"label {value!r} is a tie; items need a gold winner (1 or 2): drop tied items")
        raise ValueError(f"label {value!r} is not a winner; expected {LABEL_HELP}")
    raise ValueError(f"label is {_type_name(value)}; expected {LABEL_HELP}")


_ErrorMaker = Callable[..., InputError]  # message, field= -> an InputError naming file, line, item


def _text(value: Any, field: str, err: _ErrorMaker, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise err(f"'{field}' must be a string, got {_type_name(value)}", field=field)
    size = len(value.encode("utf-8"))
    if size > MAX_FIELD_BYTES:
        raise err(
            f"'{field}' is {size:,} bytes, over the limit of {MAX_FIELD_BYTES:,} bytes per field "
            f"(a broken export?)",
            field=field,
        )
    if not allow_empty and not value.strip():
        raise err(f"'{field}' is empty" + (" (whitespace only)" if value else ""), field=field)
    return value


class _ItemReader:
    """Reads validated Items from one file's records; every error names the file, line, item, field."""

    def __init__(
        self,
        path: str,
        fields: dict[str, str],
        *,
        ignore: frozenset[str],
        columns: Iterable[str] | None,
        default_subset: str,
        allow_empty_outputs: bool,
    ) -> None:
        self.path = path
        self.fields = fields
        self.ignore = ignore
        self.default_subset = default_subset
        self.allow_empty_outputs = allow_empty_outputs
        self._seen_keys: dict[tuple[str, ...], dict[str, str | None]] = {}
        self.fixed = self.resolver(columns, 1) if columns is not None else None
        self.labelled = False

    def resolver(self, keys: Iterable[str], line: int | None) -> dict[str, str | None]:
        """Which key holds each field; records of one file nearly always share their keys (cached)."""
        key = tuple(keys)
        if key not in self._seen_keys:
            try:
                self._seen_keys[key] = {
                    field: None if field in self.ignore else resolve_column(field, key, self.fields)
                    for field in FIELDS
                }
            except AmbiguousFieldError as exc:
                raise InputError(str(exc), path=self.path, line=line, field=exc.field) from None
        return self._seen_keys[key]

    def columns_of(self, row: RawRecord, data: Mapping[str, Any]) -> dict[str, str | None]:
        return self.fixed or self.resolver(data.keys(), row.line)

    def find_labels(self, rows: list[RawRecord]) -> None:
        """A file is labelled if any record carries a label; then every record must have one."""
        for row in rows:
            if isinstance(row.data, dict):
                name = self.columns_of(row, row.data)["label"]
                if name is not None and row.data.get(name) not in (None, ""):
                    self.labelled = True
                    return
        if "label" in self.fields:
            raise InputError(
                f"the mapped label column '{self.fields['label']}' is in no record",
                path=self.path,
                field="label",
            )

    def _item_id(
        self, row: RawRecord, data: Mapping[str, Any], cols: dict[str, str | None], default: str
    ) -> str:
        id_col = cols["id"]
        if id_col is None or data.get(id_col) in (None, ""):
            return default
        raw_id = data[id_col]
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            raise InputError(
                f"'{id_col}' must be a string or an integer, got {_type_name(raw_id)}",
                path=self.path,
                line=row.line,
                item=default,
                field="id",
            )
        item_id = str(raw_id)
        if not item_id.strip():
            raise InputError("'id' is empty (whitespace only)", path=self.path, line=row.line, field="id")
        return item_id

    def _texts(
        self, data: Mapping[str, Any], cols: dict[str, str | None], err: _ErrorMaker
    ) -> dict[str, str]:
        texts: dict[str, str] = {}
        for field in REQUIRED:
            col = cols[field]
            if col is None:
                looked = ", ".join(candidates(field, self.fields))
                raise err(
                    f"missing field '{field}' (looked for: {looked}; name another column with "
                    f"--field {field}=NAME)",
                    field=field,
                )
            allow = self.allow_empty_outputs and field != "instruction"
            texts[field] = _text(data[col], field, err, allow_empty=allow)
        return texts

    def _subset(self, data: Mapping[str, Any], cols: dict[str, str | None], err: _ErrorMaker) -> str:
        sub_col = cols["subset"]
        if sub_col is None or data.get(sub_col) in (None, ""):
            return self.default_subset
        raw_subset = data[sub_col]
        if isinstance(raw_subset, bool) or not isinstance(raw_subset, str | int):
            raise err(f"'{sub_col}' must be a string, got {_type_name(raw_subset)}", field="subset")
        return str(raw_subset).strip() or self.default_subset

    def _label(self, data: Mapping[str, Any], cols: dict[str, str | None], err: _ErrorMaker) -> Label | None:
        if not self.labelled:
            return None
        label_col = cols["label"]
        value = data.get(label_col) if label_col is not None else None
        if value is None or value == "":
            raise err(
                "missing label (other items in this file have one; every item needs 1 or 2)", field="label"
            )
        try:
            return parse_label(value)
        except ValueError as exc:
            raise err(str(exc), field="label") from None

    def item(self, row: RawRecord, default_id: str) -> Item:
        if not isinstance(row.data, dict):
            raise InputError(
                f"expected a JSON object with the item's fields, got {_type_name(row.data)}",
                path=self.path,
                line=row.line,
                item=default_id,
            )
        data: dict[str, Any] = row.data
        problem = surrogate_problem(data)
        if problem is not None:
            raise InputError(problem, path=self.path, line=row.line, item=default_id)
        cols = self.columns_of(row, data)
        item_id = self._item_id(row, data, cols, default_id)

        def err(message: str, *, field: str | None = None) -> InputError:
            return InputError(message, path=self.path, line=row.line, item=item_id, field=field)

        texts = self._texts(data, cols, err)
        used = {col for col in cols.values() if col is not None}
        metadata = {key: value for key, value in data.items() if key not in used}
        if isinstance(metadata.get("metadata"), dict):
            metadata = {**metadata.pop("metadata"), **metadata}
        return Item(
            id=item_id,
            subset=self._subset(data, cols, err),
            instruction=texts["instruction"],
            output_1=texts["output_1"],
            output_2=texts["output_2"],
            label=self._label(data, cols, err),
            metadata=metadata,
        )


def build_items(
    records: Iterable[RawRecord],
    *,
    path: str,
    default_id: Callable[[int], str],
    mapping: Mapping[str, str] | None = None,
    default_subset: str = DEFAULT_SUBSET,
    columns: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    allow_empty_outputs: bool = False,
) -> list[Item]:
    """Validate records into Items. `columns` (CSV header) fixes the field names for every row.

    A file is labelled if any record carries a label field; then every record must have a valid one.
    Fields in `ignore` are never read from records (LLMBar's ids and subsets come from its layout).
    `allow_empty_outputs` admits a blank output (a published set has one: a model that said nothing
    is a legitimate loser); user files are strict, since a blank cell is far more often an export bug.
    Keys the mapping does not use are kept in `metadata`.
    """
    rows = list(records)
    if not rows:
        raise InputError("the file holds no items", path=path)
    reader = _ItemReader(
        path,
        check_mapping(mapping),
        ignore=frozenset(ignore),
        columns=columns,
        default_subset=default_subset,
        allow_empty_outputs=allow_empty_outputs,
    )
    reader.find_labels(rows)
    items: list[Item] = []
    first_seen: dict[str, RawRecord] = {}
    for row in rows:
        item = reader.item(row, default_id(row.index))
        if item.id in first_seen:
            before = first_seen[item.id]
            where = f"line {before.line}" if before.line is not None else f"record {before.index}"
            here = f"line {row.line}" if row.line is not None else f"record {row.index}"
            raise InputError(
                f"duplicate id '{item.id}': first at {where}, again at {here}",
                path=path,
                line=row.line,
                item=item.id,
                field="id",
            )
        first_seen[item.id] = row
        items.append(item)
    return items
