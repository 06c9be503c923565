"""The label budget: how many human labels per language give a +-h interval on the win rate.

With n human labels among N judged items (the judge's verdicts on the other N - n), the power-tuned
PPI++ estimate has variance
    Var(Y) (1 - rho^2) / n + Var(Y) rho^2 / N           (ppi.ppi_variance with N - n unlabelled)
where rho is the correlation of the human's win score Y with the judge's. Setting z * sqrt(Var) = h:
    n = Var(Y) (1 - rho^2) / (h^2 / z^2 - Var(Y) rho^2 / N)
and the human-only budget is z^2 Var(Y) / h^2. From a stated agreement a (the judge's verdict equals
the human's with probability a, whatever the human says) and the worst-case win rate 1/2:
Var(Y) = 1/4 and rho = 2a - 1, so a judge at chance (a = 1/2) saves nothing. From a pilot, Var(Y) and
rho are the labelled items' own (the win score of output_1 per item, ties half), rho capped at
2 a_low - 1 with a_low the lower Wilson bound of the pilot's agreement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np
import pandas as pd
from pydantic import BaseModel

from judgebench.analysis.stats import wilson
from judgebench.human.estimates import group_samples
from judgebench.human.labels import HumanLabels
from judgebench.human.ppi import ppi_variance
from judgebench.human.verdicts import POSITION_SOURCE

WORST_VARIANCE = 0.25  # a win score in [0, 1] varies at most this much (a fair coin, no ties)


class LabelBudget(BaseModel):
    """One row of `plan --human-labels`: the labels needed in one condition (for one judge)."""

    judge: str | None  # None: from a stated agreement, for any judge
    condition: str
    basis: str  # "pilot: n labels" or "assumed"
    agreement: float
    rho: float  # the correlation of human and judge win scores used
    variance: float  # Var(Y) used
    items: int | None  # N, the judged items (None: unlimited)
    human_only: int | None  # labels for +-h without the judge (None: more than the N items)
    ppi: int | None  # labels for +-h with PPI++ over the N items (None: out of reach within N)

    @property
    def saved(self) -> float | None:
        if self.human_only is None or self.ppi is None or self.human_only == 0:
            return None
        return 1.0 - self.ppi / self.human_only


def labels_needed(
    variance: float, rho: float, half_width: float, confidence: float, items: int | None
) -> tuple[int | None, int | None]:
    """(human-only, PPI++) labels for an interval of +-half_width; None where the N items cannot
    give it (more labels than items)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    target = (half_width / z) ** 2
    rho2 = min(1.0, max(0.0, rho)) ** 2
    human: int | None = max(2, math.ceil(variance / target - 1e-9))
    floor = 0.0 if items is None else variance * rho2 / items
    ppi = None if target <= floor else max(2, math.ceil(variance * (1.0 - rho2) / (target - floor) - 1e-9))
    if items is not None:
        human = human if human is not None and human <= items else None
        ppi = ppi if ppi is not None and ppi <= items else None
    return human, ppi


def half_width_at(variance: float, rho: float, n: int, items: int | None, confidence: float) -> float:
    """The half-width n labels give (the inverse of `labels_needed`)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    unlabeled = None if items is None else max(0, items - n)
    return z * math.sqrt(ppi_variance(variance, min(1.0, max(0.0, rho)), n, unlabeled))


def assumed_budget(
    agreement: dict[str, float], half_width: float, confidence: float, items: dict[str, int | None]
) -> list[LabelBudget]:
    """Rows from a stated judge-human agreement per condition (worst-case win rate 1/2)."""
    out = []
    for condition, a in agreement.items():
        rho = max(0.0, 2.0 * a - 1.0)
        n_items = items.get(condition)
        human, ppi = labels_needed(WORST_VARIANCE, rho, half_width, confidence, n_items)
        out.append(
            LabelBudget(
                judge=None,
                condition=condition,
                basis="assumed",
                agreement=a,
                rho=rho,
                variance=WORST_VARIANCE,
                items=n_items,
                human_only=human,
                ppi=ppi,
            )
        )
    return out


def pilot_budget(
    verdicts: pd.DataFrame,
    labels: HumanLabels,
    half_width: float,
    confidence: float,
    order: Sequence[str] = (),
    *,
    items: int | None = None,
) -> list[LabelBudget]:
    """Rows from a pilot: per judge and condition humans labelled, the labelled items' Var(Y), rho
    and agreement (`verdicts`: `item_verdicts` of the pilot run; `order`: the conditions' order;
    `items`: the study's judged items per condition, default the pilot's own)."""
    reference = labels.majority()
    rank = {c: i for i, c in enumerate(order)}
    out = []
    for (judge, condition), rows in verdicts.groupby(["judge", "condition"], sort=False):
        if condition not in labels.conditions:
            continue
        wins, _ = group_samples(rows, str(condition), reference, {})
        sample = wins.get(POSITION_SOURCE)
        if sample is None or len(sample.y) < 2:
            continue
        y, f = np.asarray(sample.y), np.asarray(sample.f)
        variance = float(np.var(y)) or WORST_VARIANCE / len(y)  # a pilot that never varied: not zero
        rho = float(np.corrcoef(y, f)[0, 1]) if np.std(y) > 0 and np.std(f) > 0 else 0.0
        # a small pilot that agreed throughout does not promise a perfect judge: rho is capped at
        # what the lower Wilson bound of its agreement allows (2a - 1, as for a stated agreement)
        agree = int(np.sum(y == f))
        low, _ = wilson(agree, len(y), confidence)
        rho = min(rho, 2.0 * float(low[0]) - 1.0)
        n_items = items if items is not None else len(sample.y) + len(sample.f_unlabeled)
        human, ppi = labels_needed(variance, rho, half_width, confidence, n_items)
        out.append(
            LabelBudget(
                judge=str(judge),
                condition=str(condition),
                basis=f"pilot: {len(y)} labels",
                agreement=agree / len(y),
                rho=max(0.0, rho),
                variance=variance,
                items=n_items,
                human_only=human,
                ppi=ppi,
            )
        )
    return sorted(out, key=lambda b: (b.judge or "", rank.get(b.condition, len(rank)), b.condition))
