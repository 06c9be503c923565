"""The imported sources' own headline numbers (`judgebench import FORMAT`): JudgeBench's two-order vote
score, Arena-Hard's score, MT-Bench agreement with and without ties, AlpacaEval win rates, each by its
source's convention, so a reader puts judgebench's numbers beside the published ones."""

from __future__ import annotations

from judgebench.analysis.findings import Analysis
from judgebench.records.metrics import SOURCE_HEADLINE_PREFIX
from judgebench.report.cell_text import judge_cell
from judgebench.report.content import DASH, Cell, Section, Table


def source_section(analysis: Analysis) -> Section | None:
    """None for a run with no imported headline."""
    records = [r for r in analysis.records if r.metric.startswith(SOURCE_HEADLINE_PREFIX)]
    if not records:
        return None
    rows = [
        [
            judge_cell(r.judge),
            Cell(r.metric.removeprefix(SOURCE_HEADLINE_PREFIX)),
            Cell(r.source or DASH),
            Cell(r.subset),
            Cell(DASH, "muted") if r.value is None else Cell(f"{100 * r.value:.2f}%"),
            Cell(str(r.n)),
        ]
        for r in records
    ]
    return Section(
        "source",
        "The source's own numbers",
        paragraphs=[
            "Computed from the imported file by the source's own convention (docs/guides/import.md), to "
            "compare with the published figure; judgebench's own metrics on the same judgments are above "
            "(accuracy, position inconsistency, the longer answer's wins in the answers table)."
        ],
        tables=[Table(["Judge", "Number", "System", "Subset", "Value", "n"], rows, left=4)],
    )
