"""Typed records shared by every stage.

Each file a user opens (variants, audit, judgments, metrics, bbe) is one of these models serialised
one per line (JSONL) or as an array; their JSON is the contract of docs/INTERFACE.md.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Label = Literal[1, 2]
Kind = Literal["pair", "tie_probe"]
Winner = Literal["A", "B", "Tie", "invalid"]
TEXT_FIELDS: tuple[str, str, str] = ("instruction", "output_1", "output_2")


class Item(BaseModel):
    """One pairwise item: which of two outputs follows the instruction better (label 1 or 2)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    subset: str
    instruction: str
    output_1: str
    output_2: str
    label: Label | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Variant(BaseModel):
    """An item rewritten in one condition (zh, ls, ...). The `en` condition is the item itself."""

    model_config = ConfigDict(extra="forbid")

    item_id: str
    condition: str
    instruction: str
    output_1: str
    output_2: str
    # provenance: "import:<file>", "model:<spec>", "bundled"; None for user files that omit it
    source: str | None = None


class TranslationFailure(BaseModel):
    """An item the translator could not produce a valid variant for, kept with its reason."""

    item_id: str
    conditions: list[str]
    reason: str
    attempts: int


class AuditFlag(BaseModel):
    """One audit finding for an item, condition and field (rule names: INTERFACE.md)."""

    item_id: str
    condition: str
    field: Literal["instruction", "output_1", "output_2"]
    rule: str
    detail: str


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0


class Judgment(BaseModel):
    """One judge call and everything needed to trace the number it contributes to."""

    model_config = ConfigDict(extra="allow")

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
    batch_id: str | None = None
    custom_id: str | None = None
    created_at: str | None = None

    def call_key(self) -> tuple[str, str, str, str, str]:
        """The identity of a planned call: a later line with the same key supersedes earlier ones."""
        return (self.judge, self.item_id, self.kind, self.condition, self.order)


class MetricRecord(BaseModel):
    """One number of the report with its n and interval (or p). Extra fields are welcome."""

    model_config = ConfigDict(extra="allow")

    judge: str
    metric: str
    condition: str
    subset: str
    filtered: bool
    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    p: float | None = None
