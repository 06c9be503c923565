"""Planted judges for checking the guarantee: many calibrations at once, each on its own labelled
slice, each judged on fresh items drawn from the same population (the exchangeability the guarantee
assumes).

A simulated judge has confidence c ~ Uniform(0, 1) per item and an overall disagreement rate `error`.
Informative: P(disagree | c) = (p + 1) error (1 - c)^p, so its risk above a threshold l is
error (1 - l)^p and it covers 1 - l. Noise: P(disagree | c) = error whatever c, so no threshold lowers
its risk. The judges of a cascade are independent of each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judgebench.selective.calibrate import MIN_KEPT, BoolArray, FloatArray, calibrate_cascade, keeps


@dataclass(frozen=True)
class SimJudge:
    error: float  # overall disagreement with humans
    informative: bool = True
    power: float = 2.0

    def draw(self, rng: np.random.Generator, shape: tuple[int, int]) -> tuple[FloatArray, BoolArray]:
        conf = rng.random(shape)
        p = (self.power + 1.0) * self.error * (1.0 - conf) ** self.power if self.informative else self.error
        return conf, rng.random(shape) < np.minimum(p, 1.0)

    def risk(self, threshold: FloatArray) -> FloatArray:
        """The true disagreement rate on the items at or above `threshold` (NaN where none)."""
        t = np.asarray(threshold, dtype=np.float64)
        return (
            self.error * (1.0 - t) ** self.power if self.informative else np.where(np.isnan(t), t, self.error)
        )


@dataclass(frozen=True)
class Design:
    """How many calibrations, of how many labelled items each, each checked on how many fresh items."""

    labelled: int
    fresh: int
    calibrations: int
    seed: int = 0
    chunk: int = 100  # calibrations drawn at once: memory stays near chunk x fresh floats


@dataclass(frozen=True)
class SimResult:
    """Per calibration (one a row): the thresholds, and on the fresh items the share decided (by any
    judge) and the disagreement on them; `failed`: that disagreement is above alpha."""

    thresholds: FloatArray  # [calibrations, judges]
    coverage: FloatArray
    disagreement: FloatArray  # NaN where nothing was decided
    failed: BoolArray


def simulate(
    judges: Sequence[SimJudge], design: Design, *, alpha: float, delta: float, min_kept: int = MIN_KEPT
) -> SimResult:
    """`design.calibrations` independent calibrations of the cascade, each checked on fresh items."""
    labelled, fresh, calibrations, chunk = design.labelled, design.fresh, design.calibrations, design.chunk
    rng = np.random.default_rng(design.seed)
    parts: list[tuple[FloatArray, FloatArray, FloatArray]] = []
    for start in range(0, calibrations, chunk):
        rows = min(chunk, calibrations - start)
        cal = [j.draw(rng, (rows, labelled)) for j in judges]
        fits, _ = calibrate_cascade(
            [c for c, _ in cal], [w for _, w in cal], alpha=alpha, delta=delta, min_kept=min_kept
        )
        thresholds = np.stack([f.threshold for f in fits], axis=1)
        reach = np.ones((rows, fresh), dtype=bool)
        decided = np.zeros(rows)
        errors = np.zeros(rows)
        for judge, fit in zip(judges, fits, strict=True):
            conf, wrong = judge.draw(rng, (rows, fresh))
            takes = reach & keeps(conf, fit.threshold)
            decided += takes.sum(axis=1)
            errors += (takes & wrong).sum(axis=1)
            reach &= ~takes
        parts.append(
            (thresholds, decided / fresh, np.where(decided > 0, errors / np.maximum(decided, 1), np.nan))
        )
    thresholds = np.concatenate([p[0] for p in parts])
    coverage = np.concatenate([p[1] for p in parts])
    disagreement = np.concatenate([p[2] for p in parts])
    with np.errstate(invalid="ignore"):
        failed = np.asarray(disagreement > alpha, dtype=bool)
    return SimResult(thresholds, coverage, disagreement, failed)
