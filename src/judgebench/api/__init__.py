"""The library: every stage as one function over a run folder, each taking a typed request and
returning a typed result. The CLI parses flags, calls one of these and renders what it returns;
tests and notebooks call them directly.

    translate() -> judge() -> report(), bbe();  run_pipeline() does all four (on one RunDir);
    plan_study() before them;  run_selftest() on planted biases;  compare_runs() for the drift
    between two runs.

A stage takes the run folder (a path, or the caller's `RunDir`, whose reads it shares), its typed
request and a `CallOptions` (the flags' provider settings as one `SettingsOverrides`, the cache, the
lock; the command's judges resolved once). This package is the only stage orchestrator: nothing
below it imports it.

The names below load with the module that defines them, on first use (PEP 562): `import
judgebench.api` loads neither pandas nor pyarrow nor pydantic, and `api.report(...)` loads what the
report needs and no more (`data list` does not pay for the analysis). `from judgebench.api import
report` works as before and is the function: `report`, `judge`, `bbe` and `translate` name both a
stage function and the submodule defining it, and the function wins, as it did when this package
imported every stage (`importlib.import_module("judgebench.api.report")` is the module).
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from judgebench.api.requests import build_request
    from judgebench.api.selective import SelectiveRequest, SelectiveResult, plan_labels, selective
    from judgebench.api.selftest import Check, SelftestResult, run_selftest
    from judgebench.api.translate import TranslateRequest, TranslateResult, translate
    from judgebench.bbe.engine import BBEParams, JitterSpec
    from judgebench.bbe.mechanism import Centre
    from judgebench.costing.estimate import Estimate
    from judgebench.data import Dataset
    from judgebench.execution import Execution
    from judgebench.human import HumanLabels, HumanReport, LabelBudget, load_human_labels
    from judgebench.importers.llmbar_results import ImportSummary
    from judgebench.importers.registry import Importer, importers
    from judgebench.models import JudgeSpec, SettingsOverrides
    from judgebench.report.model import Cell as ReportCell
    from judgebench.report.model import Section as ReportSection
    from judgebench.report.model import Table as ReportTable
    from judgebench.translate.translator import TranslatorSettings

# each public name: the module that defines it, where a name of this package's own submodules (a
# leading dot) or of the library's; and the name it has there where that differs. The names are those
# of the `if TYPE_CHECKING:` imports above (tests/architecture/test_startup_imports.py checks that the
# two agree, each name the very object the import would bind)
_HOME: dict[str, str] = {
    "ReportSettings": "judgebench.analysis",
    "BBEOutcome": ".bbe",
    "BBERequest": ".bbe",
    "PerturbRequest": ".bbe",
    "bbe": ".bbe",
    "bbe_estimate": ".bbe",
    "CompareRequest": ".compare",
    "CompareResult": ".compare",
    "compare_runs": ".compare",
    "DatasetList": ".data",
    "cache_clear": ".data",
    "cache_info": ".data",
    "list_datasets": ".data",
    "show_dataset": ".data",
    "open_dataset": ".datasets",
    "run_folder": ".datasets",
    "HumanBudgetRequest": ".human",
    "HumanBudgetResult": ".human",
    "agreement_flag": ".human",
    "plan_human_labels": ".human",
    "import_llmbar_results": ".imports",
    "import_judgments": ".imports",
    "ImportResult": ".imports",
    "JudgeRequest": ".judge",
    "JudgeResult": ".judge",
    "judge": ".judge",
    "CallOptions": ".options",
    "PipelineRequest": ".pipeline",
    "PipelineResult": ".pipeline",
    "run_pipeline": ".pipeline",
    "PlanRequest": ".plan",
    "PlanResult": ".plan",
    "plan_study": ".plan",
    "ReadinessDoc": ".report",
    "ReportRequest": ".report",
    "ReportResult": ".report",
    "analyze_human": ".report",
    "analyze_run": ".report",
    "report": ".report",
    "build_request": ".requests",
    "SelectiveRequest": ".selective",
    "SelectiveResult": ".selective",
    "selective": ".selective",
    "plan_labels": ".selective",
    "Check": ".selftest",
    "SelftestResult": ".selftest",
    "run_selftest": ".selftest",
    "TranslateRequest": ".translate",
    "TranslateResult": ".translate",
    "translate": ".translate",
    "BBEParams": "judgebench.bbe.engine",
    "JitterSpec": "judgebench.bbe.engine",
    "Centre": "judgebench.bbe.mechanism",
    "Estimate": "judgebench.costing.estimate",
    "Dataset": "judgebench.data",
    "ImportSummary": "judgebench.importers.llmbar_results",
    "Importer": "judgebench.importers.registry",
    "importers": "judgebench.importers.registry",
    "Execution": "judgebench.execution",
    "HumanLabels": "judgebench.human",
    "HumanReport": "judgebench.human",
    "LabelBudget": "judgebench.human",
    "load_human_labels": "judgebench.human",
    "JudgeSpec": "judgebench.models",
    "SettingsOverrides": "judgebench.models",
    "ReportCell": "judgebench.report.model",
    "ReportSection": "judgebench.report.model",
    "ReportTable": "judgebench.report.model",
    "TranslatorSettings": "judgebench.translate.translator",
}
_RENAMED = {"ReportCell": "Cell", "ReportSection": "Section", "ReportTable": "Table"}

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


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home, __name__), _RENAMED.get(name, name))
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])


class _Package(ModuleType):
    """This package's module type, for one rule: importing a stage's submodule (`judgebench.api.report`,
    which `api.report(...)` and `api.run_pipeline(...)` do) must not rebind the stage's name to the
    module, as Python's import system would (it sets each submodule it loads on its parent). The
    stage function keeps the name; the module is `sys.modules["judgebench.api.report"]`."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and _HOME.get(name) == f".{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
