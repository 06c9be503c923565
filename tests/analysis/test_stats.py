"""The statistics wrappers against scipy/statsmodels and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint

from judgebench.analysis import stats


def test_wilson_matches_statsmodels_and_handles_empty() -> None:
    low, high = stats.wilson([4, 0, 7], [8, 0, 7], 0.95)
    ref = proportion_confint(4, 8, alpha=0.05, method="wilson")
    assert low[0] == pytest.approx(ref[0]) and high[0] == pytest.approx(ref[1])
    assert math.isnan(low[1]) and math.isnan(high[1])
    assert high[2] == pytest.approx(1.0) and low[2] < 1.0
    low90, high90 = stats.wilson(4, 8, 0.90)
    assert low90[0] > low[0] and high90[0] < high[0]


def test_normal_mean_ci_uses_sample_sd_and_clips() -> None:
    scores = np.array([1, 1, 1, 0, 0, 0.5, 0.5, 1])
    low, high = stats.normal_mean_ci(scores.mean(), scores.std(ddof=1), len(scores), 0.95)
    half = sps.norm.ppf(0.975) * scores.std(ddof=1) / math.sqrt(len(scores))
    assert low[0] == pytest.approx(scores.mean() - half)
    assert high[0] == pytest.approx(scores.mean() + half)
    low, high = stats.normal_mean_ci(0.98, 0.2, 10, 0.95)
    assert high[0] == 1.0
    low, high = stats.normal_mean_ci(0.5, 0.0, 1, 0.95)  # one observation: no interval
    assert math.isnan(low[0]) and math.isnan(high[0])


def test_vectorised_binomial_test_equals_scipy_binomtest() -> None:
    grid = [(k, n) for n in range(1, 21) for k in range(n + 1)] + [(k, 838) for k in (0, 380, 419, 455, 838)]
    ks, ns = zip(*grid, strict=True)
    got = stats.binom_test_half_many(ks, ns)
    ref = [sps.binomtest(k, n, 0.5).pvalue for k, n in zip(ks, ns, strict=True)]
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    assert math.isnan(stats.binom_test_half_many([0], [0])[0])
    assert stats.binom_test_half(0, 0) is None
    assert stats.binom_test_half(1, 4) == pytest.approx(0.625)


def test_mcnemar_exact() -> None:
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(2, 0) == pytest.approx(0.5)
    assert stats.mcnemar_exact(10, 1) == pytest.approx(sps.binomtest(10, 11, 0.5).pvalue)
    np.testing.assert_allclose(stats.mcnemar_exact_many([0, 2, 10], [0, 0, 1]), [1.0, 0.5, 0.01171875])


def test_bh_adjust_hand_computed() -> None:
    adj = stats.bh_adjust([0.01, 0.04, 0.03, 0.2])
    np.testing.assert_allclose(adj, [0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2])
    assert stats.bh_adjust([]) == []


def test_mde_mcnemar_solves_connors_formula() -> None:
    n, disc = 400, 60
    d = stats.mde_mcnemar(n, disc)
    assert d is not None and 0 < d < disc / n
    psi = disc / n
    z_a, z_b = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    n_back = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - d * d)) ** 2 / d**2
    assert n_back == pytest.approx(n, rel=1e-6)
    # more pairs -> smaller detectable effect; nothing detectable on 3 pairs
    assert stats.mde_mcnemar(4 * n, 4 * disc) < d  # type: ignore[operator]
    assert stats.mde_mcnemar(3, 1) is None
    assert stats.mde_mcnemar(0, 0) is None
    # no discordance seen: an effect d would itself make a share d of the pairs discordant
    zero = stats.mde_mcnemar(838, 0)
    assert zero is not None and 0 < zero < 0.05
    lhs = math.sqrt(838) * zero
    assert lhs == pytest.approx(z_a * math.sqrt(zero) + z_b * math.sqrt(zero - zero**2), rel=1e-6)


def test_mde_binomial_half_has_80_percent_power() -> None:
    n = 120
    d = stats.mde_binomial_half(n)
    assert d is not None
    power = NormalIndPower().power(effect_size=d / 0.5, nobs1=n, alpha=0.05, ratio=0)
    assert power == pytest.approx(0.8, abs=1e-3)
    assert stats.mde_binomial_half(0) is None


def test_paired_diff_wald() -> None:
    low, high = stats.paired_diff_wald([3, 0], [1, 0], [10, 0], 0.95)
    d = 0.2
    se = math.sqrt((0.4 - d * d) / 10)
    assert low[0] == pytest.approx(d - sps.norm.ppf(0.975) * se)
    assert high[0] == pytest.approx(d + sps.norm.ppf(0.975) * se)
    assert math.isnan(low[1])


def test_brier_and_ece_hand_computed() -> None:
    conf = [0.9, 0.8, 0.6, 0.95]
    y = [1, 0, 1, 1]
    assert stats.brier(conf, y) == pytest.approx((0.01 + 0.64 + 0.16 + 0.0025) / 4)
    assert stats.ece(conf, y) == pytest.approx((2 * 0.075 + 0.8 + 0.4) / 4)
    assert stats.ece([1.0], [1]) == pytest.approx(0.0)  # 1.0 falls in the last bin
    assert stats.brier([], []) is None and stats.ece([], []) is None
