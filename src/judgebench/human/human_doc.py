"""The human section as data: agreement rows, the annotators' ceiling, prediction-powered estimates.

`HumanReport` is what `report --human FILE` writes as human.json (README: "Human labels") and turns
into metrics.json records (`records()`): `human_agreement`, `cohens_kappa`, `krippendorff_alpha`,
`annotator_agreement`, and each estimate twice, `ppi_<quantity>` and `classical_<quantity>`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from judgebench.records import MetricRecord
from judgebench.records.metrics import CIMethod, Metric

HUMANS = "humans"  # the `judge` of the annotators' own records (Krippendorff's alpha)
ALL = "all"  # the subset of every human record: labels are per item, whatever its subset
Quantity = Literal["win_rate", "accuracy"]
# how an estimate's interval was made: PPI++ (cross-fitted lambda, t interval); the human-only Wilson
# interval below PPI_MIN_LABELS labels (`classical`); or Wilson because every label agreed (`unanimous`)
EstimateMethod = Literal["ppi++", "classical", "unanimous"]


class Interval(BaseModel):
    value: float
    ci_low: float
    ci_high: float


class JudgeAgreement(BaseModel):
    """One judge against the humans' majority label in one condition."""

    judge: str
    condition: str
    n: int  # items with a reference label (and a row of this judge)
    agree: int  # of them, where the judge's item verdict equals it
    accuracy: Interval  # agree / n, Wilson interval
    kappa: Interval | None  # Cohen's kappa (statsmodels), normal interval from its standard error


class AnnotatorAgreement(BaseModel):
    """The human ceiling in one condition: how much the annotators agree with each other."""

    condition: str
    annotators: int
    items: int  # items labelled by at least two annotators
    pairs: int  # annotator pairs over those items
    pairwise_agreement: float | None  # share of those pairs that gave the same label
    alpha: Interval | None  # Krippendorff's alpha (nominal), item-bootstrap interval
    alpha_bootstrap: int = 0  # replicates behind the alpha interval (0: the value alone)


class Estimate(BaseModel):
    """One quantity with n human labels and N judge-only items: PPI++ beside the human-only interval."""

    judge: str
    condition: str
    quantity: Quantity
    source: str | None = None  # win_rate: whose output wins (a model, or `output_1`)
    n: int
    n_unlabeled: int
    lam: float  # PPI++'s power-tuned lambda (0: the judge added nothing)
    ppi: Interval
    classical: Interval  # the n human labels alone (PPI at lambda 0)
    judge_only: float  # the plug-in mean of the judge's predictions over all n + N items
    method: EstimateMethod = "ppi++"

    @property
    def width_ratio(self) -> float:
        """PPI width / human-only width: below 1 is what the judge's verdicts bought."""
        width = self.classical.ci_high - self.classical.ci_low
        return (self.ppi.ci_high - self.ppi.ci_low) / width if width > 0 else 1.0


class HumanReport(BaseModel):
    """Everything the human section shows, written as human.json."""

    file: str
    labels: int
    annotators: list[str]
    conditions: list[str]
    split_votes: int  # (item, condition) left without a reference label (annotators split evenly)
    confidence: float
    agreement: list[JudgeAgreement] = Field(default_factory=list)
    ceiling: list[AnnotatorAgreement] = Field(default_factory=list)
    estimates: list[Estimate] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def records(self) -> list[MetricRecord]:
        """The human numbers as metrics.json records (INTERFACE.md: `kappa`, `krippendorff_alpha`,
        `ppi_*`); a win rate's source is its `source` field."""
        out: list[MetricRecord] = []
        for a in self.agreement:
            out.append(
                _record(
                    a.judge,
                    Metric.HUMAN_AGREEMENT,
                    a.condition,
                    a.accuracy,
                    n=a.n,
                    method=CIMethod.WILSON,
                    k=a.agree,
                )
            )
            if a.kappa is not None:
                out.append(
                    _record(a.judge, Metric.COHENS_KAPPA, a.condition, a.kappa, n=a.n, method=CIMethod.NORMAL)
                )
        for c in self.ceiling:
            if c.alpha is not None:
                method = CIMethod.BOOTSTRAP if c.alpha_bootstrap else None
                out.append(
                    _record(HUMANS, Metric.KRIPPENDORFF_ALPHA, c.condition, c.alpha, n=c.items, method=method)
                )
            if c.pairwise_agreement is not None:
                value = Interval(value=c.pairwise_agreement, ci_low=0.0, ci_high=0.0)
                out.append(
                    _record(HUMANS, Metric.ANNOTATOR_AGREEMENT, c.condition, value, n=c.pairs, method=None)
                )
        for e in self.estimates:
            ppi, classical = _NAMES[e.quantity]
            extra = {"source": e.source, "n_unlabeled": e.n_unlabeled, "ppi_lambda": e.lam}
            used = CIMethod.T if e.method == "ppi++" else CIMethod.WILSON
            out.append(_record(e.judge, ppi, e.condition, e.ppi, n=e.n, method=used, **extra))
            out.append(
                _record(
                    e.judge,
                    classical,
                    e.condition,
                    e.classical,
                    n=e.n,
                    method=CIMethod.T if e.method == "ppi++" else CIMethod.WILSON,
                    source=e.source,
                )
            )
        return out


_NAMES: dict[str, tuple[Metric, Metric]] = {
    "win_rate": (Metric.PPI_WIN_RATE, Metric.CLASSICAL_WIN_RATE),
    "accuracy": (Metric.PPI_ACCURACY, Metric.CLASSICAL_ACCURACY),
}


def _record(
    judge: str,
    metric: Metric,
    condition: str,
    value: Interval,
    *,
    n: int,
    method: CIMethod | None,
    **extra: Any,
) -> MetricRecord:
    """One human record; without a method the value stands alone (no interval)."""
    return MetricRecord(
        judge=judge,
        metric=metric,
        condition=condition,
        subset=ALL,
        filtered=False,
        value=value.value,
        n=n,
        ci_low=value.ci_low if method is not None else None,
        ci_high=value.ci_high if method is not None else None,
        ci_method=method,
        **extra,
    )
