"""The library: every stage as one function over a run folder, each taking a typed request and
returning a typed result. The CLI parses flags, calls one of these and renders what it returns;
tests and notebooks call them directly.

    translate() -> judge() -> report(), bbe();  run_pipeline() does all four (on one RunDir);
    plan_study() before them;  run_selftest() on planted biases;  compare_runs() for the drift
    between two runs.

A stage takes the run folder (a path, or the caller's `RunDir`, whose reads it shares), its typed
request and a `CallOptions` (the flags' provider settings as one `SettingsOverrides`, the cache, the
lock; the command's judges resolved once). This package is the only stage orchestrator: nothing
below it imports it. Importing it loads the library (pandas, pyarrow, pydantic); the CLI imports it
inside each command's function, so that `--help` does not.
"""

from __future__ import annotations

from judgebench.analysis import ReportSettings
from judgebench.api.bbe import BBEOutcome, BBERequest, PerturbRequest, bbe, bbe_estimate
from judgebench.api.compare import CompareRequest, CompareResult, compare_runs
from judgebench.api.data import DatasetList, cache_clear, cache_info, list_datasets, show_dataset
from judgebench.api.datasets import open_dataset, run_folder
from judgebench.api.human import HumanBudgetRequest, HumanBudgetResult, agreement_flag, plan_human_labels
from judgebench.api.imports import ImportResult, import_judgments, import_llmbar_results
from judgebench.api.judge import JudgeRequest, JudgeResult, judge
from judgebench.api.options import CallOptions
from judgebench.api.pipeline import PipelineRequest, PipelineResult, run_pipeline
from judgebench.api.plan import PlanRequest, PlanResult, plan_study
from judgebench.api.report import (
    ReadinessDoc,
    ReportRequest,
    ReportResult,
    analyze_human,
    analyze_run,
    report,
)
from judgebench.api.selective import SelectiveRequest, SelectiveResult, plan_labels, selective
from judgebench.api.selftest import Check, SelftestResult, run_selftest
from judgebench.api.stage_requests import build_request
from judgebench.api.study import Study, parse_conditions
from judgebench.api.translate import TranslateRequest, TranslateResult, translate
from judgebench.bbe.engine import BBEParams, JitterSpec
from judgebench.bbe.mechanism import Centre
from judgebench.costing.estimate import Estimate
from judgebench.data import Dataset
from judgebench.execution import Execution
from judgebench.human import HumanLabels, HumanReport, LabelBudget, load_human_labels
from judgebench.importers.importer_registry import Importer, importers
from judgebench.importers.llmbar_results import ImportSummary
from judgebench.models import JudgeSpec, SettingsOverrides
from judgebench.report.content import Cell as ReportCell
from judgebench.report.content import Section as ReportSection
from judgebench.report.content import Table as ReportTable
from judgebench.translate.translator import TranslatorSettings

__all__ = [
    "BBEOutcome",
    "BBEParams",
    "BBERequest",
    "CallOptions",
    "Centre",
    "Check",
    "CompareRequest",
    "CompareResult",
    "Dataset",
    "DatasetList",
    "Estimate",
    "Execution",
    "HumanBudgetRequest",
    "HumanBudgetResult",
    "HumanLabels",
    "HumanReport",
    "ImportResult",
    "ImportSummary",
    "Importer",
    "JitterSpec",
    "JudgeRequest",
    "JudgeResult",
    "JudgeSpec",
    "LabelBudget",
    "PerturbRequest",
    "PipelineRequest",
    "PipelineResult",
    "PlanRequest",
    "PlanResult",
    "ReadinessDoc",
    "ReportCell",
    "ReportRequest",
    "ReportResult",
    "ReportSection",
    "ReportSettings",
    "ReportTable",
    "SelectiveRequest",
    "SelectiveResult",
    "SelftestResult",
    "SettingsOverrides",
    "Study",
    "TranslateRequest",
    "TranslateResult",
    "TranslatorSettings",
    "agreement_flag",
    "analyze_human",
    "analyze_run",
    "bbe",
    "bbe_estimate",
    "build_request",
    "cache_clear",
    "cache_info",
    "compare_runs",
    "import_judgments",
    "import_llmbar_results",
    "importers",
    "judge",
    "list_datasets",
    "load_human_labels",
    "open_dataset",
    "parse_conditions",
    "plan_human_labels",
    "plan_labels",
    "plan_study",
    "report",
    "run_folder",
    "run_pipeline",
    "run_selftest",
    "selective",
    "show_dataset",
    "translate",
]
