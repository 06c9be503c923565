"""The comparison as report sections (plain data: `report.model`), drawn by compare.md's Markdown
renderer and by the CLI's rich tables alike, so the two cannot disagree on a number."""

from __future__ import annotations

from collections.abc import Sequence

from judgebench.analysis.metric_registry import label, spec_of
from judgebench.compare.compare_doc import ChangedUnit, CompareDoc, Drift, GateStatus, MetricChange
from judgebench.report.content import DASH, Cell, Section, Style, Table, literal

# compare.md and the terminal list at most this many changed units (the JSONL and CSV hold them all)
SHOWN_CHANGES = 50
DRIFT_KEY, GATE_KEY = "compare", "compare-gate"
_STYLE: dict[GateStatus, Style] = {
    "pass": "pass",
    "fail": "fail",
    "within noise": "inconclusive",
    "no evidence": "fail",
}


def _pct(value: float | None) -> str:
    return DASH if value is None else f"{value:.1%}"


def _interval(row: Drift) -> Cell:
    if row.flip_rate is None:
        return Cell(DASH)
    return Cell(
        f"{row.flip_rate:.1%} [{_pct(row.flip_low)}, {_pct(row.flip_high)}]", short=_pct(row.flip_rate)
    )


def _gate(row: Drift) -> Cell:
    parts = [s for s in (row.gate_flip, row.gate_mcnemar) if s is not None]
    if not parts:
        return Cell(DASH, "muted")
    rank: tuple[GateStatus, ...] = ("fail", "no evidence", "within noise", "pass")
    worst = next(s for s in rank if s in parts)
    return Cell(worst, _STYLE[worst])


def _who(row: Drift | ChangedUnit | MetricChange) -> str:
    return row.judge_a if row.judge_a == row.judge_b else f"{row.judge_a} -> {row.judge_b}"


def _p(row: Drift) -> str:
    if row.mcnemar_p is None:
        return DASH
    adjusted = "" if row.mcnemar_p_adjusted is None else f" ({row.mcnemar_p_adjusted:.3g})"
    return f"{row.mcnemar_p:.3g}{adjusted}"


def _pair_table(rows: Sequence[Drift], confidence: float) -> Table:
    columns = ["judge", "condition", "compared", "changed", f"flip rate [{confidence:.0%}]", "accuracy A"]
    columns += [
        "accuracy B",
        "right -> wrong",
        "wrong -> right",
        "McNemar p (BH)",
        "'A' share A -> B",
        "gate",
    ]
    body = []
    for r in rows:
        shares = DASH if r.position_a_a is None else f"{_pct(r.position_a_a)} -> {_pct(r.position_a_b)}"
        body.append(
            [
                Cell(_who(r)), Cell(r.condition), Cell(f"{r.compared:,}"), Cell(f"{r.changed:,}"),
                _interval(r), Cell(_pct(r.accuracy_a)), Cell(_pct(r.accuracy_b)),
                Cell(str(r.right_to_wrong) if r.gold else DASH),
                Cell(str(r.wrong_to_right) if r.gold else DASH),
                Cell(_p(r)), Cell(shares), _gate(r),
            ]
        )  # fmt: skip
    return Table(
        columns,
        body,
        title="Verdict changes between the runs (pairs)",
        caption="flip rate: share of verdicts that changed, item-clustered Wilson interval; accuracy: "
        "strict (tie and invalid are wrong); McNemar: on correctness with the item as the unit (exact "
        "sign flips of each item's right -> wrong minus wrong -> right), BH-adjusted in brackets",
        left=2,
        detail_columns=frozenset({"right -> wrong", "wrong -> right", "'A' share A -> B"}),
    )


def _probe_table(rows: Sequence[Drift], confidence: float) -> Table:
    body = [
        [Cell(_who(r)), Cell(r.condition), Cell(f"{r.compared:,}"), Cell(f"{r.changed:,}"), _interval(r)]
        for r in rows
    ]
    columns = ["judge", "condition", "compared", "changed", f"flip rate [{confidence:.0%}]"]
    return Table(columns, body, title="Tie-probe verdict changes (reported, not gated)", left=2)


def _metrics_table(rows: Sequence[MetricChange]) -> Table:
    body = [
        [
            Cell(_who(r)), Cell(label(r.metric)), Cell(r.condition),
            Cell(_value(r.metric, r.value_a)), Cell(_value(r.metric, r.value_b)),
            Cell(DASH if r.change is None else _value(r.metric, r.change, signed=True)),
        ]
        for r in rows
    ]  # fmt: skip
    return Table(
        ["judge", "metric", "condition", "run A", "run B", "B - A"],
        body,
        title="Metrics in each run",
        caption="each run's own analysis (every item it judged, subset all, unfiltered); "
        "the declared metrics (analysis/metric_registry.py, compare=True)",
        left=3,
        collapsed=len(body) > 12,
    )


def _value(metric: str, value: float | None, signed: bool = False) -> str:
    """A value as its metric's scale writes it: a share in percent, points signed, a number as is."""
    if value is None:
        return DASH
    spec = spec_of(metric)
    scale = spec.scale if spec else "number"
    if scale == "number":
        return f"{value:+.3f}" if signed else f"{value:.3f}"
    if signed:
        return f"{100 * value:+.1f} pts"
    return f"{100 * value:.1f}" + ("%" if scale == "percent" else " pts")


def _changes_table(changes: Sequence[ChangedUnit], total: int, file: str) -> Table:
    body = [
        [
            Cell(_who(c)), Cell(c.item_id), Cell(c.kind), Cell(c.condition), Cell(c.order),
            Cell(c.verdict_a or DASH), Cell(c.verdict_b or DASH),
            Cell(DASH if c.gold is None else str(c.gold)),
        ]
        for c in changes[:SHOWN_CHANGES]
    ]  # fmt: skip
    more = f"; the first {SHOWN_CHANGES} shown" if total > SHOWN_CHANGES else ""
    return Table(
        ["judge", "item", "kind", "condition", "order", "verdict A", "verdict B", "gold"],
        body,
        title="Units whose verdict changed",
        caption=f"{total:,} changed unit(s), every one in {file}{more}",
        left=5,
        terminal=False,
    )


def _coverage_lines(doc: CompareDoc) -> list[str]:
    lines = []
    for c in doc.coverage:
        who = (
            literal(c.judge_a) if c.judge_a == c.judge_b else f"{literal(c.judge_a)} -> {literal(c.judge_b)}"
        )
        if c.units_only_a or c.units_only_b:
            parts = [f"{c.units_only_a:,} unit(s) only in A", f"{c.units_only_b:,} only in B"]
            if c.items_only_a_total or c.items_only_b_total:
                parts.append(
                    f"items only in A: {c.items_only_a_total:,}, only in B: {c.items_only_b_total:,}"
                )
            if c.conditions_only_a or c.conditions_only_b:
                only_a, only_b = (
                    ", ".join(c.conditions_only_a) or "none",
                    ", ".join(c.conditions_only_b) or "none",
                )
                parts.append(f"conditions only in A: {only_a}, only in B: {only_b}")
            lines.append(f"**Not compared** for {who}: " + "; ".join(parts) + " (compare.json lists them).")
    return lines


def _gate_section(doc: CompareDoc) -> Section | None:
    if doc.gate.flip_rate is None and doc.gate.mcnemar_alpha is None:
        return None
    limits = []
    if doc.gate.flip_rate is not None:
        limits.append(f"a flip rate above {doc.gate.flip_rate:.1%} with confidence (its lower bound)")
    if doc.gate.mcnemar_alpha is not None:
        limits.append(f"an item-clustered McNemar p (adjusted) below {doc.gate.mcnemar_alpha}")
    outcome = "**fail**" if doc.gate_failed else "**pass**"
    paragraphs = [f"Fails on {' or '.join(limits)}, or on a row with nothing compared: {outcome}."]
    paragraphs += [literal(reason) for reason in doc.gate_reasons]
    return Section(GATE_KEY, "Gate", paragraphs=paragraphs, terminal=False)


def compare_sections(doc: CompareDoc, changes: Sequence[ChangedUnit]) -> list[Section]:
    """The gate's outcome (when one was set), then the drift: who met whom, what was not compared,
    the tables."""
    matched = "; ".join(
        f"{literal(m.judge_a)} with {literal(m.judge_b)} ({m.how})" if m.judge_a != m.judge_b
        else f"{literal(m.judge_a)} ({m.how})"
        for m in doc.matches
    )  # fmt: skip
    paragraphs = [
        f"Run A {literal(doc.run_a)} against run B {literal(doc.run_b)}: {doc.items_common:,} item(s) in "
        f"both (A {doc.items_a:,}, B {doc.items_b:,}). Judges compared: {matched}.",
        *_coverage_lines(doc),
        *doc.notes,
    ]
    pairs = [r for r in doc.drift if r.kind == "pair"]
    probes = [r for r in doc.drift if r.kind == "tie_probe"]
    tables = [_pair_table(pairs, doc.confidence)] if pairs else []
    if probes:
        tables.append(_probe_table(probes, doc.confidence))
    if doc.metrics:
        tables.append(_metrics_table(doc.metrics))
    tables.append(_changes_table(changes, doc.changed, doc.changed_file))
    drift = Section(DRIFT_KEY, "Drift between runs", paragraphs=paragraphs, tables=tables)
    gate = _gate_section(doc)
    return [drift] if gate is None else [gate, drift]
