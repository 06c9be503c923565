"""Language flips: flip rate by kind, gold-correctness flips and exact McNemar, per condition pair.

Unit: a (judge, item, order) with a valid verdict in both conditions of the pair (PROTOCOL §4). A tie
is a verdict of its own; the kinds split a flip into a reversal (one output for the other) and a
choice turning into a tie or back.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgebench.analysis import stats
from judgebench.analysis.cell_sums import CELL, proportion, sum_cells
from judgebench.analysis.frame import Layout, concat_labelled
from judgebench.records import ConditionPair, Metric
from judgebench.records.metrics import PFamily

CHOICES = ("1", "2")
SUMMED = ["both", "flip", "lab", "gold_flip", "b", "c", "reversal", "to_tie", "from_tie"]


def flip_rows(p: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """One row per (judge, item, order, condition pair) with the agreement flags of PROTOCOL §4."""
    if not pairs:
        return pd.DataFrame()
    idx = ["judge", "item_id", "order"]
    verdict = p.set_index([*idx, "condition"])["vcode"].unstack("condition")
    correct = p.set_index([*idx, "condition"])["correct_code"].unstack("condition")
    out = []
    for c1, c2 in pairs:
        if c1 not in verdict.columns or c2 not in verdict.columns:
            continue
        a, b = verdict[c1], verdict[c2]
        ca, cb = correct[c1], correct[c2]
        both = a.notna() & b.notna()
        lab = both & ca.notna() & cb.notna()
        a_choice, b_choice = a.isin(CHOICES), b.isin(CHOICES)
        frame = pd.DataFrame(
            {
                "both": both.astype("int8"),
                "flip": (both & a.ne(b)).astype("int8"),
                "lab": lab.astype("int8"),
                "gold_flip": (lab & ca.ne(cb)).astype("int8"),
                "b": (lab & ca.eq(1.0) & cb.eq(0.0)).astype("int8"),
                "c": (lab & ca.eq(0.0) & cb.eq(1.0)).astype("int8"),
                "reversal": (both & a_choice & b_choice & a.ne(b)).astype("int8"),
                "to_tie": (both & a_choice & b.eq("tie")).astype("int8"),
                "from_tie": (both & a.eq("tie") & b_choice).astype("int8"),
            }
        )
        out.append((frame.reset_index(), str(ConditionPair(c1, c2))))
    return concat_labelled(out, "condition")


def flip_records(layout: Layout, flips: pd.DataFrame, confidence: float) -> pd.DataFrame:
    agg = sum_cells(layout, flips, SUMMED)
    if agg.empty:
        return pd.DataFrame()
    parts = [
        proportion(agg, Metric.FLIP_RATE, "flip", "both", confidence),
        proportion(agg, Metric.GOLD_FLIP_RATE, "gold_flip", "lab", confidence),
        proportion(agg, Metric.FLIP_REVERSAL_RATE, "reversal", "both", confidence),
        proportion(agg, Metric.FLIP_TO_TIE_RATE, "to_tie", "both", confidence),
        proportion(agg, Metric.FLIP_FROM_TIE_RATE, "from_tie", "both", confidence),
    ]
    mc = agg[CELL].copy()
    mc["metric"] = Metric.MCNEMAR
    mc["value"] = (agg["b"] - agg["c"]).astype(float)
    mc["n"] = agg["lab"].astype(int)
    mc["b"] = agg["b"].astype(int)
    mc["c"] = agg["c"].astype(int)
    mc["p"] = stats.mcnemar_exact_many(agg["b"], agg["c"])  # PROTOCOL §4: p = 1 when b + c = 0
    mc["p_family"] = PFamily.MCNEMAR
    parts.append(mc)
    return pd.concat(parts, ignore_index=True)
