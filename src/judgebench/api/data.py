"""Looking at datasets and the response store before spending calls (`data show|list`, `cache`)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from judgebench.data import LLMBAR_SUBSETS, OTHER_SETS, Dataset, llmbar_root, load_dataset, sample_path
from judgebench.data.hubconfig import hub_dataset
from judgebench.data.m_rewardbench import availability, held_languages, holds_snapshots
from judgebench.data.rewardbench import M_REWARDBENCH_SPEC
from judgebench.models.cache import default_cache


def show_dataset(
    spec: str,
    *,
    data_dir: str | None = None,
    mapping: dict[str, str] | None = None,
    subset: str | None = None,
    skip_bad_rows: bool = False,
) -> Dataset:
    """Load and validate a dataset (every item), as `data show` prints it. A partial M-RewardBench
    snapshot is shown as what it holds (with a warning naming how much), not refused: a listing is
    what a user asks `data show` for."""
    if spec.strip().lower() == M_REWARDBENCH_SPEC and data_dir is not None:
        held, total = held_languages(data_dir), len(hub_dataset(M_REWARDBENCH_SPEC).languages)
        if held and len(held) < total:
            warnings.warn(
                f"this M-RewardBench snapshot holds {len(held)} of its {total} languages; showing those "
                f"(load them as m-rewardbench:{','.join(held)}, or with --conditions)",
                stacklevel=2,
            )
            spec = f"{M_REWARDBENCH_SPEC}:{','.join(held)}"
    return load_dataset(spec, data_dir=data_dir, mapping=mapping, subset=subset, skip_bad_rows=skip_bad_rows)


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
    """The named datasets and whether each is available here (bundled, cached or local)."""
    if data_dir is not None and holds_snapshots(data_dir) and not (Path(data_dir) / "Dataset").is_dir():
        root = Path(data_dir)  # hub snapshots only: LLMBar is simply missing there
    else:
        root = llmbar_root(data_dir)
    where = "local copy" if data_dir is not None else "download cache"
    absent = "missing" if data_dir is not None else "downloads on use"
    have = all((root / rel).is_file() for rel in LLMBAR_SUBSETS.values())
    rows = [
        DatasetAvailability(
            spec="sample",
            what="bundled sample set",
            available="yes" if sample_path().is_file() else "missing",
        ),
        DatasetAvailability(spec="llmbar", what="LLMBar: 5 subsets", available=where if have else absent),
    ]
    for name, rel in OTHER_SETS.items():
        available = where if (root / rel).is_file() else absent
        rows.append(DatasetAvailability(spec=f"llmbar:{name}", what="other LLMBar set", available=available))
    hub_rows = {
        "rewardbench": "RewardBench (filtered), English",
        "m-rewardbench": "M-RewardBench: RewardBench in 23 languages",
    }
    for spec, available in availability(data_dir).items():
        rows.append(DatasetAvailability(spec=spec, what=hub_rows[spec], available=available))
    return DatasetList(root=root, local=data_dir is not None, complete=have, datasets=rows)


def cache_info() -> dict[str, Any]:
    """Where the response store is, how big, and how many answers per model."""
    with default_cache() as cache:
        return cache.info()


def cache_clear(model: str | None = None) -> int:
    """Delete stored answers (all, or one model spec's); returns how many."""
    with default_cache() as cache:
        return cache.clear(spec=model)
