"""Item-clustered bootstrap intervals for every record table cell (the glue around `bootstrap.py`).

Each bootstrapped metric is a ratio of per-item sums (`item_sums`: items x ratios matrices, summed
straight from the unit tables); one stream of resampling counts per item set (subset group x table)
resamples all of them at once, and ECE with the same counts. Paired
differences and ECE take the clustered interval as their main one; every other metric keeps its
Wilson or normal interval and reports the clustered one beside it (boot_low, boot_high).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgebench.analysis.bootstrap import FloatArray, Resampler, percentile_interval, ratios
from judgebench.analysis.calibration import BINS, ece_matrices
from judgebench.analysis.frame import Layout, UnitTables, index_positions
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


Piece = tuple[pd.DataFrame, Metric, str | tuple[str, str], str]


def _pieces(units: UnitTables) -> list[Piece]:
    """Each bootstrapped ratio: its unit rows, the numerator column (or a difference) and the denominator."""
    return [
        (units.pairs, Metric.STRICT_ACCURACY, "correct", "acc_n"),
        (units.pairs, Metric.TIE_HALF_ACCURACY, "half", "acc_n"),
        (units.flips, Metric.FLIP_RATE, "flip", "both"),
        (units.position, Metric.POSITION_INCONSISTENCY, "incon", "pboth"),
        (units.increase, Metric.POSITION_INCONSISTENCY_INCREASE, ("inc_c", "inc_en"), "paired"),
        (units.judge_flips, Metric.FLIP_RATE_DIFF, ("hit1", "hit2"), "common"),
        (units.judge_position, Metric.POSITION_INCONSISTENCY_DIFF, ("hit1", "hit2"), "common"),
    ]


def item_sums(layout: Layout, units: UnitTables) -> tuple[pd.DataFrame, FloatArray, FloatArray]:
    """Per item (rows, in `layout.items` order) the numerator and denominator of every bootstrapped
    ratio (columns: the returned (judge, metric, condition) keys), summed straight into the matrices."""
    item_index = pd.Index(layout.items)
    keys: dict[tuple[str, str, str], int] = {}
    parts: list[tuple[np.ndarray[Any, np.dtype[np.int64]], np.ndarray[Any, Any], FloatArray, FloatArray]] = []
    for rows, metric, num, den in _pieces(units):
        if rows.empty:
            continue
        judge_codes, judges = pd.factorize(rows["judge"])
        cond_codes, conds = pd.factorize(rows["condition"])
        pair = judge_codes.astype(np.int64) * len(conds) + cond_codes
        present = np.unique(pair)
        local = np.full(len(judges) * len(conds), -1, dtype=np.int64)
        for code in present.tolist():
            key = (str(judges[code // len(conds)]), str(metric), str(conds[code % len(conds)]))
            local[code] = keys.setdefault(key, len(keys))
        top = rows[num[0]] - rows[num[1]] if isinstance(num, tuple) else rows[num]
        items = index_positions(item_index, rows["item_id"])
        bottom = rows[den].to_numpy(dtype=np.float64)
        parts.append((items, local[pair], top.to_numpy(dtype=np.float64), bottom))
    n, m = len(layout.items), len(keys)
    num_m = np.zeros(n * m)
    den_m = np.zeros(n * m)
    for items, cols, top_v, den_v in parts:
        flat = items * m + cols
        num_m += np.bincount(flat, weights=top_v, minlength=n * m)
        den_m += np.bincount(flat, weights=den_v, minlength=n * m)
    columns = pd.DataFrame(list(keys), columns=KEYS)
    return columns, num_m.reshape(n, m), den_m.reshape(n, m)


def bootstrap_intervals(layout: Layout, units: UnitTables, settings: ReportSettings) -> pd.DataFrame:
    """Item-clustered percentile intervals for every (judge, metric, condition) x subset x filtered."""
    columns, num_m, den_m = item_sums(layout, units)
    if columns.empty or settings.bootstrap_samples <= 0:
        return pd.DataFrame(columns=BOOT_COLUMNS)
    ece_keys, ece_gap, ece_count = ece_matrices(layout, units.pairs)
    out = []
    for group in layout.groups:
        for filtered in (False, True):
            mask = layout.item_mask(group, filtered)
            if not mask.any():
                continue
            stream = f"{group}|{filtered}"
            sampler = Resampler(int(mask.sum()), settings.bootstrap_samples, settings.seed, stream)
            wanted = [num_m[mask], den_m[mask]]
            if len(ece_keys):
                wanted += [ece_gap[mask], ece_count[mask]]
            products = sampler.products(wanted)
            low, high = percentile_interval(ratios(products[0], products[1]), settings.confidence)
            frame = columns.assign(subset=group, filtered=filtered, boot_low=low, boot_high=high)
            out.append(frame[~np.isnan(low)])
            if len(ece_keys):
                per_bin = np.abs(products[2]).reshape(settings.bootstrap_samples, len(ece_keys), BINS)
                reps = ratios(per_bin.sum(axis=2), products[3])
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
