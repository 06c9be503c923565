"""The statistics of `compare`: the item-clustered Wilson interval, exact McNemar against the binomial
test, and the gate's three outcomes on planted rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from judgebench.analysis.stats import mcnemar_exact
from judgebench.compare.drift import apply_gate, clustered_wilson, exact_mcnemar, flip_status
from judgebench.compare.model import Drift, GateSettings


def test_independent_units_get_plain_wilson() -> None:
    changed = np.array([1] * 7 + [0] * 93)
    low, high, deff = clustered_wilson(changed, np.arange(100), 0.95) or (0, 0, 0)
    want = proportion_confint(7, 100, alpha=0.05, method="wilson")
    assert (low, high) == pytest.approx(want)
    assert deff == 1.0


def test_two_orders_that_always_agree_count_as_one_verdict_each_item() -> None:
    """Each item's two units change together: the design effect is 2 and the interval is Wilson's at
    m effective units, wider than the naive one over 2m."""
    m = 50
    per_item = np.array([1] * 10 + [0] * 40)
    changed, items = np.repeat(per_item, 2), np.repeat(np.arange(m), 2)
    low, high, deff = clustered_wilson(changed, items, 0.95) or (0, 0, 0)
    assert deff == pytest.approx(2.0)
    want = proportion_confint(0.2 * m, m, alpha=0.05, method="wilson")
    assert (low, high) == pytest.approx(want)
    naive = proportion_confint(20, 100, alpha=0.05, method="wilson")
    assert high - low > naive[1] - naive[0]


def test_nothing_compared_has_no_interval() -> None:
    assert clustered_wilson(np.array([], dtype=int), np.array([], dtype=object), 0.95) is None


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 12), (9, 2), (20, 20)])
def test_exact_mcnemar_is_the_binomial_test_on_discordant_pairs(b: int, c: int) -> None:
    p = exact_mcnemar(50, b, c, 10)
    assert p == pytest.approx(mcnemar_exact(b, c))
    if b + c:
        assert p == pytest.approx(sps.binomtest(b, b + c, 0.5).pvalue)


def _row(condition: str, flip: float, low: float, high: float, p: float | None = None) -> Drift:
    return Drift(
        judge_a="j", judge_b="j", kind="pair", condition=condition, units=100, missing=0, compared=100,
        items=50, changed=int(flip * 100), flip_rate=flip, flip_low=low, flip_high=high, design_effect=1.0,
        gold=100 if p is not None else 0, accuracy_a=0.8, accuracy_b=0.7, mcnemar_p=p,
    )  # fmt: skip


def test_flip_gate_fails_only_above_the_limit_with_confidence() -> None:
    assert flip_status(_row("en", 0.2, 0.12, 0.3), 0.1) == "fail"
    assert flip_status(_row("en", 0.12, 0.06, 0.2), 0.1) == "within noise"  # point above, not sure
    assert flip_status(_row("en", 0.03, 0.01, 0.08), 0.1) == "pass"


def test_gate_reasons_name_the_failing_rows_and_mcnemar_is_adjusted() -> None:
    rows = [_row("en", 0.03, 0.01, 0.08, p=0.5), _row("zh", 0.3, 0.2, 0.4, p=0.001)]
    reasons = apply_gate(rows, GateSettings(flip_rate=0.1, mcnemar_alpha=0.01), 0.95)
    assert [r.gate_flip for r in rows] == ["pass", "fail"]
    assert [r.gate_mcnemar for r in rows] == ["pass", "fail"]
    assert rows[1].mcnemar_p_adjusted == pytest.approx(0.002)  # BH over two tests
    assert len(reasons) == 2 and all(" zh: " in r for r in reasons)
    # no limit given: nothing is gated, the adjusted p-values are still there
    fresh = [_row("en", 0.3, 0.2, 0.4, p=0.001)]
    assert apply_gate(fresh, GateSettings(), 0.95) == []
    assert fresh[0].gate_flip is None and fresh[0].mcnemar_p_adjusted == pytest.approx(0.001)
