"""compare's files hold outside text (item ids, judge names, raw answers) safely: a spreadsheet reads
no formula from the CSV, Markdown no table cell break, emphasis or link from compare.md."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from judgebench.compare.changes import changed_units
from judgebench.compare.compare_doc import CompareDoc, GateSettings
from judgebench.compare.compare_files import write_compare
from judgebench.compare.drift import apply_gate, drift_rows
from judgebench.compare.pairing import match_judges, pair_runs
from tests.compare.conftest import judgment, side

ITEM = "=HYPERLINK(1)|*x*"
JUDGE = "j|[a](http://x)"


def test_outside_text_is_inert_in_every_file(tmp_path: Path) -> None:
    a = side([judgment(JUDGE, ITEM, "en", "orig", "1", raw="A")])
    b = side([judgment(JUDGE, ITEM, "en", "orig", "2", raw="B")])
    matches = match_judges(a, b)
    units, coverage = pair_runs(a, b, matches)
    rows = drift_rows(units, ["en"], 0.95)
    reasons = apply_gate(rows, GateSettings(flip_rate=0.0), 0.95)
    records_a = {int(units["line_a"].iloc[0]): judgment(JUDGE, ITEM, "en", "orig", "1", raw="A")}
    changes = changed_units(units, records_a, {})
    doc = CompareDoc(
        judgebench_version="test", generated_at="now", run_a="a", run_b="b", confidence=0.95,
        matches=matches, items_a=1, items_b=1, items_common=1, conditions_a=["en"], conditions_b=["en"],
        coverage=coverage, drift=rows, changed=len(changes), changed_file="compare_changed.jsonl",
        gate=GateSettings(flip_rate=0.0), gate_failed=bool(reasons), gate_reasons=reasons,
    )  # fmt: skip
    files = write_compare(tmp_path, doc, changes)
    assert sorted(p.name for p in files) == [
        "compare.json", "compare.md", "compare_changed.csv", "compare_changed.jsonl",
    ]  # fmt: skip
    (row,) = list(csv.DictReader((tmp_path / "compare_changed.csv").open(encoding="utf-8")))
    assert row["item_id"] == "'" + ITEM  # read as text, never as a formula
    assert row["verdict_a"] == "1" and row["verdict_b"] == "2" and row["correct_a"] == "true"
    (line,) = (tmp_path / "compare_changed.jsonl").read_text().splitlines()
    assert json.loads(line)["item_id"] == ITEM and json.loads(line)["raw_a"] == "A"
    md = (tmp_path / "compare.md").read_text()
    # in the tables: no cell break, no emphasis, no link (the `(` after `]` is escaped)
    assert "| j\\|[a]\\(http://x) | en |" in md
    assert "| =HYPERLINK(1)\\|\\*x\\* | pair |" in md
    # in the gate's lines: a code span, read literally
    assert "`j|[a](http://x) en: 1 of 1 verdicts changed" in md
    assert json.loads((tmp_path / "compare.json").read_text())["gate_failed"] is True
