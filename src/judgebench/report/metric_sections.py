"""One report section per metric family: accuracy, flips and McNemar, position, judge vs judge,
answer distribution and calibration, tie-probes. Each is plain data (`Section`) built from a
`MetricIndex`; the renderers lay it out.
"""

from __future__ import annotations

from judgebench.analysis.findings import ALL, SOURCE, Analysis, is_comparison, pair_name
from judgebench.analysis.metric_registry import in_section, spec_of
from judgebench.records import ConditionPair, Metric, MetricRecord
from judgebench.records.metrics import tie_probe_metric
from judgebench.report.cell_text import (
    boot_cell,
    count,
    judge_cell,
    n_cell,
    p_cells,
    pct,
    signed_ci,
    underpowered_cell,
    value_cell,
)
from judgebench.report.content import DASH, Cell, Section, Table
from judgebench.report.index import MetricIndex

# the flips table's own columns; every other pair metric declared in the flips section is a column
FLIP_OWN = frozenset({Metric.FLIP_RATE, Metric.GOLD_FLIP_RATE, Metric.MCNEMAR})


def accuracy_section(index: MetricIndex, conditions: list[str]) -> Section:
    section = Section(
        "accuracy",
        "Accuracy by condition",
        paragraphs=[
            "Strict accuracy: the verdict equals the label (a tie or an invalid answer is wrong), Wilson "
            "interval. Tie-half accuracy: a tie scores 0.5, mean with the normal interval. Item-level "
            "intervals (the ones verdicts read) are the wider of a bootstrap that resamples items, keeping "
            "an item's two orders together, and Wilson's interval with n = the items."
        ],
        plots=["accuracy"],
    )
    conds = index.conditions(Metric.STRICT_ACCURACY, conditions)
    if not conds:
        section.empty = "Not measured: no pair judgments with labels."
        section.plots = []
        return section
    shown = [spec for spec in in_section("accuracy") if index.has(spec.name)]
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        for cond in conds:
            recs = [index.get(judge, spec.name, cond) for spec in shown]
            if all(r is None for r in recs):
                continue
            cells = [judge_cell(judge), Cell(cond), n_cell(next(r for r in recs if r is not None))]
            for rec in recs:
                cells += [value_cell(rec), boot_cell(rec)]
            rows.append(cells)
    item_level = [_item_level(spec.label) for spec in shown]
    columns = ["Judge", "Condition", "n"]
    for spec, boot in zip(shown, item_level, strict=True):
        columns += [spec.label, boot]
    section.tables.append(Table(columns, rows, left=2, detail_columns=frozenset(item_level)))
    return section


def _item_level(label: str) -> str:
    """The item-level interval's column beside a value's (`Strict %` -> `Strict item-level`)."""
    return label.removesuffix(" %") + " item-level"


def flips_section(index: MetricIndex, conditions: list[str], analysis: Analysis) -> Section:
    section = Section(
        "flips",
        "Language flip rates and McNemar tests",
        paragraphs=[
            "Over (item, order) pairs where both verdicts are valid: the flip rate is the share whose "
            "verdict differs between the two conditions (a tie is a verdict of its own); by kind, a reversal "
            "swaps one output for the other, to/from tie turns a choice into a tie or back. The gold flip "
            "rate is the share whose strict correctness differs. McNemar: b = right only in the first "
            "condition, c = right only in the second; exact two-sided test; p adj is Benjamini-Hochberg over "
            "all McNemar tests. For a test that finds nothing, MDE is the smallest difference it could "
            "detect at 80% power; it is flagged underpowered above "
            f"{pct(analysis.settings.min_detectable_effect)} points."
        ],
        plots=["flips", "forest", "forest_flips_subsets"],
    )
    pairs = index.pairs(Metric.FLIP_RATE, conditions)
    if not pairs:
        section.empty = "Not measured: only one condition was judged, so there is nothing to flip between."
        section.plots = []
        return section
    judges = index.rows_judges()
    kinds = [
        (spec.name, spec.label)
        for spec in in_section("flips")
        if spec.per == "pair" and spec.name not in FLIP_OWN and index.has(spec.name)
    ]
    rows: list[list[Cell]] = []
    for judge in judges:
        for pair in pairs:
            flip = index.get(judge, Metric.FLIP_RATE, pair)
            if flip is None:
                continue
            gold = index.get(judge, Metric.GOLD_FLIP_RATE, pair)
            rows.append(
                [
                    judge_cell(judge),
                    Cell(pair),
                    n_cell(flip),
                    value_cell(flip),
                    boot_cell(flip),
                    *[value_cell(index.get(judge, m, pair), with_ci=False) for m, _ in kinds],
                    value_cell(gold),
                ]
            )
    columns = ["Judge", "Pair", "n pairs", "Flip %", "Flip item-level", *[k for _, k in kinds], "Gold flip %"]
    section.tables.append(
        Table(
            columns,
            rows,
            title="Flip rates",
            left=2,
            detail_columns=frozenset({"Flip item-level"}),
        )
    )

    mc_rows: list[list[Cell]] = []
    for judge in index.judges:
        for pair in index.pairs(Metric.MCNEMAR, conditions):
            rec = index.get(judge, Metric.MCNEMAR, pair)
            if rec is None:
                continue
            mc_rows.append(
                [
                    judge_cell(judge),
                    Cell(pair),
                    n_cell(rec),
                    Cell(count(rec.b)),
                    Cell(count(rec.c)),
                    Cell(DASH if rec.value is None else f"{rec.value:+g}"),
                    *p_cells(rec),
                    underpowered_cell(rec),
                ]
            )
    if mc_rows:
        columns = ["Judge", "Pair", "n pairs", "b", "c", "b - c", "p", "p adj", "MDE"]
        section.tables.append(Table(columns, mc_rows, title="McNemar (strict correctness)", left=2))
    return section


def comparisons_section(index: MetricIndex, conditions: list[str]) -> Section:
    """Paired judge-vs-judge tests (records whose judge is `J1 vs J2`), whatever metrics they cover."""
    section = Section(
        "comparisons",
        "Judge vs judge",
        paragraphs=[
            "Which judge is more invariant? Each comparison uses only the units both judges answered "
            "validly; difference = first judge minus second, in points, with an exact McNemar-style test "
            "on the units where exactly one of them flips (or is position-inconsistent)."
        ],
        terminal=False,
    )
    records = [r for r in index.records if is_comparison(r.judge) and r.subset == ALL and not r.filtered]
    if not records:
        section.empty = "Not measured: it needs at least two judges and a second condition or order."
        return section
    rank = {c: i for i, c in enumerate(conditions)}

    def target_rank(condition: str) -> int:
        pair = ConditionPair.parse(condition)
        return rank.get(pair.second if pair else condition, 99)

    records.sort(key=lambda r: (r.metric, target_rank(r.condition), r.condition, r.judge))
    rows = []
    for rec in records:
        rows.append(
            [
                Cell(rec.judge, "strong"),
                Cell(spec.prose if (spec := spec_of(rec.metric)) else rec.metric),
                Cell(rec.condition),
                n_cell(rec),
                Cell(signed_ci(rec.value, rec.ci_low, rec.ci_high)),
                *p_cells(rec),
                underpowered_cell(rec),
            ]
        )
    columns = ["Comparison", "Metric", "Condition", "n", "Difference (pts)", "p", "p adj", "MDE"]
    section.tables.append(
        Table(
            columns,
            rows,
            title="Paired comparisons",
            caption="p adj is Benjamini-Hochberg over all judge comparisons.",
            left=3,
            collapsed=len(rows) > 12,
        )
    )
    return section


def position_section(index: MetricIndex, conditions: list[str]) -> Section:
    section = Section(
        "position",
        "Position consistency",
        paragraphs=[
            "Share of items whose orig and swap verdicts differ after mapping back to outputs (a tie "
            "against a choice counts), over items with both verdicts valid; Wilson interval. Increase = "
            "this condition minus en, in points."
        ],
        plots=["position", "forest_position_subsets"],
    )
    conds = index.conditions(Metric.POSITION_INCONSISTENCY, conditions)
    if not conds:
        section.empty = "Not measured: no item was judged in both orders."
        section.plots = []
        return section
    base = conds[0] if SOURCE not in conds else SOURCE
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        ref = index.get(judge, Metric.POSITION_INCONSISTENCY, base)
        for cond in conds:
            rec = index.get(judge, Metric.POSITION_INCONSISTENCY, cond)
            if rec is None:
                continue
            rows.append(
                [
                    judge_cell(judge),
                    Cell(cond),
                    n_cell(rec),
                    value_cell(rec),
                    boot_cell(rec),
                    _increase_cell(
                        index.get(judge, Metric.POSITION_INCONSISTENCY_INCREASE, pair_name(base, cond)),
                        rec,
                        ref,
                    ),
                ]
            )
    columns = ["Judge", "Condition", "n items", "Inconsistent %", "Item-level", f"Increase vs {base} (pts)"]
    section.tables.append(Table(columns, rows, left=2, detail_columns=frozenset({"Item-level"})))
    return section


def _increase_cell(paired: MetricRecord | None, rec: MetricRecord, ref: MetricRecord | None) -> Cell:
    """The paired increase (same items, with its interval; bootstrap where computed), else the difference."""
    if paired is not None and paired.value is not None:
        low, high = paired.item_low, paired.item_high  # the interval readiness reads
        if low is None or high is None:
            low, high = paired.ci_low, paired.ci_high
        return Cell(signed_ci(paired.value, low, high))
    if ref is None or ref is rec or ref.value is None or rec.value is None:
        return Cell(DASH, "muted")
    return Cell(signed_ci(rec.value - ref.value, None, None))


def answers_section(index: MetricIndex, conditions: list[str]) -> Section:
    section = Section(
        "answers",
        "Answer distribution and calibration",
        paragraphs=[
            "Raw A: share of valid verdicts naming the output shown first; tie: share of valid verdicts "
            "that are a tie; invalid: share of answered calls with no readable verdict; longer wins: "
            "share of valid non-tie verdicts that pick the longer output (items of unequal length). "
            "Where the judge "
            "states a confidence: its mean, the Brier score and the expected calibration error (10 bins) "
            "of that confidence against strict correctness."
        ],
    )
    metrics = [(spec.name, spec.label, spec.scale == "percent") for spec in in_section("answers")]
    present = [(m, label, is_pct) for m, label, is_pct in metrics if index.has(m)]
    conds = index.conditions(present[0][0], conditions) if present else []
    if not conds:
        section.empty = "Not measured: no pair judgments."
        return section
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        for cond in conds:
            recs = [index.get(judge, m, cond) for m, _, _ in present]
            if all(r is None for r in recs):
                continue
            cells = [judge_cell(judge), Cell(cond)]
            for rec, (_, _, is_pct) in zip(recs, present, strict=True):
                if is_pct:
                    cells.append(value_cell(rec))
                elif rec is None or rec.value is None:
                    cells.append(Cell(DASH, "muted"))
                else:
                    cells.append(Cell(f"{rec.value:.3f}"))
            rows.append(cells)
    columns = ["Judge", "Condition", *[label for _, label, _ in present]]
    short = frozenset(label for _, label, is_pct in present if is_pct)
    section.tables.append(Table(columns, rows, left=2, short_columns=short))
    return section


def tie_probes_section(index: MetricIndex, conditions: list[str]) -> Section:
    section = Section(
        "tie_probes",
        "Tie-probes",
        paragraphs=[
            "The gold output in English against the same output in the target language, under the target "
            "instruction, in both orders. Both say the same thing, so an unbiased judge answers Tie. "
            "Shares are over valid probes. EN share of non-ties = EN / (EN + target); exact two-sided "
            "binomial test against 0.5, p adj is Benjamini-Hochberg over all tie-probe tests. Below 50% "
            "the judge favours the target language."
        ],
        plots=["tie_probe"],
    )
    targets = index.conditions(Metric.TIE_PROBE_TIE, conditions) or index.conditions(
        Metric.TIE_PROBE_EN, conditions
    )
    if not targets:
        section.empty = "Not measured: this run has no tie-probes (they need a translated target condition)."
        section.plots = []
        return section
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        for target in targets:
            en = index.get(judge, Metric.TIE_PROBE_EN, target)
            other = index.get(judge, tie_probe_metric(target), target)
            tie = index.get(judge, Metric.TIE_PROBE_TIE, target)
            share = index.get(judge, Metric.TIE_PROBE_EN_SHARE, target)
            if en is None and tie is None:
                continue
            rows.append(
                [
                    judge_cell(judge),
                    Cell(target),
                    n_cell(tie or en),
                    value_cell(en),
                    value_cell(other),
                    value_cell(tie),
                    value_cell(share),
                    n_cell(share),
                    *p_cells(share),
                    underpowered_cell(share),
                    value_cell(index.get(judge, Metric.TIE_PROBE_INVALID_RATE, target), with_ci=False),
                ]
            )
    columns = [
        "Judge",
        "Target",
        "n",
        "EN %",
        "Target %",
        "Tie %",
        "EN of non-ties %",
        "Non-ties",
        "p",
        "p adj",
        "MDE",
        "Invalid %",
    ]
    section.tables.append(
        Table(
            columns,
            rows,
            left=2,
            detail_columns=frozenset({"Non-ties", "p", "Invalid %"}),
            short_columns=frozenset({"EN %", "Target %", "Tie %"}),
        )
    )
    return section
