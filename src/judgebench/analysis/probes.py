"""Probe results (PROTOCOL §7): the pooled records of multi-instance probes, and the probe table.

A probe's own flips, McNemar and readiness records are the ones every condition gets (`en->length`,
`zh->zh+length`); here they are gathered into one row per judge x probe x base, read against the
readiness flip-rate limit with the same interval readiness uses (item-level: small_n.py). A row is
flagged when that interval lies above the limit and its limit test (score test on the items) stays
below the level after Holm's adjustment over the judge's probe rows: the chance that a judge whose
probes all sit at the limit gets any flag stays at the level, however many probes it has. A probe
with several instances (the template probe: template-1..K) also gets its flips pooled over the
instances, with an item-clustered interval, and the share of items whose verdict is not the same under
every instance and the base.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

from judgebench.analysis.findings import (
    ALL,
    MEAN_JUDGE,
    SOURCE,
    LengthRow,
    ProbeRow,
    ProbeStatus,
    ReportSettings,
    is_comparison,
    pair_name,
)
from judgebench.analysis.small_n import decisive, holm, p_above_limit, union, wilson_items
from judgebench.analysis.stats import clustered_ratio, wilson
from judgebench.records import Metric, MetricRecord
from judgebench.records.condition_specs import ProbeOrigin
from judgebench.records.metrics import CIMethod


def _groups(probes: Mapping[str, ProbeOrigin]) -> dict[ProbeOrigin, list[str]]:
    groups: dict[ProbeOrigin, list[str]] = {}
    for cond, origin in probes.items():
        groups.setdefault(origin, []).append(cond)
    return groups


def pooled_probe_records(
    flips: pd.DataFrame,
    probes: Mapping[str, ProbeOrigin],
    flagged: Collection[str],
    confidence: float,
) -> list[MetricRecord]:
    """`probe_flip_rate` and `probe_dependent_share` per judge and base->probe (subset `all`, both
    tables) for every probe with more than one instance among the judged pairs."""
    if flips.empty:
        return []
    out: list[MetricRecord] = []
    for origin, conds in _groups(probes).items():
        pairs = {pair_name(origin.base, c) for c in conds}
        rows = flips[flips["condition"].isin(pairs)]
        if len(conds) < 2 or rows.empty:
            continue
        for filtered in (False, True):
            part = rows[~rows["item_id"].isin(flagged)] if filtered else rows
            for judge, own in part.groupby("judge", sort=False):
                out += _pooled(str(judge), own, pair_name(origin.base, origin.probe), filtered, confidence)
    return out


def _pooled(
    judge: str, rows: pd.DataFrame, name: str, filtered: bool, confidence: float
) -> list[MetricRecord]:
    valid = rows[rows["both"] == 1]
    per_item = valid.groupby("item_id")["flip"].agg(["sum", "count"])
    if per_item.empty:
        return []
    a, v = per_item["sum"].to_numpy(float), per_item["count"].to_numpy(float)
    sums = [a.sum(), v.sum(), (a * a).sum(), (a * v).sum(), (v * v).sum()]
    low, high, _ = clustered_ratio(sums, len(per_item), confidence)
    k_dep = int((per_item["sum"] > 0).sum())
    n_items = len(per_item)
    dep_low, dep_high = wilson(k_dep, n_items, confidence)
    value = float(a.sum() / v.sum())
    # the Wald (CR1) interval is a point at zero flips: the item-level one adds Wilson on the items
    item_low, item_high = union((low, high), wilson_items(value, n_items, confidence))
    return [
        MetricRecord(
            judge=judge, condition=name, subset=ALL, filtered=filtered,
            metric=Metric.PROBE_FLIP_RATE, value=value, n=int(v.sum()),
            k=int(a.sum()), ci_low=_num(low[0]), ci_high=_num(high[0]), ci_method=CIMethod.WALD,
            n_items=n_items, item_low=_num(item_low[0]), item_high=_num(item_high[0]),
        ),
        MetricRecord(
            judge=judge, condition=name, subset=ALL, filtered=filtered,
            metric=Metric.PROBE_DEPENDENT_SHARE, value=k_dep / n_items, n=n_items, k=k_dep,
            ci_low=_num(dep_low[0]), ci_high=_num(dep_high[0]), ci_method=CIMethod.WILSON,
        ),
    ]  # fmt: skip


def _num(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _status(row: ProbeRow, settings: ReportSettings) -> ProbeStatus:
    """flagged: the interval lies above the limit and the limit test survives Holm over the judge's
    probe rows; within: the interval is at or below the limit on enough items; else inconclusive."""
    alpha = 1.0 - settings.confidence
    if row.ci_low is not None and row.ci_low > row.limit and row.p_holm is not None and row.p_holm < alpha:
        return "flagged"
    enough = row.n_items is None or row.n_items >= settings.min_items
    if row.ci_high is not None and row.ci_high <= row.limit and enough:
        return "within"
    return "inconclusive"


def _interval(rec: MetricRecord) -> tuple[float | None, float | None, str]:
    """The interval readiness reads: item-level where the record has one (small_n.decisive)."""
    if rec.item_low is None and rec.boot_low is None and rec.ci_method == CIMethod.WALD:
        return rec.ci_low, rec.ci_high, "item-clustered (CR1)"
    return decisive(rec)


Table = dict[tuple[str, str, str], MetricRecord]


def _row(rec: MetricRecord, origin: ProbeOrigin, cond: str, pair: str, limit: float) -> ProbeRow:
    """A probe row with its interval and the raw limit test (status and Holm come per judge later)."""
    low, high, method = _interval(rec)
    p = None
    if rec.n_items is not None and rec.value is not None:
        p = float(p_above_limit(rec.value, rec.n_items, limit)[0])
    return ProbeRow(
        judge=rec.judge, probe=origin.probe, base=origin.base, condition=cond, pair=pair,
        value=rec.value, n=rec.n, n_items=rec.n_items, ci_low=low, ci_high=high, ci_method=method,
        limit=limit, status="inconclusive", p_limit=p,
    )  # fmt: skip


def _instance_row(table: Table, judge: str, origin: ProbeOrigin, cond: str, limit: float) -> ProbeRow | None:
    pair = pair_name(origin.base, cond)
    flip = table.get((judge, pair, Metric.FLIP_RATE))
    if flip is None:
        return None
    row = _row(flip, origin, cond, pair, limit)
    test = table.get((judge, pair, Metric.MCNEMAR))
    if test is not None:
        row.mcnemar_b, row.mcnemar_c, row.mcnemar_p = test.b, test.c, test.p
    return row


def _decide(rows: list[ProbeRow], settings: ReportSettings) -> None:
    """Holm over each judge's probe rows (its family), then each row's status."""
    for judge in dict.fromkeys(r.judge for r in rows):
        own = [r for r in rows if r.judge == judge and r.p_limit is not None]
        for row, adjusted in zip(own, holm([r.p_limit or 1.0 for r in own]), strict=True):
            row.p_holm = adjusted
    for row in rows:
        row.status = _status(row, settings)


def probe_rows(
    records: list[MetricRecord], probes: Mapping[str, ProbeOrigin], settings: ReportSettings
) -> list[ProbeRow]:
    """The probe table: per probe and base, each instance's rows (one per judge), then the pooled."""
    wanted = {Metric.FLIP_RATE, Metric.MCNEMAR, Metric.PROBE_FLIP_RATE, Metric.PROBE_DEPENDENT_SHARE}
    table: Table = {
        (r.judge, r.condition, r.metric): r
        for r in records
        if r.subset == ALL
        and r.filtered == settings.readiness_filtered
        and r.metric in wanted
        and r.judge != MEAN_JUDGE
        and not is_comparison(r.judge)
    }
    judges = list(dict.fromkeys(j for j, _, _ in table))
    rows: list[ProbeRow] = []
    limit = settings.max_flip_rate
    for origin, conds in _groups(probes).items():
        for cond, judge in [(c, j) for c in conds for j in judges]:
            row = _instance_row(table, judge, origin, cond, limit)
            if row is not None:
                rows.append(row)
        for judge in judges:
            name = pair_name(origin.base, origin.probe)
            pooled = table.get((judge, name, Metric.PROBE_FLIP_RATE))
            dep = table.get((judge, name, Metric.PROBE_DEPENDENT_SHARE))
            if pooled is not None:
                row = _row(pooled, origin, origin.probe, name, limit)
                if dep is not None:
                    row.dependent_share, row.dependent_low = dep.value, dep.ci_low
                    row.dependent_high = dep.ci_high
                rows.append(row)
    _decide(rows, settings)
    return rows


def length_rows(df: pd.DataFrame, categories: Mapping[str, str], confidence: float) -> list[LengthRow]:
    """Per judge and length category, the en strict accuracy over answered pair judgments (an invalid
    answer is wrong, PROTOCOL §4), with a Wilson interval over judgments."""
    if df.empty or not categories:
        return []
    en = df[
        (df["kind"] == "pair") & (df["condition"] == SOURCE) & df["verdict"].notna() & df["label"].notna()
    ]
    en = en[en["item_id"].isin(categories.keys())]
    if en.empty:
        return []
    frame = pd.DataFrame(
        {
            "judge": en["judge"].to_numpy(),
            "item_id": en["item_id"].to_numpy(),
            "category": en["item_id"].map(categories).to_numpy(),
            "correct": (en["verdict"] == en["label"].map({1.0: "1", 2.0: "2"})).to_numpy(int),
        }
    )
    out: list[LengthRow] = []
    for (judge, category), g in frame.groupby(["judge", "category"], sort=True):
        k, n = int(g["correct"].sum()), len(g)
        low, high = wilson(k, n, confidence)
        out.append(
            LengthRow(
                judge=str(judge), category=str(category), items=int(g["item_id"].nunique()), n=n,
                value=k / n, ci_low=_num(low[0]), ci_high=_num(high[0]),
            )
        )  # fmt: skip
    return out
