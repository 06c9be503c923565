"""`judgebench compare RUN_A RUN_B`: did the judge change between two runs over the same items?

Reads each run's judgments through its run folder (`judgments.jsonl` as judgment_table's columns,
the condition order from the manifest), pairs them unit by unit (`compare.pairing`), measures the
drift and applies the gate (`compare.drift`), and writes compare.json, compare.md and the changed
units into the output folder (`compare.outputs`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from judgebench import __version__
from judgebench.analysis.findings import ReportSettings
from judgebench.analysis.record_pipeline import analyze_table
from judgebench.api.datasets import run_folder
from judgebench.compare.changes import changed_mask, changed_units
from judgebench.compare.compare_doc import (
    ChangedUnit,
    CompareDoc,
    DatasetRef,
    Drift,
    GateSettings,
    JudgeMatch,
)
from judgebench.compare.compare_files import CHANGED_JSONL, write_compare
from judgebench.compare.compare_sections import compare_sections
from judgebench.compare.drift import apply_gate, drift_rows
from judgebench.compare.metric_changes import metric_changes
from judgebench.compare.pairing import Side, match_judges, pair_runs
from judgebench.config import defaults
from judgebench.errors import InputError, RunDirError
from judgebench.records import MetricRecord
from judgebench.records.clock import now_iso
from judgebench.records.manifest import DatasetEntry
from judgebench.records.numbers import USER_NUMBERS, Share
from judgebench.report.content import Section
from judgebench.store.judgment_table import JudgmentTable, read_judgment_table
from judgebench.store.run_folder import JUDGMENTS, REPORT_HTML, RunDir

Alpha = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]


class CompareRequest(BaseModel):
    """What `judgebench compare` asks for: the judges to pair (empty: by name, or one each), the gate's
    limits (None: no gate), the intervals' level and where the files go (None: RUN_B/compare-<A>)."""

    model_config = USER_NUMBERS

    judge_a: list[str] = Field(default_factory=list)
    judge_b: list[str] = Field(default_factory=list)
    gate: Share | None = None
    gate_mcnemar: Alpha | None = None
    confidence: Annotated[float, Field(ge=0.5, le=0.999, allow_inf_nan=False)] = defaults.COMPARE_CONFIDENCE
    out: Path | None = None
    # compare runs whose manifests record different datasets (ids that merely coincide), said so
    allow_different_datasets: bool = False
    # also each declared compare metric in both runs (each run's own analysis: about the cost of a
    # report's, many times the drift rows'; scripts/bench_compare_metrics.py)
    metrics: bool = False


class CompareResult(BaseModel):
    """The comparison (`doc`, as compare.json holds it), the files written, and the sections the CLI
    draws."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    doc: CompareDoc
    out: Path
    files: list[Path]
    changes: list[ChangedUnit]
    sections: list[Section]

    @property
    def gate_failed(self) -> bool:
        return self.doc.gate_failed


def _side(run: RunDir, which: str) -> tuple[Side, JudgmentTable]:
    """A run's judgments; a missing folder, a run never judged, or an empty log is an error naming it."""
    if not run.path.is_dir():
        raise RunDirError(f"run {which}: {run.path} does not exist (or is not a folder)")
    path = run.file(JUDGMENTS)
    if not path.exists():
        raise RunDirError(
            f"run {which}: {path} does not exist: run `judgebench judge --run {run.path}` first"
        )
    table = read_judgment_table(path)
    if table.frame.empty:
        raise RunDirError(f"run {which}: {path} holds no judgments: nothing to compare")
    return Side(table.frame, str(path)), table


def _condition_order(*runs: RunDir) -> list[str]:
    """The conditions in the order the runs' translate stages recorded (en first), A's then B's."""
    order = ["en"]
    for run in runs:
        stage = run.manifest().stages.translate if run.exists() else None
        order += [c for c in (stage.condition_names() if stage else []) if c not in order]
    return order


def _report_link(run: RunDir, out: Path) -> str | None:
    """A run's report.html relative to the output folder (its explorer's rows are linked from each
    changed unit), or None when the run has no report."""
    report = run.file(REPORT_HTML)
    if not report.exists():
        return None
    return Path(os.path.relpath(report.resolve(), out.resolve())).as_posix()


def _notes(matches: list[JudgeMatch], a: Side, b: Side) -> list[str]:
    notes = []
    for m in matches:
        if m.how == "one judge each":
            notes.append(
                f"The runs share no judge name; their one judge each is compared: `{m.judge_a}` (A) with "
                f"`{m.judge_b}` (B). Name others with --judge-a/--judge-b."
            )
    skipped_a = sorted(set(a.judges()) - {m.judge_a for m in matches})
    skipped_b = sorted(set(b.judges()) - {m.judge_b for m in matches})
    if skipped_a or skipped_b:
        notes.append(
            f"Judges not compared: A {', '.join(skipped_a) or 'none'}; B {', '.join(skipped_b) or 'none'}."
        )
    return notes


def _dataset(run: RunDir) -> tuple[DatasetRef, DatasetEntry | None]:
    manifest = run.load_manifest() if run.exists() else None
    entry = manifest.dataset if manifest is not None else None
    return DatasetRef(spec=entry.spec if entry else None, checksum=entry.checksum if entry else None), entry


def _dataset_notes(ra: RunDir, rb: RunDir, allow: bool) -> tuple[DatasetRef, DatasetRef, bool, list[str]]:
    """Both runs' datasets as their manifests record them. Different checksums mean different items,
    whatever their ids: refused, unless `allow` (then said in the notes). A run that records no
    dataset is matched by item id only, and the notes say so."""
    (ref_a, entry_a), (ref_b, entry_b) = _dataset(ra), _dataset(rb)
    notes = [
        f"Run {which} ({run.path}) records no dataset checksum: its items are matched by id only."
        for which, run, ref in (("A", ra, ref_a), ("B", rb, ref_b))
        if not ref.checksum
    ]
    if entry_a is None or entry_b is None or not (entry_a.checksum and entry_b.checksum):
        return ref_a, ref_b, False, notes
    if entry_a.same_data(entry_b) or entry_b.same_data(entry_a):
        return ref_a, ref_b, False, notes
    what = (
        f"run A's manifest records dataset '{entry_a.spec}' (checksum {entry_a.checksum[:12]}), run B's "
        f"'{entry_b.spec}' (checksum {entry_b.checksum[:12]})"
    )
    if not allow:
        raise InputError(
            f"{what}: different items, even where their ids coincide; compare runs over the same "
            "dataset, or pass --allow-different-datasets to pair their items by id anyway",
            path=f"{ra.manifest_path} and {rb.manifest_path}",
        )
    notes.insert(
        0,
        f"**Different datasets**: {what}; compared anyway (--allow-different-datasets), items paired "
        "by id: a change here may be a change of item, not of judge.",
    )
    return ref_a, ref_b, True, notes


def _unpaired_matches(matches: list[JudgeMatch], rows: list[Drift], gate: GateSettings) -> list[str]:
    """A matched judge pair with no pair unit in both runs has no row to gate: under a gate, no
    evidence is a failure, not a pass."""
    if gate.flip_rate is None and gate.mcnemar_alpha is None:
        return []
    seen = {(r.judge_a, r.judge_b) for r in rows if r.kind == "pair"}
    return [
        f"{m.label}: no evidence: no pair unit (item, condition, order) is in both runs"
        for m in matches
        if (m.judge_a, m.judge_b) not in seen
    ]


def metric_records(side: Side, judges: list[str], order: list[str], confidence: float) -> list[MetricRecord]:
    """The metric records of a run's matched judges (no bootstrap: compare reads values and n only)."""
    frame = side.frame[side.frame["judge"].isin(judges)]
    settings = ReportSettings(bootstrap_samples=0, confidence=confidence)
    return analyze_table(frame, settings=settings, condition_order=order).records


def compare_runs(
    run_a: str | Path | RunDir, run_b: str | Path | RunDir, req: CompareRequest
) -> CompareResult:
    """Compare two runs over the same items and write the comparison's files (see the module)."""
    ra, rb = run_folder(run_a), run_folder(run_b)
    a, table_a = _side(ra, "A")
    b, table_b = _side(rb, "B")
    dataset_a, dataset_b, different, dataset_notes = _dataset_notes(ra, rb, req.allow_different_datasets)
    matches = match_judges(a, b, req.judge_a, req.judge_b)
    units, coverage = pair_runs(a, b, matches)
    order = _condition_order(ra, rb)
    rows = drift_rows(units, order, req.confidence)
    gate = GateSettings(flip_rate=req.gate, mcnemar_alpha=req.gate_mcnemar)
    reasons = _unpaired_matches(matches, rows, gate) + apply_gate(rows, gate, req.confidence)
    out = req.out if req.out is not None else rb.path / f"compare-{ra.path.resolve().name}"
    changed = units[changed_mask(units)]
    changes = changed_units(
        units,
        table_a.records(int(x) for x in changed["line_a"]),
        table_b.records(int(x) for x in changed["line_b"]),
        _report_link(ra, out),
        _report_link(rb, out),
    )
    doc = CompareDoc(
        judgebench_version=__version__,
        generated_at=now_iso(),
        run_a=str(ra.path),
        run_b=str(rb.path),
        confidence=req.confidence,
        matches=matches,
        items_a=a.frame["item_id"].nunique(),
        items_b=b.frame["item_id"].nunique(),
        items_common=len(set(a.frame["item_id"]) & set(b.frame["item_id"])),
        conditions_a=sorted(set(a.frame["condition"])),
        conditions_b=sorted(set(b.frame["condition"])),
        coverage=coverage,
        dataset_a=dataset_a,
        dataset_b=dataset_b,
        different_datasets=different,
        drift=rows,
        metrics=metric_changes(
            metric_records(a, [m.judge_a for m in matches], order, req.confidence),
            metric_records(b, [m.judge_b for m in matches], order, req.confidence),
            matches,
        )
        if req.metrics
        else [],
        changed=len(changes),
        changed_file=CHANGED_JSONL,
        gate=gate,
        gate_failed=bool(reasons),
        gate_reasons=reasons,
        notes=dataset_notes + _notes(matches, a, b),
    )
    files = write_compare(out, doc, changes)
    return CompareResult(
        doc=doc, out=out, files=files, changes=changes, sections=compare_sections(doc, changes)
    )
