"""The report stage: every metric of the run's judgments, written as metrics.json/.csv, report.md/.html."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from judgebench.analysis import Analysis, ReportSettings, analyze
from judgebench.analysis.readiness import assess_readiness
from judgebench.api.datasets import run_folder
from judgebench.api.requests import build_request
from judgebench.errors import RunDirError
from judgebench.fileio import atomic_write_json
from judgebench.records import AuditFlag, Judgment, PlannedKey
from judgebench.records.manifest import ReportStage, SequentialStop
from judgebench.report.writer import ReportPaths, write_report
from judgebench.rundir import AUDIT, JUDGMENTS, PLAN, READINESS_JSON, RunDir, last_per_key, read_jsonl


def analyze_run(run_dir: str | Path | RunDir, settings: ReportSettings | None = None) -> Analysis:
    """Every metric of a run folder: the last line per call key of judgments.jsonl, the audit flags,
    and pairs named (zh->ls) in the order the run's translate stage recorded."""
    run = RunDir(run_dir)
    path = run.file(JUDGMENTS)
    if not path.exists():
        raise RunDirError(f"{path} does not exist: run `judgebench judge --run {run.path}` first")
    judgments = last_per_key(read_jsonl(path, Judgment), lambda j: j.call_key())
    flagged = {flag.item_id for flag in read_jsonl(run.file(AUDIT), AuditFlag)}
    translated = run.manifest().stages.translate
    order = translated.condition_names() if translated else None
    plan_file = run.file(PLAN)
    planned = {p.key() for p in read_jsonl(plan_file, PlannedKey)} if plan_file.exists() else None
    analysis = analyze(
        judgments.values(),
        flagged_items=flagged,
        settings=settings,
        condition_order=order or None,
        planned=planned,
    )
    stage = run.manifest().stages.judge if run.exists() else None
    return with_stops(analysis, stage.stops if stage else {})


def with_stops(analysis: Analysis, stops: Mapping[str, SequentialStop]) -> Analysis:
    """`judge --until-settled`: a judge it stopped because settled (or out of items) is a complete
    stage and its verdicts say where and why, with the anytime-valid intervals beside the fixed-n
    ones; a judge still `running` or `interrupted` makes the run incomplete (no pass)."""
    if not stops:
        return analysis
    unfinished = sorted(name for name, stop in stops.items() if not stop.final)
    verdicts = analysis.readiness
    if unfinished:
        verdicts = assess_readiness(analysis.records, analysis.settings, complete=False)
    out = []
    for v in verdicts:
        stop = stops.get(v.judge)
        if stop is not None:
            v = v.model_copy(update={"reasons": [*v.reasons, stop_reason(stop)]})
        out.append(v)
    return analysis.model_copy(update={"readiness": out, "unfinished_judges": unfinished})


def stop_reason(stop: SequentialStop) -> str:
    level = f"{100.0 * stop.confidence:g}%"
    intervals = "; ".join(
        f"{c.name} {_num(c.low)} to {_num(c.high)} (n = {c.n}, {c.state})" for c in stop.checks if c.n
    )
    where = f"after {stop.items} of {stop.items_total} items ({stop.calls} of {stop.calls_full} calls)"
    return f"until-settled: {stop.reason} {where}; anytime-valid {level} intervals: {intervals}"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


class ReadinessDoc(BaseModel):
    """readiness.json (INTERFACE.md): machine-readable verdicts, for a pipeline to stop on."""

    complete: bool
    plan_known: bool
    planned: int
    never_made: int
    failed: int
    verdicts: list[dict[str, Any]]
    # judge --until-settled: where and why each judge stopped (absent for a fixed-design run)
    stops: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @classmethod
    def of(cls, analysis: Analysis, stops: Mapping[str, SequentialStop] | None = None) -> ReadinessDoc:
        done = analysis.completeness
        verdicts = [
            {
                "judge": v.judge,
                "condition": v.condition,
                "verdict": v.status,
                "baseline": v.baseline,
                "invariance": v.invariance,
                "reasons": v.reasons,
            }
            for v in analysis.readiness
        ]
        return cls(
            complete=done.complete and not analysis.unfinished_judges,
            stops={name: stop.model_dump(mode="json") for name, stop in (stops or {}).items()},
            plan_known=done.plan_known,
            planned=done.planned,
            never_made=done.never_made,
            failed=done.failed,
            verdicts=verdicts,
        )

    def gate(self, strict: bool) -> Literal["pass", "fail", "unsettled"]:
        """`report --gate`: fail on any fail verdict; strict also on incomplete or inconclusive."""
        statuses = {v["verdict"] for v in self.verdicts}
        if "fail" in statuses:
            return "fail"
        if strict and (not self.complete or "inconclusive" in statuses or not self.verdicts):
            return "unsettled"
        return "pass"


class ReportRequest(BaseModel):
    """What `judgebench report` asks for: the report's settings and whether to write the HTML."""

    model_config = ConfigDict(extra="forbid")

    settings: ReportSettings = Field(default_factory=ReportSettings)
    html: bool = True


class ReportResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    analysis: Analysis
    paths: ReportPaths
    readiness: ReadinessDoc
    readiness_json: Path


def report(
    run_dir: str | Path,
    request: ReportRequest | None = None,
    *,
    console: Console | None = None,
    **fields: Any,
) -> ReportResult:
    """Compute every metric of the run's judgments and write metrics.json/.csv, report.md/.html;
    with a console, print the terminal tables there too."""
    req = build_request(ReportRequest, request, fields)
    run = run_folder(run_dir)
    if not run.path.is_dir():
        raise RunDirError(f"run folder {run.path} does not exist")
    run.require(JUDGMENTS, "run `judgebench judge` (or `judgebench import llmbar-results`) first")
    analysis = analyze_run(run, req.settings)
    paths = write_report(run, analysis, console, html=req.html)
    stage = run.manifest().stages.judge if run.exists() else None
    readiness = ReadinessDoc.of(analysis, stage.stops if stage else None)
    atomic_write_json(run.file(READINESS_JSON), readiness.model_dump(mode="json"))
    if run.exists():
        entry = ReportStage(
            settings=req.settings.model_dump(),
            records=len(analysis.records),
            outputs=[str(p) for p in paths.all()],
        )
        run.record_stage("report", entry)
    return ReportResult(
        analysis=analysis, paths=paths, readiness=readiness, readiness_json=run.file(READINESS_JSON)
    )
