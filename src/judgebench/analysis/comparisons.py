"""Judge vs judge: paired differences of flip rate and position inconsistency (judge `J1 vs J2`).

Each comparison uses only the units both judges answered validly; the difference is the first judge
minus the second, with an exact McNemar-style test on the units where exactly one of them flips
(or is position-inconsistent).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgebench.analysis.cell_sums import paired_diff, sum_cells
from judgebench.analysis.frame import Layout, concat_labelled
from judgebench.records import JudgePair, Metric
from judgebench.records.metrics import PFamily

SUMMED = ["common", "hit1", "hit2", "b", "c"]


def judge_pair_rows(
    rows: pd.DataFrame, unit: list[str], both_col: str, hit_col: str, judges: Sequence[str]
) -> pd.DataFrame:
    """Judge-vs-judge paired rows on units both judges have valid: who flips where the other does not."""
    if rows.empty or len(judges) < 2:
        return pd.DataFrame()
    both = rows.set_index([*unit, "judge"])[both_col].unstack("judge", fill_value=0)
    hit = rows.set_index([*unit, "judge"])[hit_col].unstack("judge", fill_value=0)
    out = []
    for i, j1 in enumerate(judges):
        for j2 in judges[i + 1 :]:
            if j1 not in both.columns or j2 not in both.columns:
                continue
            common = (both[j1] == 1) & (both[j2] == 1)
            h1 = common & (hit[j1] == 1)
            h2 = common & (hit[j2] == 1)
            frame = pd.DataFrame(
                {
                    "common": common.astype("int8"),
                    "hit1": h1.astype("int8"),
                    "hit2": h2.astype("int8"),
                    "b": (h1 & ~h2).astype("int8"),
                    "c": (h2 & ~h1).astype("int8"),
                }
            )
            out.append((frame.reset_index(), str(JudgePair(j1, j2))))
    return concat_labelled(out, "judge")


def judge_comparison_records(
    layout: Layout, jflip: pd.DataFrame, jpos: pd.DataFrame, confidence: float
) -> pd.DataFrame:
    parts = []
    for rows, metric in ((jflip, Metric.FLIP_RATE_DIFF), (jpos, Metric.POSITION_INCONSISTENCY_DIFF)):
        agg = sum_cells(layout, rows, SUMMED)
        if not agg.empty:
            parts.append(paired_diff(agg, metric, "common", PFamily.JUDGE_COMPARISON, confidence))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
