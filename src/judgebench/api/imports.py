"""`judgebench import FORMAT`: a peer's judge log (or LLMBar's published verdicts) appended to a run as
judgments, with its items, human labels and the source's own headline numbers, so `report` audits it
without a new call."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgebench.api.datasets import run_folder
from judgebench.api.options import CallOptions
from judgebench.api.stages import Stage, run_stage
from judgebench.data import Dataset, load_dataset
from judgebench.data.dataset import items_checksum
from judgebench.data.imported import IMPORTED_ITEMS, IMPORTED_SPEC
from judgebench.errors import RunDirError
from judgebench.importers.importer_registry import ImportOptions, get_importer
from judgebench.importers.llmbar_results import ImportSummary, published_judgments
from judgebench.importers.log import ImportedLog
from judgebench.progress import ProgressReporter
from judgebench.records import CallKey, Judgment
from judgebench.records.manifest import DatasetEntry, HeadlineEntry, ImportStage
from judgebench.store.answers_log import JudgmentLog
from judgebench.store.atomic_files import atomic_write_text
from judgebench.store.run_folder import IndexedAppender, RunDir

# the human labels an import brought (the `report --human FILE` format: item_id, condition, label,
# annotator), written beside the judgments
IMPORTED_HUMAN = "imported_human_labels.jsonl"


def import_llmbar_results(
    run_dir: str | Path | RunDir, data_dir: str | Path, evaluator: str, *, wait_lock: bool = False
) -> ImportSummary:
    """Append the en pair judgments of LLMBar evaluator `evaluator` (e.g. `GPT-4/Vanilla`) to the run.

    Lines already in judgments.jsonl with the same call key and verdict are not written again, so a
    repeated import is a no-op. The dataset (and the local copy it came from) is recorded in, or
    checked against, the run manifest. The import holds the run's judge lock: it writes the judge
    stage's file, so a `judge` running on the same folder is refused (or waited for, `wait_lock`).
    """
    run = run_folder(run_dir)
    dataset = load_dataset("llmbar", data_dir=str(data_dir))
    new, summary = published_judgments(dataset, data_dir, evaluator)
    entry = dataset.manifest_entry(data_dir=str(Path(data_dir).resolve()))
    return run_stage(run, _PublishedImport(new, summary, entry), options=CallOptions(wait_lock=wait_lock))


@dataclass
class _PublishedImport(Stage[ImportSummary]):
    """`import llmbar-results` for the runner (api/stages.py): the published verdicts read; under the
    judge lock (it writes the judge stage's file) the run folder made, the new lines appended."""

    new: list[Judgment]
    summary: ImportSummary
    entry: DatasetEntry
    name = "judge"

    def dataset(self) -> DatasetEntry:
        return self.entry

    def execute(self, run: RunDir, progress: ProgressReporter) -> ImportSummary:
        self.summary.appended = _append_new(run, self.new)
        return self.summary

    def record(self, run: RunDir, result: ImportSummary) -> dict[str, ImportStage]:
        entry = ImportStage(
            source="llmbar result.json",
            evaluator=result.judge,
            judgments=result.judgments,
            appended=result.appended,
            invalid=result.invalid,
            files=result.files,
            missing_subsets=result.missing_subsets,
            format="llmbar-results",
        )
        return {result.judge: entry}


@dataclass
class ImportResult:
    """What `import FORMAT` added: per judge its judgments, new lines and invalid verdicts; the items,
    human labels, headline numbers, files read and notes."""

    format: str
    run: str
    items: int
    judges: dict[str, ImportStage] = field(default_factory=dict)
    human_labels: int = 0
    human_file: str | None = None
    notes: list[str] = field(default_factory=list)


def import_judgments(
    run_dir: str | Path | RunDir,
    format: str,
    paths: Sequence[str | Path],
    *,
    judge: str | None = None,
    human: Sequence[str | Path] = (),
    settings: Mapping[str, str] | None = None,
    wait_lock: bool = False,
) -> ImportResult:
    """Read `paths` with the importer `format` and append what it read to the run: its items (the run's
    dataset, `imported`; a run that holds other items is refused), the judgments (a repeated import
    adds nothing), the human labels (`imported_human_labels.jsonl`) and one manifest entry per judge
    with the files' checksums and the source's headline numbers."""
    run = run_folder(run_dir)
    importer = get_importer(format)
    options = ImportOptions(judge=judge, human=tuple(Path(p) for p in human), settings=dict(settings or {}))
    log = importer.read([Path(p) for p in paths], options)
    return run_stage(run, _LogImport(log), options=CallOptions(wait_lock=wait_lock))


@dataclass
class _LogImport(Stage[ImportResult]):
    """`import FORMAT` for the runner (api/stages.py): the files read; under the judge lock (it writes
    the judge stage's file) the items, judgments and human labels written, one entry per judge."""

    log: ImportedLog
    name = "judge"
    makes_run = False  # the run's dataset is the imported items, written into the folder first

    def execute(self, run: RunDir, progress: ProgressReporter) -> ImportResult:
        log = self.log
        dataset = _dataset(run, log)
        result = ImportResult(format=log.format, run=str(run.path), items=len(dataset.items), notes=log.notes)
        appended = _append_counts(run, log.judgments)
        if log.human:
            result.human_file = str(run.file(IMPORTED_HUMAN))
            result.human_labels = len(log.human)
            rows = [
                json.dumps(
                    {
                        "item_id": h.item_id,
                        "condition": h.condition,
                        "label": h.label,
                        "annotator": h.annotator,
                    }
                )
                for h in log.human
            ]
            atomic_write_text(run.file(IMPORTED_HUMAN), "\n".join(rows) + "\n")
        for name in log.judges:
            mine = [j for j in log.judgments if j.judge == name]
            result.judges[name] = ImportStage(
                source=f"{log.format}: {', '.join(log.sources)}",
                evaluator=name,
                judgments=len(mine),
                appended=appended.get(name, 0),
                invalid=sum(j.verdict == "invalid" for j in mine),
                files=list(log.sources),
                format=log.format,
                checksums=dict(log.sources),
                headlines=[
                    HeadlineEntry(
                        name=h.name,
                        value=h.value,
                        n=h.n,
                        subset=h.subset,
                        system=h.system,
                        convention=h.convention,
                    )
                    for h in log.headlines
                    if h.judge == name
                ],
                human_labels=len(log.human),
                notes=list(log.notes),
            )
        return result

    def record(self, run: RunDir, result: ImportResult) -> dict[str, ImportStage]:
        return dict(result.judges)


def _dataset(run: RunDir, log: ImportedLog) -> Dataset:
    """The run's dataset for what was read: LLMBar for its results, else the imported items written
    into the run folder. A run that already holds another dataset is refused before anything is
    written."""
    recorded = run.manifest().dataset if run.exists() else None
    if log.dataset is not None:
        spec, data_dir = log.dataset
        dataset = load_dataset(spec, data_dir=data_dir)
        entry = dataset.manifest_entry(data_dir=str(Path(data_dir).resolve()))
    else:
        if not log.items:
            raise RunDirError(f"the {log.format} files hold no judgment to import")
        checksum = items_checksum(log.items)
        if recorded is not None and recorded.checksum and recorded.checksum != checksum:
            raise RunDirError(
                f"run {run.path} holds dataset '{recorded.spec}' (checksum {recorded.checksum[:12]}), not "
                f"these {len(log.items)} imported items: import into a new --run folder (give every file "
                "of one study in one command)"
            )
        run.path.mkdir(parents=True, exist_ok=True)
        lines = [item.model_dump_json() for item in log.items]
        atomic_write_text(run.file(IMPORTED_ITEMS), "\n".join(lines) + "\n")
        dataset = load_dataset(IMPORTED_SPEC, data_dir=str(run.path.resolve()))
        entry = dataset.manifest_entry(data_dir=str(run.path.resolve()))
    if recorded is not None and recorded.checksum and not recorded.same_data(entry):
        raise RunDirError(
            f"run {run.path} holds dataset '{recorded.spec}' (checksum {recorded.checksum[:12]}); refusing "
            f"to mix in '{entry.spec}': use a new --run folder"
        )
    run.init(dataset=entry)
    return dataset


def _append_counts(run: RunDir, new: list[Judgment]) -> dict[str, int]:
    """Append `new` (those not already held) and count the new lines per judge."""
    counts: dict[str, int] = {}
    for name in dict.fromkeys(j.judge for j in new):
        counts[name] = _append_new(run, [j for j in new if j.judge == name])
    return counts


def _append_new(run: RunDir, new: list[Judgment]) -> int:
    """Append the judgments the run does not hold yet (same call key, verdict and raw text); returns
    how many lines were written."""
    if not new:
        return 0
    judgments = run.judgments()
    held = _held(judgments, new, new[0].judge)
    appended = 0
    with IndexedAppender(judgments) as out:
        for judgment in new:
            if held.get(judgment.call_key()) == (judgment.verdict, judgment.raw):
                continue
            out.append(judgment)
            appended += 1
    return appended


def _held(
    judgments: JudgmentLog, new: list[Judgment], judge: str
) -> dict[CallKey, tuple[str | None, str | None]]:
    """(verdict, raw) of the run's last record, by judge `judge`, of each call key an imported
    judgment could repeat: whole records are read again only for the keys whose verdict already
    matches (a repeated import's), not a `Judgment` for every line of a big run."""
    latest = judgments.latest()
    lines: dict[int, CallKey] = {}
    for judgment in new:
        answer = latest.get(judgment.call_key())
        if answer is not None and answer.judge == judge and answer.verdict == judgment.verdict:
            lines[answer.line] = judgment.call_key()
    records = judgments.records(lines)
    return {key: (records[line].verdict, records[line].raw) for line, key in lines.items() if line in records}
