"""Item-clustered bootstrap for ratio metrics, vectorised as one matrix product per item set.

Why clustered: an item's two orders (and its conditions) share the same content, so judgments of one
item are not independent and Wilson intervals that treat them as such are too narrow. Resampling whole
items carries every judgment of an item together. Every metric here is a ratio of per-item sums
(correct / answered, flips / valid pairs, ...), so a bootstrap replicate is `W @ num / W @ den` with
`W` the B x items matrix of resampling counts: no Python loop over replicates or records.
"""

from __future__ import annotations

import zlib

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def resample_weights(n_items: int, samples: int, seed: int, stream: str) -> FloatArray:
    """B x n resampling counts (times each item is drawn); `stream` (e.g. the subset) seeds each item set."""
    rng = np.random.default_rng([seed, zlib.crc32(stream.encode("utf-8"))])
    if n_items == 0 or samples <= 0:
        return np.zeros((max(samples, 0), n_items))
    draws = rng.integers(0, n_items, size=(samples, n_items))  # items drawn with replacement
    flat = (draws + n_items * np.arange(samples)[:, None]).ravel()
    return np.bincount(flat, minlength=samples * n_items).reshape(samples, n_items).astype(np.float64)


def replicate_ratios(weights: FloatArray, num: FloatArray, den: FloatArray) -> FloatArray:
    """B x M bootstrap replicates of sum(num) / sum(den) per column; NaN where a replicate's den is 0."""
    top = weights @ num
    bottom = weights @ den
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def percentile_interval(replicates: FloatArray, confidence: float) -> tuple[FloatArray, FloatArray]:
    """Percentile interval per column, ignoring undefined replicates; NaN for an all-undefined column."""
    m = replicates.shape[1] if replicates.ndim == 2 else 0
    low = np.full(m, np.nan)
    high = np.full(m, np.nan)
    if replicates.size == 0:
        return low, high
    alpha = 1.0 - confidence
    probs = [alpha / 2.0, 1.0 - alpha / 2.0]
    nan = np.isnan(replicates)
    complete = ~nan.any(axis=0)  # the common case: one fast vectorised quantile
    if complete.any():
        q = np.quantile(replicates[:, complete], probs, axis=0)
        low[complete], high[complete] = q[0], q[1]
    partial = ~complete & ~nan.all(axis=0)  # replicates that drew no unit of the denominator are left out
    if partial.any():
        q = np.nanquantile(replicates[:, partial], probs, axis=0)
        low[partial], high[partial] = q[0], q[1]
    return low, high


def cluster_bootstrap(
    num: FloatArray, den: FloatArray, *, samples: int, seed: int, stream: str, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """Percentile intervals of the ratio sum(num[:, j]) / sum(den[:, j]), resampling rows (items)."""
    weights = resample_weights(num.shape[0], samples, seed, stream)
    return percentile_interval(replicate_ratios(weights, num, den), confidence)
