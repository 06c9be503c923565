"""One stage runner: what every paid stage did by hand before it made a call, in one place.

A stage supplies its own parts (`Stage`: the judges it will call, its clients, the dataset entry,
execute and record); `run_stage` owns the order around them, the same for every stage:

    keys checked -> batch support -> budget armed -> lock -> run folder made -> budget seeded
    -> execute -> manifest entry recorded

so that nothing is touched (no folder made, no question asked) before every input and key is
checked, no second process writes the same stage of a run (it would pay for every call again), and
a stage's manifest entry is written under its lock. Plans and estimates are the stage's own
(`plan_judging`, the dry runs): they read only, and need none of this.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Generic, TypeVar

from judgebench.api.options import CallOptions, require_keys
from judgebench.costing.spending import arm_budget, refuse_batch, seed_budget
from judgebench.execution import Execution
from judgebench.models import JudgeSpec
from judgebench.models.client import ModelClient
from judgebench.records.manifest import DatasetEntry, StageEntry
from judgebench.store.run_folder import RunDir, StageName

R = TypeVar("R")


class Stage(ABC, Generic[R]):
    """A stage's own parts. The runner calls them in order: `keys`, `connect`, then, under the
    stage's lock, `execute` and `record`."""

    name: StageName
    max_cost: float | None = None  # USD for the run (what earlier commands paid counts)

    def keys(self) -> Sequence[JudgeSpec]:
        """The judges (or translator) that will be called and so need their API key (none: no call)."""
        return []

    def connect(self) -> Sequence[ModelClient]:
        """The clients the stage will call, built after the keys are checked (kept by the stage)."""
        return []

    def dataset(self) -> DatasetEntry | None:
        """The dataset entry the run folder is made with (or checked against)."""
        return None

    @abstractmethod
    def execute(self, run: RunDir) -> R:
        """Make the calls and write the stage's files (under the lock, the budget seeded)."""

    @abstractmethod
    def record(self, run: RunDir, result: R) -> StageEntry | None:
        """The stage's manifest entry (None: nothing to record)."""


def run_stage(run: RunDir, stage: Stage[R], *, options: CallOptions, execution: Execution) -> R:
    """Run one stage: keys, batch support and budget first, then under the stage's lock the run folder,
    the budget's start, the stage's calls and its manifest entry."""
    require_keys(stage.keys())  # before the run folder is touched
    clients = list(stage.connect())
    if clients and execution.batch:
        refuse_batch(clients)
    arm_budget(clients, stage.max_cost)
    with run.lock(stage.name, wait=options.wait_lock):  # one writer per run and stage
        run.init(dataset=stage.dataset())
        seed_budget(clients, run)  # --max-cost is the run's: what it paid counts
        result = stage.execute(run)
        entry = stage.record(run, result)
        if entry is not None:
            run.record_stage(stage.name, entry)
    return result
