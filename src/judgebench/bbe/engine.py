"""Calibrate, add noise, rebuild rankings: the A-BB algorithm of PROTOCOL §5 over ScoreSets.

Randomness: every draw comes from `numpy.random.default_rng([seed, calibration index, purpose])`, so a
seed reproduces bbe.json exactly and no calibration's draws depend on another's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field
from scipy import stats

from judgebench import __version__
from judgebench.bbe import mechanism as mech
from judgebench.bbe import sensitivity as sens
from judgebench.bbe.schematic import SchematicFit, Strategy, combine
from judgebench.bbe.scores import InvalidPolicy, ScoreSet
from judgebench.bbe.verify import rate_interval, verify_block, violation_count
from judgebench.errors import ConfigError
from judgebench.records.bbe import (
    BBEResult,
    Calibration,
    Correlation,
    HoldoutCheck,
    RankCorrelation,
    SchematicBlock,
    SystemRow,
    VerifyBlock,
)

FloatArray = NDArray[np.float64]
JitterSpec = Literal["none", "auto"] | float

_NOISE, _VERIFY, _HOLDOUT, _HOLDOUT_VERIFY = 1, 2, 3, 4
MIN_HOLDOUT_UNITS = 20


class BBEParams(BaseModel):
    """Every knob of `judgebench bbe`; defaults are PROTOCOL §5's algorithm (README)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tau: float = Field(gt=0)
    delta: float = Field(gt=0, lt=1)
    split: tuple[float, ...] | None = None
    # 1: no shrinkage; None: auto (the largest alpha leaving `margin` of tau for the noise)
    alpha: float | None = Field(default=1.0, gt=0, le=1)
    margin: float = Field(default=0.5, gt=0, lt=1)
    centre: mech.Centre = "mean"
    jitter: JitterSpec = "none"
    dim: int | None = Field(default=None, ge=1)
    clip: bool = True
    upper_bound: bool = False  # PROTOCOL §5's plug-in estimate; True spends delta_estimate on a bound
    seed: int = 0
    verify: int | None = Field(default=None, ge=1)
    invalid: InvalidPolicy = "skip"
    strategy: Strategy = "max"

    def delta_split(self) -> mech.DeltaSplit:
        default = mech.DEFAULT_SPLIT_BOUND if self.upper_bound else mech.DEFAULT_SPLIT_PLUGIN
        try:
            return mech.DeltaSplit.from_fractions(
                self.delta, self.split or default, upper_bound=self.upper_bound
            )
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc


@dataclass
class CalibrationOutput:
    """A calibration block plus the per-unit arrays behind it (for the scores file and the plot)."""

    block: Calibration
    scores: ScoreSet
    bias_bounded: FloatArray | None
    aggregates_raw: dict[str, float] = field(default_factory=dict)
    aggregates_bb: dict[str, float] = field(default_factory=dict)


def _safe(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def unit_correlation(raw: FloatArray, noisy: FloatArray) -> Correlation:
    if len(raw) < 3 or np.ptp(raw) == 0 or np.ptp(noisy) == 0:
        return Correlation(pearson=None, spearman=None)
    return Correlation(
        pearson=_safe(float(stats.pearsonr(raw, noisy)[0])),
        spearman=_safe(float(stats.spearmanr(raw, noisy)[0])),
    )


def rank_correlation(raw: dict[str, float], noisy: dict[str, float]) -> RankCorrelation | None:
    """Spearman and Kendall between raw and bias-bounded system aggregates; None with < 3 systems."""
    names = [s for s in raw if s in noisy]
    if len(names) < 3:
        return None
    a = np.array([raw[s] for s in names])
    b = np.array([noisy[s] for s in names])
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return RankCorrelation(spearman=None, kendall=None)
    return RankCorrelation(
        spearman=_safe(float(stats.spearmanr(a, b)[0])), kendall=_safe(float(stats.kendalltau(a, b)[0]))
    )


def ranks(values: dict[str, float]) -> dict[str, int]:
    """Rank 1 = highest aggregate; ties share the better rank."""
    names = list(values)
    r = stats.rankdata([-values[s] for s in names], method="min")
    return {s: int(x) for s, x in zip(names, r, strict=True)}


def aggregates(ss: ScoreSet, values: FloatArray) -> dict[str, float]:
    """Per-system aggregate, else the mean raw-scale score. Judge-LS (gold known; one judge per set):
    tie-half accuracy over answered en judgments as in PROTOCOL §4, an invalid answer counting as
    wrong: each scored unit contributes its correctness (s or 1 - s), each unit dropped as invalid 0."""
    systems = np.asarray(ss.systems)
    out: dict[str, float] = {}
    for system in dict.fromkeys(ss.systems):
        mask = systems == system
        if ss.aggregate == "accuracy" and ss.gold is not None:
            v = values[mask]
            g = ss.gold[mask]
            answered = len(v) + ss.units_dropped.get("invalid", 0)
            out[system] = float(np.sum(g * v + (1.0 - g) * (1.0 - v)) / answered)
        else:
            out[system] = float(np.mean(ss.denormalise(values[mask])))
    return out


def system_rows(
    raw: dict[str, float], noisy: dict[str, float] | None, counts: dict[str, int]
) -> list[SystemRow]:
    r_raw = ranks(raw)
    r_bb = ranks(noisy) if noisy else {}
    return [
        SystemRow(
            system=s,
            units=counts.get(s, 0),
            raw=raw[s],
            bias_bounded=None if noisy is None else noisy.get(s),
            rank_raw=r_raw[s],
            rank_bias_bounded=r_bb.get(s),
        )
        for s in sorted(raw, key=lambda x: r_raw[x])
    ]


def _holdout_mask(ss: ScoreSet, rng: np.random.Generator) -> NDArray[np.bool_] | None:
    """Half of the groups of units that have pairs (Judge-LS: both orders of an item fall in the same
    half, as they share their swap pair), for verification; None when too few to split."""
    groups = ss.groups()
    with_pairs = np.unique(groups[ss.pair_unit])
    if len(with_pairs) < 2 * MIN_HOLDOUT_UNITS:
        return None
    chosen = rng.permutation(with_pairs)[: len(with_pairs) // 2]
    return np.isin(groups, chosen)


def _guarantee(ss: ScoreSet, block: Calibration, params: BBEParams) -> str:
    lo, hi = ss.scale
    kinds = ", ".join(sorted(block.neighbours)) or "the given neighbours"
    if not block.feasible:
        return f"No (tau={params.tau}, delta={params.delta}) guarantee for {ss.name}: {block.reason}"
    return (
        f"For {ss.name}: with probability at least {1 - params.delta:.4g} over a neighbour D' (one of "
        f"{block.units} units changed by {kinds}) and the noise, the bias-bounded score vector moves by at "
        f"most tau = {params.tau} in L2 norm (normalised by the declared scale [{lo:g}, {hi:g}], i.e. "
        f"{params.tau * (hi - lo):.4g} in raw units); sensitivity {block.sensitivity:.4g} "
        f"({'upper confidence bound' if params.upper_bound else 'plug-in estimate'}), "
        f"alpha {block.alpha:.4g}, "
        f"sigma {block.sigma:.4g}, d {block.d}."
    )


@dataclass
class _Choice:
    """The sensitivity, alpha and sigma one estimate leads to."""

    neighbour: sens.SensitivityEstimate | None
    used: float
    plugin: float
    alpha: float
    alpha_mode: str
    a_max: float
    sigma: float | None


def _choose(
    estimate_set: ScoreSet,
    params: BBEParams,
    split: mech.DeltaSplit,
    *,
    jitter: float,
    schematic_value: float | None,
    d: int,
) -> _Choice:
    """Estimate Delta on `estimate_set`'s pairs, then alpha (given or auto) and sigma = sigma_max."""
    neighbour: sens.SensitivityEstimate | None = None
    if len(estimate_set.pair_unit):
        neighbour = sens.estimate(
            estimate_set.base,
            estimate_set.pair_unit,
            estimate_set.pair_score,
            estimate_set.pair_kind,
            jitter=jitter,
            upper_bound=params.upper_bound,
            delta_estimate=split.estimate if params.upper_bound else 0.0,
            pair_group=estimate_set.groups()[estimate_set.pair_unit],
        )
    try:
        used = combine(neighbour.used if neighbour else None, schematic_value, params.strategy)
        plugin_neighbour = (
            math.sqrt(max(0.0, neighbour.plugin**2 - jitter**2)) if neighbour is not None else None
        )
        plugin = combine(plugin_neighbour, schematic_value, params.strategy)
    except ValueError as exc:
        raise ConfigError(f"{estimate_set.name}: {exc}") from exc
    a_max = mech.max_alpha(params.tau, used, split.sensitivity)
    if params.alpha is None:
        alpha = mech.auto_alpha(params.tau, used, split.sensitivity, params.margin)
        alpha_mode = f"auto (margin {params.margin})"
    else:
        alpha, alpha_mode = params.alpha, "given"
    sigma = mech.sigma_max(params.tau, alpha, used, d, split.sensitivity, split.noise)
    return _Choice(neighbour, used, plugin, alpha, alpha_mode, a_max, sigma)


def _verify(
    ss: ScoreSet,
    params: BBEParams,
    split: mech.DeltaSplit,
    index: int,
    choice: _Choice,
    mu: float,
    *,
    jitter: float,
    schematic_value: float | None,
    d: int,
) -> VerifyBlock:
    """K fresh (neighbour, noise) draws against the released mechanism, plus the holdout check of the
    estimate when there are enough units with neighbours."""
    assert params.verify is not None and choice.sigma is not None
    violations = violation_count(
        ss.base,
        ss.pair_unit,
        ss.pair_score,
        alpha=choice.alpha,
        mu=mu,
        sigma=choice.sigma,
        tau=params.tau,
        draws=params.verify,
        rng=np.random.default_rng([params.seed, index, _VERIFY]),
        clip=params.clip,
    )
    block = verify_block(violations, params.verify, params.delta, pairs=len(ss.pair_unit))
    holdout = _holdout_mask(ss, np.random.default_rng([params.seed, index, _HOLDOUT]))
    if holdout is None:
        return block
    half = _choose(
        ss.subset_pairs(~holdout), params, split, jitter=jitter, schematic_value=schematic_value, d=d
    )
    keep = holdout[ss.pair_unit]
    held: int | None = None
    rate = low = high = None
    if half.sigma is not None and keep.any():
        held = violation_count(
            ss.base,
            ss.pair_unit[keep],
            ss.pair_score[keep],
            alpha=half.alpha,
            mu=mu,
            sigma=half.sigma,
            tau=params.tau,
            draws=params.verify,
            rng=np.random.default_rng([params.seed, index, _HOLDOUT_VERIFY]),
            clip=params.clip,
        )
        rate, low, high = rate_interval(held, params.verify)
    block.holdout = HoldoutCheck(
        estimate_units=half.neighbour.units_with_pairs if half.neighbour else 0,
        holdout_units=len(np.unique(ss.pair_unit[keep])),
        sensitivity=half.used,
        alpha=half.alpha,
        sigma=half.sigma,
        draws=None if held is None else params.verify,
        violations=held,
        rate=rate,
        ci_low=low,
        ci_high=high,
        at_or_below_delta=None if low is None else low <= params.delta,
    )
    return block


def calibrate(
    ss_in: ScoreSet,
    params: BBEParams,
    split: mech.DeltaSplit,
    index: int,
    *,
    schematic: SchematicFit | None = None,
) -> CalibrationOutput:
    """Estimate Delta on every unit, choose alpha and sigma, release g(f(D)) + Z, verify if asked
    (verification never changes what is released)."""
    ss = ss_in.with_invalid_as_worst() if params.invalid == "worst" else ss_in
    n = len(ss)
    d = params.dim if params.dim is not None else (ss.declared_d or n)
    if d < n:
        raise ConfigError(
            f"--dim {d} is below the number of scored units ({n}) of {ss.name}: noise covers every unit"
        )

    if params.jitter == "none":
        jitter = 0.0
    elif params.jitter == "auto":
        measured = sens.jitter_rms(ss.repeat_unit, ss.repeat_score)
        jitter = measured or 0.0
    else:
        jitter = float(params.jitter) / (ss.scale[1] - ss.scale[0])  # given in the score's own units

    schem_value = schematic.sensitivity if schematic is not None else None
    choice = _choose(ss, params, split, jitter=jitter, schematic_value=schem_value, d=d)
    neighbour, used, alpha, sigma, a_max = (
        choice.neighbour,
        choice.used,
        choice.alpha,
        choice.sigma,
        choice.a_max,
    )
    centre = params.centre
    if isinstance(centre, float | int):  # given in the score's own units
        lo, hi = ss.scale
        if not lo <= centre <= hi:
            raise ConfigError(f"--centre {centre} lies outside the scale [{lo:g}, {hi:g}] of {ss.name}")
        centre = (centre - lo) / (hi - lo)
    mu = mech.resolve_centre(ss.base, centre)
    bias = mech.bias_term(alpha, used, split.sensitivity)
    reason = None
    if sigma is None:
        reason = (
            f"infeasible: alpha*Delta/sqrt(delta_sensitivity) = "
            f"{alpha:g}*{used:.4g}/sqrt({split.sensitivity:g}) "
            f"= {bias:.4g} >= tau = {params.tau:g}; an alpha below {a_max:.4g} (--alpha {a_max * 0.99:.3g}, "
            f"or --alpha auto) would work, "
            f"or a sensitivity below {mech.max_sensitivity(params.tau, alpha, split.sensitivity):.4g} at "
            f"alpha {alpha:g}"
        )
    noisy: FloatArray | None = None
    if sigma is not None:
        noisy = mech.apply_mechanism(
            ss.base, alpha, mu, sigma, np.random.default_rng([params.seed, index, _NOISE]), clip=params.clip
        )

    block = Calibration(
        judge=ss.name,
        d=d,
        units=n,
        sensitivity=used,
        sensitivity_plugin=choice.plugin,
        alpha=alpha,
        sigma=sigma,
        feasible=sigma is not None,
        correlation=unit_correlation(ss.base, noisy) if noisy is not None else Correlation(),
        sensitivity_upper=neighbour.upper if neighbour else None,
        jitter=jitter,
        alpha_mode=choice.alpha_mode,
        max_alpha=None if math.isinf(a_max) else a_max,
        max_sensitivity=mech.max_sensitivity(params.tau, alpha, split.sensitivity),
        centre=mu,
        bias_term=bias,
        noise_radius=None if sigma is None else sigma * mech.noise_radius_factor(d, split.noise),
        reason=reason,
        scale=ss.scale,
        score_source=ss.score_source,
        aggregate=ss.aggregate,
        pairs=neighbour.pairs if neighbour else 0,
        units_with_pairs=neighbour.units_with_pairs if neighbour else 0,
        neighbours=neighbour.per_kind if neighbour else {},
        invalid_neighbours=ss_in.invalid_neighbours,
        invalid_neighbour_policy=params.invalid,
        units_dropped=ss.units_dropped,
    )
    if schematic is not None:
        lo, hi = ss.scale
        block.schematic = SchematicBlock(
            factors=list(schematic.factors),
            n=schematic.n,
            r2_ols=schematic.r2_ols,
            r2_ridge=schematic.r2_ridge,
            r2=schematic.r2,
            sensitivity=schematic.sensitivity,
            sensitivity_raw_units=schematic.sensitivity * (hi - lo),
            strategy=params.strategy,
            neighbour_sensitivity=neighbour.used if neighbour else None,
        )
    if params.verify and sigma is not None and len(ss.pair_unit):
        block.verify = _verify(
            ss, params, split, index, choice, mu, jitter=jitter, schematic_value=schem_value, d=d
        )
    raw_agg = aggregates(ss, ss.base)
    bb_agg = aggregates(ss, noisy) if noisy is not None else {}
    counts = {s: ss.systems.count(s) for s in raw_agg}
    block.systems = system_rows(raw_agg, bb_agg or None, counts)
    block.rank_correlation = rank_correlation(raw_agg, bb_agg) if bb_agg else None
    block.guarantee = _guarantee(ss, block, params)
    return CalibrationOutput(block, ss, noisy, raw_agg, bb_agg)


@dataclass
class BBERun:
    """Everything one `bbe` invocation produced."""

    result: BBEResult
    outputs: list[CalibrationOutput]
    factor_outputs: list[CalibrationOutput]


def run_bbe(
    sets: list[ScoreSet],
    params: BBEParams,
    *,
    systems_across_sets: bool,
    schematic: SchematicFit | None = None,
    factor_sets: list[ScoreSet] | None = None,
    source: dict[str, Any] | None = None,
    systems_skipped: dict[str, str] | None = None,
) -> BBERun:
    """Calibrate every set; rankings over sets (Judge-LS: judges are systems) or within the one set."""
    split = params.delta_split()
    outputs = [
        calibrate(ss, params, split, i, schematic=schematic if i == 0 else None) for i, ss in enumerate(sets)
    ]
    factor_outputs: list[CalibrationOutput] = []
    skipped: dict[str, str] = {}
    for j, fs in enumerate(factor_sets or []):
        if len(fs.pair_unit) == 0 and params.invalid != "worst":
            skipped[fs.name] = "no neighbour row carries this factor: its sensitivity cannot be estimated"
            continue
        factor_outputs.append(calibrate(fs, params, split, 1000 + j))
    if systems_across_sets:
        raw = {o.scores.name: next(iter(o.aggregates_raw.values())) for o in outputs}
        bb = {o.scores.name: next(iter(o.aggregates_bb.values())) for o in outputs if o.aggregates_bb}
        counts = {o.scores.name: len(o.scores) for o in outputs}
        all_feasible = len(bb) == len(raw)
        rows = system_rows(raw, bb if all_feasible else None, counts)
        rc = rank_correlation(raw, bb) if all_feasible else None
    else:
        rows = outputs[0].block.systems if len(outputs) == 1 else []
        rc = outputs[0].block.rank_correlation if len(outputs) == 1 else None
    feasible = all(o.block.feasible for o in outputs + factor_outputs)
    guarantee = " ".join(o.block.guarantee for o in outputs)
    result = BBEResult(
        tau=params.tau,
        delta=params.delta,
        delta_sensitivity=split.sensitivity,
        delta_noise=split.noise,
        delta_estimate=split.estimate,
        rank_correlation=rc,
        calibrations=[o.block for o in outputs],
        factor_calibrations=[o.block for o in factor_outputs],
        factors_skipped=skipped,
        judges_skipped=systems_skipped or {},
        systems=rows,
        source=source or {},
        parameters={
            "tau": params.tau,
            "delta": params.delta,
            "delta_split": [split.sensitivity, split.noise, split.estimate],
            "alpha": "auto" if params.alpha is None else params.alpha,
            "margin": params.margin,
            "centre": params.centre,
            "jitter": params.jitter,
            "dim": params.dim,
            "clip": params.clip,
            "sensitivity_mode": "upper_bound" if params.upper_bound else "plugin",
            "bound": "min(Hoeffding, Maurer-Pontil empirical Bernstein) on per-unit squared changes"
            if params.upper_bound
            else None,
            "seed": params.seed,
            "verify": params.verify,
            "invalid_neighbours": params.invalid,
            "strategy": params.strategy,
            "units": "normalised: raw score / declared range; tau and Delta on that scale",
        },
        guarantee=guarantee,
        feasible=feasible,
        judgebench_version=__version__,
    )
    return BBERun(result, outputs, factor_outputs)
