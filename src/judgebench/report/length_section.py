"""The length artefact section: how far picking the shorter (or longer) output gets on the judged
items, beside each judge's accuracy and its accuracy split by whether the gold output is the shorter
or the longer one (analysis/length_artefact.py). A judge whose accuracy is mostly a length rule is
accurate on one side of the split only."""

from __future__ import annotations

from judgebench.analysis.findings import ALL
from judgebench.analysis.length_artefact import RULE_NAMES, RULES, SPLITS
from judgebench.records import Metric, MetricRecord
from judgebench.report.cell_text import judge_cell, n_cell, signed_ci, value_cell
from judgebench.report.content import DASH, Cell, Section, Table
from judgebench.report.index import MetricIndex

RULE_COLUMNS = ("Shorter (chars) %", "Longer (chars) %", "Shorter (tokens) %", "Longer (tokens) %")
SPLIT_COLUMNS = ("Gold shorter %", "Gold longer %")
MARGIN_COLUMN = "Over strongest (pts)"


def _margin_cell(rec: MetricRecord | None) -> Cell:
    if rec is None or rec.value is None:
        return Cell(DASH, "muted")
    rule = RULE_NAMES.get(rec.length_rule or "", "")
    text = signed_ci(rec.value, rec.ci_low, rec.ci_high)
    return Cell(f"{text} vs {rule}" if rule else text, short=signed_ci(rec.value, None, None))


def _row(index: MetricIndex, judge: str, cond: str, subset: str) -> list[Cell] | None:
    strict = index.get(judge, Metric.STRICT_ACCURACY, cond, subset)
    rules = [index.get(judge, metric, cond, subset) for metric, _, _ in RULES]
    if all(r is None for r in rules):
        return None
    splits = [index.get(judge, metric, cond, subset) for metric, _, _, _ in SPLITS]
    margin = index.get(judge, Metric.ACCURACY_OVER_LENGTH_BASELINE, cond, subset)
    return [
        n_cell(rules[0]),
        value_cell(strict),
        *[value_cell(r) for r in rules],
        *[value_cell(r) for r in splits],
        _margin_cell(margin),
    ]


def length_section(index: MetricIndex, conditions: list[str], subsets: list[str]) -> Section | None:
    """None where no length was measured (no output texts could be read: the readiness reasons say
    so), so such a report is as before."""
    conds = index.conditions(Metric.LENGTH_BASELINE_SHORTER_CHARS, conditions)
    if not conds:
        return None
    section = Section(
        "length",
        "Length artefact",
        paragraphs=[
            "How far a rule with no model gets on the same judgments: pick the shorter (longer) output, "
            "by characters or by tokens of the condition's language (equal lengths score half). Gold "
            "shorter / longer: the judge's strict accuracy where the gold output is the shorter / longer "
            "one by tokens. Over strongest: strict accuracy minus the strongest of the four rules, in "
            "points; the readiness baseline reads accuracy against it where that rule beats chance. "
            "Intervals are item-clustered (an item's two orders together)."
        ],
    )
    columns = [*RULE_COLUMNS, *SPLIT_COLUMNS, MARGIN_COLUMN]
    short = frozenset(["Strict %", *columns])
    detail = frozenset({"Longer (chars) %", "Longer (tokens) %"})
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        for cond in conds:
            row = _row(index, judge, cond, ALL)
            if row is not None:
                rows.append([judge_cell(judge), Cell(cond), *row])
    header = ["Judge", "Condition", "n", "Strict %", *columns]
    section.tables.append(
        Table(header, rows, left=2, short_columns=short, detail_columns=detail, title="All items")
    )
    by_subset: list[list[Cell]] = []
    for judge in index.rows_judges():
        for subset in [s for s in index.subsets(Metric.LENGTH_BASELINE_SHORTER_CHARS, subsets) if s != ALL]:
            for cond in conds:
                row = _row(index, judge, cond, subset)
                if row is not None:
                    by_subset.append([judge_cell(judge), Cell(subset), Cell(cond), *row])
    if by_subset:
        section.tables.append(
            Table(
                ["Judge", "Subset", "Condition", "n", "Strict %", *columns],
                by_subset,
                title="Per subset",
                left=3,
                terminal=False,
                collapsed=True,
            )
        )
    return section
