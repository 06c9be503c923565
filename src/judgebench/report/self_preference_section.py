"""The report's self-preference section and self_preference.json (issue 31; README "Self-preference").

Both read `Analysis.self_preference` (analysis/self_preference_test.py): one row per judge x condition,
over the items whose two answers name their models and exactly one of them is of the judge's family.
A run whose data names no model says so, in the section and in the file, instead of showing nothing.
The file is registered with the other outputs in writer.py.
"""

from __future__ import annotations

import json

from judgebench.analysis.findings import Analysis
from judgebench.records.self_preference_report import NO_MODEL_NAMES, SelfPreferenceReport, SelfPreferenceRow
from judgebench.report.cell_text import count, judge_cell, pct, pvalue, signed_ci
from judgebench.report.content import DASH, Cell, Section, Table

SELF_PREFERENCE_JSON = "self_preference.json"


def _cells(row: SelfPreferenceRow) -> list[Cell]:
    if row.flagged:
        reading = Cell("favours own family", "fail")
    elif row.excess is None:
        reading = Cell(row.note or "not measured", "muted")
    else:
        reading = Cell("no self-preference shown", "pass")
    return [
        judge_cell(row.judge),
        Cell(row.family or DASH),
        Cell(row.condition),
        Cell(count(row.items)),
        Cell(f"{row.own_chosen:,} / {row.own_rejected:,}"),
        Cell(pct(row.own_win_rate)),
        Cell(pct(row.own_win_when_chosen)),
        Cell(pct(row.own_win_when_rejected)),
        Cell(signed_ci(row.excess, row.low, row.high), short=signed_ci(row.excess, None, None)),
        Cell(pvalue(row.p_value)),
        reading,
    ]


def self_preference_section(analysis: Analysis) -> Section:
    report = analysis.self_preference or SelfPreferenceReport(note=NO_MODEL_NAMES)
    level = f"{100 * analysis.settings.confidence:g}%"
    section = Section(
        "self_preference",
        "Self-preference",
        paragraphs=[
            "Does a judge favour answers written by its own family's models? Read where the data names the "
            "model behind each answer (`chosen_model`, `rejected_model`; families from "
            "configs/model_families.toml), on the items where exactly one answer is of the judge's family. "
            "Gold is held fixed: **excess** is the judge's accuracy when its own family's answer is the "
            "gold one minus its accuracy when the other answer is (own wins when chosen + own wins when "
            "rejected - 1, in points): 0 for a judge that does not care who wrote what, whatever its "
            f"accuracy. The {level} interval is a studentized permutation interval over items (both orders "
            "of an item are one unit; a tie counts half); **favours own family** means its lower bound "
            "is above 0."
        ],
    )
    if report.note is not None:
        section.empty = f"Not measured: {report.note} (the data gives no `chosen_model` / `rejected_model`)."
        return section
    if not report.rows:
        section.empty = "Not measured: no judge has pair verdicts yet."
        return section
    columns = ["Judge", "Family", "Condition", "Items", "Own gold / other gold", "Own wins %",
               "Own wins when gold %", "Own wins when not gold %", "Excess (points)", "p",
               "Reading"]  # fmt: skip
    flagged = sum(r.flagged for r in report.rows)
    families = ", ".join(f"{name} {n:,}" for name, n in report.answer_families.items())
    section.tables.append(
        Table(
            columns,
            [_cells(r) for r in report.rows],
            caption=(
                f"{flagged} of {len(report.rows)} rows favour their own family; {report.named_items:,} of "
                f"{report.items:,} items considered name both answers' models (answers: {families})"
            ),
            left=3,
            detail_columns=frozenset({"Own wins when gold %", "Own wins when not gold %", "p"}),
            short_columns=frozenset({"Excess (points)"}),
        )
    )
    return section


def self_preference_json(analysis: Analysis) -> bytes:
    """self_preference.json: the report's rows as data (fields: records/self_preference_report.py)."""
    report = analysis.self_preference or SelfPreferenceReport(note=NO_MODEL_NAMES)
    return (json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
