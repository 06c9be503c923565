"""The A-BB mechanism of PROTOCOL §5: shrinkage, Gaussian noise and the sigma_max formula.

M(D) = g(f(D)) + Z with g(x) = alpha * x + (1 - alpha) * mu and Z ~ N(0, sigma^2 I_d). Everything here is
in normalised units (scores divided by the declared range), so tau and Delta live on the same scale.
The centre mu is fixed once from the base scores and used for every application of M (PROTOCOL treats
it as a constant), so a neighbour changes g(f(.)) by exactly alpha times its change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
Centre = Literal["auto", "mean", "median"] | float


def noise_radius_factor(d: int, delta_noise: float) -> float:
    """sqrt(2 (d + 2 sqrt(d L) + 2 L)), L = ln(1/delta_B): ||Z - Z'|| <= sigma * this w.p. >= 1 - delta_B.

    Z - Z' ~ N(0, 2 sigma^2 I_d); Laurent-Massart: chi2_d <= d + 2 sqrt(d x) + 2x w.p. >= 1 - e^-x.
    """
    if d < 1:
        raise ValueError("d must be at least 1")
    if not 0 < delta_noise < 1:
        raise ValueError("delta_noise must lie in (0, 1)")
    log_term = math.log(1.0 / delta_noise)
    return math.sqrt(2.0 * (d + 2.0 * math.sqrt(d * log_term) + 2.0 * log_term))


def bias_term(alpha: float, sensitivity: float, delta_sensitivity: float) -> float:
    """Markov: ||g f(D) - g f(D')|| <= alpha Delta / sqrt(delta_Delta) with prob. >= 1 - delta_Delta."""
    if not 0 < delta_sensitivity < 1:
        raise ValueError("delta_sensitivity must lie in (0, 1)")
    return alpha * sensitivity / math.sqrt(delta_sensitivity)


def is_feasible(tau: float, alpha: float, sensitivity: float, delta_sensitivity: float) -> bool:
    """Feasible iff tau > alpha Delta / sqrt(delta_Delta) (strict: sigma must be positive)."""
    return tau > bias_term(alpha, sensitivity, delta_sensitivity)


def sigma_max(
    tau: float, alpha: float, sensitivity: float, d: int, deltas: tuple[float, float]
) -> float | None:
    """Largest noise scale that keeps (tau, delta)-A-BB with the Markov step, or None when no noise can
    (infeasible); `deltas` = (delta_sensitivity, delta_noise)."""
    delta_sensitivity, delta_noise = deltas
    slack = tau - bias_term(alpha, sensitivity, delta_sensitivity)
    if slack <= 0:
        return None
    return slack / noise_radius_factor(d, delta_noise)


def max_alpha(tau: float, sensitivity: float, delta_sensitivity: float) -> float:
    """Supremum of feasible alpha (alpha must stay strictly below it); inf when Delta = 0."""
    if sensitivity <= 0:
        return math.inf
    return tau * math.sqrt(delta_sensitivity) / sensitivity


def max_sensitivity(tau: float, alpha: float, delta_sensitivity: float) -> float:
    """Supremum of Delta that alpha can absorb: Delta < tau sqrt(delta_Delta) / alpha."""
    return tau * math.sqrt(delta_sensitivity) / alpha


def auto_alpha(tau: float, sensitivity: float, delta_sensitivity: float, margin: float) -> float:
    """Largest alpha in (0, 1] whose bias term uses at most (1 - margin) of tau; the rest is noise room."""
    if not 0 < margin < 1:
        raise ValueError("margin must lie in (0, 1)")
    return min(1.0, (1.0 - margin) * max_alpha(tau, sensitivity, delta_sensitivity))


def resolve_centre(scores: FloatArray, centre: Centre) -> float:
    """The fixed shrinkage target mu: mean or median of the base scores, or a given value in [0, 1]."""
    if isinstance(centre, str):
        if centre in ("mean", "auto"):
            return float(np.mean(scores))
        if centre == "median":
            return float(np.median(scores))
        raise ValueError(f"unknown centre '{centre}'")
    return float(centre)


def shrink(scores: FloatArray, alpha: float, mu: float) -> FloatArray:
    """g(x) = alpha x + (1 - alpha) mu: alpha-Lipschitz, so a change of c becomes alpha c."""
    return alpha * scores + (1.0 - alpha) * mu


def apply_mechanism(
    scores: FloatArray, alpha: float, mu: float, sigma: float, rng: np.random.Generator, *, clip: bool
) -> FloatArray:
    """M(D) = g(f(D)) + Z; clipping to [0, 1] is a projection (1-Lipschitz), so it keeps the guarantee."""
    out = shrink(scores, alpha, mu) + rng.normal(0.0, sigma, size=scores.shape)
    return np.clip(out, 0.0, 1.0) if clip else out


@dataclass(frozen=True)
class DeltaSplit:
    """delta = delta_sensitivity + delta_noise + delta_estimate (the last is 0 for the plug-in)."""

    sensitivity: float
    noise: float
    estimate: float

    @property
    def total(self) -> float:
        return self.sensitivity + self.noise + self.estimate

    @classmethod
    def from_fractions(cls, delta: float, fractions: tuple[float, ...], *, upper_bound: bool) -> DeltaSplit:
        """Split delta by fractions (normalised to sum 1): two for the plug-in, three with a bound."""
        if not 0 < delta < 1:
            raise ValueError("delta must lie in (0, 1)")
        if any(f < 0 for f in fractions) or sum(fractions) <= 0:
            raise ValueError("delta-split fractions must be non-negative and not all zero")
        if upper_bound:
            if len(fractions) == 2:
                raise ValueError("with --upper-bound give three fractions: sensitivity,noise,estimate")
            s, n, e = fractions
        else:
            if len(fractions) == 3:
                if fractions[2] != 0:
                    raise ValueError(
                        "the plug-in estimate spends nothing: give two fractions or a third of 0"
                    )
                s, n = fractions[0], fractions[1]
            else:
                s, n = fractions
            e = 0.0
        total = s + n + e
        split = cls(delta * s / total, delta * n / total, delta * e / total)
        if split.sensitivity <= 0 or split.noise <= 0 or (upper_bound and split.estimate <= 0):
            raise ValueError("every part of the delta split must be positive")
        return split


DEFAULT_SPLIT_PLUGIN: tuple[float, ...] = (0.5, 0.5)
DEFAULT_SPLIT_BOUND: tuple[float, ...] = (0.45, 0.45, 0.10)
