"""The report stage: every metric of the run's judgments, written as metrics.json/.csv, report.md/.html."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from judgebench.analysis import Analysis, ReportSettings
from judgebench.analysis.findings import SOURCE
from judgebench.analysis.length_artefact import Lengths, output_lengths
from judgebench.analysis.length_preference import longer_sides
from judgebench.analysis.record_pipeline import AnalysisInputs, analyze_inputs
from judgebench.analysis.self_preference_test import SelfPreferenceInputs
from judgebench.analysis.stats import preload as preload_statistics
from judgebench.api.datasets import load_run_dataset, run_folder
from judgebench.api.human import human_for_run, run_human_labels
from judgebench.api.leaderboard import leaderboard_weights
from judgebench.api.options import CallOptions
from judgebench.api.stages import Stage, run_stage
from judgebench.conditions import load_conditions
from judgebench.data import LLMBAR_SPEC
from judgebench.data.llmbar import cache_root as llmbar_cache_root
from judgebench.errors import JudgebenchError, RunDirError
from judgebench.human import HumanReport
from judgebench.models.family_table import load_family_table
from judgebench.models.judge_family import judge_family
from judgebench.probes.lengths import length_categories
from judgebench.probes.probe_registry import load_probes
from judgebench.progress import ProgressReporter
from judgebench.records import AuditFlag, Item, Variant
from judgebench.records.condition_specs import ProbeOrigin
from judgebench.records.family_names import answer_models
from judgebench.records.manifest import ReportStage, SequentialStop
from judgebench.records.metrics import SOURCE_HEADLINE_PREFIX, MetricRecord
from judgebench.records.readiness_document import ReadinessEntry, ReadinessFile
from judgebench.report.explorer import ROW_LIMIT, ExplorerData, ItemTexts, unstable_records
from judgebench.report.output_formats import Need, needs_of
from judgebench.report.writer import ReportPaths, write_report
from judgebench.store.answers_log import paused_gc
from judgebench.store.atomic_files import atomic_write_text
from judgebench.store.jsonl_columns import selected_records
from judgebench.store.judgment_table import (
    JudgmentTable,
    judgment_table,
    read_judgment_table,
    read_plan_table,
)
from judgebench.store.run_folder import (
    AUDIT,
    JUDGMENTS,
    PLAN,
    READINESS_JSON,
    VARIANTS,
    RunDir,
    read_jsonl,
)


class _RunInputs(BaseModel):
    """What the report reads from a run folder, read once for the analysis and the item explorer:
    the judgments as columns (whole records are read again only for the rows the page shows)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    table: JudgmentTable = Field(default_factory=lambda: judgment_table([]))
    audit: list[AuditFlag]
    order: list[str] | None
    planned: pd.DataFrame | None
    # the dataset spec the manifest recorded (RewardBench-family runs get leaderboard scores)
    dataset_spec: str | None = None
    # probe condition -> the condition it was made from (the judge stage's `probes`)
    probes: dict[str, ProbeOrigin] = Field(default_factory=dict)
    # item -> which output is longer, for a run judged with the length probe (probes/lengths.py)
    length_categories: dict[str, str] = Field(default_factory=dict)
    # the run's items as its manifest recorded them, loaded once for self-preference, the length
    # categories, the human section and the explorer's en texts ([] when they cannot be read)
    items: list[Item] = Field(default_factory=list)
    # per (item, condition) the characters and tokens of the two outputs judged there (the length
    # baselines, analysis/length_artefact.py); None when no texts could be read
    lengths: pd.DataFrame | None = None


LENGTH_PROBE = "length"


def _read_inputs(run: RunDir) -> _RunInputs:
    """Everything the report reads, the judgments while the items are read beside them: pyarrow
    parses judgments.jsonl without holding the GIL, so a second core validates the dataset meanwhile
    (at a million judgments about 2 s of the report) and imports what the analysis computes with."""
    path = run.file(JUDGMENTS)
    if not path.exists():
        raise RunDirError(f"{path} does not exist: run `judgebench judge --run {run.path}` first")
    manifest = run.manifest()
    translated = manifest.stages.translate
    order = translated.condition_names() if translated else None
    judged = manifest.stages.judge
    probes = {c: ProbeOrigin(p.probe, p.base) for c, p in judged.probes.items()} if judged else {}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="report-inputs") as beside:
        items_read = beside.submit(_items_and_lengths, run)
        beside.submit(preload_statistics)  # then the analysis's scipy and statsmodels (about 1 s)
        table = read_judgment_table(path)
        planned = read_plan_table(run.file(PLAN))
        audit = list(read_jsonl(run.file(AUDIT), AuditFlag))
        items, lengths = items_read.result()
    return _RunInputs(
        lengths=lengths,
        probes=probes,
        items=items,
        length_categories=_length_categories(items, probes),
        table=table,
        audit=audit,
        order=order or None,
        planned=planned,
        dataset_spec=manifest.dataset.spec if manifest.dataset else None,
    )


def _analyze(
    run: RunDir,
    inputs: _RunInputs,
    settings: ReportSettings | None,
    human: HumanReport | None = None,
    stops: Mapping[str, SequentialStop] | None = None,
) -> Analysis:
    """The run's finished Analysis: everything the analysis reads from the run folder is given to it."""
    frame = inputs.table.analysis_frame()
    return analyze_inputs(
        frame,
        AnalysisInputs(
            flagged_items=frozenset(flag.item_id for flag in inputs.audit),
            settings=settings or ReportSettings(),
            # a run with no translate stage (imported results) names its pairs in the config's order
            condition_order=inputs.order or list(load_conditions()),
            planned=inputs.planned,
            leaderboard=leaderboard_weights(inputs.dataset_spec),
            probes=inputs.probes,
            lengths=Lengths(inputs.lengths, inputs.length_categories),
            longer_sides=longer_sides(inputs.items),
            self_preference=_self_preference_inputs(run, inputs, frame),
            outside_records=[*_source_headlines(run), *(human.records() if human is not None else [])],
            stops=_judge_stops(run) if stops is None else stops,
        ),
    )


def _source_headlines(run: RunDir) -> list[MetricRecord]:
    """Each imported source's own headline numbers (recorded by `import FORMAT`), beside judgebench's,
    so a user can put them next to the published ones: metric `source:<name>`, `source` the system."""
    manifest = run.manifest() if run.exists() else None
    out = []
    for judge, entry in (manifest.stages.imports if manifest else {}).items():
        for h in entry.headlines:
            out.append(
                MetricRecord(
                    judge=judge,
                    metric=SOURCE_HEADLINE_PREFIX + h.name,
                    condition="en",
                    subset=h.subset,
                    filtered=False,
                    value=h.value,
                    n=h.n,
                    source=h.system,
                )
            )
    return out


def _self_preference_inputs(run: RunDir, inputs: _RunInputs, frame: pd.DataFrame) -> SelfPreferenceInputs:
    """The self-preference check's inputs (issue 31): the answers' models from the run's items, each
    judge's family from the spec the manifest recorded."""
    table = load_family_table()
    judged = run.manifest().stages.judge if run.exists() else None
    specs = {name: entry.spec for name, entry in judged.judges.items()} if judged else {}
    judges = {str(j) for j in frame["judge"].unique()} if len(frame) else set()
    families = {judge: judge_family(judge, table, specs.get(judge)) for judge in judges}
    # labelled items; unlabelled ones too where they name their answers' models (an imported log):
    # those give the own-family win rate, only labelled ones the gold-fixed excess
    item_models = {
        item.id: models
        for item in inputs.items
        if (models := answer_models(item)) != (None, None) and (item.label in (1, 2) or None not in models)
    }
    return SelfPreferenceInputs(item_models=item_models, families=families, table=table)


def analyze_run(run_dir: str | Path | RunDir, settings: ReportSettings | None = None) -> Analysis:
    """Every metric of a run folder: the last line per call key of judgments.jsonl, the audit flags,
    and pairs named (zh->ls) in the order the run's translate stage recorded."""
    run = run_folder(run_dir)
    return _analyze(run, _read_inputs(run), settings)


def analyze_human(
    run_dir: str | Path | RunDir, human: str | Path, settings: ReportSettings | None = None
) -> HumanReport:
    """The human section of a run without writing anything: the labels of `human` (JSONL or CSV)
    validated against the run's judgments, agreement, the annotators' ceiling, PPI++ estimates."""
    run = run_folder(run_dir)
    request = ReportRequest(settings=settings or ReportSettings(), human=Path(human))
    return _human(run, _read_inputs(run), request)


def _judge_stops(run: RunDir) -> dict[str, SequentialStop]:
    """Where each judge of a `judge --until-settled` run stopped (empty for a fixed-design run)."""
    stage = run.manifest().stages.judge if run.exists() else None
    return dict(stage.stops) if stage else {}


def _run_items(run: RunDir) -> list[Item]:
    """The run's items as its manifest recorded them; [] when they cannot be read. A report never
    downloads: LLMBar without a --data-dir is read from the download cache, or left out."""
    recorded = run.manifest().dataset
    if recorded is None:
        return []
    data_dir = recorded.data_dir
    if data_dir is None and recorded.spec.lower().partition(":")[0] == LLMBAR_SPEC:
        data_dir = str(llmbar_cache_root())  # laid out like a local copy: read it, fetch nothing
    try:
        dataset, _ = load_run_dataset(run, None, data_dir)
    except (JudgebenchError, OSError):
        return []
    return dataset.items


def _items_and_lengths(run: RunDir) -> tuple[list[Item], pd.DataFrame | None]:
    """The run's items, and the lengths of the outputs judged in each condition: en from the items,
    every other condition (a language, a probe) from its last variant in variants.jsonl."""
    items = _run_items(run)
    texts: Iterable[tuple[str, str, str, str]] = ((i.id, SOURCE, i.output_1, i.output_2) for i in items)
    path, held = run.file(VARIANTS), run.variants().held()  # held: `judgebench run` wrote them
    if held is not None or path.exists():
        # else streamed: only each line's lengths are kept (the last per key wins in output_lengths),
        # not the records, which the run's variants index would hold for the whole report (170 MB at 1M)
        variants = held.values() if held is not None else read_jsonl(path, Variant)
        texts = chain(
            texts,
            ((v.item_id, v.condition, v.output_1, v.output_2) for v in variants if v.condition != SOURCE),
        )
    lengths = output_lengths(texts)
    return items, (None if lengths.empty else lengths)


def _length_categories(items: list[Item], probes: Mapping[str, ProbeOrigin]) -> dict[str, str]:
    """Which output of each item is longer, for a run judged with a probe named `length`."""
    spec = load_probes().get(LENGTH_PROBE)
    if spec is None or not any(origin.probe == LENGTH_PROBE for origin in probes.values()):
        return {}
    return length_categories(items, spec.categories)


def _human(run: RunDir, inputs: _RunInputs, req: ReportRequest) -> HumanReport:
    """The human section: the labels checked against the run's judgments, sources from its items."""
    assert req.human is not None
    frame = inputs.table.analysis_frame()
    labels = run_human_labels(frame, req.human)
    return human_for_run(frame, labels, req.settings, items=inputs.items, order=inputs.order or ())


def explorer_data(run: RunDir, inputs: _RunInputs, *, every_row: bool = False) -> ExplorerData:
    """The item explorer's inputs: the judgments, the items' texts (en from the run's dataset, the
    others from variants.jsonl, read for the rows shown only) and the audit flags. A dataset that
    cannot be loaded (an imported results file, a moved data folder) leaves the en texts out, never
    the report."""
    limit = None if every_row else ROW_LIMIT
    return ExplorerData(
        audit=inputs.audit,
        conditions=inputs.order or (),
        table=inputs.table,
        row_limit=limit,
        text_source=lambda items: _texts_of(run, inputs.items, items),
    )


def _texts_of(
    run: RunDir, dataset: Sequence[Item], items: Collection[str]
) -> dict[tuple[str, str], ItemTexts]:
    """en from the dataset, then each condition's last variant, of `items` only: variants.jsonl's
    item column is read whole (pyarrow) and just the lines of these items validated; a file the fast
    path cannot vouch for is read the exact way (its index, which names a bad line)."""
    wanted = set(items)
    texts = {
        (item.id, "en"): ItemTexts(item.instruction, item.output_1, item.output_2)
        for item in dataset
        if item.id in wanted
    }
    path, held = run.file(VARIANTS), run.variants().held()  # held: `judgebench run` wrote them
    shown = None
    if held is None and path.exists():
        shown = selected_records(path, Variant, "item_id", wanted)
    if shown is None:  # held, or a file the fast path cannot vouch for (or none: no variants)
        latest = held if held is not None else run.variants().latest()
        shown = [v for v in latest.values() if v.item_id in wanted]
    for variant in shown:
        texts[(variant.item_id, variant.condition)] = ItemTexts(
            variant.instruction, variant.output_1, variant.output_2
        )
    return texts


def export_unstable(data: ExplorerData, path: Path) -> int:
    """The flipped and position-inconsistent item x judge rows as JSONL; returns how many."""
    records = unstable_records(data)
    lines = (json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    atomic_write_text(path, "".join(lines))
    return len(records)


class ReadinessDoc(ReadinessFile):
    """readiness.json (INTERFACE.md; records/readiness_document.py), built from an analysis."""

    @classmethod
    def of(cls, analysis: Analysis, stops: Mapping[str, SequentialStop] | None = None) -> ReadinessDoc:
        done = analysis.completeness
        verdicts = [
            ReadinessEntry(
                judge=v.judge,
                condition=v.condition,
                verdict=v.status,
                baseline=v.baseline,
                invariance=v.invariance,
                reasons=v.reasons,
                why=v.why,
            )
            for v in analysis.readiness
        ]
        return cls(
            complete=done.complete and not analysis.unfinished_judges,
            stops=dict(stops or {}),
            intervals={v.judge: v.intervals for v in analysis.readiness},
            plan_known=done.plan_known,
            planned=done.planned,
            never_made=done.never_made,
            failed=done.failed,
            verdicts=verdicts,
        )


class ReportRequest(BaseModel):
    """What `judgebench report` asks for: the report's settings and whether to write the HTML."""

    model_config = ConfigDict(extra="forbid")

    settings: ReportSettings = Field(default_factory=ReportSettings)
    html: bool = True
    # write the flipped / position-inconsistent items here as JSONL for human review
    export_unstable: Path | None = None
    # another `report` writing this run: wait for it (False: refuse at once)
    wait_lock: bool = False
    # the item explorer in report.html: "auto" embeds every row up to ROW_LIMIT item x judge rows,
    # past it the rows that matter (unstable, wrong in en only, audit-flagged); "all" embeds every row
    explorer: Literal["auto", "all"] = "auto"
    # human labels (JSONL or CSV: item_id, condition, label, annotator?): the human section,
    # human.json and the agreement / ppi_ records in metrics.json
    human: Path | None = None


class ReportResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    analysis: Analysis
    paths: ReportPaths
    readiness: ReadinessDoc
    readiness_json: Path
    unstable: int | None = None  # rows written to export_unstable, when asked
    human: HumanReport | None = None  # with ReportRequest.human


def report(
    run_dir: str | Path | RunDir,
    request: ReportRequest | None = None,
) -> ReportResult:
    """Compute every metric of the run's judgments and write metrics.json/.csv, report.md/.html (every
    registered output); the result carries the report's sections for a terminal summary."""
    req = request or ReportRequest()
    run = run_folder(run_dir)
    if not run.path.is_dir():
        raise RunDirError(f"run folder {run.path} does not exist")
    run.require(JUDGMENTS, "run `judgebench judge` (or `judgebench import llmbar-results`) first")
    leave_out = () if req.html else ("html",)
    needs = needs_of(leave_out)
    wanted = Need.EXPLORER in needs or req.export_unstable is not None
    with paused_gc():  # a million rows' fresh objects are no garbage (about 2 s of a 1M report)
        return _report(run, req, leave_out, wanted)


def _report(run: RunDir, req: ReportRequest, leave_out: tuple[str, ...], wanted: bool) -> ReportResult:
    inputs = _read_inputs(run)
    stops = _judge_stops(run)  # read once: for the verdicts and for readiness.json
    human = _human(run, inputs, req) if req.human is not None else None  # bad labels: before any write
    analysis = _analyze(run, inputs, req.settings, human, stops)
    data = explorer_data(run, inputs, every_row=req.explorer == "all") if wanted else None
    stage = _Reporting(req, analysis, ReadinessDoc.of(analysis, stops), leave_out, data, human)
    # one writer of the report files at a time (another `report`: refused, or waited for)
    return run_stage(run, stage, options=CallOptions(wait_lock=req.wait_lock))


@dataclass
class _Reporting(Stage[ReportResult]):
    """The report's writing for the runner (api/stages.py): the analysis made (reads only); under the
    report lock the set of files, the unstable rows asked for, and the manifest entry."""

    req: ReportRequest
    analysis: Analysis
    readiness: ReadinessDoc
    leave_out: tuple[str, ...]
    data: ExplorerData | None
    human: HumanReport | None
    name = "report"
    makes_run = False  # a folder of judgments with no manifest (imported by hand) stays without one

    def execute(self, run: RunDir, progress: ProgressReporter) -> ReportResult:
        req, data = self.req, self.data
        paths = write_report(
            run,
            self.analysis,
            leave_out=self.leave_out,
            explorer=data,
            human=self.human,
            readiness=self.readiness,  # written with the set (report/writer.py)
        )
        unstable = None
        if req.export_unstable is not None and data is not None:
            unstable = export_unstable(data, req.export_unstable)
        return ReportResult(
            analysis=self.analysis,
            paths=paths,
            readiness=self.readiness,
            readiness_json=run.file(READINESS_JSON),
            unstable=unstable,
            human=self.human,
        )

    def record(self, run: RunDir, result: ReportResult) -> ReportStage:
        unstable = [str(self.req.export_unstable)] if self.req.export_unstable is not None else []
        return ReportStage(
            settings=self.req.settings.model_dump(),
            records=len(result.analysis.records),
            outputs=[str(p) for p in result.paths.all()] + unstable,
        )
