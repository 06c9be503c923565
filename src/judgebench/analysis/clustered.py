"""Item-clustered bootstrap intervals for every record table cell (the glue around `bootstrap.py`).

Each bootstrapped metric is a ratio of per-item sums (`item_sums`: items x ratios matrices, summed
straight from the unit tables); one stream of resampling counts per item set (subset group x table)
resamples all of them at once, and ECE with the same counts. Paired
differences and ECE take the clustered interval as their main one; every other metric keeps its
Wilson or normal interval and reports the clustered one beside it (boot_low, boot_high).

The metrics a verdict or flag reads (declared with `items`) also get their item count and item-level interval
(n_items, item_low, item_high: small_n.py), the bootstrap's union a score interval on the items, so
that zero events on five items do not decide anything; computed with the bootstrap switched off too.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgebench.analysis.bootstrap import FloatArray, Resampler, exact_in_float32, percentile_interval, ratios
from judgebench.analysis.calibration import BINS, ece_matrices
from judgebench.analysis.findings import ReportSettings
from judgebench.analysis.frame import Layout, UnitTables, index_positions
from judgebench.analysis.length_artefact import RULES, SPLITS
from judgebench.analysis.metric_registry import ItemLevel, bootstrap_main, item_level
from judgebench.analysis.small_n import tango_paired, union, wilson_items
from judgebench.records import Metric
from judgebench.records.metrics import CIMethod

KEYS = ["judge", "metric", "condition"]
ITEM_COLUMNS = ["n_items", "item_low", "item_high"]
BOOT_COLUMNS = [*KEYS, "subset", "filtered", "boot_low", "boot_high", *ITEM_COLUMNS]
# Which metrics take the clustered interval as their only one (interval=bootstrap) and which get an
# item-level interval (the wider of the bootstrap and a score interval on the items: `items`, Wilson or
# the paired increase's Tango) is each metric's declaration (analysis/metric_registry.py).
KINDS: tuple[ItemLevel, ...] = ("wilson", "tango")
# a registered metric's name and its unit rows (judge, condition, item_id, k, n)
OwnUnits = tuple[str, pd.DataFrame]


Piece = tuple[pd.DataFrame, str, str | tuple[str, str], str]


def _pieces(units: UnitTables, own: Sequence[OwnUnits] = ()) -> list[Piece]:
    """Each bootstrapped ratio: its unit rows, the numerator column (or a difference) and the
    denominator; a registered metric's unit rows (`own`) last."""
    return [
        (units.pairs, Metric.STRICT_ACCURACY, "correct", "acc_n"),
        (units.pairs, Metric.TIE_HALF_ACCURACY, "half", "acc_n"),
        (units.flips, Metric.FLIP_RATE, "flip", "both"),
        (units.position, Metric.POSITION_INCONSISTENCY, "incon", "pboth"),
        (units.increase, Metric.POSITION_INCONSISTENCY_INCREASE, ("inc_c", "inc_en"), "paired"),
        (units.judge_flips, Metric.FLIP_RATE_DIFF, ("hit1", "hit2"), "common"),
        (units.judge_position, Metric.POSITION_INCONSISTENCY_DIFF, ("hit1", "hit2"), "common"),
        *[(units.lengths, metric, col, "acc_n") for metric, col, _ in RULES],
        *[(units.lengths, metric, k, m) for metric, k, m, _ in SPLITS],
        *[(rows, metric, "k", "n") for metric, rows in own],
    ]


def item_sums(
    layout: Layout, units: UnitTables, own: Sequence[OwnUnits] = ()
) -> tuple[pd.DataFrame, FloatArray, FloatArray]:
    """Per item (rows, in `layout.items` order) the numerator and denominator of every bootstrapped
    ratio (columns: the returned (judge, metric, condition) keys), summed straight into the matrices."""
    item_index = pd.Index(layout.items)
    keys: dict[tuple[str, str, str], int] = {}
    parts: list[tuple[np.ndarray[Any, np.dtype[np.int64]], np.ndarray[Any, Any], FloatArray, FloatArray]] = []
    for rows, metric, num, den in _pieces(units, own):
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
    columns = pd.DataFrame(list(keys), columns=KEYS)
    if not parts:
        return columns, np.zeros((n, m)), np.zeros((n, m))
    # one sum for every piece at once: a cell (item, column) belongs to one piece's metric, so its
    # sum is that piece's alone either way (and each sum of counts or halves is exact)
    flat = np.concatenate([items * m + cols for items, cols, _, _ in parts])

    def summed(weights: list[FloatArray]) -> FloatArray:
        total = np.bincount(flat, weights=np.concatenate(weights), minlength=n * m)
        return total.astype(np.float64, copy=False).reshape(n, m)  # float64 already: no copy

    return columns, summed([top for _, _, top, _ in parts]), summed([den for _, _, _, den in parts])


Interval = tuple[FloatArray, FloatArray]  # low, high per column


@dataclass
class _Job:
    """One report's bootstrap: the per-item matrices (made with pandas) and the item sets to resample
    them over. `resample` is numpy only, so it can run beside the pandas work of the record table."""

    columns: pd.DataFrame  # the (judge, metric, condition) of each ratio column
    ece_keys: pd.DataFrame  # the (judge, metric, condition) of each ECE column (empty: none)
    every: list[FloatArray]  # numerators, denominators, then ECE's gaps and counts
    exact32: list[bool]
    sets: list[tuple[str, bool, npt.NDArray[np.bool_]]]  # subset group, filtered, its items' mask
    settings: ReportSettings

    def resample(self) -> list[tuple[Interval, Interval | None]]:
        """Per item set, the intervals of the ratio columns and of the ECE columns (NaN and None with
        the bootstrap switched off)."""
        samples, confidence = self.settings.bootstrap_samples, self.settings.confidence
        out: list[tuple[Interval, Interval | None]] = []
        for group, filtered, mask in self.sets:
            if samples <= 0:
                nan = np.full(len(self.columns), np.nan)
                out.append(((nan, nan.copy()), None))
                continue
            sampler = Resampler(int(mask.sum()), samples, self.settings.seed, f"{group}|{filtered}")
            products = sampler.products(self.every, self.exact32, rows=mask)
            ratio = percentile_interval(ratios(products[0], products[1]), confidence)
            ece = None
            if len(self.ece_keys):
                per_bin = np.abs(products[2]).reshape(samples, len(self.ece_keys), BINS)
                ece = percentile_interval(ratios(per_bin.sum(axis=2), products[3]), confidence)
            out.append((ratio, ece))
        return out

    def item_level(self, mask: npt.NDArray[np.bool_], boot: Interval) -> tuple[FloatArray, Interval]:
        """Per ratio column of one item set: its items (those with a unit of the denominator) and the
        item-level interval, the bootstrap's union the score interval on those items (`items`
        metrics; NaN for the others)."""
        metric = self.columns["metric"].to_numpy()
        n_items = np.full(len(metric), np.nan)
        score = (np.full(len(metric), np.nan), np.full(len(metric), np.nan))
        for kind in KINDS:
            cols = np.flatnonzero(np.isin(metric, item_level(kind)))
            if not len(cols):
                continue
            num, den = self.every[0][np.ix_(mask, cols)], self.every[1][np.ix_(mask, cols)]
            has = den > 0
            n_items[cols] = has.sum(axis=0)
            if kind == "wilson":
                low, high = wilson_items(
                    ratios(num.sum(axis=0), den.sum(axis=0)), n_items[cols], self.confidence
                )
            else:  # per item (paired, 0/1) the difference is +1 (target only), -1 (en only) or 0
                b, c = ((num > 0) & has).sum(axis=0), ((num < 0) & has).sum(axis=0)
                low, high = tango_paired(b, c, n_items[cols], self.confidence)
            score[0][cols], score[1][cols] = low, high
        low, high = union(boot, score)
        defined = ~np.isnan(score[0])
        return n_items, (np.where(defined, low, np.nan), np.where(defined, high, np.nan))

    @property
    def confidence(self) -> float:
        return self.settings.confidence

    def frame(self, intervals: list[tuple[Interval, Interval | None]]) -> pd.DataFrame:
        """`resample`'s intervals as rows of BOOT_COLUMNS, the item-level ones beside them (rows with
        neither left out)."""
        out = []
        for (group, filtered, mask), (ratio, ece) in zip(self.sets, intervals, strict=True):
            n_items, (item_low, item_high) = self.item_level(mask, ratio)
            frame = self.columns.assign(
                subset=group, filtered=filtered, boot_low=ratio[0], boot_high=ratio[1],
                n_items=n_items, item_low=item_low, item_high=item_high,
            )  # fmt: skip
            out.append(frame[~np.isnan(ratio[0]) | ~np.isnan(item_low)])
            if ece is not None:
                frame = self.ece_keys.assign(
                    subset=group, filtered=filtered, boot_low=ece[0], boot_high=ece[1]
                )
                out.append(frame[~np.isnan(ece[0])])
        return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=BOOT_COLUMNS)


def _job(
    layout: Layout, units: UnitTables, settings: ReportSettings, own: Sequence[OwnUnits] = ()
) -> _Job | None:
    columns, num_m, den_m = item_sums(layout, units, own)
    if columns.empty:
        return None
    ece_keys, ece_gap, ece_count = ece_matrices(layout, units.pairs)
    every = [num_m, den_m, *([ece_gap, ece_count] if len(ece_keys) else [])]
    sets = [
        (group, filtered, mask)
        for group in layout.groups
        for filtered in (False, True)
        if (mask := layout.item_mask(group, filtered)).any()
    ]
    # once for the whole matrices, not per item set: their rows inherit it (checking each set's rows
    # was 0.5 s of a 23-language report); float32 or float64, an exact product is the same number
    exact32 = [exact_in_float32(m, len(layout.items)) for m in every]
    return _Job(columns, ece_keys, every, exact32, sets, settings)


def bootstrap_intervals(
    layout: Layout, units: UnitTables, settings: ReportSettings, own: Sequence[OwnUnits] = ()
) -> pd.DataFrame:
    """Item-clustered percentile intervals for every (judge, metric, condition) x subset x filtered."""
    job = _job(layout, units, settings, own)
    return job.frame(job.resample()) if job is not None else pd.DataFrame(columns=BOOT_COLUMNS)


class PendingBootstrap:
    """`start_bootstrap`'s answer: `.result()` waits for the resampling and makes its frame here."""

    def __init__(
        self, job: _Job | None, resampled: Future[list[tuple[Interval, Interval | None]]] | None
    ) -> None:
        self._job, self._resampled = job, resampled

    def result(self) -> pd.DataFrame:
        if self._job is None or self._resampled is None:
            return pd.DataFrame(columns=BOOT_COLUMNS)
        return self._job.frame(self._resampled.result())


def start_bootstrap(
    layout: Layout,
    units: UnitTables,
    settings: ReportSettings,
    beside: Executor,
    own: Sequence[OwnUnits] = (),
) -> PendingBootstrap:
    """`bootstrap_intervals`, its resampling (numpy, which leaves the GIL in its products) run on
    `beside` while the caller makes the record table (pandas): at 23 languages the resampling is
    3-4 s of a report. `.result()` is the same frame `bootstrap_intervals` gives."""
    job = _job(layout, units, settings, own)  # the pandas part, here: pandas is not shared across threads
    return PendingBootstrap(job, beside.submit(job.resample) if job is not None else None)


def with_intervals(table: pd.DataFrame, boot: pd.DataFrame) -> pd.DataFrame:
    """The record table with its clustered intervals: beside the main interval, or as it."""
    if boot.empty:
        return table
    own = table.pop("n_items") if "n_items" in table.columns else None
    table = table.merge(boot, on=[*KEYS, "subset", "filtered"], how="left")
    if own is not None:  # records that count their items themselves (the length split) keep the count
        counted = own.to_numpy(dtype=float)
        table["n_items"] = np.where(np.isnan(counted), table.get("n_items", np.nan), counted)
    # paired differences and ECE get the clustered interval as their main (only) interval
    main = table["metric"].isin(bootstrap_main()) & table["boot_low"].notna()
    table.loc[main, "ci_low"] = table.loc[main, "boot_low"]
    table.loc[main, "ci_high"] = table.loc[main, "boot_high"]
    table.loc[main, "ci_method"] = CIMethod.BOOTSTRAP
    table.loc[main, ["boot_low", "boot_high"]] = np.nan
    return table
