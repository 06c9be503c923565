"""Plug-in RMS, jitter removal, and the coverage of the upper confidence bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgebench.bbe import sensitivity as sens


def test_plugin_is_rms_over_pairs_and_reports_kinds() -> None:
    base = np.array([1.0, 0.0, 0.5])
    pair_unit = np.array([0, 0, 1, 2], dtype=np.int64)
    pair_score = np.array([0.0, 1.0, 0.5, 0.5])
    est = sens.estimate(
        base, pair_unit, pair_score, ["zh", "swap", "zh", "ls"], upper_bound=False, delta_estimate=0.0
    )
    assert est.plugin == pytest.approx(math.sqrt((1 + 0 + 0.25 + 0) / 4))
    assert est.used == est.plugin and est.upper is None
    assert est.pairs == 4 and est.units_with_pairs == 3
    assert est.per_kind["zh"]["pairs"] == 2
    assert est.per_kind["zh"]["rms"] == pytest.approx(math.sqrt((1 + 0.25) / 2))
    assert est.per_kind["swap"]["rms"] == 0.0


def test_jitter_is_removed_in_quadrature() -> None:
    base = np.zeros(4)
    est = sens.estimate(
        base,
        np.arange(4, dtype=np.int64),
        np.full(4, 0.5),
        ["x"] * 4,
        jitter=0.3,
        upper_bound=False,
        delta_estimate=0.0,
    )
    assert est.used == pytest.approx(math.sqrt(0.25 - 0.09))
    big = sens.estimate(
        base,
        np.arange(4, dtype=np.int64),
        np.full(4, 0.5),
        ["x"] * 4,
        jitter=0.9,
        upper_bound=False,
        delta_estimate=0.0,
    )
    assert big.used == 0.0


def test_jitter_rms_from_repeats() -> None:
    units = np.array([0, 0, 1, 1, 1, 2], dtype=np.int64)
    scores = np.array([0.5, 0.7, 0.0, 0.0, 0.3, 1.0])
    # pairs: (0.5,0.7) -> 0.04; (0,0) 0, (0,0.3) 0.09, (0,0.3) 0.09
    assert sens.jitter_rms(units, scores) == pytest.approx(math.sqrt((0.04 + 0 + 0.09 + 0.09) / 4))
    assert sens.jitter_rms(np.array([0, 1], dtype=np.int64), np.array([0.1, 0.2])) is None


def test_upper_bound_exceeds_plugin_and_tightens_with_n() -> None:
    rng = np.random.default_rng(1)
    widths = []
    for n in (50, 500, 5000):
        base = np.zeros(n)
        score = (rng.random(n) < 0.1).astype(float)
        est = sens.estimate(
            base, np.arange(n, dtype=np.int64), score, ["x"] * n, upper_bound=True, delta_estimate=0.01
        )
        assert est.upper is not None and est.upper >= est.plugin
        widths.append(est.upper - est.plugin)
    assert widths[0] > widths[1] > widths[2]


def test_upper_bound_covers_the_true_value() -> None:
    """Over repeated samples, the bound on E[change^2] fails at most delta_estimate of the time."""
    rng = np.random.default_rng(2)
    p, n, delta_e, reps = 0.15, 60, 0.1, 400
    misses = 0
    for _ in range(reps):
        y = (rng.random(n) < p).astype(float)
        if sens.mean_square_ucb(y, 1.0, delta_e) < p:
            misses += 1
    assert misses / reps <= delta_e


def test_clustered_units_share_one_term() -> None:
    """Pairs of one unit count as one observation: y_u sums them and divides by the mean pair count."""
    y, upper = sens.per_unit_terms(np.array([0, 0, 0, 1], dtype=np.int64), np.array([1.0, 1.0, 0.0, 1.0]))
    np.testing.assert_allclose(y, [2 / 2, 1 / 2])
    assert upper == pytest.approx(3 / 2)
    assert float(np.mean(y)) == pytest.approx(np.mean([1.0, 1.0, 0.0, 1.0]))


def test_no_pairs_is_an_error() -> None:
    with pytest.raises(ValueError, match="no \\(unit, neighbour\\) pair"):
        sens.estimate(
            np.zeros(2), np.zeros(0, dtype=np.int64), np.zeros(0), [], upper_bound=False, delta_estimate=0.0
        )


def test_the_bound_takes_one_term_per_group() -> None:
    """Units sharing a group (a Judge-LS item's two orders) give one term of the bound, not two."""
    rng = np.random.default_rng(5)
    base = rng.random(200)
    pair_unit = np.arange(200, dtype=np.int64)
    pair_score = np.clip(base + rng.normal(0, 0.2, 200), 0, 1)
    group = pair_unit // 2  # units 2g and 2g+1 form group g
    grouped = sens.estimate(
        base, pair_unit, pair_score, ["zh"] * 200, upper_bound=True, delta_estimate=0.01, pair_group=group
    )
    squared = (pair_score - base) ** 2
    y = (squared[0::2] + squared[1::2]) / 2.0  # per group: sum / mean pairs per group (2)
    expected = sens.mean_square_ucb(y, 1.0, 0.01)
    assert grouped.upper == pytest.approx(np.sqrt(expected))
    assert grouped.plugin == pytest.approx(np.sqrt(squared.mean()))
    assert grouped.units_with_pairs == 200
