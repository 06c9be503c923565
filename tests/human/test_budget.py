"""The label budget: the labels it names give the half-width it promises (simulated), a judge at
chance saves nothing, and a pilot's budget reads the pilot's own agreement."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from judgebench.human import (
    assumed_budget,
    half_width_at,
    item_verdicts,
    labels_needed,
    pilot_budget,
    ppi_mean,
)
from tests.human.planted import human_slice, planted_frame


def test_the_budgeted_labels_give_the_promised_half_width() -> None:
    (row,) = assumed_budget({"en": 0.8}, 0.05, 0.95, {"en": 2000})
    assert row.rho == pytest.approx(0.6)
    assert row.ppi is not None and row.human_only is not None
    assert row.human_only == 385  # 1.96^2 * 0.25 / 0.05^2 = 384.1
    assert row.ppi < row.human_only
    assert (
        half_width_at(0.25, 0.6, row.ppi, 2000, 0.95)
        <= 0.05
        < half_width_at(0.25, 0.6, row.ppi - 1, 2000, 0.95)
    )
    rng = np.random.default_rng(0)
    halves, covered = [], []
    for _ in range(400):  # a world as assumed: win rate 1/2, the judge agrees with the human 80% of the time
        y = (rng.random(2000) < 0.5).astype(float)
        f = np.where(rng.random(2000) < 0.8, y, 1.0 - y)
        est = ppi_mean(y[: row.ppi], f[: row.ppi], f[row.ppi :], confidence=0.95)
        halves.append(est.width / 2)
        covered.append(est.ci_low <= 0.5 <= est.ci_high)
    assert np.mean(halves) == pytest.approx(0.05, rel=0.05)
    assert abs(np.mean(covered) - 0.95) < 0.03


def test_a_judge_at_chance_saves_nothing() -> None:
    human, ppi = labels_needed(0.25, 0.0, 0.05, 0.95, None)
    assert human == ppi == 385
    (row,) = assumed_budget({"zh": 0.5}, 0.05, 0.95, {"zh": None})
    assert row.ppi == row.human_only and row.saved == 0.0
    # more labels than the items: out of reach, never a number above N
    assert labels_needed(0.25, 0.0, 0.02, 0.95, 1000) == (None, None)
    # a perfect judge over many items: a handful of labels
    assert labels_needed(0.25, 1.0, 0.05, 0.95, None)[1] == 2


def test_a_small_pilot_that_always_agreed_promises_no_perfect_judge() -> None:
    frame, truth = planted_frame(4, items=300, accuracy={"en": 1.0})
    labels = human_slice(truth, ["en"], 17, 4)
    (row,) = pilot_budget(item_verdicts(frame), labels, 0.05, 0.95, items=1000)
    assert row.agreement == 1.0 and row.rho == pytest.approx(0.63, abs=0.01)  # Wilson 17/17: 0.816
    assert row.ppi is not None and row.ppi > 200


def test_a_pilot_budget_reads_the_pilots_agreement() -> None:
    frame, truth = planted_frame(3, items=600, accuracy={"en": 0.9, "zh": 0.5})
    labels = human_slice(truth, ["en", "zh"], 200, 3)
    rows = {r.condition: r for r in pilot_budget(item_verdicts(frame), labels, 0.05, 0.95, ["en", "zh"])}
    assert list(rows) == ["en", "zh"]
    assert rows["en"].agreement == pytest.approx(0.9, abs=0.05)
    # the planted rho is 0.8; the budget takes 2 * (the agreement's lower Wilson bound) - 1 when lower
    low = proportion_confint(round(rows["en"].agreement * 200), 200, alpha=0.05, method="wilson")[0]
    assert rows["en"].rho == pytest.approx(min(0.8, 2 * low - 1), abs=0.05)
    assert rows["en"].rho < 0.8
    assert rows["zh"].rho < 0.2
    assert rows["en"].items == 600 and rows["en"].basis == "pilot: 200 labels"
    assert rows["en"].ppi is not None and rows["en"].human_only is not None
    assert rows["en"].ppi < 0.75 * rows["en"].human_only
    zh_ppi, zh_human = rows["zh"].ppi, rows["zh"].human_only
    assert zh_ppi is not None and zh_human is not None and zh_ppi > 0.9 * zh_human
