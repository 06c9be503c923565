"""Selective, cascaded judging with a guarantee (PROTOCOL §8; Jung et al. 2024, "Trust or Escalate").

A pure room, like analysis/: functions of judgments, labels and settings that read no file and reach no
provider. confidence (per item, from probabilities or agreement among answers), calibrate (thresholds
by fixed-sequence testing with an exact binomial bound, vectorised), cascade (a run's judges in cost
order, then people), planning (labels needed), simulate (planted judges for the guarantee's audit).
"""

from judgebench.selective.calibrate import (
    MIN_KEPT,
    Calibration,
    calibrate_cascade,
    calibrate_rows,
    upper_bound,
)
from judgebench.selective.cascade import item_decisions, run_cascade
from judgebench.selective.confidence import item_confidence
from judgebench.selective.planning import labels_needed, top_share_error
from judgebench.selective.simulate import Design, SimJudge, SimResult, simulate

__all__ = [
    "MIN_KEPT",
    "Calibration",
    "Design",
    "SimJudge",
    "SimResult",
    "calibrate_cascade",
    "calibrate_rows",
    "item_confidence",
    "item_decisions",
    "labels_needed",
    "run_cascade",
    "simulate",
    "top_share_error",
    "upper_bound",
]
