"""The arithmetic of the bias-term certificates (PROTOCOL §5b); which ones exist is `registry.py`.

Each certificate turns the observed neighbour changes (or a stated sensitivity) into the largest noise
scale sigma that keeps (tau, delta)-A-BB at a given shrinkage alpha:
- `markov`: b = Delta / sqrt(delta_Delta) (the reference);
- `range`: b = sqrt(k) with delta_Delta = 0 (a neighbour changes at most k units, each in [0, 1]);
- `quantile`: b = the r-th smallest of the items' largest changes, r the smallest with
  Pr(Binomial(n, 1 - delta_Delta) >= r) <= delta_estimate over n items (an item's neighbour pairs are
  correlated, so one order statistic over items, not over pairs);
- `exact` (the neighbours are the whole finite list T(D), all judged): the violation probability
  v(sigma) = mean_i Pr(ncx2(d, alpha^2 c_i^2 / (2 sigma^2)) > tau^2 / (2 sigma^2)) and sigma_max is the
  largest sigma with v(sigma) <= delta; `exact_ucb` computes the same on a distribution that dominates
  new neighbours' with probability 1 - delta_estimate.
For the linear ones, sigma = (tau - alpha b) / sqrt(2 (d + 2 sqrt(d L) + 2 L)), L = ln(1 / delta_B).

scipy (0.6 s to import) loads in the functions that use it, as in analysis/stats.py.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgebench.bbe.mechanism import DeltaSplit, noise_radius_factor
from judgebench.bbe.sensitivity import mean_square_ucb

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

_EXACT_BUCKETS = 200  # more distinct changes than this: rounded up to a 1e-3 grid (conservative)
_BISECTIONS = 60


@dataclass(frozen=True)
class Evidence:
    """What the certificates are built from, in normalised units."""

    tau: float
    delta: float
    d: int
    split: DeltaSplit
    sensitivity: float  # the Delta the markov step uses (plug-in, upper bound, combined or fixed)
    changes: FloatArray | None  # |f(D) - f(D')| per observed neighbour; None: no neighbour list
    upper_bound: bool = False  # Delta is an upper confidence bound (markov then carries over)
    fixed: bool = False  # Delta is stated, not measured (exact and quantile do not apply)
    k: int = 1  # units a neighbour changes at most
    groups: IntArray | None = None  # the independent cluster of each change (None: each its own)


@dataclass(frozen=True)
class Certificate:
    """One bound on the bias term, the delta it spends and what it covers (set by its registry kind)."""

    name: str
    bound: float | None  # b (None for exact and exact_ucb, which have no single bound)
    alpha_sup: float  # supremum of feasible alpha (inf when nothing limits it)
    delta_bias: float
    delta_noise: float
    delta_estimate: float
    carries_over: bool  # holds for new items drawn like the measured ones (else: the listed neighbours)
    tau: float
    d: int
    values: FloatArray | None = None  # exact, exact_ucb: change sizes
    weights: FloatArray | None = None  # exact: their shares; exact_ucb: a dominating distribution
    exact: bool = False  # v(sigma) on `values` is the release's violation probability itself, not a bound

    @property
    def alpha_max(self) -> float | None:
        return None if math.isinf(self.alpha_sup) else self.alpha_sup

    def auto_alpha(self, margin: float) -> float:
        """The largest alpha in (0, 1] that leaves `margin` of the feasible range unused."""
        return min(1.0, (1.0 - margin) * self.alpha_sup)

    def sigma(self, alpha: float) -> float | None:
        """sigma_max at this alpha, or None when no positive sigma keeps the guarantee."""
        if self.values is not None:
            assert self.weights is not None
            return exact_sigma(
                self.values, self.weights, alpha=alpha, tau=self.tau, d=self.d, delta=self.delta_noise
            )
        assert self.bound is not None
        return linear_sigma(self.tau, alpha, self.bound, self.d, self.delta_noise)

    def violation_probability(self, alpha: float, sigma: float) -> float | None:
        """The exact violation probability (where `exact`; the other bounds give an inequality)."""
        if not self.exact:
            return None
        assert self.values is not None and self.weights is not None
        return exact_violation(self.values, self.weights, alpha=alpha, sigma=sigma, tau=self.tau, d=self.d)


def linear_sigma(tau: float, alpha: float, bound: float, d: int, delta_noise: float) -> float | None:
    """(tau - alpha b) / sqrt(2 (d + 2 sqrt(d L) + 2 L)), None when alpha b >= tau."""
    slack = tau - alpha * bound
    if slack <= 0:
        return None
    return slack / noise_radius_factor(d, delta_noise)


def quantile_rank(m: int, p: float, delta_estimate: float) -> int | None:
    """The smallest r with Pr(Binomial(m, p) >= r) <= delta_estimate (1-based), None when none <= m."""
    from scipy import stats

    if m == 0:
        return None
    r = np.arange(1, m + 1)
    tail = stats.binom.sf(r - 1, m, p)  # Pr(X >= r)
    ok = np.flatnonzero(tail <= delta_estimate)
    return None if len(ok) == 0 else int(r[ok[0]])


def quantile_bound(changes: FloatArray, p: float, delta_estimate: float) -> float | None:
    """The r-th smallest of independent draws `changes`, r = quantile_rank: with confidence
    1 - delta_estimate, a new draw exceeds it with probability at most 1 - p. None when too few."""
    r = quantile_rank(len(changes), p, delta_estimate)
    return None if r is None else float(np.sort(changes)[r - 1])


def item_maxima(changes: FloatArray, groups: IntArray | None) -> FloatArray:
    """Each independent cluster's (item's) largest |change|: the draws an item-level order statistic
    needs, since an item's neighbour pairs are correlated (None: every change its own cluster)."""
    if groups is None:
        return np.abs(changes)
    _, inverse = np.unique(groups, return_inverse=True)
    out = np.zeros(int(inverse.max()) + 1 if len(inverse) else 0, dtype=np.float64)
    np.maximum.at(out, inverse, np.abs(changes))
    return out


def distinct_changes(changes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Distinct change sizes and their shares; many distinct sizes are rounded up to a 1e-3 grid (a
    larger change only raises the violation probability, so this stays conservative)."""
    values, counts = np.unique(np.abs(changes), return_counts=True)
    if len(values) > _EXACT_BUCKETS:
        values, counts = np.unique(np.ceil(np.abs(changes) * 1000.0) / 1000.0, return_counts=True)
    return values.astype(np.float64), (counts / counts.sum()).astype(np.float64)


def _probabilities(values: FloatArray, alpha: float, sigmas: FloatArray, *, tau: float, d: int) -> FloatArray:
    """Pr(||alpha c + Z - Z'|| > tau) for every (sigma, change c) (one scipy call over the grid)."""
    from scipy import stats

    scale = 2.0 * sigmas[:, None] ** 2
    x = tau * tau / scale
    nc = alpha * alpha * values[None, :] ** 2 / scale
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # boost's series warnings at extreme arguments
        probs = np.where(nc > 0, stats.ncx2.sf(x, d, np.maximum(nc, 1e-300)), stats.chi2.sf(x, d))
    return np.where(np.isfinite(probs), np.clip(probs, 0.0, 1.0), 1.0)  # unknown: count as violated


def _violations(
    values: FloatArray, weights: FloatArray, alpha: float, sigmas: FloatArray, *, tau: float, d: int
) -> FloatArray:
    """v(sigma) for every sigma of `sigmas` at once."""
    return np.asarray(_probabilities(values, alpha, sigmas, tau=tau, d=d) @ weights, dtype=np.float64)


def violation_each(changes: FloatArray, *, alpha: float, sigma: float, tau: float, d: int) -> FloatArray:
    """Each neighbour's own violation probability Pr(||alpha c_i + Z - Z'|| > tau) (noncentral
    chi-square), computed once per distinct change."""
    values, inverse = np.unique(np.abs(changes), return_inverse=True)
    probs = _probabilities(values, alpha, np.asarray([sigma], dtype=np.float64), tau=tau, d=d)[0]
    return np.asarray(probs[inverse], dtype=np.float64)


def exact_violation(
    values: FloatArray, weights: FloatArray, *, alpha: float, sigma: float, tau: float, d: int
) -> float:
    """mean_i Pr(||alpha c_i + Z - Z'|| > tau), Z - Z' ~ N(0, 2 sigma^2 I_d): noncentral chi-square."""
    return float(_violations(values, weights, alpha, np.asarray([sigma], dtype=np.float64), tau=tau, d=d)[0])


def exact_sigma(
    values: FloatArray, weights: FloatArray, *, alpha: float, tau: float, d: int, delta: float
) -> float | None:
    """The largest sigma with v(sigma) <= delta: a log grid finds the last feasible sigma before v
    exceeds delta for good, Brent's method refines it; None when no sigma qualifies."""
    from scipy import optimize

    grid = np.geomspace(tau * 1e-4, tau * 100.0, 61)
    v = _violations(values, weights, alpha, grid, tau=tau, d=d)
    ok = np.flatnonzero(v <= delta)
    if len(ok) == 0:
        return None
    last = int(ok[-1])
    if last == len(grid) - 1:
        return float(grid[-1])
    lo, hi = float(grid[last]), float(grid[last + 1])

    def excess(sigma: float) -> float:
        return exact_violation(values, weights, alpha=alpha, sigma=sigma, tau=tau, d=d) - delta

    root = float(optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-12, maxiter=_BISECTIONS))
    for _ in range(4):  # the root within Brent's tolerance: step down to the feasible side
        if excess(root) <= 0:
            return root
        root -= max(1e-14, 1e-11 * root)
    return lo


def exact_alpha_sup(values: FloatArray, weights: FloatArray, tau: float, delta: float) -> float:
    """Supremum of alpha with some sigma > 0 feasible: as sigma -> 0, v -> share(alpha c > tau), so
    alpha < tau / c*, c* the smallest change size whose larger changes have share <= delta."""
    larger = 1.0 - np.cumsum(weights)  # share of changes strictly larger than values[i]
    ok = np.flatnonzero(larger <= delta + 1e-15)
    c_star = float(values[ok[0]]) if len(ok) else float(values[-1])
    return math.inf if c_star <= 0 else tau / c_star


def tail_ucb(exceeds: NDArray[np.bool_], groups: IntArray | None, delta: float) -> float:
    """Upper confidence bound (level 1 - delta) on the share of changes that exceed a size: one term
    per independent cluster (as the sensitivity bound), min(Hoeffding, empirical Bernstein)."""
    g = np.arange(len(exceeds)) if groups is None else groups
    _, inverse, counts = np.unique(g, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=exceeds.astype(np.float64), minlength=len(counts))
    mean_k = float(np.mean(counts))
    return min(1.0, mean_square_ucb(sums / mean_k, float(np.max(counts)) / mean_k, delta))


def dominating_distribution(
    changes: FloatArray, groups: IntArray | None, delta_estimate: float, k: int = 1
) -> tuple[FloatArray, FloatArray]:
    """A change distribution that, with probability 1 - delta_estimate, is stochastically larger than
    the one new neighbours are drawn from: on the grid 0 < v_1 < ... < v_K = sqrt(k) (the observed
    sizes and the range bound), mass U(> v_(i-1)) - U(> v_i) at v_i, U the upper confidence bounds on
    the tail shares (union bound over the grid), made non-increasing. The violation probability grows
    with the change, so computing it exactly on this distribution bounds the one of new neighbours."""
    sizes, _ = distinct_changes(changes)
    top = math.sqrt(k)
    grid = np.unique(np.concatenate([[0.0], sizes[sizes < top], [top]]))
    thresholds = grid[:-1]  # U(> v) for every grid point but the top (nothing exceeds sqrt(k))
    each = delta_estimate / len(thresholds)
    tails = np.array([tail_ucb(np.abs(changes) > v, groups, each) for v in thresholds])
    tails = np.minimum.accumulate(tails)
    upper = np.concatenate([[1.0], tails])  # Pr(change >= grid[i]) <= upper[i]
    weights = upper - np.concatenate([upper[1:], [0.0]])
    keep = weights > 0
    return grid[keep].astype(np.float64), weights[keep].astype(np.float64)
