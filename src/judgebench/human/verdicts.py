"""What a human label is compared with: the judge's verdict on a whole item in one condition.

A human reads an item once; a judge answers it in both orders. The judge's item verdict is the side
both orders chose; orders that disagree (position inconsistency) mean no preference, `tie`; an item
with no valid answer has no verdict (None: counted as a disagreement, and predicts a coin in PPI).
Where an output came from (a model, or only its position) names the win rates (`sources`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from judgebench.human.labels import HumanValue

_CODE = {"1": 1.0, "2": 2.0, "tie": 3.0}
_VALUE: dict[float, HumanValue] = {1.0: "1", 2.0: "2", 3.0: "tie"}
POSITION_SOURCE = "output_1"  # with no models named, the win rate is that of the first output


def item_verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per judge, item and condition of the pair judgments (an analysis frame): `verdict`
    (1 / 2 / tie, or None) and `gold` (the dataset's label 1 / 2, or None)."""
    pairs = frame[frame["kind"] == "pair"]
    code = pairs["verdict"].map(_CODE)
    work = pd.DataFrame(
        {
            "judge": pairs["judge"].to_numpy(),
            "item_id": pairs["item_id"].to_numpy(),
            "condition": pairs["condition"].to_numpy(),
            "code": code.to_numpy(dtype=float),
            "gold": pairs["label"].to_numpy(dtype=float),
        }
    )
    grouped = work.groupby(["judge", "item_id", "condition"], sort=False)
    agg = grouped.agg(low=("code", "min"), high=("code", "max"), gold=("gold", "max")).reset_index()
    low, high = agg["low"].to_numpy(), agg["high"].to_numpy()
    combined = np.where(np.isnan(low), np.nan, np.where(low == high, low, 3.0))
    # object columns: None stays None (pandas' string dtype would turn it into NaN, a truthy float)
    verdict = [None if math.isnan(c) else _VALUE[c] for c in combined]
    gold = [None if math.isnan(g) else _VALUE[g] for g in agg["gold"].to_numpy(dtype=float)]
    agg["verdict"] = pd.Series(verdict, index=agg.index, dtype=object)
    agg["gold"] = pd.Series(gold, index=agg.index, dtype=object)
    return agg[["judge", "item_id", "condition", "verdict", "gold"]]


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def output_sources(metadata: Mapping[str, Any], label: int | None) -> tuple[str, str] | None:
    """The models behind output_1 and output_2 when the item names them: `model_1`/`model_2`, or
    RewardBench's `chosen_model`/`rejected_model` placed by the item's label; None otherwise."""
    first, second = _text(metadata.get("model_1")), _text(metadata.get("model_2"))
    if first and second:
        return first, second
    chosen, rejected = _text(metadata.get("chosen_model")), _text(metadata.get("rejected_model"))
    if chosen and rejected and label in (1, 2):
        return (chosen, rejected) if label == 1 else (rejected, chosen)
    return None


def score_for(value: HumanValue | None, side: int) -> float:
    """The win of output `side` (1 or 2) under a label: 1 won, 0 lost, 0.5 a tie; no verdict 0.5."""
    if value is None or value == "tie":
        return 0.5
    return 1.0 if value == str(side) else 0.0
