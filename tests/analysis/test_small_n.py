"""The small-n intervals and tests that decide verdicts and flags (analysis/small_n.py, issue 40)."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from judgebench.analysis.small_n import holm, p_above_limit, tango_paired, wilson_items


def test_holm_equals_statsmodels() -> None:
    rng = np.random.default_rng(0)
    for m in (1, 2, 6, 30):
        p = rng.random(m) ** 3
        p[: m // 3] = p[0]  # ties
        expected = multipletests(p, method="holm")[1]
        assert holm(p.tolist()) == pytest.approx(expected.tolist(), abs=1e-15)
    assert holm([]) == []


def test_tango_has_width_at_zero_and_covers() -> None:
    low, high = tango_paired([0], [0], [5], 0.95)
    assert (low[0], high[0]) == pytest.approx((-0.4345, 0.4345), abs=1e-4)  # Wald's would be [0, 0]
    rng = np.random.default_rng(1)
    for n, p12, p21 in ((30, 0.1, 0.05), (60, 0.2, 0.1)):
        counts = rng.multinomial(n, [p12, p21, 1 - p12 - p21], size=4000)
        lo, hi = tango_paired(counts[:, 0], counts[:, 1], np.full(4000, n), 0.95)
        assert 0.93 <= np.mean((lo <= p12 - p21) & (p12 - p21 <= hi)) <= 0.98


def test_the_limit_test_is_the_wilson_bound() -> None:
    """p < 1 - confidence exactly when Wilson's interval on the items lies above the limit."""
    for value in np.linspace(0.0, 0.6, 61):
        for items in (5, 20, 100):
            low, _ = wilson_items(value, items, 0.95)
            p = p_above_limit(value, items, 0.15)[0]
            if abs(low[0] - 0.15) > 1e-9:
                assert (p < 0.05) == (low[0] > 0.15)
