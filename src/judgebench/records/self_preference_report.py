"""self_preference.json (README "Self-preference"): does a judge favour its own family's answers?

One row per judge x condition, over the items where exactly one of the two answers was written by a
model of the judge's family. `excess` is the judge's accuracy when its own family's answer is the
gold one minus its accuracy when the other answer is: 0 for a judge that does not care who wrote
what (whatever its accuracy), the planted strength for a judge that picks its own family's answer
with that probability. It is `own_win_when_chosen + own_win_when_rejected - 1`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

NO_MODEL_NAMES = "no answer names its model"


class SelfPreferenceRow(BaseModel):
    judge: str
    family: str | None  # the judge's family; None: unknown (no number can be given)
    condition: str
    items: int = 0  # items with exactly one own-family answer and a readable verdict
    own_chosen: int = 0  # of which the own-family answer is the gold one
    own_rejected: int = 0  # of which the other answer is the gold one
    calls: int = 0  # readable verdicts over those items (both orders)
    # share of verdicts for the own-family answer (a tie counts half): all items, then per gold side
    own_win_rate: float | None = None
    own_win_when_chosen: float | None = None
    own_win_when_rejected: float | None = None
    excess: float | None = None
    low: float | None = None  # studentized permutation interval of `excess` (test inversion)
    high: float | None = None
    p_value: float | None = None  # permutation test of excess = 0
    confidence: float = 0.95
    permutations: int = 0
    method: Literal["studentized permutation"] = "studentized permutation"
    flagged: bool = False  # p_value below 1 - confidence and excess > 0 (then low > 0): favours its family
    note: str | None = None  # why there is no number


class SelfPreferenceReport(BaseModel):
    """The whole check: which answers name a model, and the rows."""

    items: int = 0  # items considered: labelled ones, and unlabelled ones that name both answers' models
    named_items: int = 0  # of which both answers name a model
    answer_families: dict[str, int] = Field(default_factory=dict)  # answers per family (named items)
    rows: list[SelfPreferenceRow] = Field(default_factory=list)
    note: str | None = None  # NO_MODEL_NAMES when no answer names its model
