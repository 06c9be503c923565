"""The statistics of `compare`: the item-clustered Wilson interval, exact McNemar against the binomial
test, the item-clustered McNemar against the exact McNemar and scipy's permutation test, and the
gate's outcomes on planted rows (no evidence included)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from judgebench.analysis.stats import mcnemar_exact
from judgebench.compare.compare_doc import Drift, GateSettings
from judgebench.compare.drift import (
    EXACT_DISCORDANCE,
    apply_gate,
    clustered_mcnemar,
    clustered_wilson,
    exact_mcnemar,
    flip_status,
)


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


@pytest.mark.parametrize(("b", "c"), [(1, 0), (3, 12), (9, 2), (20, 20), (0, 7)])
def test_clustered_mcnemar_with_one_unit_an_item_is_the_exact_test(b: int, c: int) -> None:
    diffs = np.array([1] * b + [-1] * c + [0] * 30)
    assert clustered_mcnemar(diffs) == pytest.approx(exact_mcnemar(30, b, c, 0), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_mcnemar_is_the_exact_sign_flip_permutation_test(seed: int) -> None:
    """Against scipy's permutation test, every one of the 2^n swaps of the runs within an item."""
    rng = np.random.default_rng(seed)
    diffs = rng.integers(-4, 5, size=12)
    diffs[0] = 3  # never all zero
    b, c = np.clip(diffs, 0, None), np.clip(-diffs, 0, None)
    want = sps.permutation_test(
        (b, c), lambda x, y, axis: np.sum(x - y, axis=axis), permutation_type="samples",
        n_resamples=np.inf, vectorized=True,
    ).pvalue  # fmt: skip
    assert clustered_mcnemar(diffs) == pytest.approx(want, abs=1e-12)
    assert clustered_mcnemar(np.zeros(5, dtype=int)) == 1.0


def test_many_discordant_units_use_the_normal_approximation_which_agrees() -> None:
    """Above EXACT_DISCORDANCE the p is Durkalski's statistic's normal tail; just below it the exact
    distribution is already as close as the third digit."""
    rng = np.random.default_rng(3)
    diffs = rng.choice([-3, -2, 2, 3, 4], size=1500, p=[0.3, 0.2, 0.2, 0.2, 0.1])
    assert 2000 < np.abs(diffs).sum() <= EXACT_DISCORDANCE
    exact = clustered_mcnemar(diffs)
    z = abs(diffs.sum()) / np.sqrt(np.sum(diffs.astype(float) ** 2))
    assert 0.001 < exact < 0.5 and exact == pytest.approx(2 * sps.norm.sf(z), rel=0.05)
    big = np.tile(diffs, 3)
    z_big = abs(big.sum()) / np.sqrt(np.sum(big.astype(float) ** 2))
    assert clustered_mcnemar(big) == pytest.approx(2 * sps.norm.sf(z_big), rel=1e-9)


def _empty_row(units: int, missing: int, gold: bool = True) -> Drift:
    return Drift(
        judge_a="j", judge_b="j", kind="pair", condition="zh", units=units, missing=missing,
        compared=units - missing, items=0, changed=0, flip_rate=None, flip_low=None, flip_high=None,
        design_effect=None, gold=units - missing if gold else 0,
    )  # fmt: skip


def test_a_row_with_nothing_compared_fails_the_gate_as_no_evidence() -> None:
    """Run B's every call failed: 0 compared is no evidence, a failure under any gate, never a pass."""
    for gate in (GateSettings(flip_rate=0.1), GateSettings(mcnemar_alpha=0.05)):
        row = _empty_row(units=120, missing=120)
        reasons = apply_gate([row], gate, 0.95)
        assert len(reasons) == 1 and "no evidence: 0 compared" in reasons[0] and "120 missing" in reasons[0]
        assert "no evidence" in (row.gate_flip, row.gate_mcnemar)
    # without a gate nothing fails; a row with verdicts passes the flip gate
    assert apply_gate([_empty_row(units=120, missing=120)], GateSettings(), 0.95) == []
    assert apply_gate([_row("zh", 0.02, 0.01, 0.05)], GateSettings(flip_rate=0.1), 0.95) == []


def test_the_mcnemar_gate_without_gold_labels_is_no_evidence() -> None:
    row = _row("zh", 0.02, 0.01, 0.05)  # compared, no gold label: no McNemar p
    reasons = apply_gate([row], GateSettings(mcnemar_alpha=0.05), 0.95)
    assert row.gate_mcnemar == "no evidence" and "has a gold label" in reasons[0]


def test_no_change_on_few_items_is_bounded_by_the_items_not_the_units() -> None:
    """5 items x 6 units, nothing changed: the upper bound is Wilson's on 5 items (43%), not on 30
    independent verdicts (11%); a 15% limit is then `within noise`, not a pass."""
    changed, items = np.zeros(30, dtype=int), np.repeat(np.arange(5), 6)
    low, high, deff = clustered_wilson(changed, items, 0.95) or (1, 1, 0)
    assert (low, high) == pytest.approx(proportion_confint(0, 5, alpha=0.05, method="wilson"))
    assert deff == 6.0
    row = _row("zh", 0.0, low, high)
    assert flip_status(row, 0.15) == "within noise"
    # many items, nothing changed: a pass on the items' own bound
    many = clustered_wilson(np.zeros(1200, dtype=int), np.repeat(np.arange(200), 6), 0.95)
    low, high, _ = many or (1, 1, 0)
    assert high == pytest.approx(proportion_confint(0, 200, alpha=0.05, method="wilson")[1])
    assert flip_status(_row("zh", 0.0, low, high), 0.10) == "pass"
