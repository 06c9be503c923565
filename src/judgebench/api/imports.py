"""`judgebench import llmbar-results`: LLMBar's published verdicts appended to a run as judgments."""

from __future__ import annotations

from pathlib import Path

from judgebench.answers import JudgmentLog
from judgebench.api.datasets import run_folder
from judgebench.data import Dataset, load_dataset
from judgebench.data.llmbar_results import ImportSummary, published_judgments
from judgebench.records import CallKey, Judgment
from judgebench.records.manifest import ImportStage
from judgebench.rundir import IndexedAppender, RunDir


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
    with run.lock("judge", wait=wait_lock):
        _append_new(run, dataset, data_dir, new, summary)
    return summary


def _append_new(
    run: RunDir, dataset: Dataset, data_dir: str | Path, new: list[Judgment], summary: ImportSummary
) -> None:
    run.init(dataset=dataset.manifest_entry(data_dir=str(Path(data_dir).resolve())))
    judgments = run.judgments()
    held = _held(judgments, new, summary.judge)
    with IndexedAppender(judgments) as out:
        for judgment in new:
            if held.get(judgment.call_key()) == (judgment.verdict, judgment.raw):
                continue
            out.append(judgment)
            summary.appended += 1
    entry = ImportStage(
        source="llmbar result.json",
        evaluator=summary.judge,
        judgments=summary.judgments,
        appended=summary.appended,
        invalid=summary.invalid,
        files=summary.files,
        missing_subsets=summary.missing_subsets,
    )
    run.record_import(summary.judge, entry)


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
