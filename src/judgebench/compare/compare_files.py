"""The files of a comparison, written as one atomic set into its output folder: compare.json (the
`CompareDoc`), compare.md (its sections as Markdown), and every changed unit as compare_changed.jsonl
(one `ChangedUnit` a line, raw answers included) and compare_changed.csv (the same without the raw
answers, spreadsheet-safe)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

from judgebench.compare.compare_doc import ChangedUnit, CompareDoc
from judgebench.compare.compare_sections import compare_sections
from judgebench.records.sanitize import spreadsheet_cell
from judgebench.report.content import ReportMeta, Section
from judgebench.report.markdown_render import render_markdown
from judgebench.store.atomic_files import atomic_write_many

COMPARE_JSON = "compare.json"
COMPARE_MD = "compare.md"
CHANGED_JSONL = "compare_changed.jsonl"
CHANGED_CSV = "compare_changed.csv"
CSV_COLUMNS = [
    "item_id", "subset", "judge_a", "judge_b", "kind", "condition", "order",
    "verdict_a", "verdict_b", "winner_a", "winner_b", "gold", "correct_a", "correct_b",
    "explorer_a", "explorer_b",
]  # fmt: skip


def changed_jsonl(changes: Sequence[ChangedUnit]) -> str:
    return "".join(json.dumps(c.model_dump(mode="json"), ensure_ascii=False) + "\n" for c in changes)


def _cell(value: object) -> object:
    """A CSV cell: empty for None, true/false as in the JSONL, text made spreadsheet-safe."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return spreadsheet_cell(value)


def changed_csv(changes: Sequence[ChangedUnit]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for change in changes:
        data = change.model_dump(mode="json")
        writer.writerow([_cell(data[c]) for c in CSV_COLUMNS])
    return buffer.getvalue()


def compare_markdown(doc: CompareDoc, sections: Sequence[Section]) -> str:
    meta = ReportMeta(
        run=f"{doc.run_a} vs {doc.run_b}",
        generated_at=doc.generated_at,
        version=doc.judgebench_version,
        title="judgebench compare",
    )
    return render_markdown(sections, {}, meta)


def write_compare(out: Path, doc: CompareDoc, changes: Sequence[ChangedUnit]) -> list[Path]:
    """Write the four files (all or none) and return their paths."""
    sections = compare_sections(doc, changes)
    files = {
        # `metrics` only when asked (`compare --metrics`): compare.json is otherwise as it was
        out / COMPARE_JSON: json.dumps(
            doc.model_dump(mode="json", exclude=None if doc.metrics else {"metrics"}),
            ensure_ascii=False,
            indent=2,
        )
        + "\n",
        out / COMPARE_MD: compare_markdown(doc, sections),
        out / CHANGED_JSONL: changed_jsonl(changes),
        out / CHANGED_CSV: changed_csv(changes),
    }
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_many({path: text.encode("utf-8") for path, text in files.items()})
    return list(files)
