"""The report's numbers as records: one metric of one judge, condition, subset and table.

`Metric` is the one registry of the metric names analysis emits; `MetricRecord` declares every field a
record can carry. A StrEnum equals its string, so code names metrics by member and metrics.json holds
the same plain names as ever (INTERFACE.md).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

TIE_PROBE_PREFIX = "tie_probe_"
# an imported source's own headline number by its own convention (judgebench_score, arena_hard_score,
# mt_bench_agreement_*, alpaca_eval_*), from the run manifest's import entries: `source:<name>`
SOURCE_HEADLINE_PREFIX = "source:"


class Metric(StrEnum):
    """Every metric name in metrics.json. Per condition unless noted; pairs are named `a->b`."""

    # accuracy over answered pair judgments (an invalid answer is wrong)
    STRICT_ACCURACY = "strict_accuracy"
    TIE_HALF_ACCURACY = "tie_half_accuracy"
    # answer distribution
    POSITION_A_RATE = "position_a_rate"
    TIE_RATE = "tie_rate"
    INVALID_RATE = "invalid_rate"
    MISSING_RATE = "missing_rate"
    # stated confidence against strict correctness
    MEAN_CONFIDENCE = "mean_confidence"
    BRIER = "brier"
    ECE = "ece"
    # language flips, per condition pair
    FLIP_RATE = "flip_rate"
    GOLD_FLIP_RATE = "gold_flip_rate"
    FLIP_REVERSAL_RATE = "flip_reversal_rate"
    FLIP_TO_TIE_RATE = "flip_to_tie_rate"
    FLIP_FROM_TIE_RATE = "flip_from_tie_rate"
    MCNEMAR = "mcnemar"
    # position: per condition; the increase per pair en->c
    POSITION_INCONSISTENCY = "position_inconsistency"
    POSITION_INCONSISTENCY_INCREASE = "position_inconsistency_increase"
    # position-bias direction, per condition: items where "A" won in both orders against "B" in both
    POSITIONAL_MCNEMAR = "positional_mcnemar"
    # the length artefact (analysis/length_artefact.py), per condition, on the judge's answered
    # labelled judgments: the accuracy of a rule that picks the shorter (longer) output by characters
    # or by tokens of the condition's language (equal lengths: half, a coin); the judge's strict
    # accuracy where the gold output is the shorter (longer) one by tokens; and its strict accuracy
    # minus the strongest of the four rules (`length_rule` names it), read by the readiness baseline
    LENGTH_BASELINE_SHORTER_CHARS = "length_baseline_shorter_chars"
    LENGTH_BASELINE_LONGER_CHARS = "length_baseline_longer_chars"
    LENGTH_BASELINE_SHORTER_TOKENS = "length_baseline_shorter_tokens"
    LENGTH_BASELINE_LONGER_TOKENS = "length_baseline_longer_tokens"
    ACCURACY_GOLD_SHORTER = "accuracy_gold_shorter"
    ACCURACY_GOLD_LONGER = "accuracy_gold_longer"
    ACCURACY_OVER_LENGTH_BASELINE = "accuracy_over_length_baseline"
    # tie-probes, per target condition; the share of outcome X is `tie_probe_X` (`tie_probe_metric`)
    TIE_PROBE_EN = "tie_probe_en"
    TIE_PROBE_ZH = "tie_probe_zh"
    TIE_PROBE_TIE = "tie_probe_tie"
    TIE_PROBE_INVALID_RATE = "tie_probe_invalid_rate"
    TIE_PROBE_EN_SHARE = "tie_probe_en_share"
    # the leaderboards' "RewardBench score" (RewardBench, M-RewardBench): per category (subset = the
    # category) the mean of its subsets' strict accuracies weighted by the dataset's own example
    # counts, overall (subset `all`) the mean of the four categories; the drop is per pair en->c,
    # on the items both conditions hold (analysis/rewardbench_score.py)
    REWARDBENCH_SCORE = "rewardbench_score"
    REWARDBENCH_SCORE_DROP = "rewardbench_score_drop"
    # probes with several instances (template-1..K), per base->probe (`en->template`): the flip rate
    # pooled over the instances, and the share of items whose verdict is not the same under every
    # instance and the base (analysis/probes.py)
    PROBE_FLIP_RATE = "probe_flip_rate"
    PROBE_DEPENDENT_SHARE = "probe_dependent_share"
    # judge vs judge (judge `J1 vs J2`): first minus second on the units both answered validly
    FLIP_RATE_DIFF = "flip_rate_diff"
    POSITION_INCONSISTENCY_DIFF = "position_inconsistency_diff"
    # the judge's pick of the longer output (by characters), per condition: over valid non-tie pair
    # verdicts on items whose outputs differ in length (a length probe from existing data, issue 43)
    LONGER_WIN_RATE = "longer_win_rate"
    # human labels (`report --human FILE`, human/): the judge's item verdict against the humans'
    # majority label, the annotators among themselves (judge `humans`), and prediction-powered
    # estimates (PPI++) beside the human-only ("classical") ones; per condition, subset `all`
    HUMAN_AGREEMENT = "human_agreement"
    COHENS_KAPPA = "cohens_kappa"
    KRIPPENDORFF_ALPHA = "krippendorff_alpha"
    ANNOTATOR_AGREEMENT = "annotator_agreement"
    PPI_WIN_RATE = "ppi_win_rate"
    CLASSICAL_WIN_RATE = "classical_win_rate"
    PPI_ACCURACY = "ppi_accuracy"
    CLASSICAL_ACCURACY = "classical_accuracy"


# what `report --human FILE` adds (human/human_doc.py); the analysis of judgments alone never emits them
HUMAN_METRICS: frozenset[str] = frozenset(
    {
        Metric.HUMAN_AGREEMENT,
        Metric.COHENS_KAPPA,
        Metric.KRIPPENDORFF_ALPHA,
        Metric.ANNOTATOR_AGREEMENT,
        Metric.PPI_WIN_RATE,
        Metric.CLASSICAL_WIN_RATE,
        Metric.PPI_ACCURACY,
        Metric.CLASSICAL_ACCURACY,
    }
)


# what the length artefact adds where the outputs' texts are known (analysis/length_artefact.py)
LENGTH_METRICS: frozenset[str] = frozenset(
    {
        Metric.LENGTH_BASELINE_SHORTER_CHARS,
        Metric.LENGTH_BASELINE_LONGER_CHARS,
        Metric.LENGTH_BASELINE_SHORTER_TOKENS,
        Metric.LENGTH_BASELINE_LONGER_TOKENS,
        Metric.ACCURACY_GOLD_SHORTER,
        Metric.ACCURACY_GOLD_LONGER,
        Metric.ACCURACY_OVER_LENGTH_BASELINE,
    }
)


def tie_probe_metric(outcome: str) -> str:
    """The tie-probe share of one outcome: `en`, `tie` or the target (tie_probe_zh, tie_probe_ja, ...).

    Only zh is a `Metric` member; another target's name is built here, the one place that spells it."""
    return TIE_PROBE_PREFIX + outcome


class CIMethod(StrEnum):
    """How a record's ci_low / ci_high were computed."""

    WILSON = "wilson"
    NORMAL = "normal"
    WALD = "wald"
    BOOTSTRAP = "bootstrap"
    T = "t"  # Student's t (PPI++ with a cross-fitted lambda)
    MEAN_OVER_JUDGES = "mean_over_judges"  # no interval: the unweighted mean over judges


class PFamily(StrEnum):
    """The family within which a record's p is Benjamini-Hochberg adjusted (per subset and table)."""

    MCNEMAR = "mcnemar"
    POSITION_INCREASE = "position_increase"
    POSITION_DIRECTION = "position_direction"
    TIE_PROBE = "tie_probe"
    JUDGE_COMPARISON = "judge_comparison"


CORE_FIELDS: tuple[str, ...] = (
    "judge",
    "metric",
    "condition",
    "subset",
    "filtered",
    "value",
    "n",
    "ci_low",
    "ci_high",
    "p",
)


class MetricRecord(BaseModel):
    """One number of the report with its n and interval (or p).

    The INTERFACE fields always appear in metrics.json (null where they do not apply); the optional
    fields after them are written only where they apply (None = absent).
    """

    model_config = ConfigDict(extra="forbid")

    judge: str
    metric: str  # a Metric, or tie_probe_<target> for a target other than zh
    condition: str
    subset: str
    filtered: bool
    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    p: float | None = None
    ci_method: CIMethod | None = None
    k: int | None = None  # a proportion's numerator (value = k / n)
    b: int | None = None  # McNemar-style discordant counts: the first side only ...
    c: int | None = None  # ... and the second side only
    boot_low: float | None = None  # item-clustered bootstrap interval beside the main one
    boot_high: float | None = None
    # the interval a verdict or flag reads (PROTOCOL §4): the wider of the item-clustered bootstrap and
    # a score interval on the n_items items (Wilson; Tango for a paired difference), valid at zero events
    n_items: int | None = None
    item_low: float | None = None
    item_high: float | None = None
    p_family: PFamily | None = None
    p_adj: float | None = None  # Benjamini-Hochberg within p_family
    significant: bool | None = None  # p_adj below 1 - confidence
    mde: float | None = None  # smallest effect the test detects at the set power
    underpowered: bool | None = None  # a null result whose mde exceeds the user's threshold
    # position_a_rate: the item-clustered (cluster-robust) interval and its test against 0.5; an
    # item's two orders are not independent, so the plain Wilson interval beside it is not the one
    # to read
    ci_low_clustered: float | None = None
    ci_high_clustered: float | None = None
    p_clustered: float | None = None
    # accuracy_over_length_baseline: the length rule it is measured against (a length_baseline_* name)
    length_rule: str | None = None
    # rewardbench_score*: whose subset weights were used (`rewardbench` or `m-rewardbench`), and how
    # many of the category's subsets (of `weighted_of`) had judged items
    weights: str | None = None
    weighted_subsets: int | None = None
    weighted_of: int | None = None
    # human records: a win rate's source (whose output wins: a model, or `output_1`), and a PPI
    # estimate's judge-only items and power-tuned lambda
    source: str | None = None
    n_unlabeled: int | None = None
    ppi_lambda: float | None = None

    @model_serializer(mode="wrap")
    def _only_fields_that_apply(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k in CORE_FIELDS or v is not None}

    def extras(self) -> dict[str, Any]:
        """The optional fields this record carries (those that apply), by name."""
        return {
            name: value
            for name in type(self).model_fields
            if name not in CORE_FIELDS and (value := getattr(self, name)) is not None
        }
