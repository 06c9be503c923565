"""Thin, vectorised wrappers over statsmodels and scipy for the report's intervals and tests.

Why wrappers at all: every caller needs the same conventions (an empty denominator gives NaN rather
than an exception, McNemar with no discordant pairs has p = 1, intervals are clipped to [0, 1]), and
keeping them in one place keeps the metric code free of special cases.

scipy.stats and statsmodels (about 1 s to import together) load in the functions that use them, when
a statistic is computed: importing the analysis (and `judgebench.api`) does not pay for them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def preload() -> None:
    """Import what the statistics here use, for a caller with time to spare before its analysis (a
    report, on a thread while pyarrow parses its judgments): about 1 s the analysis then saves."""
    import scipy.optimize  # noqa: F401
    import scipy.stats  # noqa: F401
    import statsmodels.stats.multitest  # noqa: F401
    import statsmodels.stats.proportion  # noqa: F401


def wilson(k: npt.ArrayLike, n: npt.ArrayLike, confidence: float = 0.95) -> tuple[FloatArray, FloatArray]:
    """Wilson score interval (statsmodels), element-wise; NaN where n == 0."""
    from statsmodels.stats.proportion import proportion_confint

    k_arr = np.atleast_1d(np.asarray(k, dtype=np.float64))
    n_arr = np.atleast_1d(np.asarray(n, dtype=np.float64))
    low = np.full(k_arr.shape, np.nan)
    high = np.full(k_arr.shape, np.nan)
    ok = n_arr > 0
    if ok.any():
        lo, hi = proportion_confint(k_arr[ok], n_arr[ok], alpha=1.0 - confidence, method="wilson")
        low[ok] = np.clip(lo, 0.0, 1.0)
        high[ok] = np.clip(hi, 0.0, 1.0)
    return low, high


def normal_mean_ci(
    mean: npt.ArrayLike, sd: npt.ArrayLike, n: npt.ArrayLike, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """mean +- z * s / sqrt(n) clipped to [0, 1] (PROTOCOL §4, tie-half accuracy); NaN where n < 2."""
    from scipy import stats as sps

    m = np.atleast_1d(np.asarray(mean, dtype=np.float64))
    s = np.atleast_1d(np.asarray(sd, dtype=np.float64))
    n_arr = np.atleast_1d(np.asarray(n, dtype=np.float64))
    z = float(sps.norm.ppf(0.5 + confidence / 2.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        half = z * s / np.sqrt(n_arr)
    half = np.where(n_arr >= 2, half, np.nan)
    return np.clip(m - half, 0.0, 1.0), np.clip(m + half, 0.0, 1.0)


def binom_test_half(k: int, n: int) -> float | None:
    """Exact two-sided binomial test of k successes out of n against p = 0.5 (scipy); None if n == 0."""
    from scipy import stats as sps

    if n <= 0:
        return None
    return float(sps.binomtest(int(k), int(n), 0.5, alternative="two-sided").pvalue)


def binom_test_half_many(k: npt.ArrayLike, n: npt.ArrayLike) -> FloatArray:
    """`binom_test_half` element-wise (NaN where n == 0), vectorised for thousands of tests.

    At p = 0.5 the binomial is symmetric, so scipy's two-sided exact p-value (the mass of outcomes no
    more likely than k) is min(1, 2 * P(X <= min(k, n - k))); the tests check it against `binomtest`.
    """
    from scipy import stats as sps

    k_arr = np.atleast_1d(np.asarray(k, dtype=np.float64))
    n_arr = np.atleast_1d(np.asarray(n, dtype=np.float64))
    tail = np.minimum(k_arr, n_arr - k_arr)
    p = np.minimum(1.0, 2.0 * sps.binom.cdf(tail, n_arr, 0.5))
    return np.where(n_arr > 0, p, np.nan)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact McNemar: two-sided binomial test of b out of b + c at 0.5; p = 1 when b + c = 0."""
    from scipy import stats as sps

    if b + c == 0:
        return 1.0
    return float(sps.binomtest(int(b), int(b + c), 0.5, alternative="two-sided").pvalue)


def mcnemar_exact_many(b: npt.ArrayLike, c: npt.ArrayLike) -> FloatArray:
    """`mcnemar_exact` element-wise (p = 1 where b + c == 0)."""
    b_arr = np.atleast_1d(np.asarray(b, dtype=np.float64))
    total = b_arr + np.atleast_1d(np.asarray(c, dtype=np.float64))
    return np.where(total > 0, binom_test_half_many(b_arr, total), 1.0)


def bh_adjust(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (statsmodels `multipletests`, method 'fdr_bh')."""
    from statsmodels.stats.multitest import multipletests

    if not pvalues:
        return []
    _, adjusted, _, _ = multipletests(np.asarray(pvalues, dtype=np.float64), method="fdr_bh")
    return [float(x) for x in adjusted]


@functools.lru_cache(maxsize=64)
def _z(alpha: float, power: float) -> tuple[float, float]:
    from scipy import stats as sps

    return float(sps.norm.ppf(1.0 - alpha / 2.0)), float(sps.norm.ppf(power))


def mde_mcnemar(n: int, discordant: int, *, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """Smallest |p10 - p01| a McNemar test on n pairs detects with the given power.

    Connor's (1987) discordant-pairs formula, n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2, solved
    for d, with psi the discordant share. psi is the observed share, but never less than d itself: an
    effect d implies at least a share d of discordant pairs, so a test that saw little discordance is
    not called blind to effects that would have produced more. None when even d = 1 is out of reach.
    """
    from scipy import optimize

    if n <= 0:
        return None
    observed = discordant / n
    z_a, z_b = _z(alpha, power)
    root_n = math.sqrt(n)

    def gap(d: float) -> float:
        psi = max(observed, d)
        return root_n * d - z_a * math.sqrt(psi) - z_b * math.sqrt(max(psi - d * d, 0.0))

    if gap(1.0) < 0:
        return None
    return float(optimize.brentq(gap, 1e-12, 1.0, xtol=1e-10))


def mde_binomial_half(n: int, *, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """Smallest |p - 0.5| a two-sided test against 0.5 detects with the given power (normal approximation)."""
    if n <= 0:
        return None
    z_a, z_b = _z(alpha, power)
    return float((z_a + z_b) * 0.5 / math.sqrt(n))


def paired_diff_wald(
    b: npt.ArrayLike, c: npt.ArrayLike, n: npt.ArrayLike, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Wald interval of a paired difference of proportions (b - c) / n, element-wise; NaN where n == 0.

    Used for paired differences when the bootstrap is switched off.
    """
    from scipy import stats as sps

    b_arr = np.atleast_1d(np.asarray(b, dtype=np.float64))
    c_arr = np.atleast_1d(np.asarray(c, dtype=np.float64))
    n_arr = np.atleast_1d(np.asarray(n, dtype=np.float64))
    safe = np.where(n_arr > 0, n_arr, 1.0)
    d = (b_arr - c_arr) / safe
    var = np.clip(((b_arr + c_arr) / safe - d * d) / safe, 0.0, None)
    half = float(sps.norm.ppf(0.5 + confidence / 2.0)) * np.sqrt(var)
    low = np.where(n_arr > 0, np.maximum(d - half, -1.0), np.nan)
    high = np.where(n_arr > 0, np.minimum(d + half, 1.0), np.nan)
    return low, high


def brier(confidence: npt.ArrayLike, outcome: npt.ArrayLike) -> float | None:
    """Mean squared gap between stated confidence and correctness (0 = perfect)."""
    p = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(outcome, dtype=np.float64)
    if p.size == 0:
        return None
    return float(np.mean((p - y) ** 2))


def ece(confidence: npt.ArrayLike, outcome: npt.ArrayLike, bins: int = 10) -> float | None:
    """Expected calibration error over equal-width confidence bins (the last bin includes 1.0)."""
    p = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(outcome, dtype=np.float64)
    if p.size == 0:
        return None
    idx = np.minimum((p * bins).astype(np.int64), bins - 1)
    counts = np.bincount(idx, minlength=bins).astype(np.float64)
    conf_sum = np.bincount(idx, weights=p, minlength=bins)
    acc_sum = np.bincount(idx, weights=y, minlength=bins)
    used = counts > 0
    gaps = np.abs(conf_sum[used] - acc_sum[used])  # = count * |mean conf - accuracy|
    return float(gaps.sum() / p.size)


def clustered_ratio(
    sums: Sequence[npt.ArrayLike],
    clusters: npt.ArrayLike,
    confidence: float = 0.95,
    null: float = 0.5,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Cluster-robust interval and Wald test for a ratio R = sum(a) / sum(v) over clusters (items).

    `sums` are the per-cell sums of a, v, a^2, a*v and v^2 over the clusters (each cluster's a and v
    its own totals), `clusters` their number G. The variance is the sandwich (CR1) estimator of an
    intercept-only regression of the per-judgment indicator with item clusters, exactly as
    statsmodels' `OLS(...).fit(cov_type="cluster")` computes it: G / (G - 1) * sum_i (a_i - R v_i)^2
    / (sum v)^2; p is the two-sided normal test of R = `null` with that standard error (a zero error
    gives p = 1 at the null and 0 away from it). NaN where G < 2 or sum(v) == 0. The interval is
    clipped to `bounds` (a share's [0, 1]; a difference of shares lies in [-1, 1])."""
    from scipy import stats as sps

    a, v, aa, av, vv = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in sums)
    g = np.atleast_1d(np.asarray(clusters, dtype=np.float64))
    ok = (g >= 2) & (v > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(v > 0, a / np.where(v > 0, v, 1.0), np.nan)
        factor = np.where(g >= 2, g / np.where(g >= 2, g - 1.0, 1.0), np.nan)
        meat = np.clip(aa - 2 * ratio * av + ratio**2 * vv, 0.0, None)
        se = np.sqrt(factor * meat) / v
        z = np.abs(ratio - null) / se
    crit = float(sps.norm.ppf(0.5 + confidence / 2.0))
    low = np.where(ok, np.clip(ratio - crit * se, *bounds), np.nan)
    high = np.where(ok, np.clip(ratio + crit * se, *bounds), np.nan)
    at_null = np.isclose(ratio, null)
    p = np.where(se > 0, 2.0 * sps.norm.sf(z), np.where(at_null, 1.0, 0.0))
    return low, high, np.where(ok, p, np.nan)
