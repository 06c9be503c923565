"""Item-clustered bootstrap for ratio metrics: per-item sums times resampling counts, in row chunks.

Why clustered: an item's two orders (and its conditions) share the same content, so judgments of one
item are not independent and Wilson intervals that treat them as such are too narrow. Resampling whole
items carries every judgment of an item together. Every metric here is a ratio of per-item sums
(correct / answered, flips / valid pairs, ...), so a bootstrap replicate is `W @ num / W @ den` with
`W` the B x items matrix of resampling counts: no Python loop over replicates or records.

Why chunks: at a million judgments an item set has ~30,000 items, and the whole B x n matrix (with the
draws it is counted from) took about 1 GB and more time in the memory traffic than in the arithmetic.
`Resampler` draws the same integers from the same generator, a block of replicates at a time (numpy
fills a draw in row-major order, so blocks of rows are the same stream as one call), and keeps only
the B x columns results. Integer-valued sums (counts, and halves) multiply exactly in float32 while
every partial sum stays below 2^24, so they take the faster product; other values stay float64.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

CHUNK_CELLS = 1 << 22  # resampling counts held at once (rows x items): 16 MB of float32
_EXACT32 = float(1 << 24)


def _generator(seed: int, stream: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(stream.encode("utf-8"))])


def resample_weights(n_items: int, samples: int, seed: int, stream: str) -> FloatArray:
    """B x n resampling counts (times each item is drawn); `stream` (e.g. the subset) seeds each item set."""
    if n_items == 0 or samples <= 0:
        return np.zeros((max(samples, 0), n_items))
    blocks = list(Resampler(n_items, samples, seed, stream).blocks(np.float64))
    return np.concatenate(blocks).astype(np.float64)


class Resampler:
    """The resampling counts of one item set, block of replicates by block (`CHUNK_CELLS` at most)."""

    def __init__(self, n_items: int, samples: int, seed: int, stream: str) -> None:
        self.n_items = n_items
        self.samples = max(samples, 0)
        self.seed = seed
        self.stream = stream

    def blocks(self, dtype: type[np.floating[Any]]) -> Iterator[npt.NDArray[Any]]:
        n, rows = self.n_items, max(1, CHUNK_CELLS // max(self.n_items, 1))
        rng = _generator(self.seed, self.stream)
        for start in range(0, self.samples, rows):
            b = min(rows, self.samples - start)
            # uint32 draws are the int64 draws' values (both take numpy's 32-bit path below 2^32), faster
            draws = rng.integers(0, n, size=(b, n), dtype=np.uint32 if n < 1 << 31 else np.int64)
            # each row's draws offset into its own row of counts, in one int64 array (no widened
            # copy of the draws and no repeated offsets beside it: 64 MB less at a time)
            flat = np.add(draws, (np.arange(b, dtype=np.int64) * n)[:, None], dtype=np.int64)
            del draws
            yield np.bincount(flat.ravel(), minlength=b * n).reshape(b, n).astype(dtype)

    def products(
        self,
        matrices: list[FloatArray],
        exact32: list[bool] | None = None,
        rows: npt.NDArray[np.bool_] | None = None,
    ) -> list[FloatArray]:
        """W @ m[rows] for each items x k matrix m (B x k each; `rows`: the item set's rows, all when
        None), W never held whole. The matrices that multiply exactly in float32 go as one product,
        and all-zero columns (ECE's empty bins, a subset without a condition) are left out of it:
        their products are exactly 0. `exact32`: `exact_in_float32` of each matrix when the caller
        knows it (rows of a matrix it checked)."""
        if exact32 is None:
            exact32 = [exact_in_float32(m if rows is None else m[rows], self.n_items) for m in matrices]
        out = [np.zeros((self.samples, m.shape[1])) for m in matrices]
        if self.n_items == 0 or self.samples == 0:
            return out
        plans = []
        for ok in (True, False):
            members = [i for i, e in enumerate(exact32) if e == ok and matrices[i].shape[1]]
            if not members:
                continue
            factor, used = _factor([matrices[i] for i in members], rows, np.float32 if ok else np.float64)
            bounds = np.cumsum([0] + [matrices[i].shape[1] for i in members])
            plans.append((ok, members, factor, used, bounds, np.empty((self.samples, len(used)))))
        start = 0
        for block in self.blocks(np.float32):
            b = len(block)
            for ok, _, factor, _, _, acc in plans:
                acc[start : start + b] = block @ factor if ok else block.astype(np.float64) @ factor
            start += b
        for _, members, _, used, bounds, acc in plans:
            full = np.zeros((self.samples, int(bounds[-1])))
            full[:, used] = acc
            for j, i in enumerate(members):
                out[i] = full[:, bounds[j] : bounds[j + 1]]
        return out


def _factor(
    matrices: list[FloatArray], rows: npt.NDArray[np.bool_] | None, dtype: type[np.floating[Any]]
) -> tuple[npt.NDArray[Any], npt.NDArray[np.intp]]:
    """The matrices' `rows` side by side, less their all-zero columns, in `dtype`, and the kept
    columns' positions among all of theirs: filled a matrix at a time, so that no whole copy of the
    rows (nor of them side by side) is made on the way (at a million judgments these were 300 MB)."""
    local = [np.flatnonzero((m != 0 if rows is None else (m != 0)[rows]).any(axis=0)) for m in matrices]
    offsets = np.cumsum([0] + [m.shape[1] for m in matrices[:-1]])  # NaN != 0: its product is not 0
    used = np.concatenate([cols + at for cols, at in zip(local, offsets, strict=True)])
    n_rows = matrices[0].shape[0] if rows is None else int(rows.sum())
    factor = np.empty((n_rows, len(used)), dtype=dtype)
    col = 0
    for m, cols in zip(matrices, local, strict=True):
        factor[:, col : col + len(cols)] = m[:, cols] if rows is None else m[np.ix_(rows, cols)]
        col += len(cols)
    return factor, used


def exact_in_float32(m: FloatArray, n_items: int) -> bool:
    """Every value a multiple of 1/2 and every partial sum of W @ m below 2^24 in those halves, W
    resampling `n_items` rows. True for a matrix is true for any set of its rows at most as many."""
    if m.size == 0:
        return True
    doubled = m * 2.0
    if not np.array_equal(doubled, np.round(doubled)):
        return False
    return float(np.abs(doubled).max()) * max(n_items, 1) < _EXACT32


def ratios(top: FloatArray, bottom: FloatArray) -> FloatArray:
    """top / bottom, NaN where bottom is 0 (a replicate that drew no unit of the denominator)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def replicate_ratios(weights: FloatArray, num: FloatArray, den: FloatArray) -> FloatArray:
    """B x M bootstrap replicates of sum(num) / sum(den) per column; NaN where a replicate's den is 0."""
    return ratios(weights @ num, weights @ den)


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
    top, bottom = Resampler(num.shape[0], samples, seed, stream).products([num, den])
    return percentile_interval(ratios(top, bottom), confidence)
