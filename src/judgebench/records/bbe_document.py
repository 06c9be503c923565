"""The `bbe.json` document (INTERFACE.md): every listed field, exactly named, plus the details behind them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Correlation(BaseModel):
    pearson: float | None = None
    spearman: float | None = None


class RankCorrelation(BaseModel):
    spearman: float | None = None
    kendall: float | None = None


class CertificateRow(BaseModel):
    """One applicable certificate (PROTOCOL §5b): its bound b (null for exact), the supremum of feasible
    alpha (null: unbounded) and sigma_max at the released alpha (null: infeasible there)."""

    name: str
    bound: float | None
    alpha_max: float | None
    sigma: float | None
    alpha: float | None = None  # the alpha sigma is computed at
    carries_over: bool = False  # holds for neighbours the calibration did not see
    delta_sensitivity: float = 0.0
    delta_noise: float = 0.0
    delta_estimate: float = 0.0
    # exact and exact_ucb: the change sizes and their shares the probability is computed on
    # (exact_ucb: a distribution that dominates new neighbours' with probability 1 - delta_estimate)
    support: list[float] | None = None
    shares: list[float] | None = None


class UtilityBlock(BaseModel):
    """What survives a release (PROTOCOL §5b): per system pair the probability its raw order is kept
    (noise-free released difference over the released noise's sd), the share kept at >= 0.95, the
    smallest raw gap every pair keeps with probability >= 0.95 (aggregate units), raw vs released
    system aggregates, and 1 - sd(released) / sd(raw)."""

    pairs: int
    pairs_kept_95: float | None
    resolution: float | None
    pearson_systems: float | None
    spearman_systems: float | None
    variance_reduction: float | None
    noise_free_order_kept: bool | None
    keep_probability: dict[str, float] = Field(default_factory=dict)


class HoldoutCheck(BaseModel):
    """Does the release's calibration rule carry over? The same certificate (never another)
    recalibrated on half of the items (or questions) that have neighbours, at the released alpha, its
    violations counted with the other half's neighbours only; `reason` when it does not apply there.
    It tests the rule (a sigma computed this way on other items), not the released sigma: the released
    mechanism always uses every unit, and the redraw tests its sigma."""

    estimate_units: int
    holdout_units: int
    sensitivity: float
    alpha: float
    sigma: float | None
    # the held-out rate is each neighbour's exact violation probability, averaged (no draws): draws and
    # violations are None (a bbe.json before issue 40 counted Monte Carlo draws here)
    draws: int | None
    violations: int | None
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    at_or_below_delta: bool | None
    certificate: str | None = None
    reason: str | None = None  # why nothing ran (the certificate does not apply to half the items)
    check: str = ""  # what this part tests, in words
    se: float | None = None  # the rate's standard error over the held-out items (clusters)
    clusters: int | None = None  # held-out items (or questions): the sample the interval is over
    power: dict[str, float] = Field(default_factory=dict)  # P(this part fails) at 1, 1.5, 2 x delta


class VerifyBlock(BaseModel):
    """The released certificate and sigma under fresh draws: a neighbour uniform over the (unit,
    neighbour) pairs (or freshly judged ones) and fresh noise for M(D) and M(D'); how often
    ||M(D) - M(D')|| > tau, Wilson 95% interval, and the check's power."""

    draws: int
    violations: int
    rate: float
    ci_low: float
    ci_high: float
    delta: float
    pairs: int = Field(description="(unit, neighbour) pairs the neighbour is drawn from")
    at_or_below_delta: bool = Field(description="the Wilson interval's lower end is at or below delta")
    holdout: HoldoutCheck | None = None
    # what ran: holdout (redraw + held-out half), redraw (the redraw alone: nothing to hold out),
    # monte_carlo (exact: its own probability) or fresh (PROTOCOL §5b); None in a bbe.json older than §5b
    kind: str | None = None
    passed: bool | None = Field(
        default=None, description="false when the violation rate's Wilson lower bound exceeds delta"
    )
    check: str = ""  # what the counted draws are: held-out neighbours, exact Monte Carlo, ...
    certificate: str | None = None  # the certificate whose sigma the counted draws use
    sigma: float | None = None  # the sigma the counted draws use: the released one (None: older file)
    expected_rate: float | None = None  # exact: the computed violation probability
    note: str | None = None
    # the power of the rule applied: each part fails at `fails_at` or more violations of `draws`;
    # `power` is P(verification fails) when the true violation rate is 1, 1.5 and 2 times delta ("1x",
    # "1.5x", "2x"; exact binomial), for the rule that ran: with a holdout, fail if either part fails,
    # both parts at that rate (independent draws: 1 - (1 - p_redraw)(1 - p_holdout)); `power_parts`
    # each part's own; `power_rule` says which in words. Empty in a bbe.json older than these fields.
    fails_at: int | None = None
    power: dict[str, float] = Field(default_factory=dict)
    power_parts: dict[str, dict[str, float]] = Field(default_factory=dict)
    power_rule: str = ""

    @property
    def label(self) -> str:
        """What the counted draws are, for the terminal and the report (older files included)."""
        if self.check.startswith("Monte Carlo"):
            return "in-sample Monte Carlo"
        return "fresh" if self.kind == "fresh" else "redraw"

    @property
    def holdout_ran(self) -> bool:
        return self.holdout is not None and self.holdout.rate is not None


class SystemRow(BaseModel):
    system: str
    units: int
    raw: float
    bias_bounded: float | None
    rank_raw: int
    rank_bias_bounded: int | None


class SchematicBlock(BaseModel):
    factors: list[str]
    n: int
    r2_ols: float
    r2_ridge: float
    r2: float
    sensitivity: float
    sensitivity_raw_units: float
    strategy: str
    neighbour_sensitivity: float | None


class Calibration(BaseModel):
    """One calibrated judge (INTERFACE fields first)."""

    model_config = ConfigDict(extra="allow")

    judge: str
    d: int
    units: int
    sensitivity: float
    sensitivity_plugin: float
    alpha: float | None
    sigma: float | None
    feasible: bool
    correlation: Correlation
    verify: VerifyBlock | None = None
    # PROTOCOL §5b
    certificate: str | None = None
    certificates: list[CertificateRow] = Field(default_factory=list)
    # does the released certificate hold for new items drawn like the measured ones (true), or only
    # for the listed neighbours (false: `exact`, in-sample)? Filled from the certificate rows for a
    # bbe.json older than this field; None when nothing says.
    carries_over: bool | None = None
    scope: str | None = None  # the same in words
    # the delta the released certificate spends (None in an older bbe.json)
    delta_sensitivity: float | None = None
    delta_noise: float | None = None
    delta_estimate: float | None = None
    alpha_needed: float | None = None
    violation_probability: float | None = None
    sensitivity_source: str = "measured"
    utility: UtilityBlock | None = None
    # details
    sensitivity_upper: float | None = None
    jitter: float = 0.0
    # the repeat jitter measured on re-asks of identical inputs (sqrt E (s1 - s2)^2), beside the
    # sensitivity; None without repeated judgments
    jitter_measured: float | None = None
    alpha_mode: str = "given"
    max_alpha: float | None = None
    max_sensitivity: float | None = None
    centre: float | None = None
    bias_term: float | None = None
    noise_radius: float | None = None
    reason: str | None = None
    scale: tuple[float, float] = (0.0, 1.0)
    score_source: str = "verdict"
    aggregate: str = "mean"
    pairs: int = 0
    units_with_pairs: int = 0
    neighbours: dict[str, dict[str, float | int]] = Field(default_factory=dict)
    invalid_neighbours: dict[str, int] = Field(default_factory=dict)
    invalid_neighbour_policy: str = "skip"
    units_dropped: dict[str, int] = Field(default_factory=dict)
    schematic: SchematicBlock | None = None
    systems: list[SystemRow] = Field(default_factory=list)
    rank_correlation: RankCorrelation | None = None
    guarantee: str = ""

    @model_validator(mode="after")
    def _older_documents(self) -> Calibration:
        """An older bbe.json has no `carries_over`: read it from the released certificate's row."""
        if self.carries_over is None and self.certificate is not None:
            row = next((r for r in self.certificates if r.name == self.certificate), None)
            if row is not None:
                self.carries_over = row.carries_over
            elif self.certificate == "exact":
                self.carries_over = False
        return self

    @property
    def in_sample(self) -> bool:
        """The release certifies only the listed neighbours (labelled so wherever it is shown)."""
        return self.carries_over is False


class BBEResult(BaseModel):
    """Top level of bbe.json. With one calibration its fields are repeated at the top level (extra)."""

    model_config = ConfigDict(extra="allow")

    tau: float
    delta: float
    # the split the released certificate spends (every calibration's, when they agree; otherwise the
    # requested split, and `delta_split` says so)
    delta_sensitivity: float
    delta_noise: float
    delta_estimate: float
    delta_split: str = ""
    rank_correlation: RankCorrelation | None
    calibrations: list[Calibration]
    factor_calibrations: list[Calibration] = Field(default_factory=list)
    factors_skipped: dict[str, str] = Field(default_factory=dict)
    # Judge-LS judges with no scorable en unit (every answer invalid or missing), with the reason
    judges_skipped: dict[str, str] = Field(default_factory=dict)
    systems: list[SystemRow] = Field(default_factory=list)
    utility: UtilityBlock | None = None
    transfer_assumption: str | None = None
    source: dict[str, Any] = Field(default_factory=dict)
    parameters: dict[str, Any] = Field(default_factory=dict)
    guarantee: str = ""
    feasible: bool = True
    outputs: dict[str, str] = Field(default_factory=dict)
    judgebench_version: str = ""

    def to_json_dict(self) -> dict[str, Any]:
        """The document as written: with a single calibration its fields also sit at the top level."""
        data = self.model_dump(mode="json")
        if len(self.calibrations) == 1:
            for key, value in data["calibrations"][0].items():
                if key in ("rank_correlation", "systems", "guarantee", "feasible", "utility"):
                    continue
                data.setdefault(key, value)
        return data
