"""Schematic-adherence sensitivity: OLS/ridge R^2 on degree-2 features, and the combination strategies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgebench.bbe.schematic import combine, fit_r2, poly2_features, schematic_sensitivity


def test_poly2_features_has_squares_and_interactions() -> None:
    x = np.array([[2.0, 3.0]])
    np.testing.assert_allclose(poly2_features(x), [[2, 3, 4, 6, 9]])
    assert poly2_features(np.zeros((4, 5))).shape == (4, 5 + 15)


def test_rubric_that_explains_the_verdict_gives_zero_sensitivity() -> None:
    rng = np.random.default_rng(0)
    f = rng.random((80, 3))
    overall = 0.2 + 0.3 * f[:, 0] + 0.2 * f[:, 1] * f[:, 2] + 0.1 * f[:, 2] ** 2
    fit = schematic_sensitivity(f, overall, ("a", "b", "c"))
    assert fit.r2_ols == pytest.approx(1.0, abs=1e-9)
    assert fit.sensitivity == pytest.approx(0.0, abs=1e-4)
    assert fit.r2_ridge <= fit.r2_ols + 1e-12  # in-sample, OLS minimises the squared error


def test_unexplained_verdict_gives_large_sensitivity() -> None:
    rng = np.random.default_rng(1)
    f = rng.random((200, 2))
    overall = rng.random(200)
    fit = schematic_sensitivity(f, overall, ("a", "b"))
    assert fit.r2 < 0.15
    assert fit.sensitivity == pytest.approx(math.sqrt(1 - fit.r2))
    assert fit.sensitivity > 0.9


def test_ridge_penalises_slopes_not_intercept() -> None:
    x = np.linspace(0, 1, 30)[:, None]
    y = 5.0 + 0 * x[:, 0]
    assert fit_r2(x, y, ridge=0.01) == 1.0  # a constant target is fitted exactly by the intercept
    y2 = 3 * x[:, 0]
    assert fit_r2(x, y2, ridge=100.0) < fit_r2(x, y2, ridge=0.01) <= 1.0


def test_combine_strategies() -> None:
    assert combine(0.3, 0.4, "formatting") == 0.3
    assert combine(0.3, 0.4, "max") == 0.4
    assert combine(0.3, 0.4, "rms") == pytest.approx(math.sqrt((0.09 + 0.16) / 2))
    assert combine(0.3, 0.4, "mean") == pytest.approx(0.35)
    assert combine(None, 0.4, "max") == 0.4
    assert combine(0.3, None, "mean") == 0.3
    with pytest.raises(ValueError):
        combine(None, None, "max")
    with pytest.raises(ValueError):
        combine(None, 0.4, "formatting")
