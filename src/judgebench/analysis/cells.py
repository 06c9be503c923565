"""Record tables from summed cells: one row per judge x condition x subset x table, built column-wise.

A family's per-unit rows are summed per cell once (`sum_cells`), then each record kind is a handful
of array operations over every cell: proportions with Wilson intervals, means with the normal
interval of PROTOCOL §4, paired differences with an exact McNemar p.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgebench.analysis import stats
from judgebench.analysis.frame import Layout
from judgebench.records.metrics import CIMethod, PFamily

CELL = ["judge", "condition", "subset", "filtered"]


def sum_cells(layout: Layout, rows: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """Per-unit columns summed per cell (each subset group, unfiltered and filtered)."""
    if rows.empty:
        return pd.DataFrame(columns=[*CELL, *cols])
    expanded = layout.expand(rows[["judge", "item_id", "condition", *cols]])
    return expanded.groupby(CELL, sort=False, observed=True)[cols].sum().reset_index()


def proportion(agg: pd.DataFrame, metric: str | pd.Series, k: str, n: str, confidence: float) -> pd.DataFrame:
    """Proportion records k / n with Wilson intervals, vectorised over every cell.

    `metric` is one name, or one per cell (aligned with `agg`)."""
    if agg.empty:
        return pd.DataFrame()
    kk = agg[k].to_numpy(dtype=float)
    nn = agg[n].to_numpy(dtype=float)
    low, high = stats.wilson(kk, nn, confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(nn > 0, kk / np.where(nn > 0, nn, 1.0), np.nan)
    out = agg[CELL].copy()
    out["metric"] = metric
    out["value"] = value
    out["n"] = nn.astype(int)
    out["k"] = kk.astype(int)
    out["ci_low"] = low
    out["ci_high"] = high
    out["ci_method"] = CIMethod.WILSON
    return out


def mean_record(
    agg: pd.DataFrame, metric: str, *, total: str, squares: str, n: str, confidence: float
) -> pd.DataFrame:
    """Mean with the normal interval mean +- z s / sqrt(n), s the sample sd (PROTOCOL §4), from the
    per-cell sum of the values (`total`), of their squares and their count."""
    sums = agg[total].to_numpy(dtype=float)
    sums_sq = agg[squares].to_numpy(dtype=float)
    nn = agg[n].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(nn > 0, sums / np.where(nn > 0, nn, 1.0), np.nan)
        var = np.where(nn > 1, (sums_sq - nn * mean**2) / np.where(nn > 1, nn - 1.0, 1.0), np.nan)
    sd = np.sqrt(np.clip(var, 0.0, None))
    low, high = stats.normal_mean_ci(mean, sd, nn, confidence)
    out = agg[CELL].copy()
    out["metric"] = metric
    out["value"] = mean
    out["n"] = nn.astype(int)
    out["ci_low"] = low
    out["ci_high"] = high
    out["ci_method"] = CIMethod.NORMAL
    return out


def paired_diff(
    agg: pd.DataFrame, metric: str, n_col: str, family: PFamily, confidence: float
) -> pd.DataFrame:
    """(b - c) / n with an exact McNemar p on the discordant units and a Wald interval (bootstrap later)."""
    out = agg[CELL].copy()
    n = agg[n_col].to_numpy(dtype=int)
    b = agg["b"].to_numpy(dtype=int)
    c = agg["c"].to_numpy(dtype=int)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["value"] = np.where(n > 0, (b - c) / np.where(n > 0, n, 1), np.nan)
    out["ci_low"], out["ci_high"] = stats.paired_diff_wald(b, c, n, confidence)
    out["ci_method"] = CIMethod.WALD
    out["metric"] = metric
    out["n"] = n
    out["b"] = b
    out["c"] = c
    out["p"] = np.where(n > 0, stats.mcnemar_exact_many(b, c), np.nan)
    out["p_family"] = family
    return out
