"""Planning before paying: how many human labels a judge needs to keep a target share of items with a
guarantee (`plan --human-labels --selective-alpha A`).

With n labelled items, a threshold that keeps the share `coverage` of them keeps m = ceil(coverage n);
if the judge disagrees with the humans on a share `error` of what it keeps, the calibration passes that
threshold when the exact upper bound of round(error m) disagreements in m is <= alpha (and m >= the
floor of kept items). The answer is the smallest such n, assuming the disagreement is no higher above
that threshold (else the fixed sequence stops earlier: label a little more). `error` comes from a pilot
(the judge's disagreement among its most confident `coverage` share of the pilot's labelled items) or
is stated.
"""

from __future__ import annotations

import math

import numpy as np

from judgebench.selective.calibrate import MIN_KEPT, upper_bound

MAX_LABELS = 100_000


def labels_needed(
    *, alpha: float, delta: float, coverage: float, error: float, min_kept: int = MIN_KEPT
) -> int | None:
    """The fewest labelled items for the guarantee at `coverage`; None when `error` is too close to
    alpha for any n up to MAX_LABELS (or above it)."""
    if error >= alpha or coverage <= 0.0:
        return None
    n = np.arange(1, MAX_LABELS + 1)
    kept = np.ceil(coverage * n - 1e-9)
    errors = np.round(error * kept)
    ok = (kept >= min_kept) & (upper_bound(errors, kept, delta) <= alpha)
    return int(n[ok.argmax()]) if ok.any() else None


def top_share_error(confidence: np.ndarray, wrong: np.ndarray, coverage: float) -> tuple[float, int]:
    """A pilot's disagreement among its most confident `coverage` share, and how many items that is."""
    m = max(1, math.ceil(coverage * len(confidence) - 1e-9))
    order = np.argsort(-np.asarray(confidence, dtype=float), kind="stable")[:m]
    return float(np.asarray(wrong, dtype=bool)[order].mean()), m
