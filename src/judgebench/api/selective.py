"""`judgebench selective`: a cascade of a run's judges with a guarantee of agreement with humans
(PROTOCOL §8), calibrated on the run's human labels; and its label plan (`plan --human-labels
--selective-alpha`). Makes no call: every judgment is the run's (repeats from `judge --repeats K` are
more answers of the same item).

Files, written together into the run folder (or --out): selective.json (`SelectiveReport`),
selective.md (the section as Markdown, with the coverage plot selective_coverage.png),
selective_items.jsonl (every item: each judge's verdict and confidence, and who decides it), and the
items no judge kept: selective_escalated.jsonl (their text and each judge's verdict and confidence, to read)
and selective_to_label.csv (item_id, condition, label, annotator: fill in `label` and pass it as
--human next time).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgebench import __version__
from judgebench.api.datasets import run_folder
from judgebench.api.human import HumanBudgetRequest, HumanBudgetResult, plan_human_labels
from judgebench.api.report import _run_items
from judgebench.conditions import SOURCE
from judgebench.errors import ConfigError, InputError, RunDirError
from judgebench.human import known_pairs, load_human_labels
from judgebench.judge.units import is_repeat
from judgebench.records.clock import now_iso
from judgebench.records.numbers import USER_NUMBERS
from judgebench.records.sanitize import spreadsheet_cell
from judgebench.records.selective_document import (
    CascadeResult,
    ConfidenceMode,
    SelectiveBudget,
    SelectiveReport,
)
from judgebench.report.content import ReportMeta, Section
from judgebench.report.markdown_render import render_markdown
from judgebench.report.selective_section import (
    PLOT,
    PLOT_FILE,
    SELECTIVE_JSON,
    coverage_plot,
    selective_section,
)
from judgebench.selective import (
    MIN_KEPT,
    item_confidence,
    item_decisions,
    labels_needed,
    run_cascade,
    top_share_error,
)
from judgebench.store.atomic_files import atomic_write_many
from judgebench.store.judgment_table import read_judgment_table
from judgebench.store.run_folder import BBE_NEIGHBOURS, JUDGMENTS, RunDir

SELECTIVE_MD = "selective.md"
ESCALATED_JSONL = "selective_escalated.jsonl"
ITEMS_JSONL = "selective_items.jsonl"
TO_LABEL_CSV = "selective_to_label.csv"
GUARANTEE = (
    "on new items exchangeable with the labelled ones, the items the judges decide disagree with the "
    "humans' majority label at a rate of at most alpha."
)
ASSUMPTIONS = [
    "the labelled items and the items judged are exchangeable (drawn alike from one population; "
    "labels chosen at random among the run's items, not picked for being hard or easy)",
    "the humans' majority label is the reference (items whose annotators split evenly are left out)",
    "the judges' answers do not change between calibration and use (same models, template, settings)",
    "the cascade holds when every stage holds: each stage fails with probability at most its delta, "
    "so the cascade with probability at most the sum (split: delta)",
]


class SelectiveRequest(BaseModel):
    model_config = USER_NUMBERS

    human: Path  # the human labels (JSONL/CSV, `report --human`'s format)
    cascade: list[str] = Field(min_length=1)  # judges in cost order, cheapest first
    alpha: float = Field(default=0.15, gt=0.0, lt=1.0)
    delta: float = Field(default=0.1, gt=0.0, lt=1.0)
    min_kept: int = Field(default=MIN_KEPT, ge=1)
    split_delta: bool = True  # delta / K per stage, so the cascade holds at 1 - delta
    confidence: ConfidenceMode = "auto"
    repeats: bool = True  # fold `judge --repeats K` answers into the source condition's items
    level: float = Field(default=0.95, gt=0.0, lt=1.0)  # of the observed agreement's interval
    min_coverage: float | None = Field(default=None, ge=0.0, le=1.0)  # the CI gate
    out: Path | None = None

    @model_validator(mode="after")
    def _distinct(self) -> SelectiveRequest:
        twice = sorted({j for j in self.cascade if self.cascade.count(j) > 1})
        if twice:
            raise ConfigError(f"--cascade names {', '.join(twice)} twice: each judge is one stage")
        return self


class SelectiveResult(BaseModel):
    """The cascades (`report`, as selective.json holds it), the files written, the section the CLI draws."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    report: SelectiveReport
    files: list[Path]
    sections: list[Section]

    @property
    def gate_failed(self) -> bool:
        return self.report.gate_failed


_COLUMNS = [
    "judge",
    "item_id",
    "kind",
    "condition",
    "order",
    "verdict",
    "prob_a",
    "prob_b",
    "prob_tie",
    "cost_usd",
]


def _answers(run: RunDir, repeats: bool) -> pd.DataFrame:
    """The run's pair answers (and its repeats, as more answers of the source condition's items)."""
    path = run.file(JUDGMENTS)
    if not path.exists():
        raise RunDirError(f"{path} does not exist: run `judgebench judge --run {run.path}` first")
    frame = read_judgment_table(path).frame
    parts = [frame[frame["kind"] == "pair"][_COLUMNS]]
    extra = run.file(BBE_NEIGHBOURS)
    if repeats and extra.exists():
        more = read_judgment_table(extra).frame
        more = more[(more["kind"] == "pair") & more["condition"].map(is_repeat)][_COLUMNS]
        parts.append(more.assign(condition=SOURCE))
    return pd.concat(parts, ignore_index=True)


def _check_cascade(answers: pd.DataFrame, cascade: Sequence[str], path: Path) -> None:
    judges = sorted(set(answers["judge"]))
    unknown = [j for j in cascade if j not in judges]
    if unknown:
        raise InputError(
            f"--cascade judge(s) {', '.join(unknown)} not in the run (its judges: {', '.join(judges)})",
            path=str(path),
        )


def _to_label_csv(cascades: Sequence[CascadeResult]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["item_id", "condition", "label", "annotator"])
    for c in cascades:
        for e in c.escalated:
            if not e.labelled:
                writer.writerow([spreadsheet_cell(e.item_id), spreadsheet_cell(e.condition), "", ""])
    return buffer.getvalue()


def _escalated_jsonl(run: RunDir, cascades: Sequence[CascadeResult]) -> str:
    """Each escalated item with its text where the run's variants or dataset hold it (else ids alone)."""
    texts: dict[tuple[str, str], dict[str, str]] = {}
    wanted = {(e.item_id, e.condition) for c in cascades for e in c.escalated}
    if not wanted:
        return ""
    for item in _run_items(run):
        texts[(item.id, SOURCE)] = {
            "instruction": item.instruction,
            "output_1": item.output_1,
            "output_2": item.output_2,
        }
    for variant in run.variants().latest().values():
        texts[(variant.item_id, variant.condition)] = {
            "instruction": variant.instruction,
            "output_1": variant.output_1,
            "output_2": variant.output_2,
        }
    lines = []
    for c in cascades:
        for e in c.escalated:
            record = {**e.model_dump(mode="json"), **texts.get((e.item_id, e.condition), {})}
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)


def selective(run_path: str | Path | RunDir, request: SelectiveRequest) -> SelectiveResult:
    """Calibrate the cascade on the run's human labels, apply it to every item, write the files."""
    req = request
    run = run_folder(run_path)
    answers = _answers(run, req.repeats)
    _check_cascade(answers, req.cascade, run.file(JUDGMENTS))
    labels = load_human_labels(req.human, known=known_pairs(answers))
    reference = labels.majority()
    items = item_confidence(answers[answers["judge"].isin(req.cascade)], req.confidence)
    delta_stage = req.delta / len(req.cascade) if req.split_delta else req.delta
    cascades = [
        run_cascade(
            items,
            reference,
            req.cascade,
            condition,
            alpha=req.alpha,
            delta_stage=delta_stage,
            min_kept=req.min_kept,
            confidence=req.level,
        )
        for condition in labels.conditions
    ]
    gate_failed = req.min_coverage is not None and any(c.coverage < req.min_coverage for c in cascades)
    report = SelectiveReport(
        run=str(run.path),
        labels_file=str(req.human),
        cascade=list(req.cascade),
        alpha=req.alpha,
        delta=req.delta,
        delta_per_stage=delta_stage,
        split_delta=req.split_delta,
        min_kept=req.min_kept,
        confidence_mode=req.confidence,
        guarantee=GUARANTEE,
        assumptions=ASSUMPTIONS,
        cascades=cascades,
        min_coverage=req.min_coverage,
        gate_failed=gate_failed,
    )
    decisions = "".join(
        d.model_dump_json() + "\n" for c in cascades for d in item_decisions(items, c, reference)
    )
    files = write_selective(req.out or run.path, run, report, decisions)
    return SelectiveResult(report=report, files=files, sections=[selective_section(report)])


def write_selective(out: Path, run: RunDir, report: SelectiveReport, decisions: str) -> list[Path]:
    """The files as one atomic set; `decisions`: selective_items.jsonl's lines."""
    plot = coverage_plot(report)
    meta = ReportMeta(
        run=report.run, generated_at=now_iso(), version=__version__, title="judgebench selective"
    )
    markdown = render_markdown([selective_section(report)], {PLOT: PLOT_FILE} if plot else {}, meta)
    files: dict[Path, bytes] = {
        out / SELECTIVE_JSON: (json.dumps(report.model_dump(mode="json"), indent=2) + "\n").encode(),
        out / SELECTIVE_MD: markdown.encode(),
        out / ITEMS_JSONL: decisions.encode(),
        out / ESCALATED_JSONL: _escalated_jsonl(run, report.cascades).encode(),
        out / TO_LABEL_CSV: _to_label_csv(report.cascades).encode(),
    }
    if plot is not None:
        files[out / PLOT_FILE] = plot
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_many(files)
    return list(files)


PLAN_NOTE = (
    "selective: the labels for a judge to keep the stated share of the items at a guaranteed agreement "
    "of 1 - alpha with probability 1 - delta (one judge alone; a later stage of a cascade sees only what "
    "the earlier left, so it needs more); from a pilot, the disagreement among its most confident items "
    "at that share (itself uncertain on a small pilot: label a little more than the table says)"
)


def selective_label_plan(
    alpha: float, delta: float, coverage: float, *, kept_error: float | None, pilot: tuple[Path, Path] | None
) -> list[SelectiveBudget]:
    """`plan --human-labels --selective-alpha`: per judge and condition of a pilot (run, labels), or
    from an assumed disagreement on the kept items."""
    rows = []
    if pilot is not None:
        run = run_folder(pilot[0])
        answers = _answers(run, repeats=True)
        labels = load_human_labels(pilot[1], known=known_pairs(answers))
        reference = labels.majority()
        items = item_confidence(answers, "auto")
        for (judge, condition), group in items.groupby(["judge", "condition"], sort=True):
            human = [reference.get((i, str(condition))) for i in group["item_id"]]
            keep = [h is not None for h in human]
            if not any(keep):
                continue
            wrong = (group["verdict"].to_numpy(dtype=object) != pd.Series(human, dtype=object).to_numpy())[
                keep
            ]
            error, _ = top_share_error(group["confidence"].to_numpy(dtype=float)[keep], wrong, coverage)
            rows.append(
                SelectiveBudget(
                    judge=str(judge),
                    condition=str(condition),
                    basis=f"pilot: {sum(keep)} labelled items",
                    alpha=alpha,
                    delta=delta,
                    coverage=coverage,
                    kept_error=error,
                    labels=labels_needed(alpha=alpha, delta=delta, coverage=coverage, error=error),
                )
            )
    if kept_error is not None:
        rows.append(
            SelectiveBudget(
                judge=None,
                condition=None,
                basis="assumed",
                alpha=alpha,
                delta=delta,
                coverage=coverage,
                kept_error=kept_error,
                labels=labels_needed(alpha=alpha, delta=delta, coverage=coverage, error=kept_error),
            )
        )
    return rows


def plan_labels(request: HumanBudgetRequest) -> HumanBudgetResult:
    """`plan --human-labels`: the win rate's label budget, and with `selective_alpha` the labels for
    selective judging (`selective_label_plan`); makes no call."""
    result = plan_human_labels(request)
    if request.selective_alpha is None:
        return result
    pilot = (request.run, request.human) if request.run is not None and request.human is not None else None
    rows = selective_label_plan(
        request.selective_alpha,
        request.selective_delta,
        request.coverage,
        kept_error=request.kept_error,
        pilot=pilot,
    )
    return result.model_copy(update={"selective": rows, "assumptions": [*result.assumptions, PLAN_NOTE]})
