"""System aggregates, ranks and correlations of raw vs bias-bounded scores (PROTOCOL §5).

scipy (0.6 s to import) loads in the functions that use it, as in analysis/stats.py.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from judgebench.bbe.scores import ScoreSet
from judgebench.records.bbe_document import Correlation, RankCorrelation, SystemRow

FloatArray = NDArray[np.float64]


def _safe(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def unit_correlation(raw: FloatArray, noisy: FloatArray) -> Correlation:
    from scipy import stats

    if len(raw) < 3 or np.ptp(raw) == 0 or np.ptp(noisy) == 0:
        return Correlation(pearson=None, spearman=None)
    return Correlation(
        pearson=_safe(float(stats.pearsonr(raw, noisy)[0])),
        spearman=_safe(float(stats.spearmanr(raw, noisy)[0])),
    )


def rank_correlation(raw: dict[str, float], noisy: dict[str, float]) -> RankCorrelation | None:
    """Spearman and Kendall between raw and bias-bounded system aggregates; None with < 3 systems."""
    from scipy import stats

    names = [s for s in raw if s in noisy]
    if len(names) < 3:
        return None
    a = np.array([raw[s] for s in names])
    b = np.array([noisy[s] for s in names])
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return RankCorrelation(spearman=None, kendall=None)
    return RankCorrelation(
        spearman=_safe(float(stats.spearmanr(a, b)[0])), kendall=_safe(float(stats.kendalltau(a, b)[0]))
    )


def ranks(values: dict[str, float]) -> dict[str, int]:
    """Rank 1 = highest aggregate; ties share the better rank."""
    from scipy import stats

    names = list(values)
    r = stats.rankdata([-values[s] for s in names], method="min")
    return {s: int(x) for s, x in zip(names, r, strict=True)}


def denominators(ss: ScoreSet) -> dict[str, int]:
    """Per system, what its aggregate divides by: answered units (accuracy) or scored units (mean)."""
    counts = {s: ss.systems.count(s) for s in dict.fromkeys(ss.systems)}
    if ss.aggregate == "accuracy" and ss.gold is not None:
        return {s: n + ss.units_dropped.get("invalid", 0) for s, n in counts.items()}
    return counts


def aggregates(ss: ScoreSet, values: FloatArray, *, invalid_credit: float = 0.0) -> dict[str, float]:
    """Per-system aggregate, else the mean raw-scale score. Judge-LS (gold known; one judge per set):
    tie-half accuracy over answered en judgments as in PROTOCOL §4, an invalid answer counting as
    wrong: each scored unit contributes its correctness (s or 1 - s), each unit dropped as invalid
    `invalid_credit` (0 raw; a release shrunk towards the label-neutral 0.5 credits it (1 - alpha) 0.5,
    the shrink of 0, so that the noise-free release keeps the raw order)."""
    systems = np.asarray(ss.systems)
    out: dict[str, float] = {}
    for system in dict.fromkeys(ss.systems):
        mask = systems == system
        if ss.aggregate == "accuracy" and ss.gold is not None:
            v = values[mask]
            g = ss.gold[mask]
            invalid = ss.units_dropped.get("invalid", 0)
            answered = len(v) + invalid
            out[system] = float((np.sum(g * v + (1.0 - g) * (1.0 - v)) + invalid * invalid_credit) / answered)
        else:
            out[system] = float(np.mean(ss.denormalise(values[mask])))
    return out


def system_rows(
    raw: dict[str, float], noisy: dict[str, float] | None, counts: dict[str, int]
) -> list[SystemRow]:
    r_raw = ranks(raw)
    r_bb = ranks(noisy) if noisy else {}
    return [
        SystemRow(
            system=s,
            units=counts.get(s, 0),
            raw=raw[s],
            bias_bounded=None if noisy is None else noisy.get(s),
            rank_raw=r_raw[s],
            rank_bias_bounded=r_bb.get(s),
        )
        for s in sorted(raw, key=lambda x: r_raw[x])
    ]
