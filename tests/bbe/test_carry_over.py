"""Guarantees that carry over (issue 28): the default release holds for new neighbour sets drawn like
the measured ones; the in-sample `exact` release does not; `quantile` at the item level holds where the
pair-level order statistic under-covers correlated neighbours.

Each context draws items from a known population (each item a latent flip rate, its six neighbour
changes drawn from it, so an item's neighbours are correlated); the true violation probability of a
release on that population is computed exactly (the noncentral chi-square of PROTOCOL §5b on the
population's change distribution)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from judgebench.bbe import certificate_registry as registry
from judgebench.bbe.certificates import Evidence, exact_violation, item_maxima, quantile_bound
from judgebench.bbe.mechanism import DeltaSplit

TAU, DELTA = 0.5, 0.01
PAIRS = 6  # Judge-LS: two orders x (zh, ls, the other order)
RATES = np.array([0.02, 0.15, 0.6])  # an item's latent flip rate ...
RATE_SHARES = np.array([0.7, 0.25, 0.05])  # ... and how many items have it
SIZES = np.array([0.0, 0.5, 1.0])  # verdict changes: none, to or from a tie, a flip


def _population() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The change distribution of a new neighbour (a random item, a random one of its pairs)."""
    mean_rate = float(RATE_SHARES @ RATES)
    return SIZES, np.array([1 - mean_rate, 0.3 * mean_rate, 0.7 * mean_rate])


def _contexts(rng: np.random.Generator, contexts: int, items: int) -> NDArray[np.float64]:
    """contexts x items x PAIRS changes, vectorised."""
    rate = RATES[rng.choice(len(RATES), size=(contexts, items), p=RATE_SHARES)]
    changed = rng.random((contexts, items, PAIRS)) < rate[:, :, None]
    size = np.where(rng.random((contexts, items, PAIRS)) < 0.7, 1.0, 0.5)
    return np.where(changed, size, 0.0)


def _true_violations(choice: str, contexts: int = 200, items: int = 200) -> NDArray[np.float64]:
    """The true violation probability of each context's release (alpha auto, PROTOCOL §5's plug-in
    split, as `judgebench run` releases), with the certificate `choice` picks."""
    rng = np.random.default_rng(28)
    values, shares = _population()
    groups = np.repeat(np.arange(items), PAIRS)
    split = DeltaSplit(DELTA / 2, DELTA / 2, 0.0)
    out = []
    for changes in _contexts(rng, contexts, items).reshape(contexts, -1):
        ev = Evidence(
            tau=TAU,
            delta=DELTA,
            d=2 * items,
            split=split,
            sensitivity=float(np.sqrt(np.mean(changes**2))),
            changes=changes,
            groups=groups,
        )
        chosen = registry.pick(registry.applicable(ev), choice, alpha=None, margin=0.5)
        assert chosen.sigma is not None
        out.append(
            exact_violation(values, shares, alpha=chosen.alpha, sigma=chosen.sigma, tau=TAU, d=2 * items)
        )
    return np.asarray(out)


def test_the_default_release_carries_over_and_exact_does_not() -> None:
    """Done-when: violation <= delta in >= 95% of resampled contexts for the default (auto); the
    in-sample exact release, tight on its own neighbours, exceeds delta on new ones about half the time."""
    default = _true_violations("auto")
    exact = _true_violations("exact")
    assert np.mean(default <= DELTA) >= 0.95
    assert np.mean(exact <= DELTA) < 0.8  # the same check fails for exact
    assert np.max(exact) > 1.1 * DELTA


def test_quantile_at_the_item_level_holds_where_the_pair_level_under_covers() -> None:
    """Planted correlated pairs: 5% of items are 'bad' and all six of their neighbours change by ~0.8,
    the rest change by < 0.1. With p = 0.95 and confidence 0.95 an order statistic over the 1800 pairs
    treats six copies of one bad item as six independent draws and lands among the small changes in
    about a third of contexts (the true share above it is then > 5%); one over the 300 items' largest
    changes fails in at most about 5%, as it should."""
    rng = np.random.default_rng(5)
    contexts, items, p, conf = 1000, 300, 0.95, 0.05
    bad = rng.random((contexts, items)) < 0.05
    small = rng.uniform(0.0, 0.1, (contexts, items, PAIRS))
    large = rng.uniform(0.75, 0.85, (contexts, items, PAIRS))
    changes = np.where(bad[:, :, None], large, small).reshape(contexts, -1)
    groups = np.repeat(np.arange(items), PAIRS)

    def true_share_above(b: float) -> float:  # a new neighbour: bad w.p. 0.05, its change uniform
        return 0.05 * float(np.clip((0.85 - b) / 0.1, 0, 1)) + 0.95 * float(np.clip((0.1 - b) / 0.1, 0, 1))

    pair_fail = item_fail = 0
    for c in changes:
        b_pair = quantile_bound(c, p, conf)
        b_item = quantile_bound(item_maxima(c, groups), p, conf)
        assert b_pair is not None and b_item is not None
        pair_fail += true_share_above(b_pair) > 1 - p
        item_fail += true_share_above(b_item) > 1 - p
    assert pair_fail / contexts > 0.2
    assert item_fail / contexts <= conf + 3 * np.sqrt(conf * (1 - conf) / contexts)
    # the registered quantile certificate is the item-level one (delta 0.1 = 0.05 + 0.045 + 0.005)
    c = changes[0]
    ev = Evidence(TAU, 0.1, 2 * items, DeltaSplit(0.05, 0.045, 0.005), 0.1, c, groups=groups)
    cert = registry.kind_of("quantile").build(ev)
    assert cert is not None and cert.carries_over
    assert cert.bound == quantile_bound(item_maxima(c, groups), 0.95, 0.005)
    assert cert.bound != quantile_bound(c, 0.95, 0.005)
