"""Prediction-powered estimates of what users report with a judge, per judge and condition.

- **Win rate** of a source: over the items where that source wrote one of the two outputs, the share
  its output wins (a tie counts half). The truth is the humans' majority label; the judge's item
  verdict is the prediction on every item. Sources are the models an item names (`model_1`/`model_2`,
  or RewardBench's `chosen_model`/`rejected_model`); an item that names none has only positions, and
  the win rate is that of `output_1`.
- **Accuracy** of the judge: the share of items where its verdict equals the humans' label. Its cheap
  stand-in on unlabelled items is agreement with the dataset's gold label (where items have one), so
  humans correct the benchmark's labels and the judge's accuracy on them together; a dataset without
  gold labels gets the human-only accuracy (`human_agreement`) alone.

Below PPI_MIN_LABELS labels the estimate is the human-only one (Wilson), and the estimate says so
(`method`): PPI++'s interval under-covers on a few labels. Each estimate comes with the human-only
interval on the same n labels, so the gain shows; a judge
that is poor in one language predicts the humans poorly there, gets lambda near 0 and an interval as
wide as the human-only one: honest, never narrower by fiat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgebench.analysis.stats import wilson
from judgebench.human.human_doc import Estimate, EstimateMethod, Interval, Quantity
from judgebench.human.labels import HumanValue
from judgebench.human.ppi import MeanEstimate, classical_t_mean, ppi_crossfit_mean
from judgebench.human.verdicts import POSITION_SOURCE, score_for

MIN_LABELLED = 5  # fewer human labels than this in a cell: no interval is worth showing
# fewer labels than this: PPI++'s interval is not trusted (it under-covers) and the human-only Wilson
# interval stands in for it; from this many on, PPI++ with a cross-fitted lambda and a t interval
PPI_MIN_LABELS = 40
Sources = Mapping[str, tuple[str, str]]  # item -> the sources of output_1 and output_2


@dataclass
class _Sample:
    """Labelled (y, f) and unlabelled f of one quantity."""

    y: list[float]
    f: list[float]
    f_unlabeled: list[float]

    def add(self, truth: float | None, prediction: float) -> None:
        if truth is None:
            self.f_unlabeled.append(prediction)
        else:
            self.y.append(truth)
            self.f.append(prediction)


def _interval(m: MeanEstimate) -> Interval:
    def clip(x: float) -> float:
        return float(np.clip(x, 0.0, 1.0))

    return Interval(value=clip(m.value), ci_low=clip(m.ci_low), ci_high=clip(m.ci_high))


def estimate_of(
    sample: _Sample, key: tuple[str, str, Quantity, str | None], confidence: float
) -> Estimate | None:
    """PPI++ and the human-only interval of one sample; None below MIN_LABELLED labels."""
    if len(sample.y) < MIN_LABELLED:
        return None
    judge, condition, quantity, source = key
    every = sample.f + sample.f_unlabeled
    if len(set(sample.y)) == 1:
        return _wilson_only(sample, key, confidence)
    if len(sample.y) < PPI_MIN_LABELS:
        return _wilson_only(sample, key, confidence, method="classical")
    ppi = ppi_crossfit_mean(sample.y, sample.f, sample.f_unlabeled, confidence=confidence)
    classical = classical_t_mean(sample.y, confidence=confidence)
    return Estimate(
        judge=judge,
        condition=condition,
        quantity=quantity,
        source=source,
        n=ppi.n,
        n_unlabeled=ppi.n_unlabeled,
        lam=ppi.lam,
        ppi=_interval(ppi),
        classical=_interval(classical),
        judge_only=float(np.mean(every)),
    )


def _wilson_only(
    sample: _Sample,
    key: tuple[str, str, Quantity, str | None],
    confidence: float,
    method: EstimateMethod = "unanimous",
) -> Estimate:
    """Both intervals the Wilson interval of the labels (ties counted half): where every label gave the
    same score (a normal interval would have no width and the judge's covariance is 0), and below
    PPI_MIN_LABELS labels (PPI++'s interval under-covers there; Wilson on the labels holds)."""
    judge, condition, quantity, source = key
    n = len(sample.y)
    low, high = wilson(sum(sample.y), n, confidence)
    interval = Interval(value=float(np.mean(sample.y)), ci_low=float(low[0]), ci_high=float(high[0]))
    return Estimate(
        judge=judge,
        condition=condition,
        quantity=quantity,
        source=source,
        n=n,
        n_unlabeled=len(sample.f_unlabeled),
        lam=0.0,
        ppi=interval,
        classical=interval,
        judge_only=float(np.mean(sample.f + sample.f_unlabeled)),
        method=method,
    )


def _sides(item: str, sources: Sources) -> list[tuple[str, int]]:
    """(source, which output is theirs) for every source on this item."""
    named = sources.get(item)
    if named is None:
        return [(POSITION_SOURCE, 1)]
    first, second = named
    return [] if first == second else [(first, 1), (second, 2)]


def group_samples(
    rows: pd.DataFrame, condition: str, reference: Mapping[tuple[str, str], HumanValue], sources: Sources
) -> tuple[dict[str, _Sample], _Sample]:
    """One judge's rows in one condition as win-rate samples per source, and the accuracy sample."""
    wins: dict[str, _Sample] = {}
    accuracy = _Sample([], [], [])
    for item, verdict, gold in zip(rows["item_id"], rows["verdict"], rows["gold"], strict=True):
        human = reference.get((item, condition))
        for source, side in _sides(item, sources):
            truth = None if human is None else score_for(human, side)
            wins.setdefault(source, _Sample([], [], [])).add(truth, score_for(verdict, side))
        if gold is not None:
            accuracy.add(None if human is None else float(verdict == human), float(verdict == gold))
    return wins, accuracy


def estimates(
    verdicts: pd.DataFrame,
    reference: Mapping[tuple[str, str], HumanValue],
    sources: Sources,
    confidence: float,
    conditions: Sequence[str],
) -> list[Estimate]:
    """Win rates per source and the judge's accuracy, per judge and condition (those humans
    labelled), each PPI++ beside human-only."""
    out: list[Estimate] = []
    for (judge, condition), rows in verdicts.groupby(["judge", "condition"], sort=False):
        if condition not in conditions:
            continue
        wins, accuracy = group_samples(rows, str(condition), reference, sources)
        for source in sorted(wins):
            found = estimate_of(wins[source], (str(judge), str(condition), "win_rate", source), confidence)
            out += [found] if found is not None else []
        found = estimate_of(accuracy, (str(judge), str(condition), "accuracy", None), confidence)
        out += [found] if found is not None else []
    return out
