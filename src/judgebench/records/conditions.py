"""A language condition (configs/conditions.toml): what `translate` writes and `judge` reads."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class ConditionAudit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_length_ratio: float = 0.10
    min_target_script_share: float = 0.5
    numbers_missing_min_source: int = 2
    numbers_count_max_diff: int = 3


class Condition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    language: str
    kind: Literal["translation", "language_switch"] = "translation"
    script: str = "Han"
    tie_probe: bool = False
    style: str = ""
    audit: ConditionAudit = ConditionAudit()
