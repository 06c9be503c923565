"""Position consistency: per condition, and its paired increase from en to each target condition.

Unit: a (judge, item) with both orders' verdicts valid; inconsistent when they differ after mapping
back to outputs (a tie against a choice counts). The increase en->c uses only items valid in both
orders in en and in c, so it is a paired difference with an exact McNemar p.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgebench.analysis import stats
from judgebench.analysis.cell_sums import CELL, paired_diff, proportion, sum_cells
from judgebench.analysis.findings import SOURCE
from judgebench.analysis.frame import Layout, concat_labelled
from judgebench.records import ConditionPair, Metric
from judgebench.records.metrics import PFamily


def position_rows(p: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, item, condition): are both orders valid, and do their verdicts differ?"""
    wide = p.set_index(["judge", "item_id", "condition", "order"])["vcode"].unstack("order")
    for order in ("orig", "swap"):
        if order not in wide.columns:
            wide[order] = np.nan
    both = wide["orig"].notna() & wide["swap"].notna()
    frame = pd.DataFrame(
        {"pboth": both.astype("int8"), "incon": (both & wide["orig"].ne(wide["swap"])).astype("int8")}
    )
    return frame.reset_index()


def position_increase_rows(pos: pd.DataFrame, conditions: Sequence[str]) -> pd.DataFrame:
    """Per (judge, item, en->c): items with both orders valid in en and in c, inconsistent in each."""
    if SOURCE not in conditions or pos.empty:
        return pd.DataFrame()
    both = pos.set_index(["judge", "item_id", "condition"])["pboth"].unstack("condition", fill_value=0)
    incon = pos.set_index(["judge", "item_id", "condition"])["incon"].unstack("condition", fill_value=0)
    out = []
    for c in conditions:
        if c == SOURCE or c not in both.columns or SOURCE not in both.columns:
            continue
        paired = (both[SOURCE] == 1) & (both[c] == 1)
        ic = paired & (incon[c] == 1)
        ie = paired & (incon[SOURCE] == 1)
        frame = pd.DataFrame(
            {
                "paired": paired.astype("int8"),
                "inc_c": ic.astype("int8"),
                "inc_en": ie.astype("int8"),
                "b": (ic & ~ie).astype("int8"),
                "c": (ie & ~ic).astype("int8"),
            }
        )
        out.append((frame.reset_index(), str(ConditionPair(SOURCE, c))))
    return concat_labelled(out, "condition")


def direction_rows(p: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, item, condition) for the direction of position bias: a = valid orders in
    which the first-shown answer ("A") won, v = valid orders, and, for items with both orders valid,
    whether "A" won both (aa) or "B" won both (bb)."""
    valid = p["valid"] == 1
    first = (valid & p["winner"].eq("A")).astype(int)
    second = (valid & p["winner"].eq("B")).astype(int)
    frame = p.assign(a=first, bwin=second, v=valid.astype(int))
    g = frame.groupby(["judge", "item_id", "condition"], sort=False)[["a", "bwin", "v"]].sum().reset_index()
    both = g["v"] == 2
    return g.assign(
        pboth=both.astype(int),
        aa=(both & (g["a"] == 2)).astype(int),
        bb=(both & (g["bwin"] == 2)).astype(int),
        a2=g["a"] ** 2,
        av=g["a"] * g["v"],
        v2=g["v"] ** 2,
        items=(g["v"] > 0).astype(int),
    )


def direction_records(
    layout: Layout, rows: pd.DataFrame, confidence: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The positional McNemar records (b = items "A" won in both orders, c = "B" in both, exact p), and
    per cell the item-clustered interval and test of the first-pick rate (merged into position_a_rate)."""
    if rows.empty:
        return pd.DataFrame(), pd.DataFrame()
    agg = sum_cells(layout, rows, ["pboth", "aa", "bb", "a", "v", "a2", "av", "v2", "items"])
    mcnemar = agg[CELL].copy()
    b, c = agg["aa"].to_numpy(dtype=int), agg["bb"].to_numpy(dtype=int)
    mcnemar["metric"] = Metric.POSITIONAL_MCNEMAR
    mcnemar["value"] = (b - c).astype(float)
    mcnemar["n"] = agg["pboth"].to_numpy(dtype=int)
    mcnemar["b"], mcnemar["c"] = b, c
    mcnemar["p"] = stats.mcnemar_exact_many(b, c)
    mcnemar["p_family"] = PFamily.POSITION_DIRECTION
    low, high, p = stats.clustered_ratio(
        [agg[x] for x in ("a", "v", "a2", "av", "v2")], agg["items"], confidence
    )
    clustered = agg[CELL].copy()
    clustered["ci_low_clustered"], clustered["ci_high_clustered"], clustered["p_clustered"] = low, high, p
    return mcnemar, clustered


def position_records(layout: Layout, pos: pd.DataFrame, inc: pd.DataFrame, confidence: float) -> pd.DataFrame:
    parts = []
    agg = sum_cells(layout, pos, ["pboth", "incon"])
    if not agg.empty:
        parts.append(proportion(agg, Metric.POSITION_INCONSISTENCY, "incon", "pboth", confidence))
    agg_inc = sum_cells(layout, inc, ["paired", "inc_c", "inc_en", "b", "c"])
    if not agg_inc.empty:
        metric = Metric.POSITION_INCONSISTENCY_INCREASE
        parts.append(paired_diff(agg_inc, metric, "paired", PFamily.POSITION_INCREASE, confidence))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
