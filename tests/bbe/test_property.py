"""Property test: on synthetic judges with a known sensitivity, the mechanism calibrated to it keeps the
empirical violation rate at or below delta (within its Wilson interval)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from judgebench.bbe import mechanism as mech
from judgebench.bbe.verify import Release, violation_count, wilson


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=60),
    changed_share=st.floats(min_value=0.0, max_value=1.0),
    change=st.floats(min_value=0.0, max_value=1.0),
    tau=st.floats(min_value=0.05, max_value=1.0),
    delta=st.floats(min_value=0.01, max_value=0.3),
    alpha_request=st.floats(min_value=0.01, max_value=1.0),
    clip=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_violation_rate_stays_below_delta(
    n: int,
    changed_share: float,
    change: float,
    tau: float,
    delta: float,
    alpha_request: float,
    clip: bool,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    # the neighbour population: `changed` units move by +-change (Markov's extremal two-point law)
    changed = round(changed_share * n)
    direction = np.where(base < 0.5, 1.0, -1.0)
    neighbour = base.copy()
    neighbour[:changed] = np.clip(base[:changed] + direction[:changed] * change, 0.0, 1.0)
    pair_unit = np.arange(n, dtype=np.int64)
    true_sensitivity = math.sqrt(float(np.mean((neighbour - base) ** 2)))  # exact, by construction
    split = mech.DeltaSplit.from_fractions(delta, (0.5, 0.5), upper_bound=False)
    alpha = alpha_request
    if not mech.is_feasible(tau, alpha, true_sensitivity, split.sensitivity):
        alpha = mech.auto_alpha(tau, true_sensitivity, split.sensitivity, margin=0.3)
    sigma = mech.sigma_max(tau, alpha, true_sensitivity, n, (split.sensitivity, split.noise))
    assert sigma is not None and sigma > 0
    draws = 400
    violations = violation_count(
        base,
        pair_unit,
        neighbour,
        Release(alpha=alpha, mu=float(base.mean()), sigma=sigma, tau=tau, clip=clip),
        draws=draws,
        rng=np.random.default_rng(seed + 1),
    )
    low, _high = wilson(violations, draws)
    assert low <= delta, (violations, draws, delta)


def test_too_little_noise_is_caught() -> None:
    """The check has teeth: with sigma far above sigma_max, violations exceed delta."""
    rng = np.random.default_rng(0)
    n = 30
    base = rng.random(n)
    neighbour = 1.0 - base
    split = mech.DeltaSplit.from_fractions(0.05, (0.5, 0.5), upper_bound=False)
    sens = math.sqrt(float(np.mean((neighbour - base) ** 2)))
    sigma = mech.sigma_max(0.5, 0.05, sens, n, (split.sensitivity, split.noise))
    assert sigma is not None
    violations = violation_count(
        base,
        np.arange(n, dtype=np.int64),
        neighbour,
        Release(alpha=0.05, mu=0.5, sigma=sigma * 3, tau=0.5, clip=False),
        draws=400,
        rng=rng,
    )
    assert wilson(violations, 400)[0] > 0.05
