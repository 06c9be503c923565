"""Looking at datasets and the response store before spending calls (`data show|list`, `cache`)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from judgebench.data import LLMBAR_SUBSETS, Dataset, families, llmbar_root, load_dataset, spec_help
from judgebench.data.catalog import family_of, resolve
from judgebench.data.m_rewardbench import holds_snapshots
from judgebench.models.cache import default_cache


def show_dataset(
    spec: str,
    *,
    data_dir: str | None = None,
    mapping: dict[str, str] | None = None,
    subset: str | None = None,
    skip_bad_rows: bool = False,
) -> Dataset:
    """Load and validate a dataset (every item), as `data show` prints it. A partial local copy of a
    dataset with languages (M-RewardBench) is shown as what it holds (with a warning naming how
    much), not refused: a listing is what a user asks `data show` for."""
    request = resolve(spec)
    family = family_of(request)
    if family.conditions and request.suffix is None and data_dir is not None:
        held, total = family.held_conditions(data_dir) or [], len(family.conditions)
        if held and len(held) < total:
            warnings.warn(
                f"this {family.name} snapshot holds {len(held)} of its {total} languages; showing those "
                f"(load them as {family.name}:{','.join(held)}, or with --conditions)",
                stacklevel=2,
            )
            spec = f"{family.name}:{','.join(held)}"
    return load_dataset(spec, data_dir=data_dir, mapping=mapping, subset=subset, skip_bad_rows=skip_bad_rows)


def dataset_help() -> str:
    """What a SPEC may be, generated from the dataset registry (the CLI's SPEC and --dataset help)."""
    return spec_help()


class DatasetAvailability(BaseModel):
    spec: str
    what: str
    available: str  # "yes", "local copy", "download cache", "downloads on use", "missing"


class DatasetList(BaseModel):
    root: Path
    local: bool  # a --data-dir was given
    complete: bool  # LLMBar's five subsets are all there
    datasets: list[DatasetAvailability]


def list_datasets(data_dir: str | None = None) -> DatasetList:
    """Every registered dataset and whether each is available here (bundled, cached or local)."""
    if data_dir is not None and holds_snapshots(data_dir) and not (Path(data_dir) / "Dataset").is_dir():
        root = Path(data_dir)  # hub snapshots only: LLMBar is simply missing there
    else:
        root = llmbar_root(data_dir)
    rows = [
        DatasetAvailability(spec=row.spec, what=row.what, available=row.available)
        for family in families().values()
        for row in family.rows(data_dir)
    ]
    have = all((root / rel).is_file() for rel in LLMBAR_SUBSETS.values())
    return DatasetList(root=root, local=data_dir is not None, complete=have, datasets=rows)


def cache_info() -> dict[str, Any]:
    """Where the response store is, how big, and how many answers per model."""
    with default_cache() as cache:
        return cache.info()


def cache_clear(model: str | None = None) -> int:
    """Delete stored answers (all, or one model spec's); returns how many."""
    with default_cache() as cache:
        return cache.clear(spec=model)
