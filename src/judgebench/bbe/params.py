"""The knobs of `judgebench bbe` (BBEParams) and the bridge from a Judge-LS run to a table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgebench.bbe import certificate_registry as registry
from judgebench.bbe import mechanism as mech
from judgebench.bbe.schematic import Strategy
from judgebench.bbe.scores import InvalidPolicy, ScoreSet
from judgebench.errors import ConfigError
from judgebench.records.numbers import USER_NUMBERS

JitterSpec = Literal["none", "auto"] | float
VerifyKind = Literal["holdout", "fresh"]

NEUTRAL_CENTRE = 0.5  # pairwise verdict scores: P(output_1 preferred), label-neutral


class BBEParams(BaseModel):
    """Every knob of `judgebench bbe`; defaults are PROTOCOL §5's algorithm with §5b's certificates."""

    model_config = ConfigDict(**USER_NUMBERS, frozen=True)

    tau: float = Field(gt=0)
    delta: float = Field(gt=0, lt=1)
    split: tuple[float, ...] | None = None
    # 1: no shrinkage; None: auto (the largest alpha leaving `margin` of the feasible range unused)
    alpha: float | None = Field(default=1.0, gt=0, le=1)
    margin: float = Field(default=0.5, gt=0, lt=1)
    # auto: 0.5 (label-neutral) for a Judge-LS run's compared judges, the mean score for a table
    centre: mech.Centre = "auto"
    jitter: JitterSpec = "none"
    dim: int | None = Field(default=None, ge=1)
    clip: bool = True
    upper_bound: bool = False  # PROTOCOL §5's plug-in estimate; True spends delta_estimate on a bound
    seed: int = 0
    verify: int | None = Field(default=None, ge=1)
    verify_kind: VerifyKind = "holdout"
    invalid: InvalidPolicy = "skip"
    strategy: Strategy = "max"
    # auto: the tightest registered certificate that carries over to new items; or a registered name
    certificate: str = registry.AUTO
    sensitivity: float | None = Field(default=None, ge=0)  # fixed, normalised: instead of the measured one

    @field_validator("certificate")
    @classmethod
    def _known_certificate(cls, value: str) -> str:
        return registry.check_choice(value)

    def delta_split(self) -> mech.DeltaSplit:
        default = mech.DEFAULT_SPLIT_BOUND if self.upper_bound else mech.DEFAULT_SPLIT_PLUGIN
        try:
            return mech.DeltaSplit.from_fractions(
                self.delta, self.split or default, upper_bound=self.upper_bound
            )
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc


@dataclass(frozen=True)
class Bridge:
    """Calibrate on another source's neighbours (a judge's Judge-LS run) and release this table."""

    reference: ScoreSet
    run: str
    judge: str

    def assumption(self) -> str:
        return (
            f"Transfer assumption: the sensitivity judge '{self.judge}' shows on its Judge-LS neighbours "
            f"(language and order) in {self.run} is taken to hold for the units of this table: same judge, "
            "same template and the same kind of task (pairwise preference on comparable items). The "
            "guarantee is for neighbours of that kind; it says nothing about other biases."
        )
