"""Calibration of stated confidence against strict correctness: Brier score and 10-bin ECE.

Only valid, labelled pair judgments with a stated confidence count. ECE over resampled items is
sum_bins |W @ gap| / (W @ count), so `ece_matrices` lets it bootstrap with the same item weights as
every ratio metric (`clustered.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgebench.analysis.cell_sums import CELL, mean_record, sum_cells
from judgebench.analysis.frame import Layout
from judgebench.records import Metric

BINS = 10


def _bins(confidence: np.ndarray[Any, np.dtype[Any]]) -> np.ndarray[Any, np.dtype[np.int_]]:
    """Equal-width confidence bins; the last one includes 1.0."""
    bins: np.ndarray[Any, np.dtype[np.int_]] = np.minimum((confidence * BINS).astype(int), BINS - 1)
    return bins


def calibration_records(layout: Layout, p: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Brier score (with a normal interval) and 10-bin ECE of stated confidence vs strict correctness."""
    rows = p.loc[p["cal_n"] == 1, ["judge", "item_id", "condition", "cal_conf", "cal_y"]]
    if rows.empty:
        return pd.DataFrame()
    rows["sq"] = (rows["cal_conf"] - rows["cal_y"]) ** 2
    rows["sq2"] = rows["sq"] ** 2
    rows["bin"] = _bins(rows["cal_conf"].to_numpy())
    rows["one"] = 1
    agg = sum_cells(layout, rows, ["sq", "sq2", "one"])
    brier = mean_record(agg, Metric.BRIER, total="sq", squares="sq2", n="one", confidence=confidence)
    brier["ci_low"] = np.clip(brier["ci_low"], 0.0, 1.0)
    bins = sum_cells(layout, rows, ["cal_conf", "cal_y", "one"], extra=["bin"]).set_index([*CELL, "bin"])
    bins["gap"] = (bins["cal_conf"] - bins["cal_y"]).abs()
    per_cell = bins.groupby(level=CELL, sort=False, observed=True)[["gap", "one"]].sum().reset_index()
    ece = per_cell[CELL].copy()
    ece["metric"] = Metric.ECE
    ece["value"] = per_cell["gap"] / per_cell["one"]
    ece["n"] = per_cell["one"].astype(int)
    return pd.concat([brier, ece], ignore_index=True)


def ece_matrices(
    layout: Layout, p: pd.DataFrame
) -> tuple[pd.DataFrame, np.ndarray[Any, np.dtype[np.float64]], np.ndarray[Any, np.dtype[np.float64]]]:
    """Per item and judge x condition: summed (confidence - correctness) in each of 10 bins, and the count.

    Returns the (judge, condition, metric) keys, the items x (keys x 10) gaps and the items x keys counts.
    """
    wanted = ["judge", "condition", "item_id", "cal_conf", "cal_y"]
    cal = p.loc[p["cal_n"] == 1, wanted] if "cal_n" in p.columns else p.iloc[0:0]
    keys = cal[["judge", "condition"]].drop_duplicates().reset_index(drop=True)
    n_items, n_keys = len(layout.items), len(keys)
    gap = np.zeros((n_items, n_keys * BINS))
    count = np.zeros((n_items, n_keys))
    if n_keys:
        key_id = cal.merge(keys.reset_index(), on=["judge", "condition"], how="left")["index"].to_numpy()
        pos = {item: i for i, item in enumerate(layout.items)}
        rows = cal["item_id"].map(pos).to_numpy(dtype=int)
        conf = cal["cal_conf"].to_numpy(dtype=float)
        np.add.at(gap, (rows, key_id * BINS + _bins(conf)), conf - cal["cal_y"].to_numpy(dtype=float))
        np.add.at(count, (rows, key_id), 1.0)
    return keys.assign(metric=Metric.ECE), gap, count
