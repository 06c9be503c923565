"""The report's numbers: every PROTOCOL §4 metric with intervals, tests, bootstrap and readiness verdicts."""

from __future__ import annotations

from judgebench.analysis.metrics import (
    Analysis,
    JudgeSummary,
    ReadinessVerdict,
    ReportSettings,
    analyze,
    analyze_run,
)
from judgebench.analysis.readiness import assess_readiness

__all__ = [
    "Analysis",
    "JudgeSummary",
    "ReadinessVerdict",
    "ReportSettings",
    "analyze",
    "analyze_run",
    "assess_readiness",
]
