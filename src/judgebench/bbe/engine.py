"""Calibrate, add noise, rebuild rankings: the A-BB algorithm of PROTOCOL §5 and §5b over ScoreSets.

Randomness: every draw comes from `numpy.random.default_rng([seed, calibration index, purpose])`, so a
seed reproduces bbe.json exactly and no calibration's draws depend on another's.

A release uses one certificate (`registry.py`): the named one, or (auto) the tightest that carries over
to new items drawn like the measured ones; `exact`, which covers only the listed neighbours, is used
only when named, and labelled in-sample.
Releases compared with each other (the judges of a Judge-LS run) share one alpha, the smallest any of
them needs, and the label-neutral centre 0.5, so that no order changes because of the shrinkage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgebench import __version__
from judgebench.bbe import certificate_registry as registry
from judgebench.bbe import mechanism as mech
from judgebench.bbe import sensitivity as sens
from judgebench.bbe.choice import Choice, Ctx, centre_of, choose, context
from judgebench.bbe.params import NEUTRAL_CENTRE, BBEParams, Bridge, JitterSpec, VerifyKind
from judgebench.bbe.rankings import aggregates, denominators, rank_correlation, system_rows, unit_correlation
from judgebench.bbe.schematic import SchematicFit
from judgebench.bbe.scores import ScoreSet
from judgebench.bbe.utility import SystemRelease, utility
from judgebench.bbe.verify import HalfCalibration, Tested, VerifySpec, check_release
from judgebench.errors import ConfigError
from judgebench.records.bbe_document import (
    BBEResult,
    Calibration,
    CertificateRow,
    Correlation,
    SchematicBlock,
)

__all__ = [
    "BBEParams",
    "BBERun",
    "Bridge",
    "CalibrationOutput",
    "JitterSpec",
    "VerifyKind",
    "calibrate",
    "run_bbe",
]

FloatArray = NDArray[np.float64]
_NOISE = 1


@dataclass
class CalibrationOutput:
    """A calibration block plus the per-unit arrays behind it (for the scores file and the plot)."""

    block: Calibration
    scores: ScoreSet
    bias_bounded: FloatArray | None
    aggregates_raw: dict[str, float] = field(default_factory=dict)
    aggregates_bb: dict[str, float] = field(default_factory=dict)
    aggregates_nf: dict[str, float] = field(default_factory=dict)  # noise-free release g(f(D))
    aggregate_sd: dict[str, float] = field(default_factory=dict)  # sd of each aggregate's noise


def _reason(ctx: Ctx, choice: Choice) -> str | None:
    if choice.sigma is not None:
        return None
    c = choice.pick.certificate
    sup = "unbounded" if c.alpha_max is None else f"{c.alpha_max:.4g}"
    bound = (
        ""
        if c.bound is None
        else f"; alpha * b = {choice.alpha:g} * {c.bound:.4g} >= tau = {ctx.params.tau:g}"
    )
    detail = registry.kind_of(c.name).infeasible_detail(choice.alpha, choice.used, ctx.split, ctx.params.tau)
    return (
        f"infeasible with the {c.name} certificate at alpha {choice.alpha:g}{bound}{detail}; an alpha below "
        f"{sup} (--alpha {0.99 * (c.alpha_max or 1.0):.3g}, or --alpha auto) would work"
    )


def _guarantee(ctx: Ctx, block: Calibration) -> str:
    ss, params = ctx.ss, ctx.params
    lo, hi = ss.scale
    kinds = ", ".join(sorted(block.neighbours)) or "the given neighbours"
    if not block.feasible:
        return f"No (tau={params.tau}, delta={params.delta}) guarantee for {ss.name}: {block.reason}"
    scope = block.scope or "the neighbours of the kinds measured"
    return (
        f"For {ss.name}: with probability at least {1 - params.delta:.4g} over a neighbour D' (one of "
        f"{block.units} units changed by {kinds}) and the noise, the bias-bounded score vector moves by at "
        f"most tau = {params.tau} in L2 norm (normalised by the declared scale [{lo:g}, {hi:g}], i.e. "
        f"{params.tau * (hi - lo):.4g} in raw units); certificate {block.certificate}, covering {scope}; "
        f"sensitivity {block.sensitivity:.4g} ({block.sensitivity_source}, "
        f"{'upper confidence bound' if params.upper_bound else 'plug-in estimate'}), "
        f"alpha {block.alpha:.4g}, sigma {block.sigma:.4g}, d {block.d}. "
        "It does not promise that a ranking survives: see the utility."
    )


def _rows(choice: Choice) -> list[CertificateRow]:
    return [
        CertificateRow(
            name=c.name,
            bound=c.bound,
            alpha_max=c.alpha_max,
            sigma=choice.sigma if c is choice.pick.certificate else c.sigma(choice.alpha),
            alpha=choice.alpha,
            carries_over=c.carries_over,
            delta_sensitivity=c.delta_bias,
            delta_noise=c.delta_noise,
            delta_estimate=c.delta_estimate,
            support=None if c.values is None else [float(x) for x in c.values],
            shares=None if c.weights is None else [float(x) for x in c.weights],
        )
        for c in choice.applicable
    ]


def _half(ctx: Ctx, choice: Choice, mask: NDArray[np.bool_]) -> HalfCalibration:
    """The released certificate (never another) recalibrated on the units outside `mask` at the
    released alpha; where it does not apply to half the data, no sigma and the reason."""
    name = choice.pick.certificate.name
    half_set = ctx.pairs_set.subset_pairs(~mask)
    try:
        half = choose(ctx, half_set, alpha=choice.alpha, certificate=name)
    except ConfigError as exc:
        return HalfCalibration(name, choice.used, choice.alpha, None, 0, reason=f"on half the items, {exc}")
    reason = (
        None if half.sigma is not None else f"{name} is infeasible on half the items at alpha {half.alpha:g}"
    )
    return HalfCalibration(
        certificate=name,
        sensitivity=half.used,
        alpha=half.alpha,
        sigma=half.sigma,
        estimate_units=half.neighbour.units_with_pairs if half.neighbour else 0,
        reason=reason,
    )


def _schematic_block(ctx: Ctx, neighbour: sens.SensitivityEstimate | None) -> SchematicBlock | None:
    fit = ctx.schematic
    if fit is None:
        return None
    lo, hi = ctx.ss.scale
    return SchematicBlock(
        factors=list(fit.factors),
        n=fit.n,
        r2_ols=fit.r2_ols,
        r2_ridge=fit.r2_ridge,
        r2=fit.r2,
        sensitivity=fit.sensitivity,
        sensitivity_raw_units=fit.sensitivity * (hi - lo),
        strategy=ctx.params.strategy,
        neighbour_sensitivity=neighbour.used if neighbour else None,
    )


def _block(ctx: Ctx, choice: Choice, mu: float, noisy: FloatArray | None) -> Calibration:
    ss, params, split, neighbour = ctx.ss, ctx.params, ctx.split, choice.neighbour
    sigma, c = choice.sigma, choice.pick.certificate
    radius = None
    if sigma is not None and c.bound is not None:
        radius = sigma * mech.noise_radius_factor(ctx.d, c.delta_noise)
    return Calibration(
        judge=ss.name,
        d=ctx.d,
        units=len(ss),
        sensitivity=choice.used,
        sensitivity_plugin=choice.plugin,
        alpha=choice.alpha,
        sigma=sigma,
        feasible=sigma is not None,
        correlation=unit_correlation(ss.base, noisy) if noisy is not None else Correlation(),
        certificate=c.name,
        certificates=_rows(choice),
        carries_over=c.carries_over,
        scope=registry.kind_of(c.name).scope(c.carries_over),
        delta_sensitivity=c.delta_bias,
        delta_noise=c.delta_noise,
        delta_estimate=c.delta_estimate,
        alpha_needed=choice.alpha,
        violation_probability=None if sigma is None else c.violation_probability(choice.alpha, sigma),
        sensitivity_source=choice.source,
        sensitivity_upper=neighbour.upper if neighbour else None,
        jitter=ctx.jitter,
        jitter_measured=sens.jitter_rms(ss.repeat_unit, ss.repeat_score),
        alpha_mode="given" if params.alpha is not None else f"auto (margin {params.margin})",
        max_alpha=c.alpha_max,
        max_sensitivity=mech.max_sensitivity(params.tau, choice.alpha, split.sensitivity),
        centre=mu,
        bias_term=None if c.bound is None else choice.alpha * c.bound,
        noise_radius=radius,
        reason=_reason(ctx, choice),
        scale=ss.scale,
        score_source=ss.score_source,
        aggregate=ss.aggregate,
        pairs=neighbour.pairs if neighbour else 0,
        units_with_pairs=neighbour.units_with_pairs if neighbour else 0,
        neighbours=neighbour.per_kind if neighbour else {},
        invalid_neighbours=ctx.pairs_set.invalid_neighbours,
        invalid_neighbour_policy=params.invalid,
        units_dropped=ss.units_dropped,
        schematic=_schematic_block(ctx, neighbour),
    )


def _releases(out: CalibrationOutput, alpha: float, sigma: float | None) -> dict[str, SystemRelease]:
    return {
        s: SystemRelease(
            raw=raw,
            noise_free=out.aggregates_nf[s],
            released=out.aggregates_bb.get(s),
            sd=out.aggregate_sd.get(s, 0.0) if sigma is not None else 0.0,
            alpha=alpha,
        )
        for s, raw in out.aggregates_raw.items()
    }


def calibrate(
    ss_in: ScoreSet,
    params: BBEParams,
    index: int,
    *,
    schematic: SchematicFit | None = None,
    alpha: float | None = None,
    bridge: Bridge | None = None,
) -> CalibrationOutput:
    """Estimate Delta, choose the certificate, alpha (`alpha` overrides the params: a shared one) and
    sigma, release g(f(D)) + Z, verify if asked (verification never changes what a named certificate
    releases)."""
    ctx = context(ss_in, params, index, schematic, bridge)
    ss = ctx.ss
    choice = choose(ctx, ctx.pairs_set, alpha=params.alpha if alpha is None else alpha)
    mu = centre_of(ss, params)
    sigma = choice.sigma
    noisy: FloatArray | None = None
    if sigma is not None:
        rng = np.random.default_rng([params.seed, index, _NOISE])
        noisy = mech.apply_mechanism(ss.base, choice.alpha, mu, sigma, rng, clip=params.clip)
    block = _block(ctx, choice, mu, noisy)
    holdout = params.verify_kind == "holdout"  # fresh: the api layer judges new neighbours
    if params.verify and holdout and sigma is not None and len(ctx.pairs_set.pair_unit):
        spec = VerifySpec(params.tau, params.delta, params.verify, params.seed, index, params.verify_kind)
        name = choice.pick.certificate.name
        tested = Tested(
            name, registry.kind_of(name).verification, choice.alpha, sigma, block.violation_probability
        )
        block.verify = check_release(
            ctx.pairs_set, spec, tested, d=ctx.d, recalibrate=lambda mask: _half(ctx, choice, mask)
        )
    credit = (1.0 - choice.alpha) * NEUTRAL_CENTRE if mu == NEUTRAL_CENTRE else 0.0
    out = CalibrationOutput(block, ss, noisy, aggregates(ss, ss.base))
    out.aggregates_nf = aggregates(ss, mech.shrink(ss.base, choice.alpha, mu), invalid_credit=credit)
    out.aggregates_bb = aggregates(ss, noisy, invalid_credit=credit) if noisy is not None else {}
    counts = {s: ss.systems.count(s) for s in out.aggregates_raw}
    unit_sd = (
        0.0 if sigma is None else sigma * (1.0 if ss.aggregate == "accuracy" else ss.scale[1] - ss.scale[0])
    )
    out.aggregate_sd = {s: unit_sd * math.sqrt(counts[s]) / n for s, n in denominators(ss).items()}
    block.systems = system_rows(out.aggregates_raw, out.aggregates_bb or None, counts)
    block.rank_correlation = (
        rank_correlation(out.aggregates_raw, out.aggregates_bb) if noisy is not None else None
    )
    # no release, no utility: an infeasible calibration released nothing whose order could be kept
    block.utility = None if sigma is None else utility(_releases(out, choice.alpha, sigma))
    block.guarantee = _guarantee(ctx, block)
    return out


def _shared_alpha(sets: list[ScoreSet], params: BBEParams, bridge: Bridge | None) -> list[float]:
    """Each set's own alpha_needed (what it would choose alone)."""
    needed = []
    for i, ss in enumerate(sets):
        ctx = context(ss, params, i, None, bridge)
        needed.append(choose(ctx, ctx.pairs_set, alpha=params.alpha).alpha)
    return needed


def _calibrate_all(
    sets: list[ScoreSet],
    params: BBEParams,
    *,
    compared: bool,
    schematic: SchematicFit | None,
    bridge: Bridge | None,
) -> list[CalibrationOutput]:
    """Every set; compared sets (a Judge-LS run's judges) at one shared alpha, the smallest needed."""
    if not compared or len(sets) < 2:
        return [
            calibrate(ss, params, i, schematic=schematic if i == 0 else None, bridge=bridge)
            for i, ss in enumerate(sets)
        ]
    needed = _shared_alpha(sets, params, bridge)
    shared = min(needed)
    outputs = []
    for i, ss in enumerate(sets):
        o = calibrate(ss, params, i, alpha=shared, bridge=bridge)
        o.block.alpha_needed = needed[i]
        if params.alpha is None:
            o.block.alpha_mode = (
                f"shared: the smallest alpha_needed of {len(sets)} compared judges "
                f"(auto, margin {params.margin})"
            )
        outputs.append(o)
    return outputs


def _across(
    outputs: list[CalibrationOutput],
) -> tuple[dict[str, float], dict[str, float], dict[str, SystemRelease]]:
    raw = {o.scores.name: next(iter(o.aggregates_raw.values())) for o in outputs}
    bb = {o.scores.name: next(iter(o.aggregates_bb.values())) for o in outputs if o.aggregates_bb}
    releases = {
        o.scores.name: next(iter(_releases(o, o.block.alpha or 1.0, o.block.sigma).values())) for o in outputs
    }
    return raw, bb, releases


def _parameters(params: BBEParams, split: mech.DeltaSplit, centre: mech.Centre) -> dict[str, Any]:
    return {
        "tau": params.tau,
        "delta": params.delta,
        "delta_split": [split.sensitivity, split.noise, split.estimate],
        "alpha": "auto" if params.alpha is None else params.alpha,
        "margin": params.margin,
        "centre": centre,
        "jitter": params.jitter,
        "dim": params.dim,
        "clip": params.clip,
        "sensitivity_mode": "upper_bound" if params.upper_bound else "plugin",
        "bound": "min(Hoeffding, Maurer-Pontil empirical Bernstein) on per-unit squared changes"
        if params.upper_bound
        else None,
        "seed": params.seed,
        "verify": params.verify,
        "verify_kind": params.verify_kind,
        "certificate": params.certificate,
        "sensitivity": params.sensitivity,
        "invalid_neighbours": params.invalid,
        "strategy": params.strategy,
        "units": "normalised: raw score / declared range; tau and Delta on that scale",
    }


def _released_split(blocks: list[Calibration], requested: mech.DeltaSplit) -> tuple[mech.DeltaSplit, str]:
    """The delta split the released certificates spend (PROTOCOL §5: all three reported), or the
    requested one when the calibrations' certificates spend it differently."""
    splits = {
        (b.delta_sensitivity, b.delta_noise, b.delta_estimate, b.certificate)
        for b in blocks
        if b.delta_sensitivity is not None and b.delta_noise is not None and b.delta_estimate is not None
    }
    if len(splits) == 1:
        s, n, e, name = splits.pop()
        return mech.DeltaSplit(s, n, e), f"spent by the released certificate ({name})"
    if not splits:
        return requested, "the requested split"
    return requested, (
        "the requested split: the calibrations' certificates spend delta differently (each "
        "calibration's delta_sensitivity, delta_noise and delta_estimate say how)"
    )


@dataclass
class BBERun:
    """Everything one `bbe` invocation produced."""

    result: BBEResult
    outputs: list[CalibrationOutput]
    factor_outputs: list[CalibrationOutput]


def run_bbe(
    sets: list[ScoreSet],
    params_in: BBEParams,
    *,
    systems_across_sets: bool,
    schematic: SchematicFit | None = None,
    factor_sets: list[ScoreSet] | None = None,
    source: dict[str, Any] | None = None,
    systems_skipped: dict[str, str] | None = None,
    bridge: Bridge | None = None,
) -> BBERun:
    """Calibrate every set; rankings over sets (Judge-LS: judges are systems) or within the one set."""
    centre = params_in.centre
    if centre == "auto":
        centre = NEUTRAL_CENTRE if systems_across_sets or bridge is not None else "mean"
    params = params_in.model_copy(update={"centre": centre})
    split = params.delta_split()
    outputs = _calibrate_all(sets, params, compared=systems_across_sets, schematic=schematic, bridge=bridge)
    factor_outputs: list[CalibrationOutput] = []
    skipped: dict[str, str] = {}
    for j, fs in enumerate(factor_sets or []):
        if len(fs.pair_unit) == 0 and params.invalid != "worst":
            skipped[fs.name] = "no neighbour row carries this factor: its sensitivity cannot be estimated"
            continue
        factor_outputs.append(calibrate(fs, params, 1000 + j))
    if systems_across_sets:
        raw, bb, releases = _across(outputs)
        counts = {o.scores.name: len(o.scores) for o in outputs}
        all_feasible = len(bb) == len(raw)
        rows = system_rows(raw, bb if all_feasible else None, counts)
        rc = rank_correlation(raw, bb) if all_feasible else None
        util = utility(releases) if all_feasible else None
    else:
        one = len(outputs) == 1
        rows = outputs[0].block.systems if one else []
        rc = outputs[0].block.rank_correlation if one else None
        util = outputs[0].block.utility if one else None
    released, split_note = _released_split([o.block for o in outputs], split)
    result = BBEResult(
        tau=params.tau,
        delta=params.delta,
        delta_sensitivity=released.sensitivity,
        delta_noise=released.noise,
        delta_estimate=released.estimate,
        delta_split=split_note,
        rank_correlation=rc,
        calibrations=[o.block for o in outputs],
        factor_calibrations=[o.block for o in factor_outputs],
        factors_skipped=skipped,
        judges_skipped=systems_skipped or {},
        systems=rows,
        utility=util,
        transfer_assumption=bridge.assumption() if bridge is not None else None,
        source=source or {},
        parameters=_parameters(params, split, centre),
        guarantee=" ".join(o.block.guarantee for o in outputs),
        feasible=all(o.block.feasible for o in outputs + factor_outputs),
        judgebench_version=__version__,
    )
    return BBERun(result, outputs, factor_outputs)
