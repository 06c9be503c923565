"""Tie-probes: the gold output in en against the same output in the target language, both orders.

Shares are over valid probes (PROTOCOL §4): en wins, target wins (named after the target:
tie_probe_zh), ties; the en share of the decisive probes EN / (EN + target) with an exact binomial
test against 0.5; and the invalid rate over answered probes.
"""

from __future__ import annotations

import pandas as pd

from judgebench.analysis import stats
from judgebench.analysis.cell_sums import proportion, sum_cells
from judgebench.analysis.findings import SOURCE
from judgebench.analysis.frame import Layout
from judgebench.records import Metric
from judgebench.records.metrics import TIE_PROBE_PREFIX, PFamily

SUMMED = ["answered", "invalid", "valid", "en", "target", "tie", "decisive"]


def tie_probe_records(layout: Layout, df: pd.DataFrame, confidence: float) -> pd.DataFrame:
    t = df[df["kind"] == "tie_probe"].copy()
    if t.empty:
        return pd.DataFrame()
    v = t["verdict"]
    answered = v.notna()
    invalid = v.eq("invalid")
    valid = answered & ~invalid
    t["answered"] = answered.astype(int)
    t["invalid"] = invalid.astype(int)
    t["valid"] = valid.astype(int)
    t["en"] = (valid & v.eq(SOURCE)).astype(int)
    t["target"] = (valid & (v.astype(object) == t["condition"].astype(object))).astype(int)
    t["tie"] = (valid & v.eq("tie")).astype(int)
    t["decisive"] = t["en"] + t["target"]
    agg = sum_cells(layout, t, SUMMED)
    # the target's share is named after the target condition: tie_probe_zh for zh, tie_probe_ja for ja
    target_metric = TIE_PROBE_PREFIX + agg["condition"].astype(str)
    share = proportion(agg, Metric.TIE_PROBE_EN_SHARE, "en", "decisive", confidence)
    share["p"] = stats.binom_test_half_many(agg["en"], agg["decisive"])
    share["p_family"] = PFamily.TIE_PROBE
    parts = [
        proportion(agg, Metric.TIE_PROBE_EN, "en", "valid", confidence),
        proportion(agg, Metric.TIE_PROBE_TIE, "tie", "valid", confidence),
        proportion(agg, Metric.TIE_PROBE_INVALID_RATE, "invalid", "answered", confidence),
        proportion(agg, target_metric, "target", "valid", confidence),
        share,
    ]
    return pd.concat(parts, ignore_index=True)
