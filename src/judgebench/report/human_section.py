"""The report's human section (`report --human FILE`): agreement with humans beside the human ceiling,
then prediction-powered estimates beside the human-only ones; human.json holds the same data."""

from __future__ import annotations

from judgebench.human import HumanReport
from judgebench.human.estimates import PPI_MIN_LABELS
from judgebench.human.human_doc import AnnotatorAgreement, Estimate, Interval
from judgebench.report.cell_text import count, judge_cell, pct, pct_ci
from judgebench.report.content import DASH, Cell, Section, Table, literal

KEY = "human"
TITLE = "Human labels"
HUMAN_JSON = "human.json"


def _pct(value: Interval | None) -> Cell:
    if value is None:
        return Cell(DASH, "muted")
    return Cell(pct_ci(value.value, value.ci_low, value.ci_high), short=pct(value.value))


def _coef(value: Interval | None) -> Cell:
    """kappa and alpha are coefficients in [-1, 1], shown as such (not as percentages)."""
    if value is None:
        return Cell(DASH, "muted")
    return Cell(f"{value.value:.2f} [{value.ci_low:.2f}, {value.ci_high:.2f}]", short=f"{value.value:.2f}")


def _agreement_table(report: HumanReport) -> Table:
    ceiling: dict[str, AnnotatorAgreement] = {c.condition: c for c in report.ceiling}
    rows = []
    for a in report.agreement:
        c = ceiling.get(a.condition)
        rows.append(
            [
                judge_cell(a.judge),
                Cell(a.condition),
                Cell(count(a.n)),
                _pct(a.accuracy),
                _coef(a.kappa),
                _coef(c.alpha if c else None),
                Cell(pct(c.pairwise_agreement) if c else DASH, None if c else "muted"),
            ]
        )
    return Table(
        columns=[
            "Judge",
            "Condition",
            "Items",
            "Agreement %",
            "Cohen's kappa",
            "Humans' alpha",
            "Humans agree %",
        ],
        rows=rows,
        title="agreement with humans",
        caption="Agreement: the judge's item verdict (both orders) equals the humans' majority label "
        "(Wilson interval). Humans' alpha: Krippendorff's alpha among the annotators, the ceiling.",
        left=2,
        detail_columns=frozenset({"Humans agree %"}),
    )


METHOD_TEXT = {
    "ppi++": "PPI++ (cross-fitted lambda, t)",
    "classical": f"human-only Wilson: fewer than {PPI_MIN_LABELS} labels",
    "unanimous": "human-only Wilson: the labels all agree",
}


def _estimate_row(e: Estimate) -> list[Cell]:
    what = "win rate" if e.quantity == "win_rate" else "accuracy"
    ratio = e.width_ratio
    return [
        judge_cell(e.judge),
        Cell(e.condition),
        Cell(what if e.source is None else f"{what} of {e.source}"),
        Cell(count(e.n)),
        Cell(count(e.n_unlabeled)),
        _pct(e.ppi),
        Cell(METHOD_TEXT[e.method], None if e.method == "ppi++" else "muted"),
        _pct(e.classical),
        Cell(f"{ratio:.2f}", "pass" if ratio < 0.95 else "muted"),
        Cell(f"{e.lam:.2f}"),
        Cell(pct(e.judge_only)),
    ]


def _estimates_table(report: HumanReport) -> Table:
    return Table(
        columns=[
            "Judge",
            "Condition",
            "Quantity",
            "Human labels",
            "Judge-only items",
            "Estimate %",
            "Interval used",
            "Human-only %",
            "Width ratio",
            "lambda",
            "Judge plug-in %",
        ],
        rows=[_estimate_row(e) for e in report.estimates],
        title="prediction-powered estimates",
        caption="PPI++ (power-tuned lambda, cross-fitted over two folds of the labels, Student's t "
        "interval): the human labels correct the judge's verdicts on every item. With fewer than "
        f"{PPI_MIN_LABELS} labels PPI++'s interval under-covers, so the estimate is the human-only Wilson "
        "interval (Interval used says which). Width ratio = estimate width / human-only width (below 1: "
        "what the judge bought).",
        left=3,
        detail_columns=frozenset({"lambda", "Judge plug-in %", "Judge-only items"}),
    )


def human_section(report: HumanReport | None) -> Section | None:
    """The section, or None when the report was made without --human (no section at all)."""
    if report is None:
        return None
    level = f"{100 * report.confidence:g}%"
    who = ", ".join(literal(a or "(unnamed)") for a in report.annotators)
    paragraphs = [
        f"{report.labels:,} human labels from {literal(report.file)} by {len(report.annotators)} "
        f"annotator(s) ({who}), in {', '.join(report.conditions)}; intervals at {level}.",
        "The judge's win rate and accuracy with n human labels and N judge-only items, by "
        "prediction-powered inference (PPI++, Angelopoulos et al. 2023): valid whatever the judge's "
        "quality; a judge that predicts the humans well narrows the interval, one at chance gets lambda "
        "near 0 and the human-only width. A win rate is the share of items its source's output wins "
        "(ties half): per model where the items name them, else that of output_1.",
        *report.notes,
    ]
    tables = [_agreement_table(report)] if report.agreement else []
    if report.estimates:
        tables.append(_estimates_table(report))
    empty = None if tables else "no human label matched a judged item with a judge verdict"
    return Section(KEY, TITLE, paragraphs=paragraphs, tables=tables, empty=empty, terminal_paragraphs=False)
