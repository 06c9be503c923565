"""The betting confidence sequence against its definition (Waudby-Smith & Ramdas 2023), its exact
martingale identity and its coverage by simulation, and the settled rule of `judge --until-settled`."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from judgebench.analysis import ReportSettings
from judgebench.analysis.frame import judgment_frame
from judgebench.analysis.sequential import (
    THETA,
    TRUNCATIONS,
    bets,
    betting_cs,
    item_values,
    log_capital,
    settle,
    stratified_order,
)
from tests.analysis.builders import pair

ALPHA = 0.05
NEED = np.log(1 / ALPHA) - np.log(THETA)  # theta K >= 1/alpha, in logs


def _misses(x: np.ndarray, m: float, target: float) -> bool:
    plus, minus = log_capital(x, [m], target)
    return bool(((plus >= NEED) | (minus >= NEED)).any())


@pytest.mark.parametrize("mean", [0.05, 0.3, 0.5, 0.85])
def test_time_uniform_coverage_by_simulation(mean: float) -> None:
    """P(exists t <= 400: the true mean leaves the CS) <= alpha, over 1000 seeds, for a Bernoulli
    and a Beta(4 mean, 4 (1 - mean)) law, with bets aimed at a limit 10 points away and at the mean
    itself: validity at every time, not at one n. The binomial standard error of a 5% miss rate over
    1000 seeds is 0.7 points; allow 2 of them."""
    rng = np.random.default_rng(7)
    for law in ("bernoulli", "beta"):
        for target in (mean, min(0.95, mean + 0.1)):
            misses = 0
            for _ in range(1000):
                if law == "bernoulli":
                    x = (rng.random(400) < mean).astype(float)
                else:
                    x = rng.beta(4.0 * mean, 4.0 * (1.0 - mean), 400)
                misses += _misses(x, mean, target)
            assert misses / 1000 <= ALPHA + 0.014, (law, target)


def test_coverage_holds_under_the_subset_stratified_order() -> None:
    """The rounds take subsets at their shares (stratified_order), so the stream is not exchangeable
    when subsets differ; planted per-subset rates from 25% to 92% (LLMBar-like accuracy), the pooled
    CS still misses the overall rate in at most alpha of 600 seeds."""
    sizes = {"N": 100, "Nb": 134, "I": 92, "O": 47, "M": 46}
    rates = {"N": 0.92, "Nb": 0.25, "I": 0.45, "O": 0.5, "M": 0.3}
    items = {f"{s}/{i}": s for s, n in sizes.items() for i in range(n)}
    mean = sum(sizes[s] * rates[s] for s in sizes) / sum(sizes.values())
    rng = np.random.default_rng(3)
    misses = 0
    for seed in range(600):
        order = stratified_order(items, seed)
        p = np.array([rates[i.split("/")[0]] for i in order])
        misses += _misses((rng.random(len(p)) < p).astype(float), mean, 0.5)
    assert misses / 600 <= ALPHA


def test_capital_is_an_exact_martingale() -> None:
    """E[K_t(m)] = 1 for every t under i.i.d. draws of mean m (Ville's inequality needs no more):
    computed exactly over all 2^12 Bernoulli sequences, for each side and three bet targets. A bet
    that peeked at x_t, or a truncation that let a factor go negative, breaks the identity."""
    t = 12
    seqs = ((np.arange(2**t)[:, None] >> np.arange(t)) & 1).astype(float)
    for m in (0.2, 0.5, 0.7):
        weights = np.prod(np.where(seqs == 1.0, m, 1.0 - m), axis=1)
        for target in (0.1, m, 0.9):
            plus = np.array([np.exp(log_capital(s, [m], target)[0][0]) for s in seqs])
            minus = np.array([np.exp(log_capital(s, [m], target)[1][0]) for s in seqs])
            np.testing.assert_allclose(weights @ plus, np.ones(t), rtol=1e-9)
            np.testing.assert_allclose(weights @ minus, np.ones(t), rtol=1e-9)
            assert (plus > 0).all() and (minus > 0).all()


def test_capital_is_the_papers_product() -> None:
    """K+_t(m) = mean_c prod (1 + min(up_i, c/m)(x_i - m)): aGRAPA bets against the target on the
    side the past puts the mean, the plug-in bets of eq. 26-27 on the other."""
    x = np.array([1.0, 0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0])
    m, target = 0.4, 0.45
    t = np.arange(1, len(x) + 1)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    mu_prev, s2_prev = np.concatenate([[0.5], mu[:-1]]), np.concatenate([[0.25], s2[:-1]])
    grapa = (mu_prev - target) / (s2_prev + (mu_prev - target) ** 2)
    plugin = np.sqrt(2 * np.log(2 / ALPHA) / (s2_prev * t * np.log(1 + t)))
    up, down = np.where(grapa > 0, grapa, plugin), np.where(grapa < 0, -grapa, plugin)
    assert (grapa > 0).any() and (grapa < 0).any()  # both branches are exercised
    np.testing.assert_allclose(bets(x, target, ALPHA), (up, down))
    want_plus = np.mean([np.cumprod(1 + np.minimum(up, c / m) * (x - m)) for c in TRUNCATIONS], 0)
    want_minus = np.mean([np.cumprod(1 - np.minimum(down, c / (1 - m)) * (x - m)) for c in TRUNCATIONS], 0)
    plus, minus = log_capital(x, [m], target, ALPHA)
    np.testing.assert_allclose(np.exp(plus[0]), want_plus)
    np.testing.assert_allclose(np.exp(minus[0]), want_minus)


def test_cs_shrinks_nests_and_holds_the_sample_mean() -> None:
    rng = np.random.default_rng(1)
    x = (rng.random(419) < 0.3).astype(float)
    lower, upper = betting_cs(x, ALPHA, 0.2)
    assert (np.diff(lower) >= 0).all() and (np.diff(upper) <= 0).all()  # running intersection
    assert lower[-1] <= x.mean() <= upper[-1]
    assert upper[-1] - lower[-1] < 0.2
    assert lower[0] == 0.0 and upper[0] == 1.0  # one observation says little


def test_a_judge_with_no_variance_settles_in_about_a_hundred_items() -> None:
    """Every item's position-inconsistency increase exactly 0 against the +5 pp limit (scaled: 0.5
    against 0.525): the c = 9/10 bettor decides it in about 100 items, c = 1/2 alone needed 147."""
    x = np.full(419, 0.5)
    _, minus = log_capital(x, [0.525], 0.525)
    first = int(np.argmax(minus[0] >= NEED)) + 1
    assert 90 <= first <= 110, first


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


# --- the without-replacement (finite-population) sequence: measured by bench_cost, not used ------


def test_without_replacement_capital_is_an_exact_martingale_over_every_order() -> None:
    """E[K_t(m)] = 1 for every t when m is the mean of a fixed population of N values taken in
    uniformly random order (Waudby-Smith & Ramdas 2020): exactly, over all 7! orders of a population
    of 0s, 1s and halves, each side and three bet targets. Centring at m itself (the with-replacement
    capital) breaks the identity, so the test can tell the two apart."""
    pop = np.array([1.0, 0.0, 0.0, 1.0, 0.5, 1.0, 0.0])
    orders = pop[np.array(list(itertools.permutations(range(len(pop)))))]
    m = float(pop.mean())
    for target in (0.2, m, 0.8):
        plus, minus = (
            np.array([np.exp(log_capital(o, [m], target, population=7)[k][0]) for o in orders])
            for k in (0, 1)
        )
        np.testing.assert_allclose(plus.mean(axis=0), np.ones(7), rtol=1e-9)
        np.testing.assert_allclose(minus.mean(axis=0), np.ones(7), rtol=1e-9)
        assert np.isfinite(plus).all() and (plus > 0).all() and (minus > 0).all()
    naive = np.array([np.exp(log_capital(o, [m], 0.2)[0][0]) for o in orders]).mean(axis=0)
    assert abs(naive[-1] - 1.0) > 0.01


def test_without_replacement_cs_covers_the_population_mean_and_closes_on_it() -> None:
    """A fixed population of 419 values (LLMBar's size) in 600 random orders: the CS misses its mean at
    some time in at most alpha of them, every interval holds the mean, and after the last value it
    is the mean itself, where a with-replacement CS is still about 13 points wide."""
    rng = np.random.default_rng(11)
    pop = (rng.random(419) < 0.3).astype(float)
    mean = float(pop.mean())
    misses = 0
    for _ in range(600):
        x = rng.permutation(pop)
        plus, minus = log_capital(x, [mean], mean, population=len(pop))
        misses += bool(((plus >= NEED) | (minus >= NEED)).any())
    assert misses / 600 <= ALPHA
    lower, upper = betting_cs(rng.permutation(pop), ALPHA, 0.2, population=len(pop))
    step = 1.0 / 2000  # the grid's
    assert (lower <= mean + step).all() and (upper >= mean - step).all()
    assert upper[-2] - lower[-2] <= 1 / len(pop) + step  # N - 1 values seen: the last one is in [0, 1]
    assert lower[-1] == upper[-1] == pytest.approx(mean)
    wr_low, wr_high = betting_cs(rng.permutation(pop), ALPHA, 0.2)
    assert wr_high[-1] - wr_low[-1] > 0.1


def test_without_replacement_rejects_a_mean_the_values_seen_rule_out() -> None:
    """Ten 1s out of a population of 20 make a mean below 0.5 impossible: 0.45 is excluded from below
    at the tenth value, not before, whatever the capital; with replacement it is not."""
    x = np.ones(10)
    plus, _ = log_capital(x, [0.45], 0.45, population=20)
    assert np.isinf(plus[0][-1]) and not np.isinf(plus[0][:9]).any()
    assert np.isfinite(log_capital(x, [0.45], 0.45)[0]).all()
