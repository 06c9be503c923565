"""Position consistency: per condition, and its paired increase from en to each target condition.

Unit: a (judge, item) with both orders' verdicts valid; inconsistent when they differ after mapping
back to outputs (a tie against a choice counts). The increase en->c uses only items valid in both
orders in en and in c, so it is a paired difference with an exact McNemar p.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgebench.analysis.cells import paired_diff, proportion, sum_cells
from judgebench.analysis.frame import Layout
from judgebench.analysis.model import SOURCE, pair_name
from judgebench.records import Metric
from judgebench.records.metrics import PFamily


def position_rows(p: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, item, condition): are both orders valid, and do their verdicts differ?"""
    wide = p.set_index(["judge", "item_id", "condition", "order"])["vcode"].unstack("order")
    for order in ("orig", "swap"):
        if order not in wide.columns:
            wide[order] = np.nan
    both = wide["orig"].notna() & wide["swap"].notna()
    frame = pd.DataFrame(
        {"pboth": both.astype(int), "incon": (both & wide["orig"].ne(wide["swap"])).astype(int)}
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
                "paired": paired.astype(int),
                "inc_c": ic.astype(int),
                "inc_en": ie.astype(int),
                "b": (ic & ~ie).astype(int),
                "c": (ie & ~ic).astype(int),
            }
        )
        out.append(frame.reset_index().assign(condition=pair_name(SOURCE, c)))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


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
