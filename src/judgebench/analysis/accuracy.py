"""Per-judgment metrics of pair judgments: accuracy, the answer distribution and stated confidence.

Denominators (PROTOCOL §4): accuracy is over answered judgments with a label (an invalid answer is
wrong); position_a_rate and tie_rate over valid judgments; invalid_rate over answered ones;
missing_rate over planned ones. Every one is a column sum of `pair_flags`, summed per cell once.
"""

from __future__ import annotations

import pandas as pd

from judgebench.analysis.calibration import calibration_records
from judgebench.analysis.cell_sums import mean_record, proportion, sum_cells
from judgebench.analysis.frame import Layout
from judgebench.records import Metric

SUMMED = [
    "planned",
    "answered",
    "missing",
    "invalid",
    "valid",
    "acc_n",
    "correct",
    "half",
    "half_sq",
    "tie",
    "raw_a",
    "conf_n",
    "conf_sum",
    "conf_sq",
    "cal_n",
]


def pair_records(layout: Layout, p: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Accuracy (strict and tie-half), answer rates, mean confidence and calibration per cell."""
    agg = sum_cells(layout, p, SUMMED)
    if agg.empty:
        return pd.DataFrame()
    parts = [
        proportion(agg, Metric.STRICT_ACCURACY, "correct", "acc_n", confidence),
        proportion(agg, Metric.POSITION_A_RATE, "raw_a", "valid", confidence),
        proportion(agg, Metric.TIE_RATE, "tie", "valid", confidence),
        proportion(agg, Metric.INVALID_RATE, "invalid", "answered", confidence),
        proportion(agg, Metric.MISSING_RATE, "missing", "planned", confidence),
        mean_record(
            agg, Metric.TIE_HALF_ACCURACY, total="half", squares="half_sq", n="acc_n", confidence=confidence
        ),
    ]
    with_conf = agg[agg["conf_n"] > 0]
    if not with_conf.empty:
        parts.append(
            mean_record(
                with_conf,
                Metric.MEAN_CONFIDENCE,
                total="conf_sum",
                squares="conf_sq",
                n="conf_n",
                confidence=confidence,
            )
        )
    parts.append(calibration_records(layout, p, confidence))
    return pd.concat([x for x in parts if not x.empty], ignore_index=True)
