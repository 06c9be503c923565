"""Every table of configs/hub_datasets.toml as a dataset of the registry (data/catalog.py): one
loader for all of them, so a RewardBench-shaped hub dataset is a table and no code. A table with
`languages` loads as its English table's items plus one condition of variants per language
(m_rewardbench.py); one without, as items (rewardbench.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from judgebench.data.catalog import DatasetRequest, Listing
from judgebench.data.dataset import Dataset, select_subset
from judgebench.data.hubconfig import hub_dataset
from judgebench.data.m_rewardbench import availability, held_languages, load_m_rewardbench
from judgebench.data.rewardbench import Loaded, load_rewardbench


def load(request: DatasetRequest) -> Dataset:
    """`NAME` (every language), or `NAME:zh,ja` (those languages) of a hub table."""
    config = hub_dataset(request.name)
    if config.languages:
        languages = request.suffix.split(",") if request.suffix is not None else None
        loaded = load_m_rewardbench(
            request.data_dir, languages=languages, skip_bad_rows=request.skip_bad_rows, config=config
        )
    else:
        loaded = load_rewardbench(request.data_dir, skip_bad_rows=request.skip_bad_rows, config=config)
    spec = request.name if request.suffix is None else request.spec
    return _from_loaded(spec, loaded, request.subset, request.skip_bad_rows)


def _from_loaded(spec: str, loaded: Loaded, subset: str | None, skip_bad_rows: bool) -> Dataset:
    """A hub dataset, narrowed to `subset` (its variants and counts with it)."""
    items = loaded.items
    variants = loaded.variants
    missing = loaded.missing
    if subset is not None:
        items = select_subset(items, subset, shown=spec)
        kept = {item.id for item in items}
        variants = {c: [v for v in vs if v.item_id in kept] for c, vs in variants.items()}
        missing = {c: len(items) - len(vs) for c, vs in variants.items()}
    categories = dict(Counter(item.subset.split("/", 1)[0] for item in items)) if loaded.categories else {}
    return Dataset(
        spec=spec,
        items=items,
        source=loaded.source,
        subset=subset,
        files=loaded.files,
        variants=variants,
        language_configs=loaded.configs,
        missing=missing,
        absent_languages=loaded.absent,
        excluded=loaded.excluded,
        categories=categories,
        skipped_rows=loaded.skipped,
        skip_bad_rows=skip_bad_rows,
    )


def held(name: str, data_dir: str | Path) -> list[str]:
    """The languages of table `name` a local snapshot under `data_dir` holds."""
    return held_languages(data_dir, hub_dataset(name))


def listing(name: str, data_dir: str | None) -> list[Listing]:
    """Table `name`'s row of `data list`."""
    config = hub_dataset(name)
    return [Listing(name, config.description, availability(config, data_dir))]
