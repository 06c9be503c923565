"""The human section from a run's judgments and a labels file: agreement, the ceiling, the estimates."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgebench.human.agreement import annotator_agreement, judge_agreement
from judgebench.human.estimates import MIN_LABELLED, Sources, estimates
from judgebench.human.human_doc import HumanReport
from judgebench.human.labels import HumanLabels
from judgebench.human.verdicts import item_verdicts


def known_pairs(frame: pd.DataFrame) -> set[tuple[str, str]]:
    """The (item, condition) pairs a run judged: what a human label may name."""
    pairs = frame[frame["kind"] == "pair"]
    return set(zip(pairs["item_id"].tolist(), pairs["condition"].tolist(), strict=True))


def human_report(
    frame: pd.DataFrame,
    labels: HumanLabels,
    *,
    sources: Sources,
    confidence: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
    order: Sequence[str] = (),
) -> HumanReport:
    """Everything the human section shows, from an analysis frame (the run's judgments) and labels
    validated against it; `order`: the run's conditions, for the rows' order."""
    rank = {c: i for i, c in enumerate(order)}

    def key(condition: str) -> tuple[int, str]:
        return rank.get(condition, len(rank)), condition

    verdicts = item_verdicts(frame)
    reference = labels.majority()
    conditions = sorted(labels.conditions, key=key)
    agreement = sorted(
        judge_agreement(verdicts, reference, confidence), key=lambda a: (a.judge, key(a.condition))
    )
    found = estimates(verdicts, reference, sources, confidence, conditions)
    notes = []
    if labels.split_votes():
        notes.append(
            f"{labels.split_votes()} item(s) x condition had annotators split evenly: no reference label, "
            "left out of the judge's agreement and the estimates (Krippendorff's alpha counts them)"
        )
    if not any(e.quantity == "accuracy" for e in found) and agreement:
        notes.append(
            "no prediction-powered accuracy: it needs the dataset's gold labels as the judge-only stand-in "
            "(the human-only accuracy is the agreement above)"
        )
    if not found and agreement:
        notes.append(f"no estimate: each needs at least {MIN_LABELLED} human labels per judge and condition")
    return HumanReport(
        file=labels.path,
        labels=len(labels.labels),
        annotators=labels.annotators,
        conditions=conditions,
        split_votes=labels.split_votes(),
        confidence=confidence,
        agreement=agreement,
        ceiling=sorted(
            annotator_agreement(labels, confidence, bootstrap=bootstrap, seed=seed),
            key=lambda c: key(c.condition),
        ),
        estimates=sorted(
            found, key=lambda e: (e.judge, key(e.condition), e.quantity != "win_rate", e.source or "")
        ),
        notes=notes,
    )
