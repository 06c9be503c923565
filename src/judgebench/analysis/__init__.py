"""The report's numbers: every PROTOCOL §4 metric with intervals, tests, bootstrap and readiness verdicts.

`analyze` (pipeline.py) is the pure entry: judgments in, an `Analysis` out. `analyze_run`
(run_inputs.py) reads a run folder for it; `import_llmbar_results` writes judgments from LLMBar's
published verdicts. Both do file I/O and are on their way to the api layer.
"""

from __future__ import annotations

from judgebench.analysis.llmbar_import import import_llmbar_results
from judgebench.analysis.model import Analysis, JudgeSummary, ReadinessVerdict, ReportSettings
from judgebench.analysis.pipeline import analyze
from judgebench.analysis.readiness import assess_readiness
from judgebench.analysis.run_inputs import analyze_run

__all__ = [
    "Analysis",
    "JudgeSummary",
    "ReadinessVerdict",
    "ReportSettings",
    "analyze",
    "analyze_run",
    "assess_readiness",
    "import_llmbar_results",
]
