"""Items and what is made of them before judging: variants, translation failures, audit flags."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Label = Literal[1, 2]
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
