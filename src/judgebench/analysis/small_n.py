"""Intervals and tests that decide something (a readiness part, a probe flag), valid at zero events
and at a handful of items (PROTOCOL §4, docs/guides/verdicts.md).

Why: the item-clustered percentile bootstrap collapses to a point when no event occurs (5 items, no
flip: every replicate is 0, so the interval is [0, 0] and a limit of 15% looks cleared), and a Wilson
interval over (item, order) pairs counts an item's two orders as two independent looks. The item is
the unit that was sampled, so the interval that decides is the wider (union) of the item bootstrap and
a score interval with n = the number of items: Wilson for a proportion, Tango's score interval for a
paired difference of proportions (the position-inconsistency increase). Both stay honest at zero
events; the union keeps the bootstrap's width where items are few but varied. Below `min_items`
items a part is never a pass (its interval may still show a failure).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from judgebench.analysis.metric_registry import item_level
from judgebench.analysis.stats import wilson
from judgebench.records import MetricRecord
from judgebench.records.metrics import CIMethod

FloatArray = npt.NDArray[np.float64]

_BISECTIONS = 60  # halvings of [-1, 1]: far below any printed digit


def _z(confidence: float) -> float:
    from scipy import stats as sps

    return float(sps.norm.ppf(0.5 + confidence / 2.0))


def wilson_items(
    value: npt.ArrayLike, n_items: npt.ArrayLike, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """Wilson's interval for a share `value` read as if from `n_items` independent units (the items;
    an item's several pairs count once): NaN where there is no item."""
    v = np.atleast_1d(np.asarray(value, dtype=np.float64))
    n = np.atleast_1d(np.asarray(n_items, dtype=np.float64))
    return wilson(np.where(np.isnan(v), 0.0, v) * n, np.where(np.isnan(v), 0.0, n), confidence)


def _tango_z(b: FloatArray, c: FloatArray, n: FloatArray, delta: FloatArray) -> FloatArray:
    """Tango's (1998) score statistic for H: p12 - p21 = delta, with p21 at its restricted MLE."""
    big_a = 2.0 * n
    big_b = -b - c + (2.0 * n - b + c) * delta
    big_c = -c * delta * (1.0 - delta)
    q21 = (np.sqrt(np.clip(big_b * big_b - 4.0 * big_a * big_c, 0.0, None)) - big_b) / (2.0 * big_a)
    var = np.clip(n * (2.0 * q21 + delta * (1.0 - delta)), 1e-300, None)
    return (b - c - n * delta) / np.sqrt(var)


def tango_paired(
    b: npt.ArrayLike, c: npt.ArrayLike, n: npt.ArrayLike, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """Tango's score interval for a paired difference of proportions (b - c) / n over n pairs (here:
    items), b and c the discordant counts. Unlike Wald it has width at b = c = 0 (5 items: +-43%).
    Element-wise by bisection (the statistic falls as delta rises); NaN where n == 0."""
    b_, c_, n_ = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (b, c, n))
    ok = n_ > 0
    safe_n = np.where(ok, n_, 1.0)
    est = (b_ - c_) / safe_n
    z = _z(confidence)

    def solve(target: float, lo: FloatArray, hi: FloatArray) -> FloatArray:
        # the root of Z(delta) = target between lo (Z above target) and hi (Z below it)
        for _ in range(_BISECTIONS):
            mid = (lo + hi) / 2.0
            above = _tango_z(b_, c_, safe_n, mid) > target
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        return (lo + hi) / 2.0

    low = solve(z, np.full_like(est, -1.0), est.copy())
    high = solve(-z, est.copy(), np.full_like(est, 1.0))
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


def union(
    first: tuple[FloatArray, FloatArray], second: tuple[FloatArray, FloatArray]
) -> tuple[FloatArray, FloatArray]:
    """The wider of two intervals, bound by bound; a missing (NaN) one leaves the other."""
    return np.fmin(first[0], second[0]), np.fmax(first[1], second[1])


def p_above_limit(value: npt.ArrayLike, n_items: npt.ArrayLike, limit: float) -> FloatArray:
    """The score test of "the rate exceeds `limit`" on `n_items` items, one-sided and doubled so that
    p < 1 - confidence exactly when Wilson's interval on those items lies above the limit (the test the
    decisive interval's item part inverts); 1 where the value is at or below the limit or unknown."""
    from scipy import stats as sps

    v = np.atleast_1d(np.asarray(value, dtype=np.float64))
    n = np.atleast_1d(np.asarray(n_items, dtype=np.float64))
    if not 0.0 < limit < 1.0:
        return np.ones_like(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (v - limit) / np.sqrt(limit * (1.0 - limit) / n)
    p = np.minimum(1.0, 2.0 * sps.norm.sf(z))
    return np.where(np.isfinite(z) & (n > 0), p, 1.0)


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values: the family-wise error over one judge's rows stays at the
    level whatever their dependence. The same numbers as statsmodels' `multipletests(method="holm")`
    (tests/analysis/test_small_n.py), which runs `gc.collect()` on every call: 0.6 s per judge."""
    p = np.asarray(pvalues, dtype=np.float64)
    if not len(p):
        return []
    order = np.argsort(p, kind="stable")
    steps = (len(p) - np.arange(len(p))) * p[order]  # (m - rank) * p, rank from 0
    adjusted = np.empty(len(p))
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(steps))
    return [float(x) for x in adjusted]


def decisive(rec: MetricRecord) -> tuple[float | None, float | None, str]:
    """The interval a verdict or flag reads from a record, and how to name it: the item-level one
    (bootstrap union score interval on the items) where the record has it, else the record's own."""
    if rec.item_low is not None and rec.item_high is not None:
        score = "Tango" if rec.metric in item_level("tango") else "Wilson"
        parts = f"{score} on {rec.n_items} items"
        if rec.boot_low is not None or rec.ci_method == CIMethod.BOOTSTRAP:
            parts = f"wider of item bootstrap and {parts}"
        return rec.item_low, rec.item_high, f"item-level ({parts})"
    if rec.boot_low is not None and rec.boot_high is not None:
        return rec.boot_low, rec.boot_high, "item-clustered bootstrap"
    return rec.ci_low, rec.ci_high, str(rec.ci_method or "interval")


def too_few(rec: MetricRecord, min_items: int) -> bool:
    """A record whose items are known and fewer than `min_items`: it may show a failure, never a pass."""
    return rec.n_items is not None and rec.n_items < min_items
