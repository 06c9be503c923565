"""A judge's verdict and confidence per item (PROTOCOL §8), from whichever the run has.

An item in one condition gets m answers from a judge: its two orders, plus any repeats (`judge
--repeats K`) or templates folded in by the caller. Two ways to read a confidence from them:

- `probability`: the verdict-token probabilities (prob_a / prob_b / prob_tie, from log-probabilities)
  of each answer, renormalised over A / B / Tie and mapped to outputs (orig: A is output_1; swap: A is
  output_2), averaged over the answers that carry them. The verdict is the most probable of 1 / 2 / tie
  and the confidence its probability.
- `agreement` ("simulated annotators", Jung et al. 2024): the share of the m answers that give the
  item's verdict, the unique most common valid answer. An invalid answer counts in m and agrees with
  nothing. When the most common answers are split (one order says 1, the other 2) there is no
  preference: the verdict is `tie`, as `report --human` reads it, and the confidence is the share of
  answers that said tie (often 0: such an item is never kept).
- `auto`: probability for a judge whose every valid answer carries probabilities, else agreement.

A call that failed (missing) is no answer; an item with no answer has no verdict and confidence 0. The
judge's self-reported `confidence` field is not used: a judge cannot vouch for itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgebench.errors import InputError
from judgebench.records.selective_document import ConfidenceMode

KEYS = ["judge", "item_id", "condition"]
VERDICTS = ("1", "2", "tie")
COLUMNS = [*KEYS, "verdict", "confidence", "answers", "source", "cost_usd", "cost_known"]


def _has_probs(frame: pd.DataFrame) -> pd.Series:
    return frame["prob_a"].notna() & frame["prob_b"].notna()


def _probability(answers: pd.DataFrame) -> pd.DataFrame:
    """Per item the averaged output probabilities (1, 2, tie) of the answers that carry them."""
    with_probs = answers[_has_probs(answers)]
    pa = with_probs["prob_a"].to_numpy(dtype=float)
    pb = with_probs["prob_b"].to_numpy(dtype=float)
    pt = with_probs["prob_tie"].fillna(0.0).to_numpy(dtype=float)
    total = pa + pb + pt
    ok = total > 0
    swap = (with_probs["order"] == "swap").to_numpy()
    p1 = np.where(swap, pb, pa)
    p2 = np.where(swap, pa, pb)
    probs = pd.DataFrame(
        {
            **{k: with_probs[k].to_numpy()[ok] for k in KEYS},
            "1": (p1 / np.where(ok, total, 1.0))[ok],
            "2": (p2 / np.where(ok, total, 1.0))[ok],
            "tie": (pt / np.where(ok, total, 1.0))[ok],
        }
    )
    mean = probs.groupby(KEYS, sort=False)[list(VERDICTS)].mean()
    values = mean.to_numpy()
    best = values.argmax(axis=1) if len(values) else np.array([], dtype=int)
    out = mean.reset_index()[KEYS]
    out["verdict"] = pd.Series([VERDICTS[b] for b in best], index=out.index, dtype=object)
    out["confidence"] = values.max(axis=1) if len(values) else np.array([], dtype=float)
    return out


def _agreement(answers: pd.DataFrame) -> pd.DataFrame:
    """Per item the verdict most answers gave (split: tie) and the share of answers that gave it."""
    work = answers[KEYS].copy()
    for v in VERDICTS:
        work[v] = (answers["verdict"] == v).astype(int)
    counts = work.groupby(KEYS, sort=False)[list(VERDICTS)].sum()
    m = answers.groupby(KEYS, sort=False).size().reindex(counts.index).to_numpy()
    values = counts.to_numpy()
    top = values.max(axis=1) if len(values) else np.array([], dtype=int)
    unique = (values == top[:, None]).sum(axis=1) == 1
    best = values.argmax(axis=1) if len(values) else np.array([], dtype=int)
    tie = VERDICTS.index("tie")
    chosen = np.where(unique & (top > 0), best, tie)
    agreeing = values[np.arange(len(values)), chosen] if len(values) else np.array([], dtype=int)
    out = counts.reset_index()[KEYS]
    verdict = [VERDICTS[c] if t > 0 else None for c, t in zip(chosen, top, strict=True)]
    out["verdict"] = pd.Series(verdict, index=out.index, dtype=object)
    out["confidence"] = np.where(m > 0, agreeing / np.maximum(m, 1), 0.0)
    return out


def _source_for(answers: pd.DataFrame, mode: ConfidenceMode, judge: str) -> str:
    valid = answers[answers["verdict"].isin(VERDICTS)]
    if mode == "probability":
        if not _has_probs(valid).any():
            raise InputError(
                f"judge '{judge}' stored no verdict probabilities (prob_a/prob_b): use --confidence "
                "agreement (its orders, repeats or templates as simulated annotators)"
            )
        return "probability"
    if mode == "auto" and len(valid) and bool(_has_probs(valid).all()):
        return "probability"
    return "agreement"


def item_confidence(frame: pd.DataFrame, mode: ConfidenceMode = "auto") -> pd.DataFrame:
    """One row per judge, item and condition of the pair judgments in `frame` (columns judge,
    item_id, condition, order, verdict, prob_a, prob_b, prob_tie, cost_usd; several rows per order
    where repeats are folded in): verdict, confidence in [0, 1], answers (m), source, and the cost of
    the item's calls (`cost_known`: every call recorded one)."""
    every = frame[KEYS].drop_duplicates().reset_index(drop=True)
    cost = frame.assign(_known=frame["cost_usd"].notna()).groupby(KEYS, sort=False)
    costs = cost.agg(cost_usd=("cost_usd", "sum"), cost_known=("_known", "all")).reset_index()
    answered = frame[frame["verdict"].notna()]
    parts = []
    for judge, answers in answered.groupby("judge", sort=False):
        source = _source_for(answers, mode, str(judge))
        valid = answers[answers["verdict"].isin(VERDICTS)] if source == "probability" else answers
        part = _probability(valid) if source == "probability" else _agreement(valid)
        m = answers.groupby(KEYS, sort=False).size().rename("answers").reset_index()
        part = part.merge(m, on=KEYS, how="right")
        part["source"] = source
        parts.append(part)
    judged = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS[:6])
    out = every.merge(judged, on=KEYS, how="left").merge(costs, on=KEYS, how="left")
    out["confidence"] = out["confidence"].astype(float).fillna(0.0)
    out["answers"] = out["answers"].fillna(0).astype(int)
    out["verdict"] = out["verdict"].astype(object).where(out["verdict"].notna(), None)
    return out[COLUMNS]
