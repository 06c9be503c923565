"""Position-bias direction (PROTOCOL §4): the first-pick rate's item-clustered interval and test, and
the positional McNemar, each against an independent recomputation (statsmodels, scipy, and a
clustered bootstrap written here)."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from judgebench.analysis import ReportSettings, analyze
from judgebench.records import Judgment, MetricRecord
from tests.analysis.builders import pair

VERDICT = {("orig", "A"): "1", ("orig", "B"): "2", ("swap", "A"): "2", ("swap", "B"): "1"}


def _run(seed: int = 5, items: int = 200) -> tuple[list[Judgment], dict[str, list[int]]]:
    """A judge with an item-level preference for the first answer on some items (both orders A)."""
    rng = np.random.default_rng(seed)
    out: list[Judgment] = []
    picks: dict[str, list[int]] = {}
    for i in range(items):
        item, label = f"Natural/{i}", 1 + i % 2
        leans_first = rng.random() < 0.3  # this item: "A" in both orders
        letters = []
        for order in ("orig", "swap"):
            if rng.random() < 0.05:
                out.append(pair("J", item, "en", order, "invalid", label))
                continue
            gold = "A" if (label == 1) == (order == "orig") else "B"
            letter = "A" if leans_first else (gold if rng.random() < 0.85 else ("B" if gold == "A" else "A"))
            out.append(pair("J", item, "en", order, VERDICT[(order, letter)], label))
            letters.append(int(letter == "A"))
        picks[item] = letters
    return out, picks


def _record(records: list[MetricRecord], metric: str) -> MetricRecord:
    (rec,) = [
        r
        for r in records
        if (r.judge, r.metric, r.condition, r.subset, r.filtered) == ("J", metric, "en", "all", False)
    ]
    return rec


@pytest.fixture(scope="module")
def run() -> tuple[list[MetricRecord], dict[str, list[int]]]:
    judgments, picks = _run()
    return analyze(judgments, settings=ReportSettings(bootstrap_samples=0)).records, picks


def test_clustered_interval_equals_statsmodels_cluster_robust_ols(
    run: tuple[list[MetricRecord], dict[str, list[int]]],
) -> None:
    records, picks = run
    y = np.array([x for letters in picks.values() for x in letters], dtype=float)
    groups = np.array([i for i, letters in enumerate(picks.values()) for _ in letters])
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    z = stats.norm.ppf(0.975)
    rec = _record(records, "position_a_rate")
    assert rec.value == pytest.approx(fit.params[0])
    assert rec.ci_low_clustered == pytest.approx(fit.params[0] - z * fit.bse[0], abs=1e-9)
    assert rec.ci_high_clustered == pytest.approx(fit.params[0] + z * fit.bse[0], abs=1e-9)
    wald = 2 * stats.norm.sf(abs(fit.params[0] - 0.5) / fit.bse[0])
    assert rec.p_clustered == pytest.approx(wald, rel=1e-6)


def test_clustered_interval_agrees_with_a_clustered_bootstrap(
    run: tuple[list[MetricRecord], dict[str, list[int]]],
) -> None:
    records, picks = run
    rng = np.random.default_rng(0)
    per_item = [letters for letters in picks.values() if letters]
    a = np.array([sum(x) for x in per_item], dtype=float)
    v = np.array([len(x) for x in per_item], dtype=float)
    draws = rng.integers(0, len(a), size=(4000, len(a)))
    ratios = a[draws].sum(axis=1) / v[draws].sum(axis=1)
    low, high = np.quantile(ratios, [0.025, 0.975])
    rec = _record(records, "position_a_rate")
    assert rec.ci_low_clustered == pytest.approx(low, abs=0.015)
    assert rec.ci_high_clustered == pytest.approx(high, abs=0.015)
    # and the plain Wilson interval, which treats the two orders as independent, differs from it
    assert rec.ci_low is not None and abs(rec.ci_low - low) > abs(rec.ci_low_clustered - low)  # type: ignore[operator]


def test_positional_mcnemar_counts_items_and_matches_scipy(
    run: tuple[list[MetricRecord], dict[str, list[int]]],
) -> None:
    records, picks = run
    both = [letters for letters in picks.values() if len(letters) == 2]
    b = sum(1 for x in both if x == [1, 1])
    c = sum(1 for x in both if x == [0, 0])
    rec = _record(records, "positional_mcnemar")
    assert (rec.b, rec.c, rec.n, rec.value) == (b, c, len(both), b - c)
    assert rec.p == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)
    assert b > c and rec.p is not None and rec.p < 0.001  # the planted lean towards the first answer


def test_an_unbiased_consistent_judge_has_no_direction() -> None:
    out = []
    for i in range(100):
        label = 1 + i % 2
        for order in ("orig", "swap"):
            out.append(pair("J", f"Natural/{i}", "en", order, str(label), label))
    records = analyze(out, settings=ReportSettings(bootstrap_samples=0)).records
    rate = _record(records, "position_a_rate")
    assert rate.value == 0.5 and rate.p_clustered == 1.0
    assert rate.ci_low_clustered == rate.ci_high_clustered == 0.5  # every item: A once, B once
    mc = _record(records, "positional_mcnemar")
    assert (mc.b, mc.c, mc.p) == (0, 0, 1.0)
