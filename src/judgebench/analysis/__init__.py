"""The report's numbers: every PROTOCOL §4 metric with intervals, tests, bootstrap and readiness verdicts.

`analyze` (pipeline.py) is the pure entry: judgments in, an `Analysis` out; no module here reads
or writes a file (the api layer reads the run folder: `judgebench.api.analyze_run`).
"""

from __future__ import annotations

from judgebench.analysis.model import Analysis, Completeness, JudgeSummary, ReadinessVerdict, ReportSettings
from judgebench.analysis.pipeline import analyze
from judgebench.analysis.readiness import assess_readiness

__all__ = [
    "Analysis",
    "Completeness",
    "JudgeSummary",
    "ReadinessVerdict",
    "ReportSettings",
    "analyze",
    "assess_readiness",
]
