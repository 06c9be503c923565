"""The analysis's earlier, plainer implementations, kept as the reference the fast paths must equal.

`sum_cells` is the long form (every row repeated for each subset group of its item and both tables,
then grouped by cell); `bootstrap_intervals` builds each item set's whole B x n matrix of resampling
counts from one draw and multiplies it by a pivot of per-item sums. Both are as they were before the
million-judgment work (issue 26); tests/analysis/test_reference.py compares them with today's code.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgebench.analysis.assemble import record_columns
from judgebench.analysis.bootstrap import FloatArray, percentile_interval
from judgebench.analysis.calibration import BINS, ece_matrices
from judgebench.analysis.cell_sums import CELL
from judgebench.analysis.clustered import BOOT_COLUMNS, KEYS
from judgebench.analysis.findings import ReportSettings
from judgebench.analysis.frame import Layout, UnitTables
from judgebench.analysis.small_n import tango_paired, union, wilson_items
from judgebench.records import Metric, MetricRecord
from judgebench.records.metrics import CORE_FIELDS

# the metrics with an item-level interval, written out here (the code reads them from the registry)
ITEM_LEVEL = [
    str(m)
    for m in (
        Metric.STRICT_ACCURACY,
        Metric.TIE_HALF_ACCURACY,
        Metric.FLIP_RATE,
        Metric.POSITION_INCONSISTENCY,
        Metric.POSITION_INCONSISTENCY_INCREASE,
    )
]


def sum_cells(layout: Layout, rows: pd.DataFrame, cols: list[str], extra: Sequence[str] = ()) -> pd.DataFrame:
    if rows.empty:
        return pd.DataFrame(columns=[*CELL, *extra, *cols])
    expanded = layout.expand(rows[["judge", "item_id", "condition", *extra, *cols]])
    return expanded.groupby([*CELL, *extra], sort=False, observed=True)[cols].sum().reset_index()


def resample_weights(n_items: int, samples: int, seed: int, stream: str) -> FloatArray:
    rng = np.random.default_rng([seed, zlib.crc32(stream.encode("utf-8"))])
    if n_items == 0 or samples <= 0:
        return np.zeros((max(samples, 0), n_items))
    draws = rng.integers(0, n_items, size=(samples, n_items))
    flat = (draws + n_items * np.arange(samples)[:, None]).ravel()
    return np.bincount(flat, minlength=samples * n_items).reshape(samples, n_items).astype(np.float64)


def replicate_ratios(weights: FloatArray, num: FloatArray, den: FloatArray) -> FloatArray:
    top = weights @ num
    bottom = weights @ den
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def item_mask(layout: Layout, group: str, filtered: bool) -> np.ndarray:  # type: ignore[type-arg]
    members = set(layout.groups[group])
    return np.array(
        [layout.item_subset[i] in members and not (filtered and i in layout.flagged) for i in layout.items],
        dtype=bool,
    )


def long_sums(units: UnitTables) -> pd.DataFrame:
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


def _item_level(
    columns: pd.DataFrame,
    num: FloatArray,
    den: FloatArray,
    boot: tuple[FloatArray, FloatArray],
    confidence: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """clustered.item_level column by column: items with a unit, and the bootstrap's union the score
    interval on them (Tango for the paired increase, Wilson for the other ITEM_LEVEL rates)."""
    n_items, low, high = (np.full(len(columns), np.nan) for _ in range(3))
    for j, metric in enumerate(columns["metric"]):
        if metric not in ITEM_LEVEL:
            continue
        has = den[:, j] > 0
        n_items[j] = has.sum()
        if metric == Metric.POSITION_INCONSISTENCY_INCREASE:
            score = tango_paired((num[has, j] > 0).sum(), (num[has, j] < 0).sum(), n_items[j], confidence)
        else:
            value = num[:, j].sum() / den[:, j].sum() if den[:, j].sum() > 0 else np.nan
            score = wilson_items(value, n_items[j], confidence)
        both = union((boot[0][j : j + 1], boot[1][j : j + 1]), score)
        low[j], high[j] = both[0][0], both[1][0]
    return n_items, low, high


def bootstrap_intervals(layout: Layout, units: UnitTables, settings: ReportSettings) -> pd.DataFrame:
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
            mask = item_mask(layout, group, filtered)
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
            frame["n_items"], frame["item_low"], frame["item_high"] = _item_level(
                columns, num_m[mask], den_m[mask], (low, high), settings.confidence
            )
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


def to_records(table: pd.DataFrame) -> list[MetricRecord]:
    """assemble.to_records as it was: every cell boxed by `to_dict("records")`."""
    table = record_columns(table)
    plain = table.astype(object).where(table.notna(), None)
    extras = [c for c in table.columns if c not in CORE_FIELDS]
    out = []
    for row in plain.to_dict("records"):
        data = {k: row[k] for k in CORE_FIELDS}
        data.update({k: row[k] for k in extras if row[k] is not None})
        out.append(MetricRecord.model_validate(data))
    return out
