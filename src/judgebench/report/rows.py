"""metrics.json and metrics.csv rows: the INTERFACE fields first, then the extras, JSON-safe numbers."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Iterable
from typing import Any

import pandas as pd

from judgebench.records import MetricRecord
from judgebench.records.metrics import CORE_FIELDS
from judgebench.records.sanitize import spreadsheet_cell

BASE_COLUMNS: tuple[str, ...] = CORE_FIELDS  # the INTERFACE fields, first in every row


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: a non-finite number is written as null ("does not apply")."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def metric_rows(records: Iterable[MetricRecord]) -> list[dict[str, Any]]:
    """metrics.json records: the INTERFACE fields first, then the extras, in a stable order."""
    rows = []
    for record in records:
        data = _finite(record.model_dump(mode="json"))
        ordered = {k: data.get(k) for k in BASE_COLUMNS}
        ordered.update({k: data[k] for k in sorted(data) if k not in ordered})
        rows.append(ordered)
    return rows


# one row's fields as `json.dumps(indent=2)` lays them out inside the list, by the C encoder (with an
# indent the json module encodes in pure Python: seconds for the ~50,000 rows of 23 languages)
_FLAT_ROW = json.JSONEncoder(ensure_ascii=False, separators=(",\n    ", ": "))


def metrics_json(rows: list[dict[str, Any]]) -> str:
    """metrics.json's text: exactly `json.dumps(rows, ensure_ascii=False, indent=2)` and a newline,
    a row of scalars at a time through the C encoder (a row holding a list or an object, or none at
    all, through json.dumps itself)."""
    parts = []
    for row in rows:
        if row and not any(isinstance(v, (dict, list, tuple)) for v in row.values()):
            parts.append("  {\n    " + _FLAT_ROW.encode(row)[1:-1] + "\n  }")
        else:
            parts.append(textwrap.indent(json.dumps(row, ensure_ascii=False, indent=2), "  "))
    return ("[\n" + ",\n".join(parts) + "\n]" if parts else "[]") + "\n"


def metrics_csv(rows: list[dict[str, Any]]) -> str:
    """metrics.csv: every text cell as a spreadsheet may open it (`spreadsheet_cell`: no formula,
    no control character), so a subset or judge named `=HYPERLINK(...)` or holding a lone carriage
    return is text in its own cell and row."""
    extras = sorted({k for row in rows for k in row} - set(BASE_COLUMNS))
    safe = [{k: spreadsheet_cell(v) for k, v in row.items()} for row in rows]
    frame = pd.DataFrame(safe, columns=[*BASE_COLUMNS, *extras])
    return frame.to_csv(index=False, lineterminator="\n")
