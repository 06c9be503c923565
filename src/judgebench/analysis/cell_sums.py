"""Record tables from summed cells: one row per judge x condition x subset x table, built column-wise.

A family's per-unit rows are summed per cell once (`sum_cells`), then each record kind is a handful
of array operations over every cell: proportions with Wilson intervals, means with the normal
interval of PROTOCOL §4, paired differences with an exact McNemar p.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgebench.analysis import stats
from judgebench.analysis.frame import Layout, index_positions
from judgebench.records.metrics import CIMethod, PFamily

CELL = ["judge", "condition", "subset", "filtered"]


def sum_cells(layout: Layout, rows: pd.DataFrame, cols: list[str], extra: Sequence[str] = ()) -> pd.DataFrame:
    """Per-unit columns summed per cell (each subset group, unfiltered and filtered; `extra` keys
    split a cell further), as the long form `Layout.expand` grouped by cell would give them: the
    cells in the order they first appear in it (unfiltered, then filtered; by first row, then by
    group). Counts and multiples of 1/4 sum exactly; stated confidences to rounding (1e-12).

    Why not that long form: it repeats every row for each of its item's groups and both tables (six
    times or more), which at a million judgments was most of the analysis's time and memory. Here each
    row is counted once into (key, leaf, flagged) units and the groups add units up."""
    keys = ["judge", "condition", *extra]
    if rows.empty:
        return pd.DataFrame(columns=[*CELL, *extra, *cols])
    key_codes = _key_codes(rows, keys)
    n_keys = int(key_codes.max()) + 1
    item_pos = index_positions(layout.item_index, rows["item_id"])
    leaf = layout.item_leaf[item_pos]
    flag = layout.item_flagged[item_pos].astype(np.int64)
    n_leaves = len(layout.leaves)
    unit = (key_codes * n_leaves + leaf) * 2 + flag
    n_units = n_keys * n_leaves * 2
    uniq, first_at = np.unique(unit, return_index=True)
    first_flat = np.full(n_units, np.iinfo(np.int64).max, dtype=np.int64)
    first_flat[uniq] = first_at
    first = first_flat.reshape(n_keys, n_leaves, 2)
    unit_sums = {
        c: np.bincount(unit, weights=rows[c].to_numpy(dtype=np.float64), minlength=n_units).reshape(
            n_keys, n_leaves, 2
        )
        for c in cols
    }
    cells: list[tuple[IntArray, int, bool]] = []  # (keys present, group, filtered)
    starts: list[IntArray] = []
    sums: dict[str, list[FloatArray]] = {c: [] for c in cols}
    for filtered in (False, True):
        flags = slice(0, 1) if filtered else slice(0, 2)  # the filtered table keeps unflagged items
        for g in range(len(layout.groups)):
            members = layout.group_leaves[g]
            first_in = first[:, members, flags].min(axis=(1, 2))
            present = np.flatnonzero(first_in < np.iinfo(np.int64).max)
            cells.append((present, g, filtered))
            starts.append(first_in[present])
            for c in cols:
                sums[c].append(unit_sums[c][present][:, members, flags].sum(axis=(1, 2)))
    frame = _cell_frame(layout, rows, keys, key_codes, cells)
    for c in cols:
        values = np.concatenate(sums[c])
        frame[c] = values.astype(np.int64) if rows[c].dtype.kind in "iub" else values
    # the long form's order: unfiltered first; by the row a cell first appears at, then by group
    rank = np.lexsort((frame["_g"].to_numpy(), np.concatenate(starts), frame["filtered"].to_numpy()))
    frame = frame.iloc[rank].reset_index(drop=True)
    return frame[[*CELL, *extra, *cols]]


IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def _key_codes(rows: pd.DataFrame, keys: Sequence[str]) -> IntArray:
    """One code per distinct key tuple, numbered in order of first appearance."""
    combined = np.zeros(len(rows), dtype=np.int64)
    for k in keys:
        codes, uniques = pd.factorize(rows[k])
        combined = combined * (len(uniques) + 1) + codes
    dense, _ = pd.factorize(combined)
    return dense.astype(np.int64)


def _cell_frame(
    layout: Layout,
    rows: pd.DataFrame,
    keys: Sequence[str],
    key_codes: IntArray,
    cells: list[tuple[IntArray, int, bool]],
) -> pd.DataFrame:
    """The key columns of `cells` (a key's values from its first row), its group and table."""
    _, first_row = np.unique(key_codes, return_index=True)
    k = np.concatenate([present for present, _, _ in cells])
    g = np.concatenate([np.full(len(present), g, dtype=np.int64) for present, g, _ in cells])
    filtered = np.concatenate([np.full(len(present), f, dtype=bool) for present, _, f in cells])
    at = first_row[k]
    frame = pd.DataFrame({name: rows[name].to_numpy()[at] for name in keys[:2]})
    frame["subset"] = np.array(list(layout.groups), dtype=object)[g]
    frame["filtered"] = filtered
    for name in keys[2:]:
        frame[name] = rows[name].to_numpy()[at]
    frame["_g"] = g
    return frame


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
        spread = sums_sq - nn * mean**2
        # the one-pass formula leaves rounding of about 1e-16 of the sum of squares where every value is
        # the same (a constant confidence): that is no spread, and its interval is the point
        spread = np.where(np.abs(spread) <= 1e-12 * np.abs(sums_sq), 0.0, spread)
        var = np.where(nn > 1, spread / np.where(nn > 1, nn - 1.0, 1.0), np.nan)
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
