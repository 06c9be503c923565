"""What selective judging writes (PROTOCOL §8, `judgebench selective`): selective.json is one
`SelectiveReport`; each condition's cascade of judges, each stage's calibrated threshold, coverage and
agreement, the items left to people, and the cost against the strongest judge alone."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

ConfidenceSource = Literal["probability", "agreement"]
ConfidenceMode = Literal["auto", "probability", "agreement"]


class Bounded(BaseModel):
    """A share with its interval (Wilson for observed agreement; one-sided bounds say which side)."""

    value: float
    ci_low: float
    ci_high: float


class ThresholdStep(BaseModel):
    """One threshold tested by the fixed sequence (highest first): the labelled items it keeps, their
    disagreements and the exact upper bound on the disagreement risk; `passed`: bound <= alpha."""

    threshold: float
    kept: int
    errors: int
    upper_bound: float
    passed: bool


class StageResult(BaseModel):
    """One judge of the cascade: calibrated on the labelled items that reach it, applied to all."""

    judge: str
    confidence_source: ConfidenceSource
    answers_per_item: float  # mean answers behind an item's confidence (orders, repeats, templates)
    threshold: float | None  # None: no threshold passed, the judge decides nothing
    delta: float  # the failure probability this stage was calibrated at
    # on the labelled slice
    reached_labelled: int  # labelled items not decided by an earlier judge
    kept_labelled: int  # of them, those at or above the threshold
    errors_labelled: int  # of those, where the judge's verdict differs from the humans' label
    risk_upper_bound: float | None  # Clopper-Pearson upper bound of the disagreement at the threshold
    guaranteed_agreement: float | None  # 1 - risk_upper_bound: the agreement the calibration vouches for
    observed_agreement: Bounded | None  # on the labelled items it kept (Wilson)
    # on every item of the condition (labelled and not)
    reached: int
    decided: int
    coverage: float  # decided / all items of the condition
    cost_usd: float  # this judge's calls on the items that reach it
    steps: list[ThresholdStep] = Field(default_factory=list)  # the sequence, until it stopped
    # coverage against agreement over every threshold on the labelled items that reach it (at most
    # CURVE_POINTS of them): what the report's plot draws; `passed` as if each were tested alone
    curve: list[ThresholdStep] = Field(default_factory=list)


class EscalatedItem(BaseModel):
    """An item no judge kept: a person decides it (exported for annotation)."""

    item_id: str
    condition: str
    labelled: bool  # a human label already exists for it (on the calibration slice)
    verdicts: dict[str, str | None]  # judge -> its verdict (1 / 2 / tie)
    confidences: dict[str, float]  # judge -> its confidence


class JudgeAnswer(BaseModel):
    """One judge's item verdict and confidence (selective/confidence.py says how it is read)."""

    verdict: str | None
    confidence: float
    answers: int  # the answers behind it (orders, repeats)
    source: ConfidenceSource


class ItemDecision(BaseModel):
    """A line of selective_items.jsonl: every item of the cascade, who decides it and on what."""

    item_id: str
    condition: str
    human: str | None  # the humans' majority label, on the calibration slice
    decided_by: str | None  # the first judge whose confidence reaches its threshold; None: people
    verdict: str | None  # that judge's verdict
    judges: dict[str, JudgeAnswer]


class CascadeResult(BaseModel):
    """The cascade in one condition."""

    condition: str
    items: int  # judged by every judge of the cascade
    labelled: int  # of them, with a humans' majority label (the calibration slice)
    stages: list[StageResult]
    coverage: float  # share of items some judge decides
    guaranteed_agreement: float  # 1 - alpha on the decided items, with probability >= 1 - delta
    observed_agreement: Bounded | None  # the decided labelled items against the humans (Wilson)
    escalated: list[EscalatedItem] = Field(default_factory=list)
    cost_cascade_usd: float  # every stage's calls on the items that reach it
    cost_strongest_usd: float  # the last judge alone on every item
    cost_known: bool  # every call recorded a cost (else the costs are lower bounds)
    notes: list[str] = Field(default_factory=list)

    @property
    def escalated_share(self) -> float:
        return len(self.escalated) / self.items if self.items else 0.0


class SelectiveReport(BaseModel):
    """selective.json: the settings, the guarantee as stated, and one cascade per condition."""

    run: str
    labels_file: str
    cascade: list[str]  # judges in cost order, cheapest first
    alpha: float  # the disagreement risk tolerated on decided items
    delta: float  # the probability the guarantee may fail
    delta_per_stage: float  # delta split over the stages (Bonferroni) or the paper's per-stage delta
    split_delta: bool
    min_kept: int  # a threshold is tested only if it keeps at least this many labelled items
    confidence_mode: ConfidenceMode
    guarantee: str
    assumptions: list[str]
    cascades: list[CascadeResult]
    min_coverage: float | None = None  # the CI gate, when asked
    gate_failed: bool = False


class SelectiveBudget(BaseModel):
    """One row of `plan --human-labels --selective-alpha A`: the labels a judge needs to keep the share
    `coverage` of the items with the guarantee at (alpha, delta)."""

    judge: str | None  # None: from a stated disagreement, for any judge
    condition: str | None
    basis: str  # "pilot: n labelled items" or "assumed"
    alpha: float
    delta: float
    coverage: float
    kept_error: float  # the disagreement on the items kept at that coverage (pilot or assumed)
    labels: int | None  # None: out of reach (kept_error too close to alpha)
