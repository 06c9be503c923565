"""The leaderboards' "RewardBench score" beside judgebench's pooled accuracy, per judge and condition.

judgebench pools judgments: its accuracy of `Chat` is correct / judged over every Chat item. The
RewardBench leaderboard (allenai/reward-bench `rewardbench/utils.py` calculate_scores_per_section)
instead takes each subset's accuracy, averages a category's subsets weighted by its EXAMPLE_COUNTS
(math-prm's 447 items count as 984, so that math weighs as much as the six code subsets), and the
overall score is the plain mean of the four categories; M-RewardBench (`analysis/plot_utils.py`)
does the same with its own counts. The weights are data, in configs/hub_datasets.toml: the caller
reads them (`api.leaderboard.leaderboard_weights`) and passes a `Weights`.

A subset's accuracy is that of its judgments (both orders of each item) scored as the official
script scores a generative judge (`scripts/run_generative.py`): 1 for the chosen response, 0 for the
rejected one, 0.5 for a tie or an unreadable answer ("effectively a tie"); a missing call is left out.
So a subset weighs by its count, not by its judgments. A category scores the subsets it has judged items
in (as the official code skips absent ones, `weighted_subsets` of `weighted_of` says how many); the
overall score needs all four categories.

Intervals: a percentile bootstrap that resamples items within each subset (an item's two orders
travel together), with the report's seed and number of resamples. The drop from English (`en->c`) is
computed on the items both conditions hold, with the same resampled items for both, so its interval
is paired.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgebench.analysis.findings import ALL, SOURCE, ReportSettings, pair_name
from judgebench.analysis.frame import pair_flags
from judgebench.records import Metric, MetricRecord
from judgebench.records.metrics import CIMethod

Floats = np.ndarray  # type: ignore[type-arg]


@dataclass(frozen=True)
class Weights:
    """One leaderboard's scoring: category -> its subsets, and each subset's weight."""

    scheme: str
    sections: dict[str, list[str]]
    counts: dict[str, int]


@dataclass(frozen=True)
class _Score:
    """A point value with its bootstrap replicates (empty without resampling) and its item count."""

    value: float
    boot: Floats
    n: int
    parts: int = 1
    of: int = 1


def item_table(df: pd.DataFrame, weights: Weights) -> pd.DataFrame:
    """One row per (judge, condition, item) of pair judgments with a label: its credit (1 per right
    verdict, 0.5 per tie or invalid answer), its answered judgments, and its RewardBench subset (the
    last part of its subset path)."""
    p = pair_flags(df)
    if p.empty:
        return pd.DataFrame(columns=["judge", "condition", "item_id", "leaf", "credit", "acc_n", "item"])
    labelled = p["label"].notna()
    credit = p["correct"] + 0.5 * ((p["tie"] > 0) | (p["invalid"] > 0)).astype(float) * labelled
    leaves = {name: str(name).rsplit("/", 1)[-1] for name in p["subset"].unique()}  # few distinct paths
    p = p.assign(leaf=p["subset"].map(leaves), credit=credit)
    p = p[p["leaf"].isin(set(weights.counts))]
    g = p.groupby(["judge", "condition", "item_id", "leaf"], sort=False)[["credit", "acc_n"]].sum()
    g = g.reset_index()
    g["item"] = pd.factorize(g["item_id"])[0]  # an integer per item: fast to match across conditions
    return g[g["acc_n"] > 0].sort_values(["judge", "condition", "item"], kind="stable")


def _resamples(rows: pd.DataFrame, samples: int, rng: np.random.Generator) -> dict[str, Floats]:
    """leaf -> a (samples x items) matrix of drawn item positions (with replacement), the items in
    `rows` order: the same matrix resamples the same items of another condition (the paired drop)."""
    out: dict[str, Floats] = {}
    for leaf, part in rows.groupby("leaf", sort=True):
        out[str(leaf)] = rng.integers(0, len(part), size=(samples, len(part)), dtype=np.int32)
    return out


def _scores(rows: pd.DataFrame, weights: Weights, draws: Mapping[str, Floats]) -> dict[str, _Score]:
    """Category and overall scores of one judge and condition (on `rows`' items) with replicates."""
    subset: dict[str, _Score] = {}
    for leaf, part in rows.groupby("leaf", sort=True):
        correct = part["credit"].to_numpy(dtype=float)
        judged = part["acc_n"].to_numpy(dtype=float)
        drawn = draws[str(leaf)]
        if not len(drawn):
            boot = np.zeros(0)
        elif (judged == judged[0]).all():  # every item judged as often (the usual case): one gather
            boot = correct[drawn].mean(axis=1) / judged[0]
        else:
            boot = correct[drawn].sum(axis=1) / judged[drawn].sum(axis=1)
        subset[str(leaf)] = _Score(float(correct.sum() / judged.sum()), boot, len(part))
    out: dict[str, _Score] = {}
    for section, leaves in weights.sections.items():
        present = [leaf for leaf in leaves if leaf in subset]
        if not present:
            continue
        w = np.array([weights.counts[leaf] for leaf in present], dtype=float)
        value = float(sum(wi * subset[leaf].value for wi, leaf in zip(w, present, strict=True)) / w.sum())
        boot = sum(wi * subset[leaf].boot for wi, leaf in zip(w, present, strict=True)) / w.sum()
        n = sum(subset[leaf].n for leaf in present)
        out[section] = _Score(value, np.asarray(boot), n, len(present), len(leaves))
    if out and len(out) == len(weights.sections):
        parts = [out[s] for s in weights.sections]
        boot = np.mean([p.boot for p in parts], axis=0) if len(parts[0].boot) else np.zeros(0)
        out[ALL] = _Score(float(np.mean([p.value for p in parts])), boot, sum(p.n for p in parts))
    return out


def _interval(boot: Floats, confidence: float) -> tuple[float | None, float | None]:
    if len(boot) == 0:
        return None, None
    alpha = 1.0 - confidence
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _rng(settings: ReportSettings, *key: str) -> np.random.Generator:
    return np.random.default_rng([settings.seed, *(zlib.crc32(k.encode("utf-8")) for k in key)])


def _record(
    metric: str,
    judge: str,
    condition: str,
    subset: str,
    score: _Score,
    *,
    weights: Weights,
    confidence: float,
) -> MetricRecord:
    low, high = _interval(score.boot, confidence)
    section = subset != ALL
    return MetricRecord(
        judge=judge,
        metric=metric,
        condition=condition,
        subset=subset,
        filtered=False,
        value=score.value,
        n=score.n,
        ci_low=low,
        ci_high=high,
        ci_method=CIMethod.BOOTSTRAP if low is not None else None,
        weights=weights.scheme,
        weighted_subsets=score.parts if section else None,
        weighted_of=score.of if section else None,
    )


def _order(scores: Mapping[str, _Score], weights: Weights) -> list[str]:
    return [s for s in (ALL, *weights.sections) if s in scores]


def leaderboard_records(
    df: pd.DataFrame, weights: Weights, settings: ReportSettings, conditions: Sequence[str]
) -> list[MetricRecord]:
    """rewardbench_score per judge x condition x (all, category), and rewardbench_score_drop per
    judge x en->c x (all, category) on the items both conditions hold."""
    table = item_table(df, weights)
    if table.empty:
        return []
    samples, level = settings.bootstrap_samples, settings.confidence
    out: list[MetricRecord] = []
    by_cell = {(str(j), str(c)): rows for (j, c), rows in table.groupby(["judge", "condition"], sort=False)}
    judges = list(dict.fromkeys(str(j) for j in table["judge"]))
    for judge in judges:
        for condition in [c for c in conditions if (judge, c) in by_cell]:
            rows = by_cell[(judge, condition)]
            scores = _scores(rows, weights, _resamples(rows, samples, _rng(settings, judge, condition)))
            for subset in _order(scores, weights):
                score = scores[subset]
                out.append(
                    _record(
                        Metric.REWARDBENCH_SCORE,
                        judge,
                        condition,
                        subset,
                        score,
                        weights=weights,
                        confidence=level,
                    )
                )
        if (judge, SOURCE) not in by_cell:
            continue
        english = by_cell[(judge, SOURCE)]
        for condition in [c for c in conditions if c != SOURCE and (judge, c) in by_cell]:
            target = by_cell[(judge, condition)]
            out.extend(_drop(judge, condition, english, target, weights=weights, settings=settings))
    return out


def _drop(
    judge: str,
    condition: str,
    english: pd.DataFrame,
    target: pd.DataFrame,
    *,
    weights: Weights,
    settings: ReportSettings,
) -> list[MetricRecord]:
    """Target minus English on the items both hold, each resample drawing the same items for both."""
    both = np.intersect1d(english["item"].to_numpy(), target["item"].to_numpy())
    en = english[np.isin(english["item"].to_numpy(), both)]  # both sorted by item already
    tg = target[np.isin(target["item"].to_numpy(), both)]
    if en.empty:
        return []
    draws = _resamples(en, settings.bootstrap_samples, _rng(settings, judge, condition, "drop"))
    en_scores, tg_scores = _scores(en, weights, draws), _scores(tg, weights, draws)
    pair = pair_name(SOURCE, condition)
    out = []
    for subset in _order(tg_scores, weights):
        a, b = en_scores[subset], tg_scores[subset]
        diff = _Score(b.value - a.value, b.boot - a.boot, b.n, b.parts, b.of)
        out.append(
            _record(
                Metric.REWARDBENCH_SCORE_DROP,
                judge,
                pair,
                subset,
                diff,
                weights=weights,
                confidence=settings.confidence,
            )
        )
    return out
