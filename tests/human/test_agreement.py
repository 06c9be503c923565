"""Agreement statistics on hand tables equal statsmodels, krippendorff and the numbers by hand."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from judgebench.human import human_labels
from judgebench.human.agreement import alpha_of, annotator_agreement, confusion, judge_agreement, kappa_of
from judgebench.human.labels import HumanLabel, HumanValue


def _hand_case() -> tuple[pd.DataFrame, dict[tuple[str, str], HumanValue]]:
    """40 items: judge 1 / human 1 on 20, judge 1 / human 2 on 5, judge 2 / human 1 on 3, 2 / 2 on 12."""
    cells = [("1", "1")] * 20 + [("1", "2")] * 5 + [("2", "1")] * 3 + [("2", "2")] * 12
    verdicts = pd.DataFrame(
        {
            "judge": "J",
            "item_id": [f"i{k}" for k in range(40)],
            "condition": "en",
            "verdict": [j for j, _ in cells],
            "gold": None,
        }
    )
    reference: dict[tuple[str, str], HumanValue] = {
        (f"i{k}", "en"): h
        for k, (_, h) in enumerate(cells)  # type: ignore[misc]
    }
    return verdicts, reference


def test_judge_agreement_equals_statsmodels_and_the_hand_numbers() -> None:
    verdicts, reference = _hand_case()
    (row,) = judge_agreement(verdicts, reference, 0.95)
    assert (row.n, row.agree) == (40, 32)
    low, high = proportion_confint(32, 40, alpha=0.05, method="wilson")
    assert row.accuracy.value == pytest.approx(0.8)
    assert (row.accuracy.ci_low, row.accuracy.ci_high) == pytest.approx((low, high))
    # by hand: p_o = 32/40, p_e = (25*23 + 15*17) / 40^2
    p_o, p_e = 0.8, (25 * 23 + 15 * 17) / 1600
    assert row.kappa is not None
    assert row.kappa.value == pytest.approx((p_o - p_e) / (1 - p_e))
    reference_kappa = cohens_kappa(np.array([[20, 5], [3, 12]]))  # statsmodels' default: 95%
    assert row.kappa.value == pytest.approx(reference_kappa.kappa)
    assert (row.kappa.ci_low, row.kappa.ci_high) == pytest.approx(
        (reference_kappa.kappa_low, reference_kappa.kappa_upp)
    )


def test_a_missing_verdict_is_its_own_category_and_a_disagreement() -> None:
    table = confusion(["1", None, "tie", "2"], ["1", "1", "tie", "1"])
    assert table.sum() == 4
    assert table[3, 0] == 1  # the judge's "none" row, the human's "1" column
    kappa = kappa_of(table, 0.95)
    assert kappa is not None
    used = table[np.ix_([0, 1, 2, 3], [0, 1, 2, 3])]
    assert kappa.value == pytest.approx(cohens_kappa(used).kappa)
    assert kappa_of(confusion(["1", "1"], ["1", "1"]), 0.95) is None  # one category: undefined


def test_krippendorff_alpha_equals_the_published_example() -> None:
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers,
    12 units, nominal alpha 0.743."""
    nan = math.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    assert alpha_of(data) == pytest.approx(0.743, abs=5e-4)
    assert alpha_of(data) == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    )


def _label(item: str, annotator: str, value: HumanValue, line: int) -> HumanLabel:
    return HumanLabel(item, "en", value, annotator, line)


def test_annotator_ceiling_from_a_hand_table() -> None:
    # two annotators on 6 items, agreeing on 4; a third labels one item only
    a = ["1", "1", "2", "2", "tie", "1"]
    b = ["1", "2", "2", "1", "tie", "1"]
    rows = [_label(f"i{k}", "a", v, k) for k, v in enumerate(a)]  # type: ignore[arg-type]
    rows += [_label(f"i{k}", "b", v, 10 + k) for k, v in enumerate(b)]  # type: ignore[arg-type]
    rows += [_label("i9", "c", "2", 20)]
    labels = human_labels(rows, "hand")
    (row,) = annotator_agreement(labels, 0.95, bootstrap=200, seed=1)
    assert (row.annotators, row.items, row.pairs) == (3, 6, 6)  # i9 has one label: no pair
    assert row.pairwise_agreement == pytest.approx(4 / 6)
    code = {"1": 1.0, "2": 2.0, "tie": 3.0}
    expected = krippendorff.alpha(
        reliability_data=[[code[v] for v in a], [code[v] for v in b]], level_of_measurement="nominal"
    )
    assert row.alpha is not None
    assert row.alpha.value == pytest.approx(expected)
    assert row.alpha.ci_low <= row.alpha.value <= row.alpha.ci_high
    assert row.alpha_bootstrap > 150  # resamples with a single value used are undefined and dropped


def test_agreeing_annotators_have_alpha_one_and_one_annotator_no_ceiling() -> None:
    rows = [_label(f"i{k}", who, v, k) for k, v in enumerate(["1", "2", "1"]) for who in ("a", "b")]  # type: ignore[arg-type]
    (row,) = annotator_agreement(human_labels(rows, "hand"), 0.95, bootstrap=0, seed=0)
    assert row.alpha is not None and row.alpha.value == pytest.approx(1.0)
    assert row.pairwise_agreement == 1.0
    alone = [_label(f"i{k}", "a", "1", k) for k in range(3)]
    assert annotator_agreement(human_labels(alone, "hand"), 0.95, bootstrap=0, seed=0) == []
