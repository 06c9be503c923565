"""The guarantee, planted: the exact bound is the binomial's, the fixed sequence stops at its first
failure, an informative judge keeps most items at the target while a noise judge keeps almost none, and
over many calibrations the realised disagreement exceeds alpha in at most about delta of them (while a
calibration on the point estimate fails far more often: the check can fail)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from judgebench.selective import Design, SimJudge, calibrate_rows, labels_needed, simulate, upper_bound
from judgebench.selective.calibrate import sequence_steps

ALPHA, DELTA = 0.15, 0.1


def mc_error(p: float, n: int) -> float:
    return 3.0 * math.sqrt(p * (1.0 - p) / n)


@pytest.mark.parametrize(("k", "n"), [(0, 30), (3, 40), (17, 200), (49, 393)])
def test_the_bound_is_the_r_where_the_binomial_cdf_is_delta(k: int, n: int) -> None:
    r = float(upper_bound(k, n, DELTA))
    assert binom.cdf(k, n, r) == pytest.approx(DELTA, abs=1e-9)
    assert k / n < r < 1.0
    if k == 0:
        assert r == pytest.approx(1.0 - DELTA ** (1.0 / n))


def test_nothing_kept_or_all_wrong_bounds_at_one() -> None:
    assert upper_bound(0, 0, DELTA) == 1.0 and upper_bound(5, 5, DELTA) == 1.0


def test_the_sequence_stops_at_its_first_failure_even_if_lower_thresholds_would_pass() -> None:
    # the 40 most confident items hold 20 disagreements; below them 400 items that all agree
    conf = np.concatenate([np.linspace(0.99, 0.9, 40), np.linspace(0.89, 0.1, 400)])
    wrong = np.concatenate([np.arange(40) % 2 == 0, np.zeros(400, dtype=bool)])
    fit = calibrate_rows(conf, wrong, alpha=ALPHA, delta=DELTA, min_kept=30)
    assert np.isnan(fit.threshold[0]) and fit.kept[0] == 0  # the first tested threshold failed
    # without the bad head the same data passes all the way down
    fit = calibrate_rows(conf[40:], wrong[40:], alpha=ALPHA, delta=DELTA, min_kept=30)
    assert fit.threshold[0] == pytest.approx(0.1) and fit.kept[0] == 400


def test_equal_confidences_are_one_threshold_and_rows_match_the_listed_steps() -> None:
    rng = np.random.default_rng(3)
    conf = np.round(rng.random(500), 1)  # 11 distinct values
    wrong = rng.random(500) < 0.75 * (1 - conf) ** 2
    fit = calibrate_rows(conf, wrong, alpha=ALPHA, delta=DELTA)
    steps = sequence_steps(conf, wrong, alpha=ALPHA, delta=DELTA)
    passed = [s for s in steps if s[4]]
    assert fit.threshold[0] == passed[-1][0] and fit.kept[0] == int((conf >= fit.threshold[0]).sum())
    assert fit.kept[0] == passed[-1][1] and fit.errors[0] == int(wrong[conf >= fit.threshold[0]].sum())
    assert len({s[0] for s in steps}) == len(steps) and not steps[-1][4]


DESIGN = Design(labelled=1000, fresh=4000, calibrations=200, seed=11)


def test_an_informative_judge_reaches_the_target_keeping_most_items() -> None:
    result = simulate([SimJudge(0.25)], DESIGN, alpha=ALPHA, delta=DELTA)
    assert result.coverage.mean() > 0.55  # the ideal is 1 - (1 - sqrt(0.6)) = 0.77
    assert np.nanmean(result.disagreement) < ALPHA
    assert np.isfinite(result.thresholds).all()


def test_a_judge_whose_confidence_is_noise_keeps_almost_nothing() -> None:
    result = simulate([SimJudge(0.25, informative=False)], DESIGN, alpha=ALPHA, delta=DELTA)
    assert result.coverage.mean() < 0.02
    assert np.isnan(result.thresholds).mean() > 0.9


def test_a_judge_good_everywhere_keeps_everything_once_the_first_test_has_enough_items() -> None:
    """Fixed-sequence testing stops at its first failure, and its first test keeps only min_kept items:
    at 30, two disagreements in 30 (bound 0.17 > 0.15) end it, which a judge at 5% meets almost half the
    time. The docs say so; --min-kept 100 makes the first test strong enough."""
    good = SimJudge(0.05, informative=False)
    assert simulate([good], DESIGN, alpha=ALPHA, delta=DELTA, min_kept=100).coverage.mean() > 0.95
    assert simulate([good], DESIGN, alpha=ALPHA, delta=DELTA, min_kept=30).coverage.mean() < 0.8


@pytest.mark.parametrize("labelled", [200, 1000])
def test_the_true_risk_exceeds_alpha_in_at_most_about_delta_of_calibrations(labelled: int) -> None:
    judge = SimJudge(0.25)
    design = Design(labelled=labelled, fresh=10, calibrations=2000, seed=labelled, chunk=500)
    result = simulate([judge], design, alpha=ALPHA, delta=DELTA)
    risk = judge.risk(result.thresholds[:, 0])
    failed = np.nan_to_num(risk, nan=0.0) > ALPHA
    assert failed.mean() <= DELTA + mc_error(DELTA, 2000)


def test_the_point_estimate_fails_far_more_often_than_delta() -> None:
    """The same sequence with the bound's level at 1/2 (about the observed rate): the check above flips."""
    judge = SimJudge(0.25)
    design = Design(labelled=1000, fresh=10, calibrations=1000, seed=5, chunk=500)
    result = simulate([judge], design, alpha=ALPHA, delta=0.5)
    failed = np.nan_to_num(judge.risk(result.thresholds[:, 0]), nan=0.0) > ALPHA
    assert failed.mean() > 2 * DELTA + mc_error(DELTA, 1000)


def test_a_cascade_on_fresh_items_fails_in_at_most_about_delta_of_calibrations() -> None:
    judges = [SimJudge(0.35), SimJudge(0.2)]
    design = Design(labelled=600, fresh=20_000, calibrations=600, seed=7)
    result = simulate(judges, design, alpha=ALPHA, delta=DELTA / 2)  # delta split over two stages
    assert result.failed.mean() <= DELTA + mc_error(DELTA, 600)
    assert result.coverage.mean() > 0.8  # the second judge takes most of what the first leaves


def test_the_planned_labels_are_the_fewest_that_pass() -> None:
    n = labels_needed(alpha=ALPHA, delta=DELTA, coverage=0.6, error=0.08)
    assert n is not None
    kept = math.ceil(0.6 * n - 1e-9)
    assert upper_bound(round(0.08 * kept), kept, DELTA) <= ALPHA
    before = math.ceil(0.6 * (n - 1) - 1e-9)
    assert before < 30 or upper_bound(round(0.08 * before), before, DELTA) > ALPHA
    assert labels_needed(alpha=ALPHA, delta=DELTA, coverage=0.6, error=0.15) is None  # at alpha: never
    tighter = labels_needed(alpha=ALPHA, delta=0.01, coverage=0.6, error=0.08)
    assert tighter is not None and tighter > n
