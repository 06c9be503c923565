"""Issue 40: PPI++'s normal interval with lambda fitted on the same few labels covered 0.80 at 10
labels. Below PPI_MIN_LABELS the estimate is the human-only Wilson interval and says so; from there
on PPI++ with a cross-fitted lambda and a t interval. A cheap seeded coverage check at 10, 21 and 84."""

from __future__ import annotations

import numpy as np
import pytest

from judgebench.human.estimates import PPI_MIN_LABELS, _Sample, estimate_of
from judgebench.human.human_doc import Estimate

SCORES = np.array([0.0, 0.5, 1.0])
P1, ACCURACY, UNLABELLED = 0.8, 0.8, 500  # output_1 wins 80% (ties 5%): the hard corner for a normal CI
THETA = P1 + 0.05 * 0.5


def _draw(rng: np.random.Generator, m: int) -> tuple[np.ndarray, np.ndarray]:
    y = rng.choice(SCORES, size=m, p=[1 - P1 - 0.05, 0.05, P1])
    f = np.where(rng.random(m) < ACCURACY, y, rng.choice(SCORES, size=m))
    return y, f


def _estimate(rng: np.random.Generator, n: int) -> Estimate:
    y, f = _draw(rng, n)
    _, f_unlabelled = _draw(rng, UNLABELLED)
    sample = _Sample(y.tolist(), f.tolist(), f_unlabelled.tolist())
    found = estimate_of(sample, ("J", "en", "win_rate", "output_1"), 0.95)
    assert found is not None
    return found


@pytest.mark.parametrize("n", [10, 21, 84])
def test_coverage_at_small_label_counts(n: int) -> None:
    rng = np.random.default_rng(40 + n)
    reps = 400
    covered = 0
    for _ in range(reps):
        e = _estimate(rng, n)
        covered += e.ppi.ci_low <= THETA <= e.ppi.ci_high
    assert covered / reps >= 0.92


def test_below_the_minimum_the_estimate_is_human_only_and_says_so() -> None:
    rng = np.random.default_rng(1)
    few = _estimate(rng, PPI_MIN_LABELS - 1)
    assert few.method in ("classical", "unanimous") and few.lam == 0.0
    assert few.ppi == few.classical
    many = _estimate(rng, PPI_MIN_LABELS)
    assert many.method == "ppi++" and many.lam > 0.0


def test_the_records_name_the_interval_used() -> None:
    from judgebench.human.human_doc import HumanReport

    rng = np.random.default_rng(2)
    few, many = _estimate(rng, 10), _estimate(rng, 84)
    report = HumanReport(file="labels.csv", labels=94, annotators=["a"], conditions=["en"], split_votes=0,
                         confidence=0.95, estimates=[few, many])  # fmt: skip
    methods = [(r.n, r.metric, str(r.ci_method)) for r in report.records()]
    assert (10, "ppi_win_rate", "wilson") in methods and (84, "ppi_win_rate", "t") in methods
