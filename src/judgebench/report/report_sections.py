"""The report's sections in reading order, built once from an Analysis (`build_sections`).

The verdict comes first; the metric families (`metric_sections.py`) follow; then the per-subset and
sensitivity tables and the definitions. Everything here is plain data for the renderers.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgebench.analysis.findings import ALL, MEAN_JUDGE, Analysis, ReadinessVerdict
from judgebench.analysis.metric_registry import spec_of, specs
from judgebench.records import Metric
from judgebench.report.cell_text import count, judge_cell, n_cell, pct, points, value_cell
from judgebench.report.content import DASH, Cell, Section, Table, literal
from judgebench.report.index import MetricIndex
from judgebench.report.leaderboard_section import leaderboard_section
from judgebench.report.length_section import length_section
from judgebench.report.metric_sections import (
    accuracy_section,
    answers_section,
    comparisons_section,
    flips_section,
    position_section,
    tie_probes_section,
)
from judgebench.report.probe_section import probe_section
from judgebench.report.source_section import source_section


def build_sections(analysis: Analysis, extra: Sequence[Section] = ()) -> list[Section]:
    """Every section of the report in reading order; the verdict comes first, `extra` sections (the
    run's A-BB) before the definitions."""
    index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
    conditions = list(analysis.conditions)
    leaderboard = leaderboard_section(index, conditions)
    return [
        _readiness(analysis),
        _judges(analysis),
        accuracy_section(index, conditions),
        *([length] if (length := length_section(index, conditions, list(analysis.subsets))) else []),
        *([leaderboard] if leaderboard is not None else []),
        flips_section(index, conditions, analysis),
        position_section(index, conditions),
        comparisons_section(index, conditions),
        answers_section(index, conditions),
        tie_probes_section(index, conditions),
        *([probes] if (probes := probe_section(analysis)) is not None else []),
        *([source] if (source := source_section(analysis)) is not None else []),
        _subsets(index, conditions, analysis),
        _sensitivity(index, conditions, analysis),
        *extra,
        _notes(analysis),
    ]


def _readiness(analysis: Analysis) -> Section:
    settings = analysis.settings
    level = f"{100 * settings.confidence:g}%"
    section = Section(
        "verdict",
        "Readiness verdict",
        paragraphs=[
            f"Is the judge safe to use on another language? Two parts, each from {level} bounds. "
            f"**Baseline** (en): fail when accuracy's upper bound is at or below chance "
            f"({pct(settings.chance)}%), or, where a length rule (pick the shorter or the longer output) "
            "beats chance, when the upper bound of accuracy minus the strongest such rule is at or below "
            "0 (see the length artefact section), when the lower bound of position inconsistency exceeds "
            f"{pct(settings.max_position_inconsistency)}%, or when the judge is degenerate (one raw "
            f"answer in at least {pct(settings.max_answer_share)}% of valid judgments, or more than "
            f'{pct(settings.max_invalid_rate)}% invalid answers); a judge that always answers "A" is '
            f"perfectly invariant and useless. **Invariance** (per target): fail when the lower bound of "
            f"the flip rate exceeds {pct(settings.max_flip_rate)}% or that of the position-inconsistency "
            "increase "
            f"exceeds {pct(settings.max_position_increase)} points. The bounds that decide are item-level: "
            "the wider of the item-clustered bootstrap and a score interval on the items (Wilson; Tango for "
            f"the increase), honest at zero flips; a check on fewer than {settings.min_items} items never "
            "passes. The verdict is **fail** if either part "
            "fails, **pass** only if both pass on a complete run, otherwise **inconclusive**."
        ],
        terminal_paragraphs=not analysis.completeness.complete,
    )
    incomplete = incomplete_note(analysis)
    if incomplete:
        section.paragraphs.insert(0, incomplete)
    early = sorted({v.judge for v in analysis.readiness if v.intervals == "anytime-valid"})
    if early:
        section.paragraphs.append(
            f"Stopped early by `judge --until-settled` (settled): {', '.join(map(literal, early))}. "
            f"Their verdicts and the intervals in their reasons are the anytime-valid {level} confidence "
            "sequences' at the stop, valid at a data-dependent time; fixed-n intervals on the items they "
            "judged are not."
        )
    if not analysis.readiness:
        section.empty = "Not measured: the run has no valid en pair judgment to assess a judge on."
        return section
    rows = [
        [
            Cell(v.judge, "strong"),
            Cell(v.condition),
            Cell(v.status.upper(), v.status),
            Cell(v.baseline, v.baseline),
            Cell(v.invariance, v.invariance),
            _why_cell(v),
        ]
        for v in analysis.readiness
    ]
    counts = {status: sum(v.status == status for v in analysis.readiness) for status in ("pass", "fail")}
    counts["inconclusive"] = len(analysis.readiness) - counts["pass"] - counts["fail"]
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    caption = f"{summary}; limits: flip rate {pct(settings.max_flip_rate)}%, position-inconsistency increase "
    caption += f"{pct(settings.max_position_increase)} points, en position inconsistency "
    caption += f"{pct(settings.max_position_inconsistency)}%, accuracy above {pct(settings.chance)}%."
    columns = ["Judge", "Target", "Verdict", "Baseline (en)", "Invariance", "Why"]
    terse = caption + (
        " Why: the check that decided each part that did not pass; every check, with its numbers, is in "
        "report.md and report.html."
    )
    section.tables.append(
        Table(
            columns, rows, left=6, caption=caption, short_columns=frozenset({"Why"}), terminal_caption=terse
        )
    )
    return section


def _why_cell(verdict: ReadinessVerdict) -> Cell:
    """Every reason (the files), and the terminal's short form: per part that did not pass, the one
    check that decided it (a 23-language study has 96 verdicts of eight reasons each). A verdict that
    did not pass and names no deciding check keeps every reason there too: it never reads as a pass."""
    every = "\n".join(_sentence(r) for r in verdict.reasons) or DASH
    if verdict.status == "pass":
        return Cell(every, short="Every check within its limit.")
    lines = [f"{part.capitalize()}: {_sentence(reason)}" for part, reason in verdict.why.items()]
    if lines and not verdict.complete:
        lines.append("Incomplete run: no pass until every planned call is answered.")
    return Cell(every, short="\n".join(lines) or every)


def incomplete_note(analysis: Analysis) -> str | None:
    """The warning an incomplete run carries everywhere (terminal, Markdown, HTML banner)."""
    done = analysis.completeness
    if done.complete:
        return None
    parts = []
    if done.never_made:
        parts.append(f"{done.never_made:,} planned call(s) were never made")
    if done.failed:
        parts.append(f"{done.failed:,} failed after all retries and were not retried yet")
    return (
        f"**INCOMPLETE RUN**: {' and '.join(parts)} (of {done.planned:,} planned). Every number below is "
        "computed on what exists, a non-random slice of the plan; no verdict is `pass` until the run "
        "is complete. Rerun the same `judgebench judge` command to finish it."
    )


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def _judges(analysis: Analysis) -> Section:
    section = Section("judges", "Judges and calls", terminal_paragraphs=True)
    if not analysis.judges:
        section.empty = "No judgments in this run."
        return section
    rows: list[list[Cell]] = []
    for s in analysis.judges:
        # no token counted at all (published verdicts, imported): nothing to count, as cost shows it
        counted = bool(s.input_tokens or s.output_tokens)
        rows.append(
            [
                Cell(s.judge, "strong"),
                Cell(count(s.planned)),
                Cell(count(s.never_made), "warn" if s.never_made else None),
                Cell(count(s.judgments)),
                Cell(count(s.answered)),
                Cell(count(s.missing), "warn" if s.missing else None),
                Cell(count(s.invalid), "warn" if s.invalid else None),
                Cell(count(s.input_tokens)) if counted else Cell(DASH, "muted"),
                Cell(count(s.output_tokens)) if counted else Cell(DASH, "muted"),
                # no price in configs/prices.toml: `unpriced`, as the terminal says; DASH when there
                # is nothing to price (imported verdicts)
                Cell(
                    (("unpriced" if counted else DASH) if s.cost_usd is None else f"{s.cost_usd:,.2f}"),
                    "muted" if s.cost_usd is None else None,
                ),
            ]
        )
    columns = [
        "Judge",
        "Planned",
        "Never made",
        "Judgments",
        "Answered",
        "Missing",
        "Invalid",
        "Input tokens",
        "Output tokens",
        "Cost USD",
    ]
    section.tables.append(Table(columns, rows, left=1))
    missing = sum(s.missing for s in analysis.judges)
    if missing:
        section.paragraphs.append(
            f"{missing:,} call(s) failed after all retries: they are left out of every metric. "
            "Run the same `judgebench judge` command again to retry only those."
        )
    if analysis.flagged_items:
        section.paragraphs.append(
            f"{len(analysis.flagged_items):,} item(s) were flagged by the translation audit; the main tables "
            "include them, the sensitivity section shows every headline number without them."
        )
    return section


def _subsets(index: MetricIndex, conditions: list[str], analysis: Analysis) -> Section:
    section = Section(
        "subsets",
        "Per subset",
        paragraphs=["Every item set on its own (Adversarial aggregates its four sets); all items included."],
        plots=["subset_heatmap"],
        terminal=False,
    )
    subsets = [s for s in index.subsets(Metric.STRICT_ACCURACY, analysis.subsets) if s != ALL]
    if not subsets:
        section.empty = "Not measured: the dataset has a single subset."
        section.plots = []
        return section
    for spec in (s for s in specs() if s.by_subset):
        metric, title = spec.name, spec.prose[:1].upper() + spec.prose[1:] + " %"
        cols = index.pairs(metric, conditions) if spec.per == "pair" else index.conditions(metric, conditions)
        if not cols:
            continue
        rows: list[list[Cell]] = []
        for judge in index.rows_judges():
            for subset in subsets:
                recs = [index.get(judge, metric, c, subset) for c in cols]
                if all(r is None for r in recs):
                    continue
                first = next((r for r in recs if r is not None), None)
                rows.append([judge_cell(judge), Cell(subset), n_cell(first), *[value_cell(r) for r in recs]])
        if rows:
            section.tables.append(
                Table(
                    ["Judge", "Subset", f"n ({cols[0]})", *cols],
                    rows,
                    title=title,
                    left=2,
                    collapsed=bool(section.tables),  # the first (strict accuracy) stays open
                )
            )
    return section


# open in the HTML; the others are folded away
SENSITIVITY_HEADLINE = frozenset(
    {Metric.STRICT_ACCURACY, Metric.FLIP_RATE, Metric.POSITION_INCONSISTENCY, Metric.TIE_PROBE_EN_SHARE}
)


def _sensitivity(index: MetricIndex, conditions: list[str], analysis: Analysis) -> Section:
    flagged = len(analysis.flagged_items)
    section = Section(
        "sensitivity",
        "Sensitivity: without audit-flagged items",
        paragraphs=[
            f"{flagged:,} item(s) flagged by the translation audit are left out of the filtered column "
            "(in every condition, en included, so both columns compare the same items)."
        ],
        terminal=False,
    )
    if not flagged:
        section.paragraphs = [
            "No item was flagged by the translation audit: the filtered tables equal the unfiltered."
        ]
    if not [c for c in conditions if c != "en"]:  # en only (published verdicts): nothing was audited
        section.paragraphs = []
        section.empty = (
            "Not applicable: nothing in this run was translated, so there is no audit to filter by."
        )
        return section
    if not any(r.filtered for r in index.records):
        section.empty = "Not measured: no filtered records in this analysis."
        return section
    for spec in (s for s in specs() if s.sensitivity):
        metric, label = spec.name, spec.prose
        cols = index.pairs(metric, conditions) if spec.per == "pair" else index.conditions(metric, conditions)
        table = (_sensitivity_long if len(cols) > SENSITIVITY_WIDE_MAX else _sensitivity_wide)(
            index, metric, cols
        )
        if table is not None:
            table.title = label[:1].upper() + label[1:]
            table.collapsed = metric not in SENSITIVITY_HEADLINE
            section.tables.append(table)
    return section


# up to this many conditions (en, zh, ls) one row per judge; more (a many-language study): a row per
# judge and condition, so that the table does not grow three columns per language
SENSITIVITY_WIDE_MAX = 4


def _sensitivity_cells(index: MetricIndex, judge: str, metric: str, cond: str) -> tuple[list[Cell], bool]:
    """All, filtered and their difference for one judge and condition; whether anything was measured."""
    full = index.get(judge, metric, cond)
    filt = index.get(judge, metric, cond, filtered=True)
    delta = DASH
    if full is not None and filt is not None and full.value is not None and filt.value is not None:
        delta = points(filt.value - full.value)
        if judge != MEAN_JUDGE:
            delta += f" ({full.n:,}→{filt.n:,})"
    # the unfiltered interval is in the main tables; repeating it here would not fit
    cells = [value_cell(full, with_ci=False), value_cell(filt), Cell(delta)]
    return cells, full is not None or filt is not None


def _sensitivity_wide(index: MetricIndex, metric: str, cols: list[str]) -> Table | None:
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        cells = [judge_cell(judge)]
        found = False
        for cond in cols:
            more, measured = _sensitivity_cells(index, judge, metric, cond)
            cells += more
            found = found or measured
        if found:
            rows.append(cells)
    if not rows:
        return None
    columns = ["Judge"]
    for cond in cols:
        columns += [f"{cond}: all %", f"{cond}: filtered %", f"{cond}: Δ pts (n)"]
    return Table(columns, rows, left=1)


def _sensitivity_long(index: MetricIndex, metric: str, cols: list[str]) -> Table | None:
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        for cond in cols:
            cells, measured = _sensitivity_cells(index, judge, metric, cond)
            if measured:
                rows.append([judge_cell(judge), Cell(cond), *cells])
    if not rows:
        return None
    return Table(["Judge", "Condition", "all %", "filtered %", "Δ pts (n)"], rows, left=2)


def _definitions(analysis: Analysis) -> Table:
    """Every metric name metrics.json holds, with what it is over and its interval, as declared."""
    declared = {spec.name: at for at, spec in enumerate(specs())}
    names = sorted(
        dict.fromkeys(r.metric for r in analysis.records),
        key=lambda m: (declared.get(spec.name if (spec := spec_of(m)) else m, len(declared)), m),
    )
    rows = []
    for name in names:
        spec = spec_of(name)
        rows.append(
            [
                Cell(name),
                Cell(spec.family if spec else DASH),
                Cell(spec.denominator if spec else DASH),
                Cell(str(spec.interval) if spec and spec.interval else DASH),
            ]
        )
    columns = ["Metric", "Family", "Over", "Interval"]
    return Table(columns, rows, title="Every metric in metrics.json", left=4, collapsed=True)


def _notes(analysis: Analysis) -> Section:
    s = analysis.settings
    return Section(
        "notes",
        "Definitions and denominators",
        paragraphs=[
            "One judgment is one (item, condition, order) call. Missing calls (failed after all retries) "
            "are left out of every metric and counted in the judge table.",
            "Accuracy (strict and tie-half) is over answered judgments: an invalid answer counts as wrong.",
            "Flip rate, gold flip rate, McNemar and position inconsistency use only pairs where both "
            "verdicts are valid. Raw-A and tie rates are over valid judgments; the invalid rate is over "
            "answered ones. Tie-probe shares are over valid probes.",
            "Length baselines and the split by the gold output's length are over the same answered "
            "judgments with a label as accuracy, with the lengths of the texts judged in that condition "
            "(characters; tokens in the text's own script); a rule scores half where the outputs are "
            "equally long, and such items are on neither side of the split.",
            "Rows named 'mean of judges' are the unweighted mean over judges "
            "(n = number of judges, no interval).",
            f"Settings: confidence {s.confidence:g}, bootstrap samples {s.bootstrap_samples:,}, seed "
            f"{s.seed}, max flip rate {pct(s.max_flip_rate)}%, max position-inconsistency increase "
            f"{pct(s.max_position_increase)} points, minimum detectable effect "
            f"{pct(s.min_detectable_effect)} points.",
        ],
        tables=[_definitions(analysis)] if analysis.records else [],
        terminal=False,
    )
