"""Anytime-valid confidence sequences for the readiness quantities, and when a judge is settled.

A fixed-n Wilson interval looked at after every round of items is not valid: peeking inflates its
error. A confidence sequence (CS) is: P(the mean lies in CS_t for every t) >= 1 - alpha, so a judge
may stop at any data-dependent time. The method is the hedged-capital betting CS for bounded means
of Waudby-Smith & Ramdas (2023, JRSS-B, "Estimating means of bounded random variables by betting",
Theorem 3). The bets aim at the check's limit, the one point whose exclusion decides the check: on
the side the past puts the mean, the aGRAPA bet against the limit (the paper's growth-rate-adaptive
rule, eq. 23); on the other side its width-tuned plug-in bet (eq. 26-27), so that bound means
something too. Each K is a mixture of two bettors truncated at c = 1/2 and c = 9/10:

    mu_t        = (1/2 + sum_{i<=t} x_i) / (t + 1)
    sigma2_t    = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1)
    g_t         = (mu_{t-1} - limit) / (sigma2_{t-1} + (mu_{t-1} - limit)^2)
    p_t         = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1 + t)))
    up_t        = g_t if g_t > 0 else p_t,       down_t = -g_t if g_t < 0 else p_t
    K+_t(m)     = mean_c prod_i (1 + min(up_i, c/m) (x_i - m))
    K-_t(m)     = mean_c prod_i (1 - min(down_i, c/(1-m)) (x_i - m))
    CS_t        = {m : max(theta K+_t(m), (1-theta) K-_t(m)) < 1/alpha},  theta = 1/2

intersected over time (a running intersection of a CS is a CS). For every m each K is a nonnegative
martingale under mean m (the bets are predictable and do not depend on m but through the
truncation, and a mixture of martingales is one), so Ville's inequality gives the coverage. K+ falls
and K- rises with m, so the CS is an interval and "the CS lies above the limit" is "K+ at the limit
reached 2/alpha". Aiming at the limit puts the growth where the decision is: near a limit runs stop
sooner than with plug-in bets on both sides (scripts/bench_cost.py measures it), and the c = 9/10
bettor lets a judge with no variance (no position effect at all) settle in about 100 items, not 150.

The unit is the item (rounds judge whole items, and an item's two orders are not independent): each
quantity is one number in [lo, hi] per item, rescaled to [0, 1]. Items are taken in a seeded order
stratified by subset (every round holds each subset at its share), and the CS covers the judge's rate
on items like the benchmark's, the quantity the full run's fixed-n intervals estimate and a planted
rate in the simulations. Stratification lowers the variance of the stream, so the pooled CS stays
valid, conservatively, under that order (tests/analysis/test_sequential.py plants per-subset rates
from 25% to 92%). The without-replacement CS (Waudby-Smith & Ramdas 2020: each factor centred at
the null mean of the values not yet drawn, `null_means`; `population=N`) is here, tested, but does
not decide verdicts: it covers another quantity, the mean of these N items, which it pins down as
the items run out, while a verdict is about the judge's rate on items like these (what the full
run's fixed-n intervals estimate and the simulations plant). Scored against the planted rate, its
stops are wrong far more often within 2 points of a limit (scripts/bench_cost.py `--sequence
finite`; README, "Pay only for what decides"). No library is used: `expectation` needs Python
>= 3.12 and `confseq` builds a C++ extension; the method is fifty lines of numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgebench.analysis.findings import SOURCE, ReportSettings, Status
from judgebench.analysis.flips import flip_rows
from judgebench.analysis.frame import pair_flags
from judgebench.analysis.position import position_increase_rows, position_rows

Array = np.ndarray[Any, np.dtype[np.float64]]
Mask = np.ndarray[Any, np.dtype[np.bool_]]
TRUNCATIONS = (0.5, 0.9)  # the bettors each capital mixes (equal weights)
THETA = 0.5
GRID = np.linspace(0.0, 1.0, 2001)


def bets(x: Array, target: float, alpha: float = 0.05) -> tuple[Array, Array]:
    """The predictable bets (lambda+_i, lambda-_i), each from x_1..x_{i-1} only: on the side the
    past puts the mean (above or below `target`), the aGRAPA bet against the target, which decides
    the check; on the other side the width-tuned plug-in bet of the paper's eq. 26-27,
    sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1 + t))), so the far bound is informative too."""
    t = np.arange(1, len(x) + 1, dtype=float)
    mu = (0.5 + np.cumsum(x)) / (t + 1.0)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1.0)
    mu_prev = np.concatenate([[0.5], mu[:-1]])
    sigma2_prev = np.concatenate([[0.25], sigma2[:-1]])
    gap = mu_prev - target
    grapa = gap / (sigma2_prev + gap * gap)
    plugin = np.sqrt(2.0 * np.log(2.0 / alpha) / (sigma2_prev * t * np.log1p(t)))
    up: Array = np.where(grapa > 0.0, grapa, plugin)
    down: Array = np.where(grapa < 0.0, -grapa, plugin)
    return up, down


def null_means(x: Array, m: Array, population: int | None) -> Array:
    """The mean of x_t under the null that the mean is m, given x_1..x_{t-1}: m itself for draws
    with replacement; for a finite population of N values taken in uniformly random order, the
    mean of those not yet drawn, (N m - sum_{i<t} x_i) / (N - t + 1) (Waudby-Smith & Ramdas 2020)."""
    if population is None:
        return np.broadcast_to(m, (len(m), len(x)))
    t = np.arange(1, len(x) + 1, dtype=float)
    before = np.concatenate([[0.0], np.cumsum(x)[:-1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        out: Array = (population * m - before[None, :]) / (population - t + 1.0)[None, :]
    return out


def log_capital(
    x: Sequence[float] | Array,
    m: Sequence[float] | Array,
    target: float,
    alpha: float = 0.05,
    population: int | None = None,
) -> tuple[Array, Array]:
    """log K+_t(m) and log K-_t(m), shape (len(m), len(x)): the wealth of betting that the mean is
    above (K+) or below (K-) each candidate m, after each observation, with bets aimed at `target`.
    `population=N`: the without-replacement capital for the mean of N values in random order (each
    factor centred at the null mean of the values left, `null_means`); a null the values seen
    already rule out (their sum above N m, or too low to reach it) gets infinite wealth on its side."""
    xs = np.asarray(x, dtype=float)
    ms = null_means(xs, np.asarray(m, dtype=float)[:, None], population)
    xs = xs[None, :]
    up_bet, down_bet = (b[None, :] for b in bets(xs[0], target, alpha))
    plus, minus = [], []
    with np.errstate(divide="ignore", invalid="ignore"):
        mc = np.clip(ms, 0.0, 1.0)
        for c in TRUNCATIONS:
            up = np.minimum(up_bet, c / mc)
            down = np.minimum(down_bet, c / (1.0 - mc))
            plus.append(np.cumsum(np.where(ms > 1.0, 0.0, np.log1p(up * (xs - mc))), axis=1))
            minus.append(np.cumsum(np.where(ms < 0.0, 0.0, np.log1p(-down * (xs - mc))), axis=1))
    k = np.log(len(TRUNCATIONS))
    lp, lm = np.logaddexp.reduce(plus, axis=0) - k, np.logaddexp.reduce(minus, axis=0) - k
    if population is not None:  # after x_t: the values seen already put the mean above / below m
        seen, left = np.cumsum(xs[0]), population - np.arange(1, xs.shape[1] + 1)
        total = population * np.asarray(m, dtype=float)[:, None]
        lp = np.where(seen[None, :] > total + 1e-9, np.inf, lp)
        lm = np.where((seen + left)[None, :] < total - 1e-9, np.inf, lm)
    return lp, lm


def rejected(
    x: Sequence[float] | Array,
    m: Sequence[float] | Array,
    alpha: float,
    target: float,
    population: int | None = None,
) -> tuple[Mask, Mask]:
    """Per candidate m and time t: has the running CS excluded m because the mean is above it
    (`low`) / below it (`high`)? Booleans of shape (len(m), len(x)), monotone in t."""
    plus, minus = log_capital(x, m, target, alpha, population)
    need = np.log(1.0 / alpha)
    low = np.maximum.accumulate(np.log(THETA) + np.nan_to_num(plus, nan=-np.inf) >= need, axis=1)
    high = np.maximum.accumulate(np.log(1.0 - THETA) + np.nan_to_num(minus, nan=-np.inf) >= need, axis=1)
    return low, high


def betting_cs(
    x: Sequence[float] | Array,
    alpha: float,
    target: float = 0.5,
    grid: Array | None = None,
    population: int | None = None,
) -> tuple[Array, Array]:
    """The running-intersection CS for a mean of [0, 1] observations: (lower_t, upper_t) per t
    (`population=N`: for the mean of N values taken without replacement in random order)."""
    g = GRID if grid is None else np.asarray(grid, dtype=float)
    xs = np.asarray(x, dtype=float)
    if len(xs) == 0:
        return np.zeros(0), np.zeros(0)
    low_rej, high_rej = rejected(xs, g, alpha, target, population)
    inside = ~(low_rej | high_rej)
    any_in = inside.any(axis=0)
    lower = np.where(any_in, g[np.argmax(inside, axis=0)], np.nan)
    upper = np.where(any_in, g[len(g) - 1 - np.argmax(inside[::-1], axis=0)], np.nan)
    if population is not None and len(xs) == population:  # every value seen: the mean is known
        lower[-1] = upper[-1] = float(xs.mean())
    return lower, upper


# --- the readiness quantities (PROTOCOL §4) as per-item streams ---------------------------------

Direction = Literal["above", "below"]  # fail when the quantity is above (below) the limit


@dataclass(frozen=True)
class Quantity:
    """One readiness check: a per-item value in [lo, hi], its limit, and which side fails.

    `direction="above"`: fail when the lower bound > limit, ok when the upper bound <= limit;
    `"below"` (accuracy vs chance): fail when the upper bound <= limit, ok when the lower > limit."""

    name: str
    target: str  # SOURCE for the baseline, else the target condition
    limit: float
    direction: Direction
    lo: float = 0.0
    hi: float = 1.0

    def scaled(self, v: float) -> float:
        return (v - self.lo) / (self.hi - self.lo)

    def unscaled(self, v: float) -> float:
        return self.lo + v * (self.hi - self.lo)


def quantities(targets: Sequence[str], settings: ReportSettings) -> list[Quantity]:
    share = settings.max_answer_share
    out = [
        Quantity("en_accuracy", SOURCE, settings.chance, "below"),
        Quantity("en_position_inconsistency", SOURCE, settings.max_position_inconsistency, "above"),
        Quantity("en_share_a", SOURCE, share, "above"),
        Quantity("en_share_b", SOURCE, share, "above"),
        Quantity("en_share_tie", SOURCE, share, "above"),
        Quantity("en_invalid_rate", SOURCE, settings.max_invalid_rate, "above"),
    ]
    for c in targets:
        out.append(Quantity(f"flip_rate:{c}", c, settings.max_flip_rate, "above"))
        out.append(
            Quantity(f"position_increase:{c}", c, settings.max_position_increase, "above", lo=-1.0, hi=1.0)
        )
    return out


def item_values(df: pd.DataFrame, targets: Sequence[str]) -> pd.DataFrame:
    """Per (judge, item_id) one column per quantity name (NaN where the item says nothing about it),
    from a `judgment_frame`. Item-level versions of PROTOCOL §4's definitions: the en accuracy of an
    item is its mean strict correctness over answered orders, its flip rate the share of its orders
    valid in both conditions whose verdicts differ, its position-inconsistency increase inc_c - inc_en."""
    p = pair_flags(df)
    if p.empty:
        return pd.DataFrame()
    en = p[p["condition"] == SOURCE]
    g = en.groupby(["judge", "item_id"])[["acc_n", "correct", "valid", "raw_a", "tie", "invalid", "answered"]]
    s = g.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        out = pd.DataFrame(index=s.index)
        out["en_accuracy"] = (s["correct"] / s["acc_n"]).where(s["acc_n"] > 0)
        valid = s["valid"].where(s["valid"] > 0)
        out["en_share_a"] = s["raw_a"] / valid
        out["en_share_tie"] = s["tie"] / valid
        out["en_share_b"] = (s["valid"] - s["raw_a"] - s["tie"]) / valid
        out["en_invalid_rate"] = (s["invalid"] / s["answered"]).where(s["answered"] > 0)
    pos = position_rows(p)
    pos_en = pos[pos["condition"] == SOURCE].set_index(["judge", "item_id"])
    out["en_position_inconsistency"] = pos_en["incon"].where(pos_en["pboth"] == 1)
    flips = flip_rows(p, [(SOURCE, c) for c in targets])
    if not flips.empty:
        for c in targets:
            rows = flips[flips["condition"] == f"{SOURCE}->{c}"]
            f = rows.groupby(["judge", "item_id"])[["both", "flip"]].sum()
            out[f"flip_rate:{c}"] = (f["flip"] / f["both"]).where(f["both"] > 0)
    inc = position_increase_rows(pos, [SOURCE, *targets])
    if not inc.empty:
        for c in targets:
            r = inc[inc["condition"] == f"{SOURCE}->{c}"].set_index(["judge", "item_id"])
            out[f"position_increase:{c}"] = (r["inc_c"] - r["inc_en"]).where(r["paired"] == 1).astype(float)
    return out


# --- the decision --------------------------------------------------------------------------------


@dataclass
class QuantityState:
    quantity: Quantity
    n: int
    estimate: float | None
    low: float | None  # anytime-valid bounds on the quantity's own scale
    high: float | None
    state: Literal["fail", "ok", "open"]


@dataclass
class Settlement:
    """Where one judge stands after the items judged so far, in the judged order."""

    judge: str
    items: int
    verdicts: dict[str, Status]  # per target (SOURCE alone for an en-only judge)
    checks: list[QuantityState] = field(default_factory=list)
    first_settled: int | None = None

    @property
    def settled(self) -> bool:
        return bool(self.verdicts) and all(v != "inconclusive" for v in self.verdicts.values())


def _bound(q: Quantity, low_rej: Mask, high_rej: Mask) -> tuple[Mask, Mask]:
    """Per time: is the check decided fail / ok? `low_rej` (the CS lies above the limit) and
    `high_rej` (below it) at m = limit: K+ falls and K- rises with m, so excluding the limit from one
    side excludes every m on that side."""
    if q.direction == "above":
        return low_rej, high_rej & ~low_rej
    return high_rej, low_rej & ~high_rej


def _stream(ranked: pd.DataFrame | None, q: Quantity, k: int) -> tuple[Array, Array]:
    """The quantity's [0, 1] observations in judged order (`ranked`: the judge's rows in that
    order), and per judged item how many of them the first k items gave."""
    if ranked is None or q.name not in ranked.columns:
        return np.zeros(0), np.zeros(k)
    col = ranked[q.name].to_numpy(dtype=float)
    seen = ~np.isnan(col)
    x = np.clip((col[seen] - q.lo) / (q.hi - q.lo), 0.0, 1.0)
    return x, np.cumsum(seen).astype(float)


def _trajectory(q: Quantity, x: Array, counts: Array, alpha: float, population: int | None) -> Array:
    """Per judged item k: 2 fail, 1 ok, 0 open (the check's state after the first k items)."""
    state = np.zeros(len(counts), dtype=float)
    if len(x) == 0:
        return state
    limit = q.scaled(q.limit)
    low, high = rejected(x, [limit], alpha, limit, population)
    fail, ok = _bound(q, low[0], high[0])
    code = np.where(fail, 2.0, np.where(ok, 1.0, 0.0))
    idx = counts.astype(int) - 1
    return np.where(idx >= 0, code[np.maximum(idx, 0)], 0.0)


def _combine_codes(codes: Sequence[Array], k: int) -> Array:
    """A part's status per item count: 2 fail (any check fails), 1 pass (all ok), 0 inconclusive."""
    if not codes:
        return np.zeros(k)
    m = np.vstack(codes)
    return np.where((m == 2).any(axis=0), 2.0, np.where((m == 1).all(axis=0), 1.0, 0.0))


STATUS: dict[float, Status] = {2.0: "fail", 1.0: "pass", 0.0: "inconclusive"}


def settle(
    values: pd.DataFrame,
    judge: str,
    targets: Sequence[str],
    settings: ReportSettings,
    order: Sequence[str],
    *,
    intervals: bool = True,
    population: int | None = None,
) -> Settlement:
    """The anytime-valid verdicts of one judge over its items judged so far (`values` from
    `item_values`), read in the judged `order` of item ids. Each check is fail / ok / open from its CS
    at level 1 - alpha; a target's verdict is fail if any of its checks (or the baseline's) fails,
    pass if all are ok, else inconclusive. `first_settled` is the least item count at which every
    verdict was decided (None: not yet). `intervals=False` skips the reported intervals (the
    decisions need only the capital at each limit). `population=N` decides on the without-replacement
    sequences for the mean of N items instead (scripts/bench_cost.py `--sequence finite` measures
    what that does to verdicts about the judge's rate; the verdict does not use it)."""
    alpha = 1.0 - settings.confidence
    has = not values.empty and judge in values.index.get_level_values("judge")
    rows = values.xs(judge, level="judge") if has else None
    assert rows is None or isinstance(rows, pd.DataFrame)
    present = set() if rows is None else set(rows.index)
    ids = [i for i in order if i in present]
    ranked = None if rows is None else rows.reindex(ids)
    k = len(ids)
    checks: list[QuantityState] = []
    traj: dict[str, Array] = {}
    for q in quantities(targets, settings):
        x, counts = _stream(ranked, q, k)
        traj[q.name] = _trajectory(q, x, counts, alpha, population)
        checks.append(_interval(q, x if intervals else x[:0], alpha, traj[q.name], population))
    base = _combine_codes([traj[q.name] for q in quantities([], settings)], k)
    per_target: dict[str, Array] = {}
    for c in targets or [SOURCE]:
        if c == SOURCE:
            inv = np.zeros(k)
        else:
            inv = _combine_codes([traj[n] for n in (f"flip_rate:{c}", f"position_increase:{c}")], k)
        per_target[c] = np.where((base == 2) | (inv == 2), 2.0, np.where((base == 1) & (inv == 1), 1.0, 0.0))
    verdicts = {c: STATUS[float(v[-1])] if k else "inconclusive" for c, v in per_target.items()}
    decided = np.vstack(list(per_target.values())).min(axis=0) > 0 if k else np.zeros(0, dtype=bool)
    first = int(np.argmax(decided)) + 1 if decided.any() else None
    return Settlement(judge=judge, items=k, verdicts=verdicts, checks=checks, first_settled=first)


def _interval(q: Quantity, x: Array, alpha: float, traj: Array, population: int | None) -> QuantityState:
    """The check's anytime-valid interval (on the quantity's own scale) after its last observation."""
    if len(x) == 0:
        return QuantityState(q, 0, None, None, None, "open")
    lower, upper = betting_cs(x, alpha, q.scaled(q.limit), population=population)
    lo, hi = float(lower[-1]), float(upper[-1])
    code = float(traj[-1]) if len(traj) else 0.0
    state: Literal["fail", "ok", "open"] = "fail" if code == 2 else ("ok" if code == 1 else "open")
    bounds = (None, None) if np.isnan(lo) or np.isnan(hi) else (q.unscaled(lo), q.unscaled(hi))
    return QuantityState(q, len(x), q.unscaled(float(np.mean(x))), bounds[0], bounds[1], state)


def stratified_order(items: Mapping[str, str], seed: int) -> list[str]:
    """A seeded random order of item ids (id -> subset) in which every subset appears early: each
    subset is shuffled, then items are interleaved by their rank within the subset (scaled to the
    subset's size), ties broken at random."""
    rng = np.random.default_rng(seed)
    by_subset: dict[str, list[str]] = {}
    for item, subset in sorted(items.items()):
        by_subset.setdefault(subset, []).append(item)
    keyed: list[tuple[float, float, str]] = []
    for subset in sorted(by_subset):
        members = by_subset[subset]
        perm = rng.permutation(len(members))
        for rank, k in enumerate(perm):
            keyed.append(((rank + rng.random()) / len(members), rng.random(), members[k]))
    return [item for _, _, item in sorted(keyed)]
