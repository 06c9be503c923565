"""The report's numbers: every PROTOCOL §4 metric with intervals, tests, bootstrap and readiness verdicts.

`analyze` (pipeline.py) is the pure entry: judgments in, an `Analysis` out; no module here reads
or writes a file (the api layer reads the run folder: `judgebench.api.analyze_run`).
"""

from __future__ import annotations

from judgebench.analysis.findings import (
    Analysis,
    Completeness,
    JudgeSummary,
    ReadinessVerdict,
    ReportSettings,
)
from judgebench.analysis.readiness_checks import assess_readiness
from judgebench.analysis.record_pipeline import analyze

__all__ = [
    "Analysis",
    "Completeness",
    "JudgeSummary",
    "ReadinessVerdict",
    "ReportSettings",
    "analyze",
    "assess_readiness",
]
