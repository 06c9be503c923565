"""Cells of the report's tables: how a number, an interval, a p-value or a count is written.

Every section builds its rows from these, so the same record reads the same in every table.
"""

from __future__ import annotations

from judgebench.analysis.findings import MEAN_JUDGE
from judgebench.records import MetricRecord
from judgebench.report.content import DASH, Cell


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


def value_cell(record: MetricRecord | None, *, with_ci: bool = True) -> Cell:
    if record is None:
        return Cell(DASH, "muted")
    if record.value is None:
        return Cell(f"{DASH} (n={record.n})", "muted")
    if not with_ci:
        return Cell(pct(record.value))
    return Cell(pct_ci(record.value, record.ci_low, record.ci_high), short=pct(record.value))


def boot_cell(record: MetricRecord | None) -> Cell:
    """The item-level interval verdicts read (bootstrap union score interval on the items) where the
    record has one, else its item-clustered bootstrap."""
    text = ""
    if record is not None:
        low, high = (record.item_low, record.item_high) if record.item_low is not None else (
            record.boot_low, record.boot_high,
        )  # fmt: skip
        text = interval(low, high)
    return Cell(text or DASH, None if text else "muted")


def n_cell(record: MetricRecord | None) -> Cell:
    if record is None:
        return Cell(DASH, "muted")
    if record.judge == MEAN_JUDGE:  # INTERFACE: a mean record's n is the number of judges
        return Cell(f"{record.n} judges", "muted")
    return Cell(count(record.n))


def judge_cell(judge: str) -> Cell:
    if judge == MEAN_JUDGE:
        return Cell("mean of judges", "muted")
    return Cell(judge, "strong")


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
