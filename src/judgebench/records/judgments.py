"""Judge calls as recorded: the call key that identifies a planned call and the judgment itself."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from judgebench.records.items import Label

Kind = Literal["pair", "tie_probe"]
Winner = Literal["A", "B", "Tie", "invalid"]


# the columns the analysis reads of each judgment, in the order its table holds them (analysis.frame
# builds them from records, judgment_table from the file's columns)
ANALYSIS_COLUMNS = (
    "judge",
    "item_id",
    "subset",
    "kind",
    "condition",
    "order",
    "verdict",
    "winner",
    "label",
    "confidence",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)


class CallKey(NamedTuple):
    """The identity of a planned call: a later record with the same key supersedes earlier ones.

    The same five fields, named the same, as every judgments.jsonl and plan.jsonl line."""

    judge: str
    item_id: str
    kind: Kind
    condition: str  # for a tie-probe its target condition (`zh`)
    order: str  # `orig`/`swap`; for a tie-probe which language is shown first (`en_zh`, `zh_en`)

    def call(self) -> str:
        """The judge's call named in an outcome's failures: `Natural/0/pair/zh/swap`."""
        return "/".join((self.item_id, self.kind, self.condition, self.order))


class PlannedKey(BaseModel):
    """One planned call as `plan.jsonl` records it when the judge stage plans: the report counts planned
    calls that never got a record (an interrupted run is incomplete, not silently smaller)."""

    judge: str
    item_id: str
    kind: Kind
    condition: str
    order: str

    def key(self) -> CallKey:
        return CallKey(self.judge, self.item_id, self.kind, self.condition, self.order)


class UnitKey(NamedTuple):
    """An A-BB unit of a Judge-LS run: one item in one order (never joined into a string)."""

    item_id: str
    order: str


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0


class Perturbation(BaseModel):
    """What a bbe neighbour changed: the field and the label-preserving operation applied to it."""

    field: str
    operation: str


class Judgment(BaseModel):
    """One judge call and everything needed to trace the number it contributes to.

    Unknown fields are ignored on reading, so a file written by a newer release stays readable."""

    model_config = ConfigDict(extra="ignore")

    judge: str
    item_id: str
    subset: str
    kind: Kind
    condition: str
    order: str
    raw: str | None = None
    winner: Winner | None = None
    verdict: str | None = None
    parse_error: str | None = None
    error: str | None = None
    label: Label | None = None
    confidence: float | None = None
    reason: str | None = None
    # probabilities of the verdict tokens when the provider returns log-probabilities
    prob_a: float | None = None
    prob_b: float | None = None
    prob_tie: float | None = None
    model: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cache_key: str | None = None
    prompt_hash: str | None = None
    template: str | None = None
    finish_reason: str | None = None
    from_cache: bool | None = None
    # 0 for the first answer; N for the N-th re-ask of an unreadable one (judge --reask)
    reask: int = 0
    # set when the answer was longer than the stored-answer cap: its length before the cut, and the cap
    raw_chars: int | None = None
    raw_cap: int | None = None
    batch_id: str | None = None
    custom_id: str | None = None
    created_at: str | None = None
    # set on bbe's re-judged neighbours (bbe_neighbours.jsonl)
    perturbation: Perturbation | None = None

    def call_key(self) -> CallKey:
        """The identity of a planned call: a later line with the same key supersedes earlier ones."""
        return CallKey(self.judge, self.item_id, self.kind, self.condition, self.order)
