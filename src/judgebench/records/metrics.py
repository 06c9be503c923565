"""The report's numbers as records: one metric of one judge, condition, subset and table."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
