"""One stage runner: what every stage did by hand around its work, in one place.

A stage supplies its own parts (`Stage`: the judges it will call, its clients, the dataset entry,
what its progress counts, execute and record); `run_stage` owns the order around them, the same
for every stage:

    keys checked -> batch support -> budget armed -> lock -> run folder made -> budget seeded
    -> progress opened -> execute -> progress closed -> manifest entry recorded

so that nothing is touched (no folder made, no question asked) before every input and key is
checked, no second process writes the same stage of a run (it would pay for every call again, or
interleave two sets of report files), every stage's progress is opened and closed alike (one
reporter, its lines the CLI's), and a stage's manifest entry is written under its lock. A stage
that makes no call (report, import) has no keys or clients and no progress to show. Plans and
estimates are the stage's own (`plan_judging`, the dry runs): they read only, and need none of this.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from judgebench.api.options import CallOptions, require_keys
from judgebench.costing.spending import arm_budget, refuse_batch, seed_budget
from judgebench.execution import Execution
from judgebench.models import JudgeSpec
from judgebench.models.client import ModelClient
from judgebench.progress import ProgressReporter
from judgebench.records.manifest import DatasetEntry, ImportStage, StageEntry
from judgebench.store.run_folder import RunDir, StageName

R = TypeVar("R")

# what a stage records: its entry under `stages.<name>`, or an import's, one per evaluator
# (`stages.imports`), or nothing
Entry = StageEntry | Mapping[str, ImportStage] | None


@dataclass(frozen=True)
class Counted:
    """What a stage's progress counts: the calls it will make (not yet answered in the run), the label
    its lines start with (`judge gpt41mini`), and its expected time (seconds, the line saying so)."""

    total: int
    label: str
    expected: tuple[float, str] | None = None


class Stage(ABC, Generic[R]):
    """A stage's own parts. The runner calls them in order: `keys`, `connect`, then, under the
    stage's lock, `dataset`, `progress`, `execute` and `record`."""

    name: StageName  # the lock's name (and the manifest entry's, unless it is an import's)
    max_cost: float | None = None  # USD for the run (what earlier commands paid counts)
    # False: the stage works in a run folder that is there (bbe, report) or makes it itself (an
    # import of items): the runner makes no manifest, and records the entry only where one is
    makes_run: bool = True

    def keys(self) -> Sequence[JudgeSpec]:
        """The judges (or translator) that will be called and so need their API key (none: no call)."""
        return []

    def connect(self) -> Sequence[ModelClient]:
        """The clients the stage will call, built after the keys are checked (kept by the stage)."""
        return []

    def dataset(self) -> DatasetEntry | None:
        """The dataset entry the run folder is made with (or checked against)."""
        return None

    def progress(self, run: RunDir) -> Counted | None:
        """What the stage's progress counts, read under the lock (None: no call to count; the stage
        still gets a reporter, a silent one)."""
        return None

    @abstractmethod
    def execute(self, run: RunDir, progress: ProgressReporter) -> R:
        """Make the calls, counting them on `progress`, and write the stage's files (under the lock,
        the budget seeded)."""

    @abstractmethod
    def record(self, run: RunDir, result: R) -> Entry:
        """The stage's manifest entry (None: nothing to record)."""


def run_stage(
    run: RunDir, stage: Stage[R], *, options: CallOptions | None = None, execution: Execution | None = None
) -> R:
    """Run one stage: keys, batch support and budget first, then under the stage's lock the run folder,
    the budget's start, the stage's progress around its calls, and its manifest entry."""
    options = options or CallOptions()
    require_keys(stage.keys())  # before the run folder is touched
    clients = list(stage.connect())
    if clients and execution is not None and execution.batch:
        refuse_batch(clients)
    arm_budget(clients, stage.max_cost)
    with run.lock(stage.name, wait=options.wait_lock):  # one writer per run and stage
        if stage.makes_run:
            run.init(dataset=stage.dataset())
        seed_budget(clients, run)  # --max-cost is the run's: what it paid counts
        counted = stage.progress(run)
        shown = options.progress if counted is not None else False  # nothing to count: silent
        total, label = (counted.total, counted.label) if counted is not None else (0, stage.name)
        expected = counted.expected if counted is not None else None
        with ProgressReporter(total, label, enabled=shown, expected=expected) as bar:
            result = stage.execute(run, bar)
        _record(run, stage, stage.record(run, result))
    return result


def _record(run: RunDir, stage: Stage[R], entry: Entry) -> None:
    if entry is None or (not stage.makes_run and not run.exists()):
        return  # nothing to record, or a folder with no manifest (judgments written by hand) kept so
    if isinstance(entry, StageEntry):
        run.record_stage(stage.name, entry)
        return
    for evaluator, imported in entry.items():
        run.record_import(evaluator, imported)
