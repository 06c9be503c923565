"""The leaderboard-comparable section: the "RewardBench score" (weighted as the official code weighs,
analysis/rewardbench_score.py) beside the pooled accuracy, per judge and language, with the drop from
English and the Judge-LS metrics over the same items: a table that reads like M-RewardBench's. The
Judge-LS columns are the metrics declared with a `leaderboard` header (analysis/metric_registry.py)."""

from __future__ import annotations

from judgebench.analysis.findings import ALL, SOURCE, pair_name
from judgebench.analysis.metric_registry import MetricSpec, on_leaderboard
from judgebench.records import Metric, MetricRecord
from judgebench.report.cell_text import judge_cell, n_cell, signed_ci, value_cell
from judgebench.report.content import DASH, Cell, Section, Table
from judgebench.report.index import MetricIndex

SECTIONS = ("Chat", "Chat Hard", "Safety", "Reasoning")
WEIGHTS = {
    "rewardbench": "RewardBench's `EXAMPLE_COUNTS` (allenai/reward-bench `rewardbench/constants.py`)",
    "m-rewardbench": "M-RewardBench's own counts (`analysis/plot_utils.py` of its code repository)",
}


def _drop_cell(record: MetricRecord | None) -> Cell:
    if record is None or record.value is None:
        return Cell(DASH, "muted")
    return Cell(
        signed_ci(record.value, record.ci_low, record.ci_high), short=signed_ci(record.value, None, None)
    )


def _beside(index: MetricIndex, spec: MetricSpec, judge: str, cond: str) -> Cell:
    """A declared leaderboard column's cell: a pair metric at en -> cond (a dash for en itself)."""
    if spec.per == "condition":
        return value_cell(index.get(judge, spec.name, cond))
    return value_cell(index.get(judge, spec.name, pair_name(SOURCE, cond))) if cond != SOURCE else Cell(DASH)


def _scheme(index: MetricIndex) -> str | None:
    return next(
        (r.weights for r in index.records if r.metric == Metric.REWARDBENCH_SCORE and r.weights), None
    )


def leaderboard_section(index: MetricIndex, conditions: list[str]) -> Section | None:
    """None for a run whose dataset has no leaderboard (everything but RewardBench/M-RewardBench)."""
    if not index.has(Metric.REWARDBENCH_SCORE):
        return None
    scheme = _scheme(index) or "rewardbench"
    section = Section(
        "leaderboard",
        "RewardBench score (comparable with the leaderboards)",
        paragraphs=[
            "judgebench's accuracy **pools** judgments: a category's accuracy is its correct judgments "
            "over all of its judgments, so a large subset weighs more. The published tables do not: "
            "the **RewardBench score** of a category is the mean of its subsets' accuracies weighted "
            f"by {WEIGHTS.get(scheme, scheme)}, where math-prm's 447 items count as 984 (983 in "
            "M-RewardBench's), as much as the six code subsets together; the overall score is the plain "
            "mean of Chat, Chat "
            "Hard, Safety and Reasoning. Only these scores compare with a published number; the pooled "
            "accuracy (Pooled %) is beside them for reference.",
            "A subset's accuracy is over its judgments, both orders of each item, scored as the official "
            "script scores a generative judge: 1 for the chosen response, 0 for the rejected one, 0.5 "
            "for a tie or an unreadable answer. "
            "Intervals: percentile bootstrap resampling items within each subset. **Δ vs en** is the "
            "score minus the English score on the items both hold (paired resampling), with the flip "
            "rate en->c and the position inconsistency of the same judgments beside it.",
        ],
    )
    conds = index.conditions(Metric.REWARDBENCH_SCORE, conditions)
    beside = on_leaderboard()
    rows: list[list[Cell]] = []
    for judge in index.judges:
        for cond in conds:
            overall = index.get(judge, Metric.REWARDBENCH_SCORE, cond)
            parts = [index.get(judge, Metric.REWARDBENCH_SCORE, cond, s) for s in SECTIONS]
            if overall is None and all(p is None for p in parts):
                continue
            target = cond != SOURCE
            pair = pair_name(SOURCE, cond)
            rows.append(
                [
                    judge_cell(judge),
                    Cell(cond),
                    n_cell(overall or next(p for p in parts if p is not None)),
                    value_cell(overall),
                    *(value_cell(p) for p in parts),
                    value_cell(index.get(judge, Metric.STRICT_ACCURACY, cond)),
                    _drop_cell(index.get(judge, Metric.REWARDBENCH_SCORE_DROP, pair))
                    if target
                    else Cell(DASH),
                    *(_beside(index, spec, judge, cond) for spec in beside),
                ]
            )
    columns = ["Judge", "Condition", "n", "Score %", *(f"{s} %" for s in SECTIONS)]
    extra = [str(spec.leaderboard) for spec in beside]
    columns += ["Pooled %", "Δ vs en pts", *extra]
    section.tables.append(
        Table(
            columns,
            rows,
            left=2,
            caption="Score: the mean of the four category scores; a category scores the subsets it has "
            "judged items in.",
            # the terminal keeps the intervals of the score and of the drop, the files of every column;
            # of the declared columns it keeps the first (the flip rate) to stay narrow
            short_columns=frozenset(columns[4:]) - {"Δ vs en pts"},
            detail_columns=frozenset(extra[1:]),
        )
    )
    drops = _drop_table(index, conditions)
    if drops is not None:
        section.tables.append(drops)
    return section


def _drop_table(index: MetricIndex, conditions: list[str]) -> Table | None:
    """Per category: the drop from English on the items both hold, per judge and language."""
    pairs = index.pairs(Metric.REWARDBENCH_SCORE_DROP, conditions)
    if not pairs:
        return None
    rows = []
    for judge in index.judges:
        for pair in pairs:
            overall = index.get(judge, Metric.REWARDBENCH_SCORE_DROP, pair, ALL)
            parts = [index.get(judge, Metric.REWARDBENCH_SCORE_DROP, pair, s) for s in SECTIONS]
            if overall is None and all(p is None for p in parts):
                continue
            rows.append(
                [
                    judge_cell(judge),
                    Cell(pair),
                    n_cell(overall or next(p for p in parts if p is not None)),
                    *(_drop_cell(p) for p in parts),
                    _drop_cell(overall),
                ]
            )
    columns = ["Judge", "Pair", "n", *(f"{s} Δ pts" for s in SECTIONS), "Score Δ pts"]
    return Table(
        columns,
        rows,
        left=2,
        title="Drop from English by category (the items both languages hold)",
        terminal=False,
        collapsed=len(rows) > 12,
    )
