"""readiness.json (INTERFACE.md): the readiness verdicts as a machine-readable document, for a pipeline
to stop on. Built and read through these models; the JSON is the one INTERFACE.md describes:
`{"complete", "verdicts": [{"judge", "condition", "verdict", "baseline", "invariance", "reasons"}]}`
(each verdict also with `why`, the deciding reason per part), plus the plan counts, the
`--until-settled` stops and which intervals decided each judge. A file
written before a key existed reads with that key's default."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from judgebench.records.manifest import SequentialStop

Verdict = Literal["pass", "fail", "inconclusive"]
Intervals = Literal["fixed-n", "anytime-valid"]


class ReadinessEntry(BaseModel):
    """One verdict: a judge on a target condition (`en` for a judge judged in en only)."""

    model_config = ConfigDict(extra="ignore")

    judge: str
    condition: str
    verdict: Verdict
    baseline: Verdict = "inconclusive"  # the en part
    invariance: Verdict = "inconclusive"
    reasons: list[str] = Field(default_factory=list)
    # per part that did not pass, the one reason that decided it
    why: dict[str, str] = Field(default_factory=dict)


class ReadinessFile(BaseModel):
    """The whole document. `complete` is false when a planned call has no answer (or a judge
    `--until-settled` is still running); then no verdict is `pass`."""

    model_config = ConfigDict(extra="ignore")

    complete: bool
    plan_known: bool = False
    planned: int = 0
    never_made: int = 0
    failed: int = 0
    verdicts: list[ReadinessEntry] = Field(default_factory=list)
    # judge --until-settled: where and why each judge stopped (absent for a fixed-design run)
    stops: dict[str, SequentialStop] = Field(default_factory=dict)
    # per judge, which intervals decided its verdicts: the report's fixed-n ones, or the anytime-valid
    # confidence sequences' (a judge --until-settled stopped as settled)
    intervals: dict[str, Intervals] = Field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> ReadinessFile:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))

    def gate(self, strict: bool) -> Literal["pass", "fail", "unsettled"]:
        """`report --gate`: fail on any fail verdict; strict also on incomplete or inconclusive."""
        statuses = {v.verdict for v in self.verdicts}
        if "fail" in statuses:
            return "fail"
        if strict and (not self.complete or "inconclusive" in statuses or not self.verdicts):
            return "unsettled"
        return "pass"
