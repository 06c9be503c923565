"""A confidence threshold with a guarantee (PROTOCOL §8; Jung et al. 2024, "Trust or Escalate").

On n labelled items with confidences c and disagreements e (the judge's verdict differs from the
humans' label), the threshold l keeps the items with c >= l. Thresholds are tested from the highest
down (the distinct confidences, each keeping at least `min_kept` items); each is tested for "the risk
R(l) = P(disagree | c >= l) exceeds alpha" by the exact binomial (Clopper-Pearson) upper bound at level
delta: the r with BinomCDF(errors; kept, r) = delta, i.e. the (1 - delta) quantile of
Beta(errors + 1, kept - errors). The sequence goes on while the bound stays <= alpha and stops at the
first failure; the threshold is the last one that passed (none passed: the judge decides nothing).
Testing in a fixed order and stopping at the first failure costs no multiplicity correction
(fixed-sequence testing), so on new items exchangeable with the labelled ones,
P(R(l) <= alpha) >= 1 - delta.

Everything is vectorised over rows (one calibration per row), so that a simulation calibrates
thousands of times at the cost of a few array operations; a single calibration is one row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
MIN_KEPT = 30  # the reference's floor: a threshold is tested only if it keeps this many labelled items


def upper_bound(errors: npt.ArrayLike, kept: npt.ArrayLike, delta: float) -> FloatArray:
    """Clopper-Pearson one-sided upper bound of a disagreement rate at level delta: 1 where nothing
    is kept or every kept item disagrees."""
    k = np.asarray(errors, dtype=np.float64)
    n = np.asarray(kept, dtype=np.float64)
    out = np.ones(np.broadcast(k, n).shape, dtype=np.float64)
    k, n = np.broadcast_to(k, out.shape), np.broadcast_to(n, out.shape)
    ok = (n > 0) & (k < n)
    from scipy.stats import beta  # loaded where a bound is computed (about 1 s): `--help` stays fast

    out[ok] = beta.ppf(1.0 - delta, k[ok] + 1.0, n[ok] - k[ok])
    return out


@dataclass(frozen=True)
class Calibration:
    """Row-wise results: the threshold (NaN: none passed), the labelled items kept at it, their
    disagreements and the bound; `tested`: how many thresholds the sequence tested (the last failed,
    unless every candidate passed)."""

    threshold: FloatArray
    kept: IntArray
    errors: IntArray
    bound: FloatArray
    tested: IntArray


def calibrate_rows(
    confidence: npt.ArrayLike,
    wrong: npt.ArrayLike,
    *,
    alpha: float,
    delta: float,
    min_kept: int = MIN_KEPT,
    active: npt.ArrayLike | None = None,
) -> Calibration:
    """Fixed-sequence calibration of each row of `confidence` / `wrong` (shape [rows, n], or [n]);
    `active` marks the items of a row that take part (those not decided by an earlier judge)."""
    conf = np.atleast_2d(np.asarray(confidence, dtype=np.float64))
    bad = np.atleast_2d(np.asarray(wrong, dtype=bool))
    use = np.ones_like(bad) if active is None else np.atleast_2d(np.asarray(active, dtype=bool))
    rows, n = conf.shape
    # inactive items sort last and count nowhere
    key = np.where(use, conf, -np.inf)
    order = np.argsort(-key, axis=1, kind="stable")
    c = np.take_along_axis(key, order, axis=1)
    e = np.take_along_axis(bad & use, order, axis=1)
    kept = np.broadcast_to(np.arange(1, n + 1, dtype=np.int64), (rows, n))
    errors = np.cumsum(e, axis=1, dtype=np.int64)
    # a threshold sits at the end of a run of equal confidences, among active items, with enough kept
    end = np.ones((rows, n), dtype=bool)
    end[:, :-1] = c[:, :-1] != c[:, 1:]
    candidate = end & np.isfinite(c) & (kept >= min_kept)
    bound = np.where(candidate, upper_bound(errors, kept, delta), np.inf)
    failed = candidate & (bound > alpha)
    first_fail = np.where(failed.any(axis=1), failed.argmax(axis=1), n)
    index = np.arange(n)[None, :]
    passed = candidate & (index < first_fail[:, None])
    has = passed.any(axis=1)
    last = np.where(has, n - 1 - passed[:, ::-1].argmax(axis=1), 0)
    pick = (np.arange(rows), last)
    tested = (candidate & (index <= first_fail[:, None])).sum(axis=1).astype(np.int64)
    return Calibration(
        threshold=np.where(has, c[pick], np.nan),
        kept=np.where(has, kept[pick], 0).astype(np.int64),
        errors=np.where(has, errors[pick], 0).astype(np.int64),
        bound=np.where(has, bound[pick], np.nan),
        tested=tested,
    )


def sequence_steps(
    confidence: npt.ArrayLike, wrong: npt.ArrayLike, *, alpha: float, delta: float, min_kept: int = MIN_KEPT
) -> list[tuple[float, int, int, float, bool]]:
    """The thresholds one calibration tested, highest first: (threshold, kept, errors, bound, passed),
    up to and including the first that failed: what the report shows of the sequence."""
    conf = np.asarray(confidence, dtype=np.float64)
    if conf.size == 0:
        return []
    order = np.argsort(-conf, kind="stable")
    c, e = conf[order], np.cumsum(np.asarray(wrong, dtype=bool)[order], dtype=np.int64)
    ends = np.flatnonzero(np.append(c[:-1] != c[1:], True))
    ends = ends[ends + 1 >= min_kept]
    bounds = upper_bound(e[ends], ends + 1, delta)
    failed = np.flatnonzero(bounds > alpha)
    stop = int(failed[0]) + 1 if failed.size else len(ends)
    return [
        (float(c[i]), int(i + 1), int(e[i]), float(b), bool(b <= alpha))
        for i, b in zip(ends[:stop], bounds[:stop], strict=True)
    ]


CURVE_POINTS = 60


def coverage_curve(
    confidence: npt.ArrayLike, wrong: npt.ArrayLike, *, alpha: float, delta: float
) -> list[tuple[float, int, int, float, bool]]:
    """Every threshold of one judge's labelled items (at most CURVE_POINTS, evenly by items kept):
    (threshold, kept, errors, bound, bound <= alpha), highest threshold first."""
    conf = np.asarray(confidence, dtype=np.float64)
    if conf.size == 0:
        return []
    order = np.argsort(-conf, kind="stable")
    c, e = conf[order], np.cumsum(np.asarray(wrong, dtype=bool)[order], dtype=np.int64)
    ends = np.flatnonzero(np.append(c[:-1] != c[1:], True))
    if len(ends) > CURVE_POINTS:
        ends = ends[np.unique(np.linspace(0, len(ends) - 1, CURVE_POINTS).round().astype(int))]
    bounds = upper_bound(e[ends], ends + 1, delta)
    return [
        (float(c[i]), int(i + 1), int(e[i]), float(b), bool(b <= alpha))
        for i, b in zip(ends, bounds, strict=True)
    ]


def calibrate_cascade(
    confidences: list[FloatArray],
    wrongs: list[BoolArray],
    *,
    alpha: float,
    delta: float,
    min_kept: int = MIN_KEPT,
) -> tuple[list[Calibration], list[BoolArray]]:
    """Each judge in turn on the labelled items no earlier judge decided (rows: calibrations, columns:
    the same items for every judge); returns each stage's calibration and the items it decided."""
    reach = np.ones(np.atleast_2d(confidences[0]).shape, dtype=bool)
    fits, decided = [], []
    for conf, bad in zip(confidences, wrongs, strict=True):
        fit = calibrate_rows(conf, bad, alpha=alpha, delta=delta, min_kept=min_kept, active=reach)
        takes = reach & keeps(np.atleast_2d(conf), fit.threshold)
        fits.append(fit)
        decided.append(takes)
        reach = reach & ~takes
    return fits, decided


def keeps(confidence: FloatArray, threshold: FloatArray) -> BoolArray:
    """Items at or above their row's threshold (a NaN threshold keeps nothing)."""
    t = np.asarray(threshold, dtype=np.float64).reshape(-1, 1)
    with np.errstate(invalid="ignore"):
        return np.asarray(np.atleast_2d(confidence) >= t, dtype=bool)
