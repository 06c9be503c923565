"""One calibration's choice: the sensitivity, the applicable certificates, alpha and sigma."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgebench.bbe import certificate_registry as registry
from judgebench.bbe import certificates as certs
from judgebench.bbe import mechanism as mech
from judgebench.bbe import sensitivity as sens
from judgebench.bbe.params import BBEParams, Bridge
from judgebench.bbe.schematic import SchematicFit, combine
from judgebench.bbe.scores import ScoreSet
from judgebench.errors import ConfigError

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Ctx:
    """One calibration's fixed inputs."""

    ss: ScoreSet
    params: BBEParams
    split: mech.DeltaSplit
    index: int
    d: int
    jitter: float
    schematic: SchematicFit | None
    pairs_set: ScoreSet  # whose neighbours calibrate (the set itself, or a bridge's reference)


@dataclass
class Choice:
    """The sensitivity, certificates, alpha and sigma one estimate leads to."""

    neighbour: sens.SensitivityEstimate | None
    used: float
    plugin: float
    source: str  # measured | fixed
    applicable: list[certs.Certificate]
    pick: registry.Pick

    @property
    def alpha(self) -> float:
        return self.pick.alpha

    @property
    def sigma(self) -> float | None:
        return self.pick.sigma


def _changes(ctx: Ctx, estimate_set: ScoreSet) -> FloatArray | None:
    """|change| per observed neighbour, or None when the sensitivity is not a neighbour list alone."""
    combined = ctx.schematic is not None and ctx.params.strategy != "formatting"
    if combined or len(estimate_set.pair_unit) == 0:
        return None
    return np.abs(estimate_set.pair_score - estimate_set.base[estimate_set.pair_unit])


def _sensitivity(ctx: Ctx, neighbour: sens.SensitivityEstimate | None, name: str) -> tuple[float, float]:
    """(used, plug-in) Delta: the neighbour estimate combined with the schematic one, or the fixed one."""
    schem = ctx.schematic.sensitivity if ctx.schematic is not None else None
    fixed = ctx.params.sensitivity
    try:
        plugin_nb = math.sqrt(max(0.0, neighbour.plugin**2 - ctx.jitter**2)) if neighbour else None
        plugin = combine(plugin_nb, schem, ctx.params.strategy)
        used = combine(neighbour.used if neighbour else None, schem, ctx.params.strategy)
    except ValueError as exc:
        if fixed is None:
            raise ConfigError(f"{name}: {exc}") from exc
        return fixed, fixed
    return (used if fixed is None else fixed), plugin


def choose(
    ctx: Ctx,
    estimate_set: ScoreSet,
    *,
    alpha: float | None,
    certificate: str | None = None,
) -> Choice:
    """Estimate Delta on `estimate_set`'s pairs, then the certificate, alpha (given or auto) and sigma."""
    params, split = ctx.params, ctx.split
    neighbour: sens.SensitivityEstimate | None = None
    if len(estimate_set.pair_unit):
        neighbour = sens.estimate(
            estimate_set.base,
            estimate_set.pair_unit,
            estimate_set.pair_score,
            estimate_set.pair_kind,
            jitter=ctx.jitter,
            upper_bound=params.upper_bound,
            delta_estimate=split.estimate if params.upper_bound else 0.0,
            pair_group=estimate_set.groups()[estimate_set.pair_unit],
        )
    used, plugin = _sensitivity(ctx, neighbour, estimate_set.name)
    evidence = certs.Evidence(
        tau=params.tau,
        delta=params.delta,
        d=ctx.d,
        split=split,
        sensitivity=used,
        changes=_changes(ctx, estimate_set),
        upper_bound=params.upper_bound,
        fixed=params.sensitivity is not None,
        groups=estimate_set.groups()[estimate_set.pair_unit],
    )
    applicable = registry.applicable(evidence)
    try:
        chosen = registry.pick(
            applicable, certificate or params.certificate, alpha=alpha, margin=params.margin
        )
    except ValueError as exc:
        raise ConfigError(f"{estimate_set.name}: {exc}") from exc
    source = "fixed" if params.sensitivity is not None else "measured"
    return Choice(neighbour, used, plugin, source, applicable, chosen)


def _jitter(ss: ScoreSet, params: BBEParams) -> float:
    if params.jitter == "none":
        return 0.0
    if params.jitter == "auto":
        return sens.jitter_rms(ss.repeat_unit, ss.repeat_score) or 0.0
    return float(params.jitter) / (ss.scale[1] - ss.scale[0])  # given in the score's own units


def centre_of(ss: ScoreSet, params: BBEParams) -> float:
    centre = params.centre
    if isinstance(centre, float | int):  # given in the score's own units
        lo, hi = ss.scale
        if not lo <= centre <= hi:
            raise ConfigError(f"--centre {centre} lies outside the scale [{lo:g}, {hi:g}] of {ss.name}")
        centre = (centre - lo) / (hi - lo)
    return mech.resolve_centre(ss.base, centre)


def context(
    ss_in: ScoreSet, params: BBEParams, index: int, schematic: SchematicFit | None, bridge: Bridge | None
) -> Ctx:
    ss = ss_in.with_invalid_as_worst() if params.invalid == "worst" else ss_in
    n = len(ss)
    d = params.dim if params.dim is not None else (ss.declared_d or n)
    if d < n:
        raise ConfigError(
            f"--dim {d} is below the number of scored units ({n}) of {ss.name}: noise covers every unit"
        )
    pairs_set = ss
    if bridge is not None:
        ref = bridge.reference
        pairs_set = ref.with_invalid_as_worst() if params.invalid == "worst" else ref
    return Ctx(
        ss,
        params,
        params.delta_split(),
        index,
        d,
        _jitter(ss, params),
        schematic,
        pairs_set,
    )
