"""Probe results (PROTOCOL §7): the pooled records of multi-instance probes, and the probe table.

A probe's own flips, McNemar and readiness records are the ones every condition gets (`en->length`,
`zh->zh+length`); here they are gathered into one row per judge x probe x base, read against the
readiness flip-rate limit with the same interval readiness uses. A probe with several instances (the
template probe: template-1..K) also gets its flips pooled over the instances, with an item-clustered
interval, and the share of items whose verdict is not the same under every instance and the base.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

from judgebench.analysis.model import (
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
from judgebench.analysis.stats import clustered_ratio, wilson
from judgebench.records import Metric, MetricRecord
from judgebench.records.conditions import ProbeOrigin
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
    return [
        MetricRecord(
            judge=judge, condition=name, subset=ALL, filtered=filtered,
            metric=Metric.PROBE_FLIP_RATE, value=float(a.sum() / v.sum()), n=int(v.sum()),
            k=int(a.sum()), ci_low=_num(low[0]), ci_high=_num(high[0]), ci_method=CIMethod.WALD,
        ),
        MetricRecord(
            judge=judge, condition=name, subset=ALL, filtered=filtered,
            metric=Metric.PROBE_DEPENDENT_SHARE, value=k_dep / n_items, n=n_items, k=k_dep,
            ci_low=_num(dep_low[0]), ci_high=_num(dep_high[0]), ci_method=CIMethod.WILSON,
        ),
    ]  # fmt: skip


def _num(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _status(low: float | None, high: float | None, limit: float) -> ProbeStatus:
    if low is not None and low > limit:
        return "flagged"
    if high is not None and high <= limit:
        return "within"
    return "inconclusive"


def _interval(rec: MetricRecord) -> tuple[float | None, float | None, str]:
    """The interval readiness reads: item-clustered bootstrap when there is one, else the record's."""
    if rec.boot_low is not None and rec.boot_high is not None:
        return rec.boot_low, rec.boot_high, "item-clustered bootstrap"
    if rec.ci_method == CIMethod.WALD:
        return rec.ci_low, rec.ci_high, "item-clustered (CR1)"
    return rec.ci_low, rec.ci_high, str(rec.ci_method or "interval")


Table = dict[tuple[str, str, str], MetricRecord]


def _instance_row(table: Table, judge: str, origin: ProbeOrigin, cond: str, limit: float) -> ProbeRow | None:
    pair = pair_name(origin.base, cond)
    flip = table.get((judge, pair, Metric.FLIP_RATE))
    if flip is None:
        return None
    low, high, method = _interval(flip)
    test = table.get((judge, pair, Metric.MCNEMAR))
    return ProbeRow(
        judge=judge, probe=origin.probe, base=origin.base, condition=cond, pair=pair,
        value=flip.value, n=flip.n, ci_low=low, ci_high=high, ci_method=method,
        limit=limit, status=_status(low, high, limit),
        mcnemar_b=test.b if test else None, mcnemar_c=test.c if test else None,
        mcnemar_p=test.p if test else None,
    )  # fmt: skip


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
                low, high, method = _interval(pooled)
                rows.append(
                    ProbeRow(
                        judge=judge, probe=origin.probe, base=origin.base, condition=origin.probe, pair=name,
                        value=pooled.value, n=pooled.n, ci_low=low, ci_high=high, ci_method=method,
                        limit=limit, status=_status(low, high, limit),
                        dependent_share=dep.value if dep else None,
                        dependent_low=dep.ci_low if dep else None,
                        dependent_high=dep.ci_high if dep else None,
                    )
                )  # fmt: skip
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
