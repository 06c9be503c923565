"""The longer-answer win rate (issue 43): how often a judge picks the longer of two outputs, from the
judgments a run already holds, no new call. FastChat#3911 measured it on MT-Bench's GPT-4 judgments
(68%); a judge indifferent to length, on outputs whose quality does not track length, sits near 0.5.

Over valid non-tie pair verdicts (both orders count) on items whose outputs differ in length, per judge,
condition and subset (`all` and each subset); Wilson interval.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from judgebench.analysis.stats import wilson
from judgebench.records.items import Item
from judgebench.records.metrics import CIMethod, Metric, MetricRecord


def longer_sides(items: list[Item]) -> dict[str, str]:
    """Item -> the longer output's number (`1`/`2`) by characters; items of equal length left out."""
    out = {}
    for item in items:
        a, b = len(item.output_1), len(item.output_2)
        if a != b:
            out[item.id] = "1" if a > b else "2"
    return out


def longer_win_records(
    frame: pd.DataFrame, longer: Mapping[str, str], *, confidence: float = 0.95
) -> list[MetricRecord]:
    """One `longer_win_rate` record per judge, condition and subset (and `all`)."""
    if not longer or frame.empty:
        return []
    calls = frame[(frame["kind"] == "pair") & frame["verdict"].isin(["1", "2"])]
    calls = calls[calls["item_id"].isin(longer.keys())]
    if calls.empty:
        return []
    # plain strings: categorical columns of different categories (one item: one category) cannot compare
    won = (calls["verdict"].astype(str) == calls["item_id"].astype(str).map(longer)).astype(int)
    table = pd.DataFrame(
        {"judge": calls["judge"], "condition": calls["condition"], "subset": calls["subset"], "won": won}
    )
    out: list[MetricRecord] = []
    for (judge, condition), group in table.groupby(["judge", "condition"], sort=True):
        parts = [("all", group), *((str(s), g) for s, g in group.groupby("subset", sort=True))]
        for subset, part in parts:
            k, n = int(part["won"].sum()), len(part)
            low, high = wilson(k, n, confidence)
            out.append(
                MetricRecord(
                    judge=str(judge),
                    metric=Metric.LONGER_WIN_RATE,
                    condition=str(condition),
                    subset=subset,
                    filtered=False,
                    value=k / n,
                    n=n,
                    k=k,
                    ci_low=float(low[0]),
                    ci_high=float(high[0]),
                    ci_method=CIMethod.WILSON,
                )
            )
    return out
