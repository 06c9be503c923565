"""The betting confidence sequence against its definition (Waudby-Smith & Ramdas 2023) and the
settled rule of `judge --until-settled`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgebench.analysis import ReportSettings
from judgebench.analysis.frame import judgment_frame
from judgebench.analysis.sequential import (
    THETA,
    betting_cs,
    capital,
    item_values,
    settle,
    stratified_order,
)
from tests.analysis.builders import pair

ALPHA = 0.05


@pytest.mark.parametrize("mean", [0.05, 0.3, 0.5, 0.85])
def test_time_uniform_coverage_by_simulation(mean: float) -> None:
    """P(exists t <= 400: the true mean leaves the CS) <= alpha, over 1000 seeds, for a Bernoulli
    and a Beta(4 mean, 4 (1 - mean)) law: validity at every time, not at one n. The binomial standard
    error of a 5% miss rate over 1000 seeds is 0.7 points; allow 2 of them."""
    rng = np.random.default_rng(7)
    for law in ("bernoulli", "beta"):
        misses = 0
        for _ in range(1000):
            if law == "bernoulli":
                x = (rng.random(400) < mean).astype(float)
            else:
                x = rng.beta(4.0 * mean, 4.0 * (1.0 - mean), 400)
            plus, minus = capital(x, [mean], ALPHA)
            misses += int(((THETA * plus >= 1 / ALPHA) | ((1 - THETA) * minus >= 1 / ALPHA)).any())
        assert misses / 1000 <= ALPHA + 0.014, law


def test_capital_is_the_papers_product() -> None:
    """K+_t(m) = prod (1 + min(lambda_i, c/m)(x_i - m)) with the predictable plug-in lambda_i."""
    x = np.array([1.0, 0.0, 1.0, 1.0, 0.5])
    m = 0.4
    t = np.arange(1, 6)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    prev = np.concatenate([[0.25], s2[:-1]])
    lam = np.sqrt(2 * np.log(2 / ALPHA) / (prev * t * np.log(1 + t)))
    want_plus = np.cumprod(1 + np.minimum(lam, 0.5 / m) * (x - m))
    want_minus = np.cumprod(1 - np.minimum(lam, 0.5 / (1 - m)) * (x - m))
    plus, minus = capital(x, [m], ALPHA)
    np.testing.assert_allclose(plus[0], want_plus)
    np.testing.assert_allclose(minus[0], want_minus)


def test_cs_shrinks_nests_and_holds_the_sample_mean() -> None:
    rng = np.random.default_rng(1)
    x = (rng.random(419) < 0.3).astype(float)
    lower, upper = betting_cs(x, ALPHA)
    assert (np.diff(lower) >= 0).all() and (np.diff(upper) <= 0).all()  # running intersection
    assert lower[-1] <= x.mean() <= upper[-1]
    assert upper[-1] - lower[-1] < 0.2
    assert lower[0] == 0.0 and upper[0] == 1.0  # one observation says little


def test_stratified_order_is_seeded_and_spreads_subsets() -> None:
    items = {f"a/{i}": "a" for i in range(90)} | {f"b/{i}": "b" for i in range(10)}
    first = stratified_order(items, 3)
    assert first == stratified_order(items, 3) and first != stratified_order(items, 4)
    assert sorted(first) == sorted(items)
    assert sum(i.startswith("b/") for i in first[:20]) >= 1  # the small subset appears early


def _run(n: int, flip_every: int | None) -> pd.DataFrame:
    out = []
    for i in range(n):
        item = f"Natural/{i}"
        for order in ("orig", "swap"):
            en = "1" if i % 10 else "2"  # wrong on every tenth item, in both orders
            flipped = flip_every is not None and i % flip_every == 0
            out.append(pair("j", item, "en", order, en, 1))
            out.append(pair("j", item, "zh", order, ("2" if en == "1" else "1") if flipped else en, 1))
    return judgment_frame(out)


def test_a_stable_judge_settles_pass_and_a_flipping_one_fail() -> None:
    settings = ReportSettings()
    order = [f"Natural/{i}" for i in range(419)]
    stable = settle(item_values(_run(419, None), ["zh"]), "j", ["zh"], settings, order)
    assert stable.verdicts == {"zh": "pass"} and stable.first_settled is not None
    assert stable.first_settled < 300
    flippy = settle(item_values(_run(419, 2), ["zh"]), "j", ["zh"], settings, order)
    assert flippy.verdicts == {"zh": "fail"} and flippy.first_settled is not None
    assert flippy.first_settled < 100
    few = settle(item_values(_run(5, None), ["zh"]), "j", ["zh"], settings, order)
    assert few.verdicts == {"zh": "inconclusive"} and not few.settled
    checks = {c.quantity.name: c for c in stable.checks}
    acc = checks["en_accuracy"]
    assert acc.low is not None and acc.high is not None and acc.low <= 0.9 <= acc.high


def test_decisions_at_the_limit_agree_with_the_reported_interval() -> None:
    """A check decided from the capital at m = limit says what the grid interval says: fail iff the
    interval lies above the limit, ok iff it lies at or below it (for 'above' checks)."""
    rng = np.random.default_rng(5)
    settings = ReportSettings()
    order = [f"Natural/{i}" for i in range(200)]
    for seed in range(20):
        p = rng.uniform(0.0, 0.5)
        values = pd.DataFrame(
            {"en_position_inconsistency": (rng.random(200) < p).astype(float)},
            index=pd.MultiIndex.from_product([["j"], order], names=["judge", "item_id"]),
        )
        check = {c.quantity.name: c for c in settle(values, "j", [], settings, order).checks}
        c = check["en_position_inconsistency"]
        assert c.low is not None and c.high is not None, seed
        limit = settings.max_position_inconsistency
        assert (c.state == "fail") == (c.low > limit + 1e-3) or abs(c.low - limit) <= 1e-3, (seed, c)
        assert (c.state == "ok") == (c.high <= limit) or abs(c.high - limit) <= 1e-3, (seed, c)
