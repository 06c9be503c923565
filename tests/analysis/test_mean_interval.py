"""The mean's normal interval from per-cell sums: a constant value has no spread (its interval is the
point, whatever the rounding of the one-pass formula), a small real spread keeps its interval."""

from __future__ import annotations

import pandas as pd

from judgebench.analysis.cell_sums import mean_record


def _cell(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "judge": ["j"], "condition": ["en"], "subset": ["all"], "filtered": [False],
            "total": [sum(values)], "squares": [sum(v * v for v in values)], "n": [len(values)],
        }
    )  # fmt: skip


def _interval(values: list[float]) -> tuple[float, float, float]:
    rec = mean_record(_cell(values), "m", total="total", squares="squares", n="n", confidence=0.95).iloc[0]
    return float(rec["value"]), float(rec["ci_low"]), float(rec["ci_high"])


def test_a_constant_mean_at_five_values_has_the_point_as_its_interval() -> None:
    value, low, high = _interval([0.8] * 5)
    assert low == value == high


def test_a_constant_mean_whose_sums_round_still_has_no_spread() -> None:
    """The sum of squares a few units in the last place above n * mean^2, as summation in another order
    leaves it for 60 equal confidences: no spread, not an interval 1e-8 wide."""
    cell = _cell([0.8] * 60)
    cell["squares"] = 60 * 0.8**2 * (1 + 8e-16)
    rec = mean_record(cell, "m", total="total", squares="squares", n="n", confidence=0.95).iloc[0]
    assert rec["ci_low"] == rec["value"] == rec["ci_high"]


def test_a_small_real_spread_keeps_an_interval() -> None:
    value, low, high = _interval([0.8, 0.8, 0.8, 0.8, 0.8001])
    assert low < value < high
    assert high - low > 1e-5
