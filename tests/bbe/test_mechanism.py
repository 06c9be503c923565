"""sigma_max against PROTOCOL §5's worked values, the feasibility boundary, the shrinkage map, the split."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from judgebench.bbe import mechanism as mech

HALVES = mech.DeltaSplit.from_fractions(0.01, (0.5, 0.5), upper_bound=False)


@pytest.mark.parametrize(
    ("sensitivity", "d", "expected"),
    [(0.0, 1, 0.0878), (0.01, 500, 0.0102), (0.02, 2000, 0.0033)],
)
def test_worked_values(sensitivity: float, d: int, expected: float) -> None:
    sigma = mech.sigma_max(0.5, 1.0, sensitivity, d, (HALVES.sensitivity, HALVES.noise))
    assert sigma is not None
    assert sigma == pytest.approx(expected, abs=1e-4)


def test_infeasible_from_0_0354() -> None:
    boundary = 0.5 * math.sqrt(0.005)
    assert boundary == pytest.approx(0.0354, abs=1e-4)
    assert 1 / math.sqrt(0.005) == pytest.approx(14.14, abs=1e-2)
    assert mech.sigma_max(0.5, 1.0, boundary - 1e-6, 10, (0.005, 0.005)) is not None
    for sensitivity in (boundary, 0.0354, 0.05, 1.0):
        assert mech.sigma_max(0.5, 1.0, sensitivity, 10, (0.005, 0.005)) is None
        assert not mech.is_feasible(0.5, 1.0, sensitivity, 0.005)
    assert mech.max_sensitivity(0.5, 1.0, 0.005) == pytest.approx(boundary)


def test_feasibility_boundary_in_alpha() -> None:
    a_max = mech.max_alpha(0.5, 0.3, 0.005)
    assert a_max == pytest.approx(0.5 * math.sqrt(0.005) / 0.3)
    assert mech.sigma_max(0.5, a_max * 0.999, 0.3, 838, (0.005, 0.005)) is not None
    assert mech.sigma_max(0.5, a_max, 0.3, 838, (0.005, 0.005)) is None
    assert math.isinf(mech.max_alpha(0.5, 0.0, 0.005))


def test_sigma_decreases_with_d_and_sensitivity() -> None:
    s = [mech.sigma_max(0.5, 1.0, 0.01, d, (0.005, 0.005)) for d in (1, 10, 100, 1000)]
    assert all(a is not None and b is not None and a > b for a, b in itertools.pairwise(s))
    t = [mech.sigma_max(0.5, 1.0, x, 100, (0.005, 0.005)) for x in (0.0, 0.01, 0.02, 0.03)]
    assert all(a is not None and b is not None and a > b for a, b in itertools.pairwise(t))


def test_auto_alpha_leaves_the_margin() -> None:
    alpha = mech.auto_alpha(0.5, 0.3, 0.005, margin=0.25)
    assert mech.bias_term(alpha, 0.3, 0.005) == pytest.approx(0.75 * 0.5)
    assert mech.auto_alpha(0.5, 0.001, 0.005, margin=0.5) == 1.0  # no shrinkage needed
    with pytest.raises(ValueError):
        mech.auto_alpha(0.5, 0.3, 0.005, margin=0.0)


def test_shrinkage_map() -> None:
    x = np.array([0.0, 0.25, 1.0, 0.5])
    y = np.array([1.0, 0.25, 0.0, 0.75])
    mu = mech.resolve_centre(x, "mean")
    assert mu == pytest.approx(0.4375)
    assert mech.resolve_centre(x, "median") == pytest.approx(0.375)
    assert mech.resolve_centre(x, 0.3) == 0.3
    np.testing.assert_allclose(mech.shrink(x, 1.0, mu), x)
    np.testing.assert_allclose(mech.shrink(x, 0.0, mu), np.full(4, mu))
    g = mech.shrink(x, 0.3, mu)
    np.testing.assert_allclose(g, 0.3 * x + 0.7 * mu)
    # alpha-Lipschitz: distances shrink by exactly alpha; the centre is a fixed point
    assert np.linalg.norm(g - mech.shrink(y, 0.3, mu)) == pytest.approx(0.3 * np.linalg.norm(x - y))
    assert mech.shrink(np.array([mu]), 0.3, mu)[0] == pytest.approx(mu)


def test_mechanism_clips_and_is_seeded() -> None:
    x = np.linspace(0, 1, 50)
    a = mech.apply_mechanism(x, 0.5, 0.5, 0.8, np.random.default_rng(3), clip=True)
    b = mech.apply_mechanism(x, 0.5, 0.5, 0.8, np.random.default_rng(3), clip=True)
    c = mech.apply_mechanism(x, 0.5, 0.5, 0.8, np.random.default_rng(3), clip=False)
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() <= 1
    assert c.min() < 0 or c.max() > 1


def test_noise_radius_holds_empirically() -> None:
    """Laurent-Massart: ||Z - Z'|| exceeds sigma * radius with probability at most delta_B."""
    rng = np.random.default_rng(0)
    d, delta_b, sigma = 20, 0.05, 0.1
    diff = rng.normal(0, sigma, (20000, d)) - rng.normal(0, sigma, (20000, d))
    rate = float(np.mean(np.linalg.norm(diff, axis=1) > sigma * mech.noise_radius_factor(d, delta_b)))
    assert rate <= delta_b


def test_delta_split() -> None:
    s = mech.DeltaSplit.from_fractions(0.01, (0.45, 0.45, 0.1), upper_bound=True)
    assert (s.sensitivity, s.noise, s.estimate) == pytest.approx((0.0045, 0.0045, 0.001))
    assert s.total == pytest.approx(0.01)
    p = mech.DeltaSplit.from_fractions(0.02, (1, 3), upper_bound=False)
    assert (p.sensitivity, p.noise, p.estimate) == pytest.approx((0.005, 0.015, 0.0))
    with pytest.raises(ValueError):
        mech.DeltaSplit.from_fractions(0.01, (0.5, 0.5), upper_bound=True)
    with pytest.raises(ValueError):
        mech.DeltaSplit.from_fractions(0.01, (0.5, 0.4, 0.1), upper_bound=False)
    with pytest.raises(ValueError):
        mech.DeltaSplit.from_fractions(1.5, (0.5, 0.5), upper_bound=False)
