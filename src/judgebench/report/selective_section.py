"""The selective-judging section (`judgebench selective`, PROTOCOL §8): per condition the cascade's
stages with their thresholds, coverage and agreement, the cost against the strongest judge alone, and a
plot of coverage against agreement on the labelled items; selective.json holds the same data."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from judgebench.palette import judge_colors
from judgebench.records.selective_document import Bounded, CascadeResult, SelectiveReport, StageResult
from judgebench.report.cell_text import count, judge_cell, pct, pct_ci
from judgebench.report.content import DASH, Cell, Section, Table, literal
from judgebench.report.plots import figure, png, title
from judgebench.store.run_folder import JUDGMENTS, RunDir

KEY = "selective"
TITLE = "Selective judging with a guarantee"
PLOT = "selective_coverage"
SELECTIVE_JSON = "selective.json"
PLOT_FILE = f"{PLOT}.png"


@dataclass(frozen=True)
class SelectiveView:
    """The run's selective.json for `report` (written by `judgebench selective`), its plot beside it,
    or why it could not be read."""

    report: SelectiveReport | None
    plot: bytes | None = None
    problem: str | None = None
    stale: bool = False  # judgments.jsonl changed after it was written


def load_selective_view(run: RunDir) -> SelectiveView | None:
    """None when the run has no selective.json."""
    path = run.file(SELECTIVE_JSON)
    if not path.is_file():
        return None
    try:
        report = SelectiveReport.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError) as exc:
        return SelectiveView(None, problem=f"{path} could not be read ({type(exc).__name__})")
    judgments = run.file(JUDGMENTS)
    stale = judgments.is_file() and judgments.stat().st_mtime > path.stat().st_mtime
    plot = path.with_name(PLOT_FILE)
    return SelectiveView(report, plot.read_bytes() if plot.is_file() else None, stale=stale)


def report_section(view: SelectiveView | None) -> Section | None:
    """The section `report` shows from the run's selective.json (none without one)."""
    if view is None:
        return None
    if view.report is None:
        return Section(KEY, TITLE, empty=view.problem)
    section = selective_section(view.report)
    if view.stale:
        section.paragraphs.insert(
            0, "**Stale**: judgments.jsonl changed after `judgebench selective` ran: run it again."
        )
    if view.plot is None:
        section.plots = []
    section.terminal_paragraphs = False  # the report's terminal summary shows the tables; the files say all
    return section


def _bounded(value: Bounded | None) -> Cell:
    if value is None:
        return Cell(DASH, "muted")
    return Cell(pct_ci(value.value, value.ci_low, value.ci_high), short=pct(value.value))


def _stage_row(stage: StageResult, alpha: float) -> list[Cell]:
    guaranteed = stage.guaranteed_agreement
    return [
        judge_cell(stage.judge),
        Cell(f"{stage.confidence_source} ({stage.answers_per_item:.1f})"),
        Cell(DASH, "muted") if stage.threshold is None else Cell(f"{stage.threshold:.3f}"),
        Cell(f"{count(stage.decided)} / {count(stage.reached)}"),
        Cell(pct(stage.coverage)),
        Cell(f"{count(stage.kept_labelled)} / {count(stage.reached_labelled)}"),
        Cell(DASH, "muted")
        if guaranteed is None
        else Cell(pct(guaranteed), "pass" if guaranteed >= 1 - alpha else None),
        _bounded(stage.observed_agreement),
        Cell(f"${stage.cost_usd:,.4f}"),
    ]


def _cascade_table(cascade: CascadeResult, alpha: float) -> Table:
    rows = [_stage_row(s, alpha) for s in cascade.stages]
    people = len(cascade.escalated)
    rows.append(
        [
            Cell("people"),
            Cell(DASH, "muted"),
            Cell(DASH, "muted"),
            Cell(f"{count(people)} / {count(people)}"),
            Cell(pct(cascade.escalated_share), "warn" if people else None),
            Cell(DASH, "muted"),
            Cell(DASH, "muted"),
            Cell(DASH, "muted"),
            Cell(DASH, "muted"),
        ]
    )
    cost = "" if cascade.cost_known else " (some calls recorded no cost: lower bounds)"
    return Table(
        columns=[
            "Stage",
            "Confidence (answers)",
            "Threshold",
            "Decided / reached",
            "Coverage %",
            "Kept / labelled",
            "Guaranteed %",
            "Observed %",
            "Cost",
        ],
        rows=rows,
        title=f"cascade in {cascade.condition}",
        caption=f"Coverage: share of the {count(cascade.items)} items the stage decides. Guaranteed: 1 - the "
        "exact upper bound of the disagreement at the threshold on the labelled items. Observed: agreement "
        "with the humans' label on the labelled items kept (Wilson). "
        f"Cascade ${cascade.cost_cascade_usd:,.4f} against ${cascade.cost_strongest_usd:,.4f} for the "
        f"strongest judge alone{cost}.",
        left=2,
        detail_columns=frozenset({"Confidence (answers)", "Kept / labelled", "Cost"}),
    )


def selective_section(report: SelectiveReport) -> Section:
    level = f"{100 * (1 - report.delta):g}%"
    paragraphs = [
        f"Cascade {' -> '.join(literal(j) for j in report.cascade)} -> people, calibrated on the human "
        f"labels of {literal(report.labels_file)}: alpha {report.alpha:g}, delta {report.delta:g} "
        f"({report.delta_per_stage:g} per stage), thresholds keeping at least {report.min_kept} labelled "
        "items.",
        f"**Guarantee**: {report.guarantee} It holds with probability at least {level} over the draw of "
        f"the labelled items (delta {report.delta:g}).",
        "Assumptions: " + "; ".join(report.assumptions) + ".",
    ]
    for c in report.cascades:
        agreement = c.observed_agreement
        seen = DASH if agreement is None else pct_ci(agreement.value, agreement.ci_low, agreement.ci_high)
        paragraphs.append(
            f"{c.condition}: the judges decide {pct(c.coverage)}% of {count(c.items)} items at a guaranteed "
            f"agreement of {pct(c.guaranteed_agreement)}% (observed on the labelled items: {seen}); "
            f"{count(len(c.escalated))} go to people."
        )
        paragraphs += c.notes
    if report.min_coverage is not None:
        verdict = "**failed**" if report.gate_failed else "passed"
        paragraphs.append(
            f"Gate: coverage at the guaranteed level >= {pct(report.min_coverage)}%: {verdict}."
        )
    return Section(
        KEY,
        TITLE,
        paragraphs=paragraphs,
        tables=[_cascade_table(c, report.alpha) for c in report.cascades],
        plots=[PLOT],
        terminal_paragraphs=True,
    )


def coverage_plot(report: SelectiveReport) -> bytes | None:
    """Per condition, each stage's agreement (observed, and guaranteed by the bound) against the share
    of the labelled items reaching it that it keeps, as the threshold is lowered; the target 1 - alpha
    and each chosen threshold marked."""
    cascades = [c for c in report.cascades if any(s.curve for s in c.stages)]
    if not cascades:
        return None
    fig = figure(4.2 * len(cascades) + 1.0, 3.6)
    axes = fig.subplots(1, len(cascades), squeeze=False)[0]
    colors = judge_colors(report.cascade, mean=None)
    for ax, cascade in zip(axes, cascades, strict=True):
        for stage in cascade.stages:
            if not stage.curve or not stage.reached_labelled:
                continue
            n = stage.reached_labelled
            xs = [p.kept / n for p in stage.curve]
            color = colors[stage.judge]
            ax.plot(
                xs, [1 - p.errors / p.kept for p in stage.curve], color=color, label=f"{stage.judge} observed"
            )
            ax.plot(xs, [1 - p.upper_bound for p in stage.curve], color=color, ls="--", lw=1)
            if stage.threshold is not None:
                ax.plot([stage.kept_labelled / n], [1 - (stage.risk_upper_bound or 1.0)], "o", color=color)
        ax.axhline(1 - report.alpha, color="#111111", lw=0.8, ls=":")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(max(0.0, 1 - 4 * report.alpha), 1.01)
        ax.set_xlabel("coverage of the labelled items reaching the judge")
        ax.set_ylabel("agreement with humans")
        title(ax, f"{cascade.condition}: dashed = guaranteed, dotted = 1 - alpha")
        ax.legend(fontsize=7, loc="lower left")
    return png(fig)
