"""Item-clustered bootstrap intervals for every record table cell (the glue around `bootstrap.py`).

Each bootstrapped metric is a ratio of per-item sums (`long_sums`); one weight matrix per item set
(subset group x table) resamples all of them at once, and ECE with the same weights. Paired
differences and ECE take the clustered interval as their main one; every other metric keeps its
Wilson or normal interval and reports the clustered one beside it (boot_low, boot_high).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgebench.analysis.bootstrap import percentile_interval, replicate_ratios, resample_weights
from judgebench.analysis.calibration import BINS, ece_matrices
from judgebench.analysis.frame import Layout, UnitTables
from judgebench.analysis.model import ReportSettings
from judgebench.records import Metric
from judgebench.records.metrics import CIMethod

KEYS = ["judge", "metric", "condition"]
BOOT_COLUMNS = [*KEYS, "subset", "filtered", "boot_low", "boot_high"]
# metrics whose only interval is the clustered one
BOOTSTRAP_MAIN = (
    Metric.POSITION_INCONSISTENCY_INCREASE,
    Metric.FLIP_RATE_DIFF,
    Metric.POSITION_INCONSISTENCY_DIFF,
    Metric.ECE,
)


def long_sums(units: UnitTables) -> pd.DataFrame:
    """Per-item numerators and denominators of each bootstrapped ratio, keyed by judge, metric, condition."""
    pieces: list[pd.DataFrame] = []

    def add(rows: pd.DataFrame, metric: Metric, num: str | tuple[str, str], den: str) -> None:
        if rows.empty:
            return
        frame = rows[["judge", "item_id", "condition"]].copy()
        frame["num"] = rows[num[0]] - rows[num[1]] if isinstance(num, tuple) else rows[num]
        frame["den"] = rows[den]
        frame["metric"] = metric
        pieces.append(frame)

    add(units.pairs, Metric.STRICT_ACCURACY, "correct", "acc_n")
    add(units.pairs, Metric.TIE_HALF_ACCURACY, "half", "acc_n")
    add(units.flips, Metric.FLIP_RATE, "flip", "both")
    add(units.position, Metric.POSITION_INCONSISTENCY, "incon", "pboth")
    add(units.increase, Metric.POSITION_INCONSISTENCY_INCREASE, ("inc_c", "inc_en"), "paired")
    add(units.judge_flips, Metric.FLIP_RATE_DIFF, ("hit1", "hit2"), "common")
    add(units.judge_position, Metric.POSITION_INCONSISTENCY_DIFF, ("hit1", "hit2"), "common")
    if not pieces:
        return pd.DataFrame(columns=["judge", "item_id", "condition", "metric", "num", "den"])
    long = pd.concat(pieces, ignore_index=True)
    return long.groupby(["item_id", *KEYS], sort=False)[["num", "den"]].sum().reset_index()


def bootstrap_intervals(layout: Layout, units: UnitTables, settings: ReportSettings) -> pd.DataFrame:
    """Item-clustered percentile intervals for every (judge, metric, condition) x subset x filtered."""
    long = long_sums(units)
    if long.empty or settings.bootstrap_samples <= 0:
        return pd.DataFrame(columns=BOOT_COLUMNS)
    num = long.pivot_table(index="item_id", columns=KEYS, values="num", aggfunc="sum", fill_value=0.0)
    den = long.pivot_table(index="item_id", columns=KEYS, values="den", aggfunc="sum", fill_value=0.0)
    num = num.reindex(index=layout.items, fill_value=0.0)
    den = den.reindex(index=layout.items, columns=num.columns, fill_value=0.0)
    num_m = num.to_numpy(dtype=np.float64)
    den_m = den.to_numpy(dtype=np.float64)
    columns = pd.DataFrame(list(num.columns), columns=KEYS)
    ece_keys, ece_gap, ece_count = ece_matrices(layout, units.pairs)
    out = []
    for group in layout.groups:
        for filtered in (False, True):
            mask = layout.item_mask(group, filtered)
            if not mask.any():
                continue
            weights = resample_weights(
                int(mask.sum()), settings.bootstrap_samples, settings.seed, f"{group}|{filtered}"
            )
            reps = replicate_ratios(weights, num_m[mask], den_m[mask])
            low, high = percentile_interval(reps, settings.confidence)
            frame = columns.copy()
            frame["subset"] = group
            frame["filtered"] = filtered
            frame["boot_low"] = low
            frame["boot_high"] = high
            out.append(frame[~np.isnan(low)])
            if len(ece_keys):
                per_bin = np.abs(weights @ ece_gap[mask]).reshape(len(weights), len(ece_keys), BINS)
                total = weights @ ece_count[mask]
                with np.errstate(divide="ignore", invalid="ignore"):
                    reps = np.where(total > 0, per_bin.sum(axis=2) / np.where(total > 0, total, 1.0), np.nan)
                low, high = percentile_interval(reps, settings.confidence)
                frame = ece_keys.assign(subset=group, filtered=filtered, boot_low=low, boot_high=high)
                out.append(frame[~np.isnan(low)])
    return pd.concat(out, ignore_index=True)


def with_bootstrap(
    table: pd.DataFrame, layout: Layout, units: UnitTables, settings: ReportSettings
) -> pd.DataFrame:
    """The record table with its clustered intervals: beside the main interval, or as it."""
    boot = bootstrap_intervals(layout, units, settings)
    if boot.empty:
        return table
    table = table.merge(boot, on=[*KEYS, "subset", "filtered"], how="left")
    # paired differences and ECE get the clustered interval as their main (only) interval
    main = table["metric"].isin(BOOTSTRAP_MAIN) & table["boot_low"].notna()
    table.loc[main, "ci_low"] = table.loc[main, "boot_low"]
    table.loc[main, "ci_high"] = table.loc[main, "boot_high"]
    table.loc[main, "ci_method"] = CIMethod.BOOTSTRAP
    table.loc[main, ["boot_low", "boot_high"]] = np.nan
    return table
