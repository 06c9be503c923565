"""Human labels as data: a JSONL or CSV file of `{"item_id", "condition", "label", "annotator"?}`.

Validated like every other input (`data/`): each error names the file and line and what is wrong: an
item or condition the run never judged, a label outside 1 / 2 / tie, a second row for the same item,
condition and annotator (both lines named). Several annotators per item are allowed; rows without an
annotator are one anonymous annotator.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from judgebench.data.generic_dataset import csv_rows, read_text
from judgebench.errors import InputError
from judgebench.outside import json_lines

HumanValue = Literal["1", "2", "tie"]
LABELS: tuple[HumanValue, ...] = ("1", "2", "tie")
REQUIRED_FIELDS = ("item_id", "condition", "label")
FIELDS = (*REQUIRED_FIELDS, "annotator")
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
ANONYMOUS = ""  # the annotator of rows that name none


@dataclass(frozen=True)
class HumanLabel:
    """One human's label of one item in one condition, with the line it came from."""

    item_id: str
    condition: str
    label: HumanValue
    annotator: str = ANONYMOUS
    line: int = 0


@dataclass(frozen=True)
class HumanLabels:
    """Every label of a file, in file order."""

    path: str
    labels: tuple[HumanLabel, ...]

    @property
    def annotators(self) -> list[str]:
        return sorted({label.annotator for label in self.labels})

    @property
    def conditions(self) -> list[str]:
        return sorted({label.condition for label in self.labels})

    def majority(self) -> dict[tuple[str, str], HumanValue]:
        """(item, condition) -> the label most annotators gave; an item whose top labels tie between
        annotators has no reference label and is left out (see `split_votes`)."""
        votes: dict[tuple[str, str], Counter[HumanValue]] = {}
        for label in self.labels:
            votes.setdefault((label.item_id, label.condition), Counter())[label.label] += 1
        out: dict[tuple[str, str], HumanValue] = {}
        for key, counts in votes.items():
            ranked = counts.most_common()
            if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
                out[key] = ranked[0][0]
        return out

    def split_votes(self) -> int:
        """How many (item, condition) have no majority label (annotators split evenly)."""
        return len({(lab.item_id, lab.condition) for lab in self.labels}) - len(self.majority())


def parse_human_label(value: Any) -> HumanValue | None:
    """1 / 2 / tie as a gold label is written: 1, 2, "1", "2", "tie" (any case); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value in (1, 2):
        return "1" if value == 1 else "2"
    if isinstance(value, str):
        text = value.strip().lower()
        for label in LABELS:
            if text == label:
                return label
    return None


def _text(value: Any, name: str, shown: str, line: int, *, required: bool = True) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InputError(f"'{name}' is missing or empty", path=shown, line=line, field=name)
        return ANONYMOUS
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"'{name}' must be a string, not {value!r}", path=shown, line=line, field=name)
    return str(value).strip()


def _rows_jsonl(text: str, shown: str) -> Iterable[tuple[int, dict[str, Any]]]:
    for number, data in json_lines(text.split("\n"), shown):
        if not isinstance(data, dict):
            raise InputError(f"expected a JSON object, got {type(data).__name__}", path=shown, line=number)
        yield number, data


def _rows_csv(text: str, shown: str) -> Iterable[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [name.strip() for name in next(reader)]
    except (csv.Error, StopIteration) as exc:
        raise InputError(f"not valid CSV: {exc}", path=shown, line=1) from None
    missing = [name for name in REQUIRED_FIELDS if name not in header]
    if missing:
        raise InputError(
            f"the header lacks column(s) {', '.join(missing)}; it has: {', '.join(header)}",
            path=shown,
            line=1,
            field=missing[0],
        )
    if len(set(header)) != len(header):
        twice = next(name for name in header if header.count(name) > 1)
        raise InputError(f"column '{twice}' appears twice in the header", path=shown, line=1)
    yield from csv_rows(reader, header, shown)


def _label_of(data: dict[str, Any], shown: str, line: int) -> HumanLabel:
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise InputError(
            f"unknown field(s) {', '.join(unknown)}; a label row has {', '.join(FIELDS)}",
            path=shown,
            line=line,
            field=unknown[0],
        )
    if "label" not in data:
        raise InputError("'label' is missing", path=shown, line=line, field="label")
    label = parse_human_label(data["label"])
    if label is None:
        raise InputError(
            f"label {data['label']!r} is not in the label set (1, 2, tie)",
            path=shown,
            line=line,
            field="label",
        )
    return HumanLabel(
        item_id=_text(data.get("item_id"), "item_id", shown, line),
        condition=_text(data.get("condition"), "condition", shown, line),
        label=label,
        annotator=_text(data.get("annotator"), "annotator", shown, line, required=False),
        line=line,
    )


def _check_known(label: HumanLabel, known: Collection[tuple[str, str]], shown: str) -> None:
    """Unknown ids and conditions are errors: a label the run cannot pair with a verdict is a typo
    or a file meant for another run, never something to drop in silence."""
    if (label.item_id, label.condition) in known:
        return
    items = {item for item, _ in known}
    if label.item_id not in items:
        raise InputError(
            f"unknown item id {label.item_id!r}: the run has no judgment of it",
            path=shown,
            line=label.line,
            field="item_id",
        )
    conditions = sorted({cond for item, cond in known if item == label.item_id})
    raise InputError(
        f"item {label.item_id!r} was not judged in condition {label.condition!r} "
        f"(judged in: {', '.join(conditions)})",
        path=shown,
        line=label.line,
        field="condition",
    )


def human_labels(
    rows: Sequence[HumanLabel], shown: str, known: Collection[tuple[str, str]] | None = None
) -> HumanLabels:
    """Validated labels: each known to the run (when `known` (item, condition) pairs are given), one
    row per item, condition and annotator."""
    seen: dict[tuple[str, str, str], int] = {}
    for label in rows:
        if known is not None:
            _check_known(label, known, shown)
        key = (label.item_id, label.condition, label.annotator)
        if key in seen:
            who = f"annotator {label.annotator!r}" if label.annotator else "no annotator"
            raise InputError(
                f"duplicate row: item {label.item_id!r}, condition {label.condition!r}, {who} "
                f"already labelled on line {seen[key]}",
                path=shown,
                line=label.line,
            )
        seen[key] = label.line
    if not rows:
        raise InputError("no label rows", path=shown)
    return HumanLabels(shown, tuple(rows))


def load_human_labels(path: str | Path, known: Collection[tuple[str, str]] | None = None) -> HumanLabels:
    """Read and validate a human-labels file (.jsonl or .csv); `known`: the run's judged (item,
    condition) pairs, against which every row is checked."""
    shown = str(path)
    file = Path(path)
    fmt = FORMATS.get(file.suffix.lower())
    if fmt is None:
        raise InputError(f"unknown file type '{file.suffix or '(none)'}': use .jsonl or .csv", path=shown)
    if not file.exists():
        raise InputError("no such file", path=shown)
    text = read_text(file, shown)
    rows = _rows_jsonl(text, shown) if fmt == "jsonl" else _rows_csv(text, shown)
    return human_labels([_label_of(data, shown, line) for line, data in rows], shown, known)
