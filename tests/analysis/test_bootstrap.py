"""The item-clustered bootstrap: exact replicate arithmetic, reproducibility, and why clustering matters."""

from __future__ import annotations

import numpy as np

from judgebench.analysis import stats
from judgebench.analysis.bootstrap import (
    Resampler,
    cluster_bootstrap,
    percentile_interval,
    replicate_ratios,
    resample_weights,
)


def test_weights_resample_every_item_count_and_are_seeded() -> None:
    w = resample_weights(30, 200, seed=7, stream="all|False")
    assert w.shape == (200, 30)
    assert np.all(w.sum(axis=1) == 30)
    np.testing.assert_array_equal(w, resample_weights(30, 200, seed=7, stream="all|False"))
    assert not np.array_equal(w, resample_weights(30, 200, seed=8, stream="all|False"))
    assert not np.array_equal(w, resample_weights(30, 200, seed=7, stream="Natural|False"))


def test_replicates_equal_explicit_resampling() -> None:
    rng = np.random.default_rng(1)
    num = rng.integers(0, 3, size=(12, 2)).astype(float)
    den = np.full((12, 2), 2.0)
    w = resample_weights(12, 50, seed=3, stream="x")
    reps = replicate_ratios(w, num, den)
    for b in range(50):
        idx = np.repeat(np.arange(12), w[b].astype(int))  # the items drawn in replicate b
        np.testing.assert_allclose(reps[b], num[idx].sum(axis=0) / den[idx].sum(axis=0))


def test_undefined_replicates_are_ignored() -> None:
    reps = np.array([[0.1, np.nan, np.nan], [0.3, 0.5, np.nan], [0.2, 0.7, np.nan]])
    low, high = percentile_interval(reps, 0.5)
    assert low[0] == np.quantile([0.1, 0.3, 0.2], 0.25)
    assert low[1] == np.quantile([0.5, 0.7], 0.25) and high[1] == np.quantile([0.5, 0.7], 0.75)
    assert np.isnan(low[2]) and np.isnan(high[2])


def test_clustering_widens_the_interval_when_orders_agree() -> None:
    # 200 items whose two orders always agree: 400 judgments but only 200 independent units
    rng = np.random.default_rng(0)
    correct = rng.random(200) < 0.7
    num = (2 * correct).astype(float)[:, None]
    den = np.full((200, 1), 2.0)
    low, high = cluster_bootstrap(num, den, samples=2000, seed=0, stream="t", confidence=0.95)
    w_low, w_high = stats.wilson(num.sum(), den.sum(), 0.95)
    assert (high[0] - low[0]) > 1.25 * (w_high[0] - w_low[0])
    # and it agrees with a Wilson interval over the 200 items themselves
    i_low, i_high = stats.wilson(correct.sum(), 200, 0.95)
    assert abs((high[0] - low[0]) - (i_high[0] - i_low[0])) < 0.02


def test_products_of_an_item_sets_rows_equal_those_of_its_rows_copied() -> None:
    """`products(rows=...)` fills its factor from the item set's rows without copying the matrices'
    rows first (at 1M judgments those copies were 300 MB): the same numbers, to the bit, as the
    products of the copied rows, for an exact and a float64 matrix, with a column that is all zero
    in the set only (left out of the product) and one all zero everywhere."""
    rng = np.random.default_rng(5)
    mask = rng.random(40) < 0.6
    counts = rng.integers(0, 3, size=(40, 4)).astype(float)
    counts[:, 1] = np.where(mask, 0.0, 1.0)
    counts[:, 3] = 0.0
    gaps = rng.random((40, 3)) - 0.5
    sampler = Resampler(int(mask.sum()), 300, seed=2, stream="set")
    copied = sampler.products([counts[mask], gaps[mask]])
    for exact in (None, [True, False]):
        for got, want in zip(sampler.products([counts, gaps], exact, rows=mask), copied, strict=True):
            np.testing.assert_array_equal(got, want)
    assert np.all(copied[0][:, [1, 3]] == 0) and np.any(copied[0][:, 0] != 0) and np.any(copied[1] != 0)
