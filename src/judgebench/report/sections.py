"""The report's content as plain data: sections of tables and paragraphs, built once from an Analysis.

Terminal, Markdown and HTML renderers all draw from this model, so the three outputs cannot disagree
on a number, an order or a label; each renderer only decides how a cell looks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from judgebench.records import MetricRecord

if TYPE_CHECKING:
    from judgebench.analysis import Analysis

Style = Literal["pass", "fail", "inconclusive", "warn", "muted", "strong"]
Align = Literal["left", "right"]

DASH = "—"
MEAN = "mean"
# PROTOCOL §4 subset names in reading order; unknown subsets follow alphabetically.
SUBSET_ORDER: tuple[str, ...] = (
    "all",
    "Natural",
    "Adversarial",
    "Adversarial/Neighbor",
    "Adversarial/GPTInst",
    "Adversarial/GPTOut",
    "Adversarial/Manual",
)
COMPARISON_NAMES: dict[str, str] = {
    "flip_rate_diff": "flip rate",
    "position_inconsistency_diff": "position inconsistency",
}
FLIP_KINDS: tuple[tuple[str, str], ...] = (
    ("flip_reversal_rate", "Reversal %"),
    ("flip_to_tie_rate", "To tie %"),
    ("flip_from_tie_rate", "From tie %"),
)


@dataclass(frozen=True)
class Cell:
    """One table cell: its text and an optional semantic style the renderer maps to colour."""

    text: str
    style: Style | None = None
    short: str | None = None  # the value without its interval, for narrow terminal columns


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Cell]]
    title: str | None = None
    caption: str | None = None
    left: int = 1  # leading text columns, left-aligned; the rest are numbers, right-aligned
    terminal: bool = True  # printed in the terminal summary
    collapsed: bool = False  # a long detail table the HTML folds away (<details>) until clicked
    # columns the terminal drops to stay narrow (bootstrap intervals, counts); the files keep them
    detail_columns: frozenset[str] = frozenset()
    # columns the terminal shows without their interval (Cell.short)
    short_columns: frozenset[str] = frozenset()

    def alignment(self, index: int) -> Align:
        return "left" if index < self.left else "right"


@dataclass
class Section:
    """A report section. `empty` says why a section has no numbers ("not measured ...").

    Paragraphs use two bits of markup every renderer understands: **bold** and `code`.
    """

    key: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)
    empty: str | None = None
    terminal: bool = True  # shown in the terminal summary (the files always hold every section)
    terminal_paragraphs: bool = False  # its paragraphs are warnings worth printing there too


@dataclass(frozen=True)
class ReportMeta:
    """Where and when a report was made, shown in its header."""

    run: str
    generated_at: str
    version: str
    title: str = "judgebench report"


# ---------------------------------------------------------------- formatting


def pct(value: float | None, digits: int = 1) -> str:
    """A proportion as a percentage without the sign (column headers carry the unit)."""
    if value is None:
        return DASH
    return f"{100.0 * value:.{digits}f}"


def interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return ""
    return f"[{pct(low)}, {pct(high)}]"


def pct_ci(value: float | None, low: float | None, high: float | None) -> str:
    ci = interval(low, high)
    return f"{pct(value)} {ci}" if ci and value is not None else pct(value)


def points(diff: float) -> str:
    """A difference of proportions in signed percentage points; a rounded zero is shown unsigned."""
    text = f"{100 * diff:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def signed_ci(value: float | None, low: float | None, high: float | None) -> str:
    """A difference of proportions in percentage points, signed, with its interval."""
    if value is None:
        return DASH
    text = points(value)
    if low is not None and high is not None:
        text += f" [{points(low)}, {points(high)}]"
    return text


def pvalue(p: float | None) -> str:
    if p is None:
        return DASH
    if p < 0.001:
        return f"{p:.1e}"
    return f"{p:.3f}"


def count(value: float | int | None) -> str:
    if value is None:
        return DASH
    return f"{int(value):,}"


# ---------------------------------------------------------------- record lookup


class MetricIndex:
    """Records keyed by (judge, metric, condition, subset, filtered), with the orders to show them in."""

    def __init__(self, records: Iterable[MetricRecord], judge_order: Sequence[str] = ()) -> None:
        self.records = list(records)
        self._by: dict[tuple[str, str, str, str, bool], MetricRecord] = {}
        for record in self.records:
            self._by[(record.judge, record.metric, record.condition, record.subset, record.filtered)] = record
        seen = list(dict.fromkeys([*judge_order, *(r.judge for r in self.records)]))
        self.judges = [j for j in seen if j != MEAN and not is_comparison(j)]
        self.comparisons = [j for j in seen if is_comparison(j)]
        self.has_mean = any(r.judge == MEAN for r in self.records)

    def get(
        self, judge: str, metric: str, condition: str, subset: str = "all", filtered: bool = False
    ) -> MetricRecord | None:
        return self._by.get((judge, metric, condition, subset, filtered))

    def has(self, metric: str) -> bool:
        return any(r.metric == metric for r in self.records)

    def conditions(self, metric: str, order: Sequence[str] = ()) -> list[str]:
        """Conditions a metric was measured in, in the run's condition order."""
        found = list(dict.fromkeys(r.condition for r in self.records if r.metric == metric))
        rank = {c: i for i, c in enumerate(order)}
        return sorted(found, key=lambda c: (rank.get(c, len(rank)), found.index(c)))

    def pairs(self, metric: str, order: Sequence[str]) -> list[str]:
        """Condition pairs `a->b` of a flip-like metric: en->x first, in the run's condition order."""
        found = list(dict.fromkeys(r.condition for r in self.records if r.metric == metric))
        rank = {c: i for i, c in enumerate(order)}

        def key(pair: str) -> tuple[int, int, int]:
            left, _, right = pair.partition("->")
            return (rank.get(left, len(rank)), rank.get(right, len(rank)), found.index(pair))

        return sorted(found, key=key)

    def subsets(self, metric: str, hint: Sequence[str] = ()) -> list[str]:
        found = set(r.subset for r in self.records if r.metric == metric) | (set(hint) & self._subsets())
        return sorted(found, key=subset_sort_key)

    def _subsets(self) -> set[str]:
        return {r.subset for r in self.records}

    def rows_judges(self) -> list[str]:
        """Judges first, then the unweighted mean over judges when there is more than one judge."""
        return [*self.judges, MEAN] if self.has_mean and len(self.judges) > 1 else list(self.judges)


def is_comparison(judge: str) -> bool:
    return " vs " in judge


def subset_sort_key(subset: str) -> tuple[int, str]:
    try:
        return (SUBSET_ORDER.index(subset), subset)
    except ValueError:
        return (len(SUBSET_ORDER), subset)


def leaf_subsets(subsets: Iterable[str]) -> list[str]:
    """The finest subsets (Natural, Adversarial/Neighbor, ...): not `all` and not a parent of another."""
    names = [s for s in subsets if s != "all"]
    leaves = [s for s in names if not any(o != s and o.startswith(s + "/") for o in names)]
    return sorted(leaves, key=subset_sort_key)


def value_cell(record: MetricRecord | None, *, with_ci: bool = True) -> Cell:
    if record is None:
        return Cell(DASH, "muted")
    if record.value is None:
        return Cell(f"{DASH} (n={record.n})", "muted")
    if not with_ci:
        return Cell(pct(record.value))
    return Cell(pct_ci(record.value, record.ci_low, record.ci_high), short=pct(record.value))


def boot_cell(record: MetricRecord | None) -> Cell:
    text = "" if record is None else interval(record.boot_low, record.boot_high)
    return Cell(text or DASH, None if text else "muted")


def n_cell(record: MetricRecord | None) -> Cell:
    if record is None:
        return Cell(DASH, "muted")
    if record.judge == MEAN:  # INTERFACE: a mean record's n is the number of judges
        return Cell(f"{record.n} judges", "muted")
    return Cell(count(record.n))


def judge_cell(judge: str) -> Cell:
    return Cell("mean of judges" if judge == MEAN else judge, "muted" if judge == MEAN else "strong")


def underpowered_cell(record: MetricRecord | None) -> Cell:
    """The 80%-power minimum detectable effect, flagged where it exceeds the user's threshold."""
    mde = record.mde if record is not None else None
    flag = record is not None and record.underpowered
    if mde is None:
        return Cell("underpowered", "warn") if flag else Cell(DASH, "muted")
    text = f"{pct(mde)} pts"
    return Cell(f"{text} underpowered", "warn") if flag else Cell(text)


def p_cells(record: MetricRecord | None) -> list[Cell]:
    if record is None:
        return [Cell(DASH), Cell(DASH)]
    # significant: p_adj below 1 - confidence
    return [Cell(pvalue(record.p)), Cell(pvalue(record.p_adj), "strong" if record.significant else None)]


# ---------------------------------------------------------------- sections


def build_sections(analysis: Analysis, extra: Sequence[Section] = ()) -> list[Section]:
    """Every section of the report in reading order; the verdict comes first, `extra` sections (the
    run's A-BB) before the definitions."""
    index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
    conditions = list(analysis.conditions)
    return [
        _readiness(analysis),
        _judges(analysis),
        _accuracy(index, conditions),
        _flips(index, conditions, analysis),
        _position(index, conditions),
        _comparisons(index, conditions),
        _answers(index, conditions),
        _tie_probes(index, conditions),
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
            f"Is the judge safe to use on another language? Per judge and target condition: **fail** when "
            f"the lower {level} bound of the flip rate exceeds {pct(settings.max_flip_rate)}% or the lower "
            f"bound of the position-inconsistency increase (target minus en) exceeds "
            f"{pct(settings.max_position_increase)} points; **pass** when both upper bounds are within "
            f"them; otherwise **inconclusive** (more items are needed to decide)."
        ],
    )
    if not analysis.readiness:
        section.empty = (
            "Not measured: the run has no target condition besides en, "
            "so there is no language switch to test."
        )
        return section
    rows = [
        [
            Cell(v.judge, "strong"),
            Cell(v.condition),
            Cell(v.status.upper(), v.status),
            Cell("\n".join(_sentence(r) for r in v.reasons) if v.reasons else DASH),
        ]
        for v in analysis.readiness
    ]
    counts = {status: sum(v.status == status for v in analysis.readiness) for status in ("pass", "fail")}
    counts["inconclusive"] = len(analysis.readiness) - counts["pass"] - counts["fail"]
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    caption = f"{summary}; limits: flip rate {pct(settings.max_flip_rate)}%, position-inconsistency increase "
    caption += f"{pct(settings.max_position_increase)} points."
    section.tables.append(Table(["Judge", "Target", "Verdict", "Why"], rows, left=4, caption=caption))
    return section


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
        rows.append(
            [
                Cell(s.judge, "strong"),
                Cell(count(s.judgments)),
                Cell(count(s.answered)),
                Cell(count(s.missing), "warn" if s.missing else None),
                Cell(count(s.invalid), "warn" if s.invalid else None),
                Cell(count(s.input_tokens)),
                Cell(count(s.output_tokens)),
                Cell(
                    DASH if s.cost_usd is None else f"{s.cost_usd:,.2f}",
                    "muted" if s.cost_usd is None else None,
                ),
            ]
        )
    columns = [
        "Judge",
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


def _accuracy(index: MetricIndex, conditions: list[str]) -> Section:
    section = Section(
        "accuracy",
        "Accuracy by condition",
        paragraphs=[
            "Strict accuracy: the verdict equals the label (a tie or an invalid answer is wrong), Wilson "
            "interval. Tie-half accuracy: a tie scores 0.5, mean with the normal interval. Bootstrap "
            "intervals resample items, keeping an item's two orders together."
        ],
        plots=["accuracy"],
    )
    conds = index.conditions("strict_accuracy", conditions)
    if not conds:
        section.empty = "Not measured: no pair judgments with labels."
        section.plots = []
        return section
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        for cond in conds:
            strict = index.get(judge, "strict_accuracy", cond)
            half = index.get(judge, "tie_half_accuracy", cond)
            if strict is None and half is None:
                continue
            rows.append(
                [
                    judge_cell(judge),
                    Cell(cond),
                    n_cell(strict or half),
                    value_cell(strict),
                    boot_cell(strict),
                    value_cell(half),
                    boot_cell(half),
                ]
            )
    columns = ["Judge", "Condition", "n", "Strict %", "Strict bootstrap", "Tie-half %", "Tie-half bootstrap"]
    section.tables.append(
        Table(
            columns,
            rows,
            left=2,
            detail_columns=frozenset({"Strict bootstrap", "Tie-half bootstrap"}),
        )
    )
    return section


def _flips(index: MetricIndex, conditions: list[str], analysis: Analysis) -> Section:
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
        plots=["flips"],
    )
    pairs = index.pairs("flip_rate", conditions)
    if not pairs:
        section.empty = "Not measured: only one condition was judged, so there is nothing to flip between."
        section.plots = []
        return section
    judges = index.rows_judges()
    kinds = [(m, label) for m, label in FLIP_KINDS if index.has(m)]
    rows: list[list[Cell]] = []
    for judge in judges:
        for pair in pairs:
            flip = index.get(judge, "flip_rate", pair)
            if flip is None:
                continue
            gold = index.get(judge, "gold_flip_rate", pair)
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
    columns = ["Judge", "Pair", "n pairs", "Flip %", "Flip bootstrap", *[k for _, k in kinds], "Gold flip %"]
    section.tables.append(
        Table(
            columns,
            rows,
            title="Flip rates",
            left=2,
            detail_columns=frozenset({"Flip bootstrap"}),
        )
    )

    mc_rows: list[list[Cell]] = []
    for judge in index.judges:
        for pair in index.pairs("mcnemar", conditions):
            rec = index.get(judge, "mcnemar", pair)
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


def _comparisons(index: MetricIndex, conditions: list[str]) -> Section:
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
    records = [r for r in index.records if is_comparison(r.judge) and r.subset == "all" and not r.filtered]
    if not records:
        section.empty = "Not measured: it needs at least two judges and a second condition or order."
        return section
    rank = {c: i for i, c in enumerate(conditions)}
    records.sort(key=lambda r: (r.metric, rank.get(r.condition.split("->")[-1], 99), r.condition, r.judge))
    rows = []
    for rec in records:
        rows.append(
            [
                Cell(rec.judge, "strong"),
                Cell(COMPARISON_NAMES.get(rec.metric, rec.metric)),
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


def _position(index: MetricIndex, conditions: list[str]) -> Section:
    section = Section(
        "position",
        "Position consistency",
        paragraphs=[
            "Share of items whose orig and swap verdicts differ after mapping back to outputs (a tie "
            "against a choice counts), over items with both verdicts valid; Wilson interval. Increase = "
            "this condition minus en, in points."
        ],
        plots=["position"],
    )
    conds = index.conditions("position_inconsistency", conditions)
    if not conds:
        section.empty = "Not measured: no item was judged in both orders."
        section.plots = []
        return section
    base = conds[0] if "en" not in conds else "en"
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        ref = index.get(judge, "position_inconsistency", base)
        for cond in conds:
            rec = index.get(judge, "position_inconsistency", cond)
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
                        index.get(judge, "position_inconsistency_increase", f"{base}->{cond}"), rec, ref
                    ),
                ]
            )
    columns = ["Judge", "Condition", "n items", "Inconsistent %", "Bootstrap", f"Increase vs {base} (pts)"]
    section.tables.append(Table(columns, rows, left=2, detail_columns=frozenset({"Bootstrap"})))
    return section


def _increase_cell(paired: MetricRecord | None, rec: MetricRecord, ref: MetricRecord | None) -> Cell:
    """The paired increase (same items, with its interval; bootstrap where computed), else the difference."""
    if paired is not None and paired.value is not None:
        low, high = paired.boot_low, paired.boot_high
        if low is None or high is None:
            low, high = paired.ci_low, paired.ci_high
        return Cell(signed_ci(paired.value, low, high))
    if ref is None or ref is rec or ref.value is None or rec.value is None:
        return Cell(DASH, "muted")
    return Cell(signed_ci(rec.value - ref.value, None, None))


def _answers(index: MetricIndex, conditions: list[str]) -> Section:
    section = Section(
        "answers",
        "Answer distribution and calibration",
        paragraphs=[
            "Raw A: share of valid verdicts naming the output shown first; tie: share of valid verdicts "
            "that are a tie; invalid: share of answered calls with no readable verdict. Where the judge "
            "states a confidence: its mean, the Brier score and the expected calibration error (10 bins) "
            "of that confidence against strict correctness."
        ],
    )
    metrics = [
        ("position_a_rate", "Raw A %", True),
        ("tie_rate", "Tie %", True),
        ("invalid_rate", "Invalid %", True),
        ("missing_rate", "Missing %", True),
        ("mean_confidence", "Mean confidence", False),
        ("brier", "Brier", False),
        ("ece", "ECE", False),
    ]
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


def _tie_probes(index: MetricIndex, conditions: list[str]) -> Section:
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
    targets = index.conditions("tie_probe_tie", conditions) or index.conditions("tie_probe_en", conditions)
    if not targets:
        section.empty = "Not measured: this run has no tie-probes (they need a translated target condition)."
        section.plots = []
        return section
    rows: list[list[Cell]] = []
    for judge in index.rows_judges():
        for target in targets:
            en = index.get(judge, "tie_probe_en", target)
            other = index.get(judge, f"tie_probe_{target}", target)
            tie = index.get(judge, "tie_probe_tie", target)
            share = index.get(judge, "tie_probe_en_share", target)
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
                    value_cell(index.get(judge, "tie_probe_invalid_rate", target), with_ci=False),
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


def _subsets(index: MetricIndex, conditions: list[str], analysis: Analysis) -> Section:
    section = Section(
        "subsets",
        "Per subset",
        paragraphs=["Every item set on its own (Adversarial aggregates its four sets); all items included."],
        plots=["subset_heatmap"],
        terminal=False,
    )
    subsets = [s for s in index.subsets("strict_accuracy", analysis.subsets) if s != "all"]
    if not subsets:
        section.empty = "Not measured: the dataset has a single subset."
        section.plots = []
        return section
    for metric, title, cols in (
        ("strict_accuracy", "Strict accuracy %", index.conditions("strict_accuracy", conditions)),
        ("tie_half_accuracy", "Tie-half accuracy %", index.conditions("tie_half_accuracy", conditions)),
        ("flip_rate", "Flip rate %", index.pairs("flip_rate", conditions)),
        (
            "position_inconsistency",
            "Position inconsistency %",
            index.conditions("position_inconsistency", conditions),
        ),
    ):
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


SENSITIVITY_METRICS: tuple[tuple[str, str], ...] = (
    ("strict_accuracy", "strict accuracy"),
    ("tie_half_accuracy", "tie-half accuracy"),
    ("flip_rate", "flip rate"),
    ("gold_flip_rate", "gold flip rate"),
    ("position_inconsistency", "position inconsistency"),
    ("tie_probe_tie", "tie-probe tie share"),
    ("tie_probe_en_share", "tie-probe EN of non-ties"),
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
    if not any(r.filtered for r in index.records):
        section.empty = "Not measured: no filtered records in this analysis."
        return section
    headline = {"strict_accuracy", "flip_rate", "position_inconsistency", "tie_probe_en_share"}
    for metric, label in SENSITIVITY_METRICS:
        cols = index.pairs(metric, conditions) if "flip" in metric else index.conditions(metric, conditions)
        rows: list[list[Cell]] = []
        for judge in index.rows_judges():
            cells = [judge_cell(judge)]
            found = False
            for cond in cols:
                full = index.get(judge, metric, cond)
                filt = index.get(judge, metric, cond, filtered=True)
                found = found or full is not None or filt is not None
                delta = DASH
                if (
                    full is not None
                    and filt is not None
                    and full.value is not None
                    and filt.value is not None
                ):
                    delta = points(filt.value - full.value)
                    if judge != MEAN:
                        delta += f" ({full.n:,}→{filt.n:,})"
                # the unfiltered interval is in the main tables; repeating it here would not fit
                cells += [value_cell(full, with_ci=False), value_cell(filt), Cell(delta)]
            if found:
                rows.append(cells)
        if rows:
            columns = ["Judge"]
            for cond in cols:
                columns += [f"{cond}: all %", f"{cond}: filtered %", f"{cond}: Δ pts (n)"]
            section.tables.append(
                Table(
                    columns,
                    rows,
                    title=label[:1].upper() + label[1:],
                    left=1,
                    collapsed=metric not in headline,
                )
            )
    return section


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
            "Rows named 'mean of judges' are the unweighted mean over judges "
            "(n = number of judges, no interval).",
            f"Settings: confidence {s.confidence:g}, bootstrap samples {s.bootstrap_samples:,}, seed "
            f"{s.seed}, max flip rate {pct(s.max_flip_rate)}%, max position-inconsistency increase "
            f"{pct(s.max_position_increase)} points, minimum detectable effect "
            f"{pct(s.min_detectable_effect)} points.",
        ],
        terminal=False,
    )
