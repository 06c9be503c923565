"""What analysis hands to the report: settings, readiness verdicts, call accounting, the Analysis itself.

Every module of analysis/ and report/ may import this one; it imports nothing of either, so the
metric families, the readiness verdict and the renderers share these names without a cycle.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from judgebench.conditions import SOURCE
from judgebench.records import ConditionPair, JudgePair, MetricRecord
from judgebench.records.condition_specs import ProbeOrigin
from judgebench.records.numbers import USER_NUMBERS, Share
from judgebench.records.pairs import PAIR_SEP, VS
from judgebench.records.self_preference_report import SelfPreferenceReport

ALL = "all"  # the subset of every item
MEAN_JUDGE = "mean"  # the judge of records averaged over judges


__all__ = [
    "ALL",
    "MEAN_JUDGE",
    "PAIR_SEP",
    "SOURCE",
    "VS",
    "Analysis",
    "Completeness",
    "JudgeSummary",
    "ReadinessVerdict",
    "ReportSettings",
    "comparison_name",
    "is_comparison",
    "pair_name",
]


def is_comparison(judge: str) -> bool:
    """A judge-vs-judge record (`J1 vs J2`), not one judge's."""
    return JudgePair.parse(judge) is not None


def comparison_name(first: str, second: str) -> str:
    """Two judges as a judge-vs-judge record names them: `J1 vs J2`."""
    return str(JudgePair(first, second))


def pair_name(first: str, second: str) -> str:
    """A condition pair as flip, McNemar and increase records name it: `en->zh`."""
    return str(ConditionPair(first, second))


class ReportSettings(BaseModel):
    """User-settable thresholds of the report and the readiness verdict (defaults: README)."""

    model_config = USER_NUMBERS

    confidence: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.95
    bootstrap_samples: Annotated[int, Field(ge=0)] = 1000
    seed: int = 0
    max_flip_rate: Share = 0.15
    max_position_increase: Share = 0.05
    # the baseline part of the readiness verdict (en, per judge): a judge that does not work in en
    # cannot be trusted to be invariant (always "A", always "Tie" and a coin are all "invariant")
    chance: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    max_position_inconsistency: Annotated[float, Field(ge=0.0, le=1.0)] = 0.20
    max_answer_share: Annotated[float, Field(gt=0.0, le=1.0)] = 0.95  # one raw answer this often: degenerate
    max_invalid_rate: Annotated[float, Field(ge=0.0, le=1.0)] = 0.20
    min_detectable_effect: Share = 0.05
    power: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.8
    # fewer items than this behind a readiness check or a probe row: it may fail, never pass
    min_items: Annotated[int, Field(ge=1)] = 20
    # which table the readiness verdict reads: the full one (reference) or the audit-filtered one
    readiness_filtered: bool = False


Status = Literal["pass", "fail", "inconclusive"]


class ReadinessVerdict(BaseModel):
    """Should this judge be trusted on this target condition? With the numbers that decided it.

    `status` combines the two parts (PROTOCOL §4): `fail` if either fails, `pass` only if both pass
    and the run is complete, else `inconclusive`."""

    judge: str
    condition: str
    status: Status
    baseline: Status = "inconclusive"
    invariance: Status = "inconclusive"
    reasons: list[str]
    complete: bool = True
    # which intervals decided it: the report's fixed-n ones, or (a judge `--until-settled` stopped
    # as settled) the confidence sequences', valid at the data-dependent stop
    intervals: Literal["fixed-n", "anytime-valid"] = "fixed-n"
    # per part that did not pass, the one reason that decided it (its first failed, else undecided,
    # check): the terminal's one line per part
    why: dict[str, str] = Field(default_factory=dict)


class Completeness(BaseModel):
    """Whether every planned call of the run has an answer (PROTOCOL §4: an incomplete run gives no
    pass). `plan_known` is False for a run folder written before plans were recorded: then only the
    failed calls the run holds can be counted."""

    plan_known: bool
    planned: int
    answered: int
    never_made: int  # planned calls with no record at all (an interrupted run)
    failed: int  # calls whose last record failed after all retries (retried by the next run)

    @property
    def complete(self) -> bool:
        return self.never_made == 0 and self.failed == 0


class JudgeSummary(BaseModel):
    """Call accounting per judge: what was planned, answered, missing or invalid, and what it cost."""

    judge: str
    planned: int = 0  # from the run's plan (0 when the run recorded none)
    never_made: int = 0
    judgments: int
    answered: int
    missing: int
    invalid: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


ProbeStatus = Literal["flagged", "within", "inconclusive"]


class ProbeRow(BaseModel):
    """One probe x language x judge: the flip rate against the condition the probe was made from,
    with the interval readiness reads and its limit (PROTOCOL §7). `flagged`: the interval's lower
    bound is above the limit (the probe moves the judge's verdicts) and the Holm-adjusted limit test
    agrees; `within`: its upper bound is at or below it, on at least `min_items` items; else
    `inconclusive`. A multi-instance probe (template-1..K) also gets a pooled row
    (`condition` = the probe's name) with the share of items whose verdict depends on the instance."""

    judge: str
    probe: str
    base: str
    condition: str  # the probe condition (`zh+length`), or the probe for the pooled row
    pair: str  # the record's condition (`zh->zh+length`, `en->template` pooled)
    value: float | None
    n: int
    ci_low: float | None
    ci_high: float | None
    ci_method: str
    limit: float
    status: ProbeStatus
    n_items: int | None = None  # the items behind the pairs (the unit of the interval and the test)
    # the test of "the flip rate exceeds the limit" on the items (small_n.p_above_limit), raw and Holm-
    # adjusted over the judge's probe rows; flagged needs p_holm below 1 - confidence
    p_limit: float | None = None
    p_holm: float | None = None
    mcnemar_b: int | None = None  # correct in the base only
    mcnemar_c: int | None = None  # correct in the probe only
    mcnemar_p: float | None = None
    dependent_share: float | None = None  # pooled rows: items whose verdict is not the same throughout
    dependent_low: float | None = None
    dependent_high: float | None = None


class LengthRow(BaseModel):
    """A judge's en strict accuracy on the items of one length category (which output is longer):
    a length-biased judge is more accurate where the chosen output is the longer one."""

    judge: str
    category: str
    items: int
    n: int  # en pair judgments (both orders)
    value: float | None
    ci_low: float | None
    ci_high: float | None


class Analysis(BaseModel):
    """Everything `report` renders: metric records, readiness verdicts and call accounting."""

    records: list[MetricRecord]
    readiness: list[ReadinessVerdict]
    judges: list[JudgeSummary]
    flagged_items: list[str]
    conditions: list[str]
    subsets: list[str]
    settings: ReportSettings
    completeness: Completeness = Field(
        default_factory=lambda: Completeness(plan_known=False, planned=0, answered=0, never_made=0, failed=0)
    )
    # judges `judge --until-settled` has not finished (running or interrupted): the run is incomplete
    unfinished_judges: list[str] = Field(default_factory=list)
    # does a judge favour its own family's answers (analysis/self_preference_test.py); None: not computed
    self_preference: SelfPreferenceReport | None = None
    # probe condition -> (probe, base) as the judge stage recorded it, and the probe table's rows
    probes: dict[str, ProbeOrigin] = Field(default_factory=dict)
    probe_rows: list[ProbeRow] = Field(default_factory=list)
    length_rows: list[LengthRow] = Field(default_factory=list)
