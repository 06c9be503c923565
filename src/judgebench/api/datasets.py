"""The run's dataset: loaded as given or as the manifest recorded it, and the items a stage takes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from judgebench.data import Dataset, load_dataset
from judgebench.data.dataset import narrowed_to, select_subset
from judgebench.data.imported import IMPORTED_SPEC
from judgebench.errors import RunDirError
from judgebench.records import Item
from judgebench.records.manifest import DatasetEntry
from judgebench.store.run_folder import RunDir, safe_run_path


def load_run_dataset(
    run: RunDir,
    dataset: str | None,
    data_dir: str | None,
    *,
    skip_bad_rows: bool = False,
    conditions: Sequence[str] | None = None,
) -> tuple[Dataset, DatasetEntry]:
    """The run's dataset, as given or as its manifest recorded it, plus the manifest entry to record.

    Rows left out once (`skip_bad_rows`) are left out by every later stage, as the manifest records.

    Nothing is written: a command validates all of its inputs before it touches the run folder.
    A dataset given with its languages as conditions (`m-rewardbench`, `--conditions zh,ja`) is
    narrowed to them (`narrowed_to`).
    """
    recorded = run.manifest().dataset
    if dataset is not None:
        dataset = narrowed_to(dataset, conditions)
    if dataset is None:
        if recorded is None:
            raise RunDirError(
                f"run {run.path} has no dataset yet: pass --dataset SPEC (e.g. sample or llmbar)"
            )
        dataset = recorded.spec
        data_dir = data_dir or recorded.data_dir
    if dataset.strip().lower() == IMPORTED_SPEC:  # an imported run's items live in the run folder
        data_dir = str(run.path)  # itself, wherever it has been moved or copied to
    skip = skip_bad_rows or (recorded.skip_bad_rows if recorded is not None else False)
    loaded = load_dataset(dataset, data_dir=data_dir, skip_bad_rows=skip)
    entry = loaded.manifest_entry(data_dir=str(Path(data_dir).resolve()) if data_dir else None)
    if recorded is not None and recorded.checksum and not recorded.same_data(entry):
        raise RunDirError(
            f"run {run.path} holds dataset '{recorded.spec}' (checksum {recorded.checksum[:12]}); refusing "
            f"to mix in '{entry.spec}' (checksum {str(entry.checksum)[:12]}): use a new --run folder"
        )
    return loaded, entry


def open_dataset(run: RunDir, dataset: str | None, data_dir: str | None) -> Dataset:
    """Load the run's dataset and record it in the manifest (creating the run folder)."""
    loaded, entry = load_run_dataset(run, dataset, data_dir)
    run.init(dataset=entry)
    return loaded


def pick_items(items: Sequence[Item], subset: str | None, limit: int | None, shown: str) -> list[Item]:
    """--subset then --limit: the same selection in every stage, on the run's whole dataset."""
    chosen = select_subset(list(items), subset, shown=shown) if subset else list(items)
    return chosen[:limit] if limit is not None else chosen


def run_folder(path: str | Path | RunDir) -> RunDir:
    """The run folder a command was given; a path that climbs out with '..' or names a file is refused.
    A `RunDir` is the caller's, taken as it is: what it has read is shared, not read again."""
    if isinstance(path, RunDir):
        return path
    return RunDir(safe_run_path(path))
