"""PPI++ for a mean against its closed form, computed here by hand from the paper's formulas."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy.stats import norm

from judgebench.human import classical_mean, ppi_mean
from judgebench.human.ppi import power_tuned_lambda, ppi_variance

Y = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.0]
F = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.5, 1.0]
FU = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 1.0]


def test_power_tuned_lambda_and_interval_by_hand() -> None:
    n, big_n = len(Y), len(FU)
    my, mf = statistics.fmean(Y), statistics.fmean(F)
    cov = sum((y - my) * (f - mf) for y, f in zip(Y, F, strict=True)) / n
    var_all = statistics.variance(F + FU)  # the sample variance over all n + N predictions
    lam = cov / ((1 + n / big_n) * var_all)
    assert 0 < lam < 1  # not clipped here
    theta = lam * statistics.fmean(FU) + statistics.fmean([y - lam * f for y, f in zip(Y, F, strict=True)])
    se = math.sqrt(
        statistics.pvariance([lam * f for f in FU]) / big_n
        + statistics.pvariance([y - lam * f for y, f in zip(Y, F, strict=True)]) / n
    )
    z = norm.ppf(0.95)
    got = ppi_mean(Y, F, FU, confidence=0.9)
    assert got.lam == pytest.approx(lam)
    assert got.value == pytest.approx(theta)
    assert (got.ci_low, got.ci_high) == pytest.approx((theta - z * se, theta + z * se))
    assert (got.n, got.n_unlabeled) == (n, big_n)


def test_lambda_zero_is_the_classical_interval_and_one_is_plain_ppi() -> None:
    classical = classical_mean(Y, confidence=0.95)
    at_zero = ppi_mean(Y, F, FU, lam=0.0)
    assert (at_zero.value, at_zero.ci_low, at_zero.ci_high) == pytest.approx(
        (classical.value, classical.ci_low, classical.ci_high)
    )
    half = norm.ppf(0.975) * math.sqrt(statistics.pvariance(Y) / len(Y))
    assert classical.ci_high - classical.value == pytest.approx(half)
    plain = ppi_mean(Y, F, FU, lam=1.0)  # Angelopoulos et al. 2023 (PPI): mean(f_N) + mean(Y - f)
    assert plain.value == pytest.approx(statistics.fmean(FU) + statistics.fmean(np.subtract(Y, F)))


def test_lambda_is_clipped_and_a_constant_prediction_adds_nothing() -> None:
    flipped = [1.0 - f for f in F]  # predictions against the labels: negative covariance
    assert power_tuned_lambda(np.array(Y), np.array(flipped), np.array(FU)) == 0.0
    assert ppi_mean(Y, [0.5] * len(Y), [0.5] * len(FU)).lam == 0.0
    # f = Y, and unlabelled predictions spread as the labels are: lambda near N / (N + n)
    perfect = ppi_mean(Y, Y, Y * 125)
    assert perfect.lam == pytest.approx(1000 / 1008, abs=0.002)


def test_the_closed_form_variance_is_the_estimators() -> None:
    """ppi_variance (the budget's formula) against Monte Carlo of the estimator at the tuned lambda."""
    rng = np.random.default_rng(3)
    n, big_n, agree = 100, 400, 0.85
    estimates = []
    for _ in range(3000):
        y = rng.integers(0, 2, n + big_n).astype(float)
        f = np.where(rng.random(n + big_n) < agree, y, 1 - y)
        estimates.append(ppi_mean(y[:n], f[:n], f[n:]).value)
    rho = 2 * agree - 1
    assert np.var(estimates) == pytest.approx(ppi_variance(0.25, rho, n, big_n), rel=0.1)
    assert ppi_variance(0.25, 0.0, n, big_n) == pytest.approx(0.25 / n)  # no correlation: classical
