"""What analysis hands to the report: settings, readiness verdicts, call accounting, the Analysis itself.

Every module of analysis/ and report/ may import this one; it imports nothing of either, so the
metric families, the readiness verdict and the renderers share these names without a cycle.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from judgebench.conditions import SOURCE
from judgebench.records import MetricRecord

ALL = "all"  # the subset of every item
MEAN_JUDGE = "mean"  # the judge of records averaged over judges
VS = " vs "  # joins two judges in a judge-vs-judge record: `J1 vs J2`
PAIR_SEP = "->"  # joins two conditions in a pair record: `en->zh`


__all__ = [
    "ALL",
    "MEAN_JUDGE",
    "PAIR_SEP",
    "SOURCE",
    "VS",
    "Analysis",
    "JudgeSummary",
    "ReadinessVerdict",
    "ReportSettings",
    "comparison_name",
    "is_comparison",
    "pair_name",
]


def is_comparison(judge: str) -> bool:
    """A judge-vs-judge record (`J1 vs J2`), not one judge's."""
    return VS in judge


def comparison_name(first: str, second: str) -> str:
    return f"{first}{VS}{second}"


def pair_name(first: str, second: str) -> str:
    """A condition pair as flip, McNemar and increase records name it: `en->zh`."""
    return f"{first}{PAIR_SEP}{second}"


class ReportSettings(BaseModel):
    """User-settable thresholds of the report and the readiness verdict (defaults: README)."""

    confidence: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.95
    bootstrap_samples: Annotated[int, Field(ge=0)] = 1000
    seed: int = 0
    max_flip_rate: float = 0.15
    max_position_increase: float = 0.05
    min_detectable_effect: float = 0.05
    power: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.8
    # which table the readiness verdict reads: the full one (reference) or the audit-filtered one
    readiness_filtered: bool = False


class ReadinessVerdict(BaseModel):
    """Should this judge be trusted on this target condition? With the numbers that decided it."""

    judge: str
    condition: str
    status: Literal["pass", "fail", "inconclusive"]
    reasons: list[str]


class JudgeSummary(BaseModel):
    """Call accounting per judge: what was planned, answered, missing or invalid, and what it cost."""

    judge: str
    judgments: int
    answered: int
    missing: int
    invalid: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class Analysis(BaseModel):
    """Everything `report` renders: metric records, readiness verdicts and call accounting."""

    records: list[MetricRecord]
    readiness: list[ReadinessVerdict]
    judges: list[JudgeSummary]
    flagged_items: list[str]
    conditions: list[str]
    subsets: list[str]
    settings: ReportSettings
