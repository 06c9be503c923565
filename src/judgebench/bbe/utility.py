"""What survives a release (PROTOCOL §5b, utility): which system orders, how fine a gap, how correlated.

For systems s and t the released difference of aggregates is the noise-free released difference
(alpha (A_s - A_t) with a shared centre) plus Gaussian noise whose sd is sqrt(sd_s^2 + sd_t^2), sd_s the
sd of system s's aggregate under the unit noise (sigma_s sqrt(n_s) / denominator_s, before clipping).

scipy.stats (0.6 s to import) loads in the functions that use it, as in analysis/stats.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from judgebench.records.bbe_document import UtilityBlock


@dataclass(frozen=True)
class SystemRelease:
    """One system's raw, noise-free released and released aggregate and its aggregate's noise sd,
    all in the aggregate's units; `scale` = alpha times units per normalised unit (shrink of a gap)."""

    raw: float
    noise_free: float
    released: float | None
    sd: float
    alpha: float


def _safe(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _correlations(raw: list[float], released: list[float]) -> tuple[float | None, float | None, float | None]:
    from scipy import stats

    a, b = np.asarray(raw), np.asarray(released)
    if len(a) < 2 or np.ptp(a) == 0:
        return None, None, None
    reduction = _safe(1.0 - float(np.std(b)) / float(np.std(a)))
    if len(a) < 3 or np.ptp(b) == 0:
        return None, None, reduction
    return _safe(float(stats.pearsonr(a, b)[0])), _safe(float(stats.spearmanr(a, b)[0])), reduction


def keep_probability(s: SystemRelease, t: SystemRelease) -> float:
    """Pr(the released order of s and t is their raw order); 0.5 for a raw tie."""
    from scipy import stats

    gap = s.raw - t.raw
    if gap == 0:
        return 0.5
    diff = (s.noise_free - t.noise_free) * (1.0 if gap > 0 else -1.0)
    sd = math.hypot(s.sd, t.sd)
    if sd == 0:
        return 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
    return float(stats.norm.cdf(diff / sd))


def utility(systems: dict[str, SystemRelease]) -> UtilityBlock:
    """The utility block of one release (a ranking over `systems`)."""
    from scipy import stats

    z95 = float(stats.norm.ppf(0.95))
    names = list(systems)
    probs: dict[str, float] = {}
    resolution = 0.0
    order_kept = True
    for a, b in combinations(names, 2):
        s, t = systems[a], systems[b]
        probs[f"{a} vs {b}"] = keep_probability(s, t)
        alpha = min(s.alpha, t.alpha)
        resolution = max(resolution, z95 * math.hypot(s.sd, t.sd) / alpha if alpha > 0 else math.inf)
        if (s.raw - t.raw) * (s.noise_free - t.noise_free) < 0 or (
            s.raw != t.raw and s.noise_free == t.noise_free
        ):
            order_kept = False
    released = [systems[n].released for n in names]
    if any(r is None for r in released):
        pearson = spearman = reduction = None
    else:
        pearson, spearman, reduction = _correlations(
            [systems[n].raw for n in names], [float(r) for r in released if r is not None]
        )
    pairs = len(probs)
    return UtilityBlock(
        pairs=pairs,
        pairs_kept_95=None if pairs == 0 else sum(p >= 0.95 for p in probs.values()) / pairs,
        resolution=None if pairs == 0 else _safe(resolution),
        pearson_systems=pearson,
        spearman_systems=spearman,
        variance_reduction=reduction,
        noise_free_order_kept=None if pairs == 0 else order_kept,
        keep_probability=probs if pairs <= 200 else {},
    )
