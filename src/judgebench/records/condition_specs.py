"""A language condition (configs/conditions.toml): what `translate` writes and `judge` reads."""

from __future__ import annotations

from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field


class ConditionAudit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_length_ratio: float = Field(default=0.10, ge=0, le=1)
    min_target_script_share: float = Field(default=0.5, ge=0, le=1)
    numbers_missing_min_source: int = Field(default=2, ge=0)
    numbers_count_max_diff: int = Field(default=3, ge=0)


class Condition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    language: str
    kind: Literal["translation", "language_switch", "probe"] = "translation"
    script: str = "Han"
    tie_probe: bool = False
    style: str = ""
    audit: ConditionAudit = ConditionAudit()
    # a probe condition (kind "probe", configs/probes/): the probe that made it, the condition it was
    # made from (`en`, `zh`, ...) and, for the template probe, the judge template its calls use
    probe: str | None = None
    base: str | None = None
    template: str | None = None


class ProbeOrigin(NamedTuple):
    """What made a probe condition: the probe (`length`, `template`) and the condition it was made
    from (`en`, `zh`); its flips are read against that condition."""

    probe: str
    base: str


PROBE_SEP = "+"  # a probe applied to a language: `zh+length` (on the source it is plain `length`)


def probe_condition(base: str, instance: str) -> str:
    """The condition name of probe instance `instance` applied to `base` (INTERFACE: `length` on en)."""
    return instance if base == "en" else f"{base}{PROBE_SEP}{instance}"
