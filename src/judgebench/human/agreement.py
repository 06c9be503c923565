"""Agreement with humans: the judge against the humans' majority label (accuracy with a Wilson interval,
Cohen's kappa from statsmodels with its standard error), and the annotators among themselves
(Krippendorff's alpha from the `krippendorff` package, nominal, with an item bootstrap): the human
ceiling beside the judge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from statistics import NormalDist

import krippendorff
import numpy as np
import pandas as pd

from judgebench.analysis.stats import wilson
from judgebench.human.human_doc import AnnotatorAgreement, Interval, JudgeAgreement
from judgebench.human.labels import LABELS, HumanLabels, HumanValue

NO_VERDICT = "none"  # the judge's category for an item it gave no valid answer on
CATEGORIES: tuple[str, ...] = (*LABELS, NO_VERDICT)
MAX_ALPHA_BOOTSTRAP = 1000  # item resamples for alpha's interval (each recomputes alpha)
_CODES = {label: float(i + 1) for i, label in enumerate(LABELS)}


def confusion(judge: Sequence[str | None], human: Sequence[str]) -> np.ndarray:
    """Counts of (judge category, human label) over CATEGORIES, rows the judge's."""
    index = {c: i for i, c in enumerate(CATEGORIES)}
    table = np.zeros((len(CATEGORIES), len(CATEGORIES)))
    for j, h in zip(judge, human, strict=True):
        table[index[j or NO_VERDICT], index[h]] += 1
    return table


def kappa_of(table: np.ndarray, confidence: float) -> Interval | None:
    """Cohen's kappa of a square table (statsmodels) and kappa +- z * its asymptotic standard error;
    None when the chance agreement is total (one category only: kappa is undefined)."""
    used = [i for i in range(len(table)) if table[i].sum() + table[:, i].sum() > 0]
    square = table[np.ix_(used, used)]
    if len(used) < 2 or square.sum() == 0:
        return None
    from statsmodels.stats.inter_rater import cohens_kappa  # slow to import: where it is used

    with np.errstate(divide="ignore", invalid="ignore"):
        result = cohens_kappa(square)
    kappa, se = float(result.kappa), float(result.std_kappa)
    if not math.isfinite(kappa):
        return None
    half = NormalDist().inv_cdf(0.5 + confidence / 2.0) * se if math.isfinite(se) else math.nan
    return Interval(value=kappa, ci_low=max(-1.0, kappa - half), ci_high=min(1.0, kappa + half))


def judge_agreement(
    verdicts: pd.DataFrame, reference: Mapping[tuple[str, str], HumanValue], confidence: float
) -> list[JudgeAgreement]:
    """Each judge and condition against the humans' majority labels (`item_verdicts` rows)."""
    out = []
    for (judge, cond), rows in verdicts.groupby(["judge", "condition"], sort=False):
        condition = str(cond)
        pairs = [
            (v, reference[(str(item), condition)])
            for item, v in zip(rows["item_id"], rows["verdict"], strict=True)
            if (str(item), condition) in reference
        ]
        if not pairs:
            continue
        judged = [v for v, _ in pairs]
        human = [h for _, h in pairs]
        agree = sum(1 for v, h in pairs if v == h)
        low, high = wilson(agree, len(pairs), confidence)
        out.append(
            JudgeAgreement(
                judge=str(judge),
                condition=condition,
                n=len(pairs),
                agree=agree,
                accuracy=Interval(value=agree / len(pairs), ci_low=float(low[0]), ci_high=float(high[0])),
                kappa=kappa_of(confusion(judged, human), confidence),
            )
        )
    return out


def reliability_matrix(labels: HumanLabels, condition: str) -> tuple[np.ndarray, list[str]]:
    """Annotators x items of one condition, labels coded 1 / 2 / 3 (tie), NaN where unlabelled."""
    rows = [lab for lab in labels.labels if lab.condition == condition]
    annotators = sorted({lab.annotator for lab in rows})
    items = sorted({lab.item_id for lab in rows})
    a_index = {a: i for i, a in enumerate(annotators)}
    i_index = {item: i for i, item in enumerate(items)}
    data = np.full((len(annotators), len(items)), np.nan)
    for lab in rows:
        data[a_index[lab.annotator], i_index[lab.item_id]] = _CODES[lab.label]
    return data, items


def alpha_of(data: np.ndarray) -> float | None:
    """Krippendorff's alpha (nominal) of a reliability matrix; None where it is undefined (fewer
    than two labels on every item, or a single value used throughout)."""
    pairable = (np.sum(~np.isnan(data), axis=0) >= 2).any()
    values = np.unique(data[~np.isnan(data)])
    if not pairable or len(values) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def _pairwise(data: np.ndarray) -> tuple[int, int]:
    """(agreeing annotator pairs, all annotator pairs) over the items."""
    agree = total = 0
    for column in data.T:
        given = column[~np.isnan(column)]
        for a, b in combinations(given.tolist(), 2):
            total += 1
            agree += int(a == b)
    return agree, total


def annotator_agreement(
    labels: HumanLabels, confidence: float, *, bootstrap: int, seed: int
) -> list[AnnotatorAgreement]:
    """Per condition with at least two annotators: pairwise agreement and Krippendorff's alpha with
    a percentile interval over `bootstrap` item resamples (at most MAX_ALPHA_BOOTSTRAP)."""
    out = []
    for condition in labels.conditions:
        data, _ = reliability_matrix(labels, condition)
        if data.shape[0] < 2:
            continue
        multi = data[:, np.sum(~np.isnan(data), axis=0) >= 2]
        agree, pairs = _pairwise(multi)
        alpha = alpha_of(multi)
        interval, draws = None, 0
        if alpha is not None:
            low = high = alpha
            reps = min(bootstrap, MAX_ALPHA_BOOTSTRAP)
            rng = np.random.default_rng(seed)
            boot = [alpha_of(multi[:, rng.integers(0, multi.shape[1], multi.shape[1])]) for _ in range(reps)]
            got = np.array([b for b in boot if b is not None])
            if len(got):
                tail = (1.0 - confidence) / 2.0
                low, high = float(np.quantile(got, tail)), float(np.quantile(got, 1.0 - tail))
                draws = len(got)
            interval = Interval(value=alpha, ci_low=low, ci_high=high)
        out.append(
            AnnotatorAgreement(
                condition=condition,
                annotators=data.shape[0],
                items=multi.shape[1],
                pairs=pairs,
                pairwise_agreement=agree / pairs if pairs else None,
                alpha=interval,
                alpha_bootstrap=draws,
            )
        )
    return out
