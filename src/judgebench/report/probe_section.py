"""The report's probe section (PROTOCOL §7): one row per judge x probe x language with the flip rate
against the condition the probe was made from, its interval, the readiness limit and what that
says, and a forest plot of the same rows (`probes_forest`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from judgebench.analysis.findings import Analysis, ProbeRow
from judgebench.palette import judge_colors
from judgebench.records import Metric
from judgebench.report.cell_text import count, judge_cell, pct, pct_ci, pvalue, value_cell
from judgebench.report.content import DASH, Cell, Section, Table
from judgebench.report.index import MetricIndex
from judgebench.report.plots import (
    LIMIT_RED,
    MAX_WIDTH,
    figure,
    judge_label,
    line_handle,
    series_handles,
    top_legend,
)

if TYPE_CHECKING:  # matplotlib loads where a figure is drawn (plots.py)
    from matplotlib.figure import Figure

STATUS_STYLE = {"flagged": "fail", "within": "pass", "inconclusive": "inconclusive"}
STATUS_TEXT = {"flagged": "flagged", "within": "within limit", "inconclusive": "inconclusive"}
PROBES_FOREST = "probes_forest"  # its title: plots.PLOT_TITLES


def _row(row: ProbeRow) -> list[Cell]:
    dependent = DASH
    if row.dependent_share is not None:
        dependent = pct_ci(row.dependent_share, row.dependent_low, row.dependent_high)
    mcnemar = DASH if row.mcnemar_b is None else f"{row.mcnemar_b} / {row.mcnemar_c}"
    return [
        judge_cell(row.judge),
        Cell(row.probe),
        Cell(row.base),
        Cell(row.pair),
        Cell(count(row.n)),
        Cell(pct_ci(row.value, row.ci_low, row.ci_high), short=pct(row.value)),
        Cell(pct(row.limit)),
        Cell(STATUS_TEXT[row.status], STATUS_STYLE[row.status]),  # type: ignore[arg-type]
        Cell(pvalue(row.p_limit)),
        Cell(pvalue(row.p_holm), "strong" if row.status == "flagged" else None),
        Cell(mcnemar),
        Cell(pvalue(row.mcnemar_p)),
        Cell(dependent),
    ]


def probe_section(analysis: Analysis) -> Section | None:
    """None for a run judged without probes (its report is as before)."""
    if not analysis.probes:
        return None
    settings = analysis.settings
    level = f"{100 * settings.confidence:g}%"
    section = Section(
        "probes",
        "Probes: length, template, formatting",
        paragraphs=[
            "Each probe is a label-preserving condition made from the items as data (configs/probes/), "
            "judged in both orders: `length` pads the rejected output with content-free sentences in "
            "the item's language and makes the chosen one terse (blank runs, stock pleasantry lines), "
            "`format` shows both outputs as plain text, `template-k` judges the same pair under a "
            "paraphrased judge template. A probe of a language (`zh+length`) is read against that "
            "language (`zh->zh+length`). The flip rate is the share of (item, order) pairs whose verdict "
            f"moves, with the {level} interval readiness reads (item-level: the wider of the item "
            "bootstrap and Wilson on the items). **flagged** means its lower bound is above the readiness "
            f"limit {pct(settings.max_flip_rate)}% and the limit test (p > limit: score test on the items, "
            "raw) stays below "
            f"{1 - settings.confidence:g} after Holm's adjustment over the judge's probe rows (p Holm), so "
            "a judge gets a false flag at most that often however many probes it has; **within limit** "
            f"that its upper bound is at or below the limit, on at least {settings.min_items} items. "
            "McNemar b / c: right only without / only with the "
            "probe (a length-biased judge has b well above c). The pooled `template` row counts every "
            "paraphrase together; depends on template = the share of items whose verdict is not the "
            "same under every template."
        ],
        plots=[PROBES_FOREST],
    )
    if not analysis.probe_rows:
        section.empty = "Not measured: the probe conditions have no pair with two valid verdicts yet."
        section.plots = []
        return section
    columns = ["Judge", "Probe", "Language", "Pair", "n", "Flip %", "Limit %", "Reading", "p > limit",
               "p Holm", "McNemar b / c", "McNemar p (raw)", "Depends on template %"]  # fmt: skip
    rows = [_row(r) for r in analysis.probe_rows]
    flagged = sum(r.status == "flagged" for r in analysis.probe_rows)
    section.tables.append(
        Table(
            columns,
            rows,
            caption=f"{flagged} of {len(rows)} probe rows flagged",
            left=4,
            detail_columns=frozenset(
                {"p > limit", "McNemar b / c", "McNemar p (raw)", "Depends on template %"}
            ),
            short_columns=frozenset({"Flip %"}),
        )
    )
    if analysis.length_rows:
        section.tables.append(_length_table(analysis))
    artefact = _artefact_table(analysis)
    if artefact is not None:
        section.tables.append(artefact)
    return section


LENGTH_PROBE = "length"


def _artefact_table(analysis: Analysis) -> Table | None:
    """The length probe's flip rate beside the data's own length artefact (issue 47): how often the
    shorter output is the gold one in the base condition and under the probe (which pads the
    rejected output, so the gold one becomes the shorter more often), and the judge's base accuracy
    where the gold output is the shorter / longer one. A judge that already rides the artefact in
    the data (right where the gold is shorter, wrong where it is longer) is the one the probe moves."""
    # one row per judge and pair (the length probe has one instance: no pooled row to tell apart)
    rows = list({(r.judge, r.pair): r for r in analysis.probe_rows if r.probe == LENGTH_PROBE}.values())
    index = MetricIndex(analysis.records)
    out: list[list[Cell]] = []
    for r in rows:
        base_rule = index.get(r.judge, Metric.LENGTH_BASELINE_SHORTER_TOKENS, r.base)
        if base_rule is None:
            continue
        probe_rule = index.get(r.judge, Metric.LENGTH_BASELINE_SHORTER_TOKENS, r.condition)
        out.append(
            [
                judge_cell(r.judge),
                Cell(r.pair),
                value_cell(base_rule),
                value_cell(probe_rule),
                value_cell(index.get(r.judge, Metric.ACCURACY_GOLD_SHORTER, r.base)),
                value_cell(index.get(r.judge, Metric.ACCURACY_GOLD_LONGER, r.base)),
                Cell(pct_ci(r.value, r.ci_low, r.ci_high), short=pct(r.value)),
                Cell(STATUS_TEXT[r.status], STATUS_STYLE[r.status]),  # type: ignore[arg-type]
            ]
        )
    if not out:
        return None
    columns = ["Judge", "Pair", "Shorter wins, base %", "Shorter wins, probe %", "Gold shorter, base %",
               "Gold longer, base %", "Flip %", "Reading"]  # fmt: skip
    return Table(
        columns,
        out,
        title="The length probe beside the data's own length artefact",
        caption="Shorter wins: the accuracy of picking the shorter output by tokens (equal lengths half) "
        "on the judge's judgments; gold shorter / longer: the judge's strict accuracy in the base "
        "condition where the gold output is the shorter / longer one (the length artefact section). "
        "Item-clustered intervals.",
        left=2,
        short_columns=frozenset(columns[2:7]),
    )


def _length_table(analysis: Analysis) -> Table:
    rows = [
        [judge_cell(r.judge), Cell(r.category), Cell(count(r.items)), Cell(count(r.n)),
         Cell(pct_ci(r.value, r.ci_low, r.ci_high), short=pct(r.value))]
        for r in analysis.length_rows
    ]  # fmt: skip
    return Table(
        ["Judge", "Length category", "Items", "n", "Strict accuracy (en) %"],
        rows,
        title="Accuracy by length category",
        caption="en pair judgments, both orders, Wilson interval; the category is the data's own where it "
        "declares one (metadata length_category, RewardBench's alpacaeval-length), else which output "
        "is at least 1.2 times as long. A length-biased judge is more accurate where the chosen output is "
        "the longer one.",
        left=2,
        short_columns=frozenset({"Strict accuracy (en) %"}),
    )


def probes_forest(rows: Sequence[ProbeRow], limit: float) -> Figure | None:
    """The probe rows as a forest: one line per pair x judge, dot and interval, the limit dashed red
    (a judge is flagged where its whole interval lies right of the line)."""
    shown = [r for r in rows if r.value is not None]
    if not shown:
        return None
    judges = list(dict.fromkeys(r.judge for r in shown))
    colors = judge_colors(judges)
    keys: list[tuple[str, str]] = []
    ys: dict[tuple[str, str], float] = {}
    y, previous = 0.0, None
    for r in shown:
        if previous is not None and r.pair != previous:
            y += 0.6
        ys[(r.pair, r.judge)], previous, y = y, r.pair, y + 1.0
        keys.append((r.pair, r.judge))
    fig = figure(MAX_WIDTH * 0.7, 1.6 + 0.3 * len(keys))
    ax = fig.subplots()
    for r in shown:
        yy = ys[(r.pair, r.judge)]
        if r.ci_low is not None and r.ci_high is not None:
            ax.hlines(yy, 100 * r.ci_low, 100 * r.ci_high, colors=colors[r.judge], lw=2.2, zorder=3)
        ax.scatter([100 * float(r.value or 0.0)], [yy], s=36, c=colors[r.judge], zorder=4)
    ax.axvline(100.0 * limit, color=LIMIT_RED, linestyle="--", linewidth=1.2, zorder=2)
    highs = [100 * (r.ci_high if r.ci_high is not None else r.value or 0.0) for r in shown]
    ax.set_xlim(-1.0, max([*highs, 100.0 * limit]) * 1.08 + 1.0)
    ax.grid(axis="x", color="#EEEEEE", zorder=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(f"flip rate against the probe's own language, %; limit {100 * limit:g} %", fontsize=8)
    labels = [f"{pair}  {judge_label(judge, 30).replace(chr(10), ' ')}" for pair, judge in keys]
    ax.set_yticks(list(ys.values()), labels, fontsize=8)
    ax.invert_yaxis()
    limit_handle = line_handle(color=LIMIT_RED, linestyle="--", linewidth=1.2, label="readiness limit")
    top_legend(fig, [*series_handles(colors, judges), limit_handle], "judge")
    return fig
