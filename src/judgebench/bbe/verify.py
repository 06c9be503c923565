"""Empirical checks of a release: violation counts, with a Wilson CI beside delta (PROTOCOL §5b), and
the holdout: the calibration rule on half the items, its exact violation probability on the other
half's neighbours with a t-interval over those items (the sample that varies).

Two simulators:
- `violation_count` simulates the released vector itself (every coordinate, clipping when on);
- `norm_violations` simulates the certificate's own statement in d dimensions: a neighbour whose one
  changed unit moves by c, ||alpha c e_1 + Z - Z'|| with Z - Z' ~ N(0, 2 sigma^2 I_d), drawn as a
  normal plus a chi-square (the noise difference is isotropic, so the changed unit may be the first).
  It is what the redraw and `exact`'s Monte Carlo count: unclipped, so at least as many
  violations as the clipped release (clipping is a projection, 1-Lipschitz), and fast at any d.

scipy (0.6 s to import) loads in the functions that use it, as in analysis/stats.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgebench.analysis.stats import wilson
from judgebench.bbe.certificate_registry import Verification
from judgebench.bbe.certificates import violation_each
from judgebench.bbe.mechanism import shrink
from judgebench.bbe.scores import ScoreSet
from judgebench.records.bbe_document import HoldoutCheck, VerifyBlock

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

_BATCH_CELLS = 2_000_000


@dataclass(frozen=True)
class Release:
    """The mechanism being checked: g(x) = alpha x + (1 - alpha) mu, noise sigma, threshold tau."""

    alpha: float
    mu: float
    sigma: float
    tau: float
    clip: bool = True


def _batch_violations(
    g_base: FloatArray, units: IntArray, changed: FloatArray, release: Release, rng: np.random.Generator
) -> int:
    k, n = len(units), len(g_base)
    m_d = g_base[None, :] + rng.normal(0.0, release.sigma, size=(k, n))
    m_n = g_base[None, :] + rng.normal(0.0, release.sigma, size=(k, n))
    m_n[np.arange(k), units] += changed - g_base[units]
    if release.clip:
        np.clip(m_d, 0.0, 1.0, out=m_d)
        np.clip(m_n, 0.0, 1.0, out=m_n)
    norms = np.sqrt(np.sum((m_d - m_n) ** 2, axis=1))
    return int(np.sum(norms > release.tau))


def violation_count(
    base: FloatArray,
    pair_unit: IntArray,
    pair_score: FloatArray,
    release: Release,
    *,
    draws: int,
    rng: np.random.Generator,
) -> int:
    """Draw `draws` times a neighbour (uniform over the given pairs) and independent noise for M(D) and
    M(D'), simulating every released coordinate (with clipping when on); count ||M(D) - M(D')||_2 > tau."""
    if len(pair_unit) == 0:
        raise ValueError("no neighbour pair to verify with")
    g_base = shrink(base, release.alpha, release.mu)
    batch = max(1, _BATCH_CELLS // max(len(base), 1))
    violations = done = 0
    while done < draws:
        k = min(batch, draws - done)
        pick = rng.integers(0, len(pair_unit), size=k)
        changed = shrink(pair_score[pick], release.alpha, release.mu)
        violations += _batch_violations(g_base, pair_unit[pick], changed, release, rng)
        done += k
    return violations


def norm_violations(
    changes: FloatArray,
    *,
    alpha: float,
    sigma: float,
    tau: float,
    d: int,
    draws: int,
    rng: np.random.Generator,
) -> int:
    """Count ||alpha c + Z - Z'|| > tau over `draws` draws of a change c (uniform over `changes`) and
    the noise difference in d dimensions (unclipped)."""
    if len(changes) == 0:
        raise ValueError("no neighbour change to verify with")
    c = changes[rng.integers(0, len(changes), size=draws)]
    spread = math.sqrt(2.0) * sigma
    first = alpha * c + rng.normal(0.0, spread, size=draws)
    rest = spread * spread * rng.chisquare(d - 1, size=draws) if d > 1 else np.zeros(draws)
    return int(np.sum(first * first + rest > tau * tau))


def rate_interval(violations: int, draws: int) -> tuple[float, float, float]:
    """Violation rate and its Wilson 95% interval (the report's Wilson interval)."""
    lows, highs = wilson(violations, draws)
    return violations / draws, float(lows[0]), float(highs[0])


POWER_AT = (1.0, 1.5, 2.0)  # true violation rates, in multiples of delta, the power is stated at


def fail_threshold(draws: int, delta: float) -> int | None:
    """The fewest violations of `draws` whose Wilson lower bound exceeds delta (verification fails
    from there on); None when even `draws` violations would not."""
    k = np.arange(draws + 1)
    low, _ = wilson(k, np.full(len(k), draws))
    over = np.flatnonzero(low > delta)
    return None if len(over) == 0 else int(over[0])


def power(draws: int, delta: float) -> dict[str, float]:
    """P(verification fails) when the true violation rate is 1, 1.5 and 2 times delta: exact binomial
    tails at the fail threshold for this many draws."""
    from scipy import stats

    k = fail_threshold(draws, delta)
    return {
        f"{m:g}x": 0.0 if k is None else float(stats.binom.sf(k - 1, draws, min(1.0, m * delta)))
        for m in POWER_AT
    }


def combined_power(parts: dict[str, dict[str, float]]) -> dict[str, float]:
    """P(verification fails) when it fails if any part fails, every part at the same true rate and the
    parts' draws independent: 1 - prod(1 - p_part), per multiple of delta."""
    keys = next(iter(parts.values())).keys()
    return {k: 1.0 - math.prod(1.0 - p[k] for p in parts.values()) for k in keys}


def _rule_text(part: str, draws: int) -> str:
    return (
        f"fails when the {part} fails (Wilson 95% lower bound above delta over {draws} draws); P(fail) "
        "at a true rate of 1, 1.5, 2 x delta (exact binomial)"
    )


def verify_block(
    violations: int, draws: int, delta: float, *, pairs: int, check: str = "", part: str = "redraw"
) -> VerifyBlock:
    """The counted draws as a verify block (part `part` of the rule); it passes unless the Wilson lower
    bound exceeds delta. Its power is this part's alone until another part joins (`add_holdout`)."""
    rate, low, high = rate_interval(violations, draws)
    own = power(draws, delta)
    return VerifyBlock(
        draws=draws,
        violations=violations,
        rate=rate,
        ci_low=low,
        ci_high=high,
        delta=delta,
        pairs=pairs,
        at_or_below_delta=low <= delta,
        passed=low <= delta,
        check=check,
        fails_at=fail_threshold(draws, delta),
        power=own,
        power_parts={part: own},
        power_rule=_rule_text(part, draws),
        kind=part,
    )


# --- verification of a release (PROTOCOL §5b: one that can fail) -----------------------------------

MIN_HOLDOUT_GROUPS = 40
_VERIFY, _HOLDOUT = 2, 3


@dataclass(frozen=True)
class VerifySpec:
    tau: float
    delta: float
    draws: int
    seed: int
    index: int
    kind: str = "holdout"

    def rng(self, purpose: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, self.index, purpose])


@dataclass(frozen=True)
class HalfCalibration:
    """The released certificate recalibrated on the estimate half of the items, at the released alpha
    (sigma None with `reason` where it does not apply there or is infeasible)."""

    certificate: str
    sensitivity: float
    alpha: float
    sigma: float | None
    estimate_units: int
    reason: str | None = None


@dataclass(frozen=True)
class Tested:
    """The release under test: its certificate (with the registry's verification rule), alpha and
    sigma, and its exact violation probability where the certificate computes one."""

    certificate: str
    rule: Verification
    alpha: float
    sigma: float
    expected: float | None = None


def holdout_mask(ss: ScoreSet, rng: np.random.Generator) -> NDArray[np.bool_] | None:
    """Half of the groups of units that have pairs (Judge-LS: both orders of an item fall in the same
    half, as they share their swap pair); None when too few to split."""
    groups = ss.groups()
    with_pairs = np.unique(groups[ss.pair_unit])
    if len(with_pairs) < MIN_HOLDOUT_GROUPS:
        return None
    chosen = rng.permutation(with_pairs)[: len(with_pairs) // 2]
    return np.isin(groups, chosen)


def cluster_mean(values: FloatArray, groups: IntArray) -> tuple[float, float, int]:
    """The mean of per-neighbour `values`, its standard error over independent clusters (a ratio
    estimator: the clusters, not the neighbours, are the sample) and the number of clusters."""
    _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=values, minlength=len(counts))
    n, g = float(counts.sum()), len(counts)
    mean = float(sums.sum()) / n
    se = math.sqrt(g / (g - 1) * float(np.sum((sums - mean * counts) ** 2))) / n if g > 1 else 0.0
    return mean, se, g


def _t_quantile(clusters: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, max(1, clusters - 1)))


def holdout_power(rate: float, se: float, clusters: int, delta: float) -> dict[str, float]:
    """P(the holdout fails) when the rule's true rate on unseen items is 1, 1.5 and 2 times delta.

    Violation probabilities scale together, so the spread over items is taken proportional to the
    rate (the observed coefficient of variation): the holdout fails when rate (1 - t cv) > delta, and
    the rate is normal around m delta with sd cv m delta. At delta this is at most 0.025."""
    from scipy import stats

    if se <= 0 or rate <= 0:  # no spread seen: the held-out rate is taken as exact
        return {f"{m:g}x": 1.0 if m > 1 else 0.0 for m in POWER_AT}
    cv = se / rate
    keep = 1.0 - _t_quantile(clusters) * cv
    if keep <= 0:  # so spread out that the interval's lower end never leaves 0
        return {f"{m:g}x": 0.0 for m in POWER_AT}
    return {f"{m:g}x": float(stats.norm.sf((delta / keep - m * delta) / (cv * m * delta))) for m in POWER_AT}


def _holdout(
    ss: ScoreSet, spec: VerifySpec, mask: NDArray[np.bool_], half: HalfCalibration, d: int
) -> HoldoutCheck:
    """The estimate half's sigma on the held-out half's neighbours: each neighbour's exact violation
    probability, averaged, with a 95% t-interval over the held-out items (they are a sample of the
    items the rule meets; no Monte Carlo: the draws would add noise, not information)."""
    keep = mask[ss.pair_unit]
    changes = np.abs(ss.pair_score - ss.base[ss.pair_unit])[keep]
    rate = low = high = se = None
    clusters = 0
    power_here: dict[str, float] = {}
    if half.sigma is not None and len(changes):
        each = violation_each(changes, alpha=half.alpha, sigma=half.sigma, tau=spec.tau, d=d)
        rate, se, clusters = cluster_mean(each, ss.groups()[ss.pair_unit][keep])
        t = _t_quantile(clusters)
        low, high = max(0.0, rate - t * se), min(1.0, rate + t * se)
        power_here = holdout_power(rate, se, clusters, spec.delta)
    return HoldoutCheck(
        check=(
            f"the {half.certificate} rule recalibrated on half the items at the released alpha; each of "
            "the other half's neighbours' exact violation probability at that sigma, averaged, with a "
            "95% t-interval over the held-out items: it tests the rule (does a sigma calibrated this "
            "way hold on items it did not see), not the released sigma"
        ),
        estimate_units=half.estimate_units,
        holdout_units=len(np.unique(ss.pair_unit[keep])),
        sensitivity=half.sensitivity,
        alpha=half.alpha,
        sigma=half.sigma,
        draws=None,
        violations=None,
        rate=rate,
        ci_low=low,
        ci_high=high,
        se=se,
        clusters=clusters or None,
        power=power_here,
        at_or_below_delta=None if low is None else low <= spec.delta,
        certificate=half.certificate,
        reason=half.reason,
    )


def check_release(
    ss: ScoreSet,
    spec: VerifySpec,
    tested: Tested,
    *,
    d: int,
    recalibrate: Callable[[NDArray[np.bool_]], HalfCalibration],
) -> VerifyBlock:
    """Verify exactly the released certificate and sigma, by its registry rule.

    The counted draws are always the released alpha and sigma on the release's neighbours with fresh
    noise (d dimensions). `in_sample_monte_carlo` (exact): that is a Monte Carlo of its violation
    probability, which fails when sigma is wrong; nothing out of sample applies. `out_of_sample`:
    besides, the same certificate is recalibrated on a random half of the items (clusters: a run's
    items, a table's questions) and its violations counted on the other half's neighbours: that tests
    the calibration rule (does it carry over?), not the released sigma; either failing fails
    verification, and the stated power is that combined rule's.
    It passes unless a Wilson lower bound exceeds delta; its power is stated beside."""
    changes = np.abs(ss.pair_score - ss.base[ss.pair_unit])
    v = norm_violations(
        changes,
        alpha=tested.alpha,
        sigma=tested.sigma,
        tau=spec.tau,
        d=d,
        draws=spec.draws,
        rng=spec.rng(_VERIFY),
    )
    in_sample = tested.rule == "in_sample_monte_carlo"
    part = "monte_carlo" if in_sample else "redraw"
    block = verify_block(v, spec.draws, spec.delta, pairs=len(ss.pair_unit), part=part)
    block.certificate, block.sigma = tested.certificate, tested.sigma
    if in_sample:
        block.check = (
            f"Monte Carlo of the {tested.certificate} release's violation probability (its sigma): its "
            "listed neighbours, fresh noise"
        )
        block.expected_rate = tested.expected
        block.note = (
            f"{tested.certificate} certifies the listed neighbours only: no held-out check applies (it would "
            "test a claim the release does not make)"
        )
        return block
    block.check = (
        f"redraw: the released {tested.certificate} sigma on the release's own neighbours, fresh noise "
        "(tests the released sigma on the neighbours it was calibrated on)"
    )
    mask = holdout_mask(ss, spec.rng(_HOLDOUT))
    if mask is None:
        block.note = (
            f"fewer than {MIN_HOLDOUT_GROUPS} items (or questions) with neighbours: nothing to hold out, "
            "so no holdout ran and carrying over is not tested; the redraw alone checks the release"
        )
        return block
    held = _holdout(ss, spec, mask, recalibrate(mask), d)
    block.holdout = held
    if held.rate is None:
        block.note = (
            f"no holdout ran, carrying over not tested: {held.reason or 'the estimate half is infeasible'}"
        )
        return block
    add_holdout(block, held, spec)
    return block


def add_holdout(block: VerifyBlock, held: HoldoutCheck, spec: VerifySpec) -> None:
    """The rule applied is now redraw-or-holdout: either failing fails, and the power is that rule's."""
    block.kind = "holdout"
    if held.at_or_below_delta is False:
        block.passed = False
    block.power_parts["holdout"] = held.power
    block.power = combined_power(block.power_parts)
    block.power_rule = (
        f"fails when the redraw fails (Wilson 95% lower bound above delta over {spec.draws} draws) or "
        f"the holdout fails (its 95% t-interval over {held.clusters} held-out items above delta); "
        "P(fail) when each part's true rate is 1, 1.5, 2 x delta, 1 - (1 - p_redraw)(1 - p_holdout) "
        "(the holdout's from its observed spread over items, taken proportional to the rate), each "
        "part's in power_parts"
    )


def fresh_block(
    changes: FloatArray, spec: VerifySpec, release: tuple[str, float, float], *, d: int, judged: str
) -> VerifyBlock:
    """Verification on freshly drawn and judged neighbours (`changes`: their |change|), fresh noise,
    at the released alpha and sigma (a certificate that carries over)."""
    name, alpha, sigma = release
    v = norm_violations(
        changes, alpha=alpha, sigma=sigma, tau=spec.tau, d=d, draws=spec.draws, rng=spec.rng(_VERIFY)
    )
    block = verify_block(v, spec.draws, spec.delta, pairs=len(changes), part="fresh")
    block.certificate, block.sigma = name, sigma
    block.check = f"fresh neighbours: {judged}, fresh noise"
    return block
