"""`judgebench import llmbar-results`: LLMBar's published verdicts appended to a run as judgments."""

from __future__ import annotations

from pathlib import Path

from judgebench.api.datasets import run_folder
from judgebench.data import Dataset, load_dataset
from judgebench.data.llmbar_results import ImportSummary, published_judgments
from judgebench.records import Judgment
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
    existing = {(key, j.verdict, j.raw) for key, j in judgments.latest().items() if j.judge == summary.judge}
    with IndexedAppender(judgments) as out:
        for judgment in new:
            if (judgment.call_key(), judgment.verdict, judgment.raw) in existing:
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
