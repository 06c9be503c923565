"""The report stage: every metric of the run's judgments, written as metrics.json/.csv, report.md/.html."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from judgebench.analysis import Analysis, ReportSettings, analyze
from judgebench.api.datasets import run_folder
from judgebench.api.requests import build_request
from judgebench.errors import RunDirError
from judgebench.fileio import atomic_write_json
from judgebench.records import AuditFlag, Judgment, PlannedKey
from judgebench.records.manifest import ReportStage
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
    return analyze(
        judgments.values(),
        flagged_items=flagged,
        settings=settings,
        condition_order=order or None,
        planned=planned,
    )


class ReadinessDoc(BaseModel):
    """readiness.json (INTERFACE.md): machine-readable verdicts, for a pipeline to stop on."""

    complete: bool
    plan_known: bool
    planned: int
    never_made: int
    failed: int
    verdicts: list[dict[str, Any]]

    @classmethod
    def of(cls, analysis: Analysis) -> ReadinessDoc:
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
            complete=done.complete,
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
    # another `report` writing this run: wait for it (False: refuse at once)
    wait_lock: bool = False


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
    with run.lock("report", wait=req.wait_lock):  # one writer of the report files at a time
        paths = write_report(run, analysis, console, html=req.html)
        readiness = ReadinessDoc.of(analysis)
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
