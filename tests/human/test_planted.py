"""The issue's acceptance check: over 200 seeds of a planted world, PPI++ intervals cover the truth at
their nominal rate, are narrower than the human-only ones where the judge is good (en, accuracy
0.9), and no narrower where it is at chance (zh, 0.5); the accuracy estimate corrects noisy gold."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from judgebench.human import human_report
from tests.human.planted import human_slice, planted_frame

SEEDS = 200
ITEMS, LABELLED = 600, 150
ACCURACY = {"en": 0.9, "zh": 0.5}
WIN_RATE, GOLD_NOISE = 0.65, 0.1
CONFIDENCE = 0.9
TOLERANCE = 0.06  # 2.8 binomial standard deviations of a 90% coverage over 200 seeds


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str], dict[str, list[float]]]:
    """(condition, quantity) -> per seed: covered (0/1), width ratio, estimate, judge-only plug-in."""
    out: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for seed in range(SEEDS):
        frame, truth = planted_frame(
            seed, items=ITEMS, accuracy=ACCURACY, win_rate=WIN_RATE, gold_noise=GOLD_NOISE
        )
        labels = human_slice(truth, list(ACCURACY), LABELLED, seed)
        report = human_report(frame, labels, sources={}, confidence=CONFIDENCE, bootstrap=0)
        for e in report.estimates:
            true = WIN_RATE if e.quantity == "win_rate" else ACCURACY[e.condition]
            cell = out[(e.condition, e.quantity)]
            cell["covered"].append(float(e.ppi.ci_low <= true <= e.ppi.ci_high))
            cell["classical_covered"].append(float(e.classical.ci_low <= true <= e.classical.ci_high))
            cell["ratio"].append(e.width_ratio)
            cell["width"].append(e.ppi.ci_high - e.ppi.ci_low)
            cell["value"].append(e.ppi.value)
            cell["judge_only"].append(e.judge_only)
            cell["lam"].append(e.lam)
    return out


@pytest.mark.parametrize(
    "cell", [("en", "win_rate"), ("zh", "win_rate"), ("en", "accuracy"), ("zh", "accuracy")]
)
def test_ppi_intervals_cover_the_truth_at_their_nominal_rate(
    outcomes: dict[tuple[str, str], dict[str, list[float]]], cell: tuple[str, str]
) -> None:
    got = outcomes[cell]
    assert len(got["covered"]) == SEEDS
    coverage = float(np.mean(got["covered"]))
    assert abs(coverage - CONFIDENCE) <= TOLERANCE, f"{cell}: coverage {coverage:.3f}"


def test_a_good_judge_narrows_the_interval(outcomes: dict[tuple[str, str], dict[str, list[float]]]) -> None:
    en = outcomes[("en", "win_rate")]
    # rho = 2 * 0.9 - 1 = 0.8 with 450 of 600 items judge-only: width sqrt(1 - 0.64 * 0.75) = 0.72
    assert np.mean(en["ratio"]) < 0.8
    assert np.mean(en["ratio"]) > 0.6  # and not narrower than the closed form allows
    assert np.mean(en["lam"]) > 0.5


def test_a_judge_at_chance_buys_nothing_and_gets_the_wider_interval(
    outcomes: dict[tuple[str, str], dict[str, list[float]]],
) -> None:
    zh, en = outcomes[("zh", "win_rate")], outcomes[("en", "win_rate")]
    assert np.mean(zh["ratio"]) >= 0.97
    assert np.mean(zh["lam"]) < 0.1
    assert np.mean(zh["width"]) > 1.25 * np.mean(en["width"])  # honest: wider in zh than in en


def test_humans_correct_noisy_gold_in_the_accuracy(
    outcomes: dict[tuple[str, str], dict[str, list[float]]],
) -> None:
    en = outcomes[("en", "accuracy")]
    # against gold flipped 10% of the time the judge looks 0.9 * 0.9 + 0.1 * 0.1 = 0.82 accurate
    assert np.mean(en["judge_only"]) == pytest.approx(0.82, abs=0.01)
    assert np.mean(en["value"]) == pytest.approx(ACCURACY["en"], abs=0.01)  # PPI: the truth
    assert np.mean(en["ratio"]) < 0.9  # gold agrees with the humans 90%: a strong stand-in
