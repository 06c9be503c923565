"""A cascade of judges on a run, in one condition: each judge calibrated on the labelled items that
reach it, then applied to every item; what no judge keeps goes to people (PROTOCOL §8).

Guarantee, as stated in selective.json: on new items exchangeable with the labelled slice (drawn from
the same population, labelled by the same kind of annotators), each stage's disagreement with the
humans' majority on the items it decides is <= alpha except with probability delta_stage; the items the
cascade decides are a mixture of the stages' and so disagree <= alpha whenever no stage fails, which
holds with probability >= 1 - K delta_stage (a union bound). With `split_delta` (the default) delta_stage
= delta / K and the cascade holds at 1 - delta; without it each stage holds at 1 - delta, as in the
paper. The later stages are calibrated on what the earlier ones left, as in the reference code; the
audit script measures how often the cascade fails in simulation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgebench.analysis.stats import wilson
from judgebench.records.selective_document import (
    Bounded,
    CascadeResult,
    EscalatedItem,
    ItemDecision,
    JudgeAnswer,
    StageResult,
    ThresholdStep,
)
from judgebench.selective.calibrate import calibrate_cascade, coverage_curve, keeps, sequence_steps

Reference = Mapping[tuple[str, str], str]  # (item, condition) -> the humans' majority label


def _share(k: int, n: int, confidence: float) -> Bounded | None:
    if n == 0:
        return None
    low, high = wilson(k, n, confidence)
    return Bounded(value=k / n, ci_low=float(low[0]), ci_high=float(high[0]))


def _step(threshold: float, kept: int, errors: int, bound: float, passed: bool) -> ThresholdStep:
    return ThresholdStep(threshold=threshold, kept=kept, errors=errors, upper_bound=bound, passed=passed)


def _wide(items: pd.DataFrame, cascade: Sequence[str], column: str) -> pd.DataFrame:
    return items.pivot(index="item_id", columns="judge", values=column)[list(cascade)]


def _stage(
    judge: str,
    items: pd.DataFrame,
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    fit: tuple[float, int, int, float],
    settings: tuple[float, float, int, float],
) -> StageResult:
    """One stage's record: `arrays` = (confidence, wrong, labelled, reach) over all items before this
    stage; `fit` = (threshold, kept, errors, bound) on the labelled items; `settings` = (alpha,
    delta_stage, min_kept, interval confidence)."""
    conf, wrong, labelled, reach = arrays
    threshold, kept, errors, bound = fit
    alpha, delta, min_kept, level = settings
    active = reach & labelled
    steps = sequence_steps(conf[active], wrong[active], alpha=alpha, delta=delta, min_kept=min_kept)
    has = not np.isnan(threshold)
    takes = reach & keeps(conf, np.array([threshold]))[0]
    mine = items[items["judge"] == judge].set_index("item_id")
    sources = mine["source"].dropna()
    return StageResult(
        judge=judge,
        confidence_source="probability" if (sources == "probability").any() else "agreement",
        answers_per_item=float(mine["answers"].mean()) if len(mine) else 0.0,
        threshold=float(threshold) if has else None,
        delta=delta,
        reached_labelled=int(active.sum()),
        kept_labelled=int(kept),
        errors_labelled=int(errors),
        risk_upper_bound=float(bound) if has else None,
        guaranteed_agreement=1.0 - float(bound) if has else None,
        observed_agreement=_share(int(kept - errors), int(kept), level),
        reached=int(reach.sum()),
        decided=int(takes.sum()),
        coverage=float(takes.mean()) if len(takes) else 0.0,
        cost_usd=0.0,
        steps=[_step(*s) for s in steps],
        curve=[_step(*s) for s in coverage_curve(conf[active], wrong[active], alpha=alpha, delta=delta)],
    )


def _nothing(condition: str, alpha: float, notes: list[str]) -> CascadeResult:
    """A condition the cascade cannot judge: no stage, no item, said why."""
    return CascadeResult(
        condition=condition,
        items=0,
        labelled=0,
        stages=[],
        coverage=0.0,
        guaranteed_agreement=1.0 - alpha,
        observed_agreement=None,
        cost_cascade_usd=0.0,
        cost_strongest_usd=0.0,
        cost_known=True,
        notes=notes,
    )


def run_cascade(
    items: pd.DataFrame,
    reference: Reference,
    cascade: Sequence[str],
    condition: str,
    *,
    alpha: float,
    delta_stage: float,
    min_kept: int,
    confidence: float = 0.95,
) -> CascadeResult:
    """The cascade over `items` (item_confidence rows of one condition) against the humans' labels."""
    items = items[items["condition"] == condition]
    counts = items.groupby("item_id")["judge"].nunique()
    common = counts.index[counts == len(cascade)]
    notes = []
    if len(common) < len(counts):
        notes.append(
            f"{len(counts) - len(common)} item(s) not judged by every judge of the cascade: left out"
        )
    items = items[items["item_id"].isin(common)]
    if not len(common):
        return _nothing(
            condition,
            alpha,
            [*notes, f"no item in condition {condition} was judged by every judge of the cascade"],
        )
    conf_w, verdict_w = _wide(items, cascade, "confidence"), _wide(items, cascade, "verdict")
    ids = [str(i) for i in conf_w.index]
    human = np.array([reference.get((i, condition)) for i in ids], dtype=object)
    labelled = np.array([h is not None for h in human], dtype=bool)
    conf = [conf_w[j].to_numpy(dtype=float) for j in cascade]
    wrong = [verdict_w[j].to_numpy(dtype=object) != human for j in cascade]
    fits, _ = calibrate_cascade(
        [c[labelled] for c in conf],
        [w[labelled] for w in wrong],
        alpha=alpha,
        delta=delta_stage,
        min_kept=min_kept,
    )
    cost_w = _wide(items, cascade, "cost_usd").fillna(0.0)
    known = bool(items["cost_known"].astype(bool).all())
    reach = np.ones(len(ids), dtype=bool)
    stages: list[StageResult] = []
    for k, judge in enumerate(cascade):
        f = fits[k]
        fit = (float(f.threshold[0]), int(f.kept[0]), int(f.errors[0]), float(f.bound[0]))
        stage = _stage(
            judge,
            items,
            (conf[k], wrong[k], labelled, reach),
            fit,
            (alpha, delta_stage, min_kept, confidence),
        )
        stage.cost_usd = float(cost_w[judge].to_numpy()[reach].sum())
        stages.append(stage)
        reach = reach & ~(keeps(conf[k], np.array([fit[0]]))[0])
    kept = sum(s.kept_labelled for s in stages)
    agree = sum(s.kept_labelled - s.errors_labelled for s in stages)
    verdicts = {j: verdict_w[j].tolist() for j in cascade}  # plain lists: an item a row, read fast
    confs = {j: c.tolist() for j, c in zip(cascade, conf, strict=True)}
    escalated = [
        EscalatedItem(
            item_id=ids[i],
            condition=condition,
            labelled=bool(labelled[i]),
            verdicts={j: verdicts[j][i] for j in cascade},
            confidences={j: confs[j][i] for j in cascade},
        )
        for i in np.flatnonzero(reach).tolist()
    ]
    if not labelled.any():
        notes.append(
            f"no human label in condition {condition}: nothing to calibrate on, every item escalated"
        )
    return CascadeResult(
        condition=condition,
        items=len(ids),
        labelled=int(labelled.sum()),
        stages=stages,
        coverage=float(1.0 - reach.mean()) if len(ids) else 0.0,
        guaranteed_agreement=1.0 - alpha,
        observed_agreement=_share(agree, kept, confidence),
        escalated=escalated,
        cost_cascade_usd=sum(s.cost_usd for s in stages),
        cost_strongest_usd=float(cost_w[cascade[-1]].sum()),
        cost_known=known,
        notes=notes,
    )


def item_decisions(items: pd.DataFrame, result: CascadeResult, reference: Reference) -> list[ItemDecision]:
    """Every item of `result`'s condition judged by each judge of its cascade: each judge's verdict and
    confidence, and the judge that decides it under the calibrated thresholds (as `run_cascade` does)."""
    cascade = [s.judge for s in result.stages]
    thresholds = {s.judge: s.threshold for s in result.stages}
    rows = items[(items["condition"] == result.condition) & items["judge"].isin(cascade)]
    by_item: dict[str, dict[str, JudgeAnswer]] = {}
    for judge, item, verdict, conf, answers, source in zip(
        *(rows[c].tolist() for c in ("judge", "item_id", "verdict", "confidence", "answers", "source")),
        strict=True,
    ):
        by_item.setdefault(str(item), {})[str(judge)] = JudgeAnswer(
            verdict=verdict, confidence=float(conf), answers=int(answers), source=source or "agreement"
        )
    out = []
    for item, answers in by_item.items():
        if len(answers) < len(cascade):
            continue  # left out of the cascade (noted there)
        chosen = next(
            (j for j in cascade if (t := thresholds[j]) is not None and answers[j].confidence >= t), None
        )
        out.append(
            ItemDecision(
                item_id=item,
                condition=result.condition,
                human=reference.get((item, result.condition)),
                decided_by=chosen,
                verdict=answers[chosen].verdict if chosen else None,
                judges={j: answers[j] for j in cascade},
            )
        )
    return out
