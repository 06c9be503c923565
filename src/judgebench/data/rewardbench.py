"""Datasets of RewardBench's shape (a table of configs/hub_datasets.toml, e.g. allenai/reward-bench,
`filtered`) as Judge-LS datasets, and the row reading that multilingual ones (data/m_rewardbench.py)
share with them.

Each record becomes one pairwise item `<id_prefix><id>` (`rewardbench/<id>`): `output_1`/`output_2` are the
chosen and the rejected response in an order drawn per item from its id (seeded, the same in every
language and on every machine), `label` says which one is the chosen, so gold is not always output 1.
Its subset is `<category>/<subset>` (`Chat Hard/llmbar-natural`), so RewardBench's four categories are
aggregates like LLMBar's `Adversarial`, and `--subset llmbar` keeps the five LLMBar subsets.

A row whose prompt, chosen or rejected text is null, empty or not text is an error naming the file,
the row, the item and the field; with `skip_bad_rows` such rows are left out and counted instead.

The columns are the table's (`[NAME.columns]` renames them). Local snapshots (`--data-dir DIR`) are
in the hub's own layout: `DIR/reward-bench/data/filtered-*.parquet`. Without `--data-dir` the files
are fetched from the hub at the pinned revision (data/hub.py).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgebench.data.hub import fetch_snapshot, sha256_file
from judgebench.data.hubconfig import (
    M_REWARDBENCH_SPEC,
    REWARDBENCH_SPEC,
    HubDataset,
    hub_dataset,
    language_configs,
)
from judgebench.errors import InputError
from judgebench.records import Item, Variant

# kept importable from here, where they lived before data/hubconfig.py
__all__ = ["M_REWARDBENCH_SPEC", "REWARDBENCH_SPEC", "hub_dataset", "language_configs"]

OTHER_CATEGORY = "Other"
ENGLISH_FIELDS = ("id", "prompt", "chosen", "rejected", "subset")
TEXT_COLUMNS = ("prompt", "chosen", "rejected")
_ORDER_SALT = b"judgebench:rewardbench-order:"
_WHAT = {
    "prompt": "prompt",
    "chosen": "chosen response",
    "rejected": "rejected response",
    "subset": "subset name",
}
SKIP_HINT = (
    "Fix or delete that row, or load with --skip-bad-rows (skip_bad_rows=True) to leave such rows "
    "out: they are counted and reported"
)


@dataclass
class Loaded:
    """What a hub dataset's loader reads, before it becomes a `Dataset`."""

    items: list[Item]
    source: str
    files: dict[str, str]
    # condition -> its variants (M-RewardBench); empty for RewardBench
    variants: dict[str, list[Variant]] = field(default_factory=dict)
    # condition -> hub config it was read from
    configs: dict[str, str] = field(default_factory=dict)
    # condition -> number of the dataset's items that language lacks
    missing: dict[str, int] = field(default_factory=dict)
    # configured languages not loaded (not asked for): condition -> why
    absent: dict[str, str] = field(default_factory=dict)
    # reason -> number of records left out
    excluded: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    # rows left out by skip_bad_rows: "file row N (item, field): problem"
    skipped: list[str] = field(default_factory=list)


def chosen_first(rb_id: int) -> bool:
    """Whether the chosen response is output_1 for this item: one seeded draw per id, never random."""
    digest = hashlib.sha256(_ORDER_SALT + str(rb_id).encode("ascii")).digest()
    return digest[0] % 2 == 0


def item_id(rb_id: int, prefix: str = f"{REWARDBENCH_SPEC}/") -> str:
    return f"{prefix}{rb_id}"


# --- reading parquet -----------------------------------------------------------------------------


def read_parquet(
    path: Path, required: Sequence[str], schema_hint: str, columns: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The rows of one parquet file as {field: value} (`columns`: field -> the file's column); a
    missing column is an error naming file and column."""
    import pandas as pd  # imported on use (pyarrow engine): `data show sample` needs neither

    try:
        frame = pd.read_parquet(path, engine="pyarrow")
    except Exception as exc:  # pyarrow raises several types for a file that is not parquet
        raise InputError(f"cannot read as parquet ({type(exc).__name__}: {exc})", path=str(path)) from None
    names = dict(columns or {})
    wanted = [names.get(f, f) for f in required]
    for column in wanted:
        if column not in frame.columns:
            raise InputError(
                f"column missing; expected the {schema_hint} schema ({', '.join(wanted)}), "
                f"found {', '.join(map(str, frame.columns))}",
                path=str(path),
                field=column,
            )
    field_of = {column: f for f, column in names.items()}
    rows = frame.to_dict(orient="records")
    return [{field_of.get(str(k), str(k)): v for k, v in row.items()} for row in rows]


def row_id(row: Mapping[str, Any], path: Path, number: int, column: str = "id") -> int:
    value: Any = row.get("id")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    elif value is not None and not isinstance(value, bool | int) and hasattr(value, "__index__"):
        value = int(value.__index__())  # numpy integers
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"id must be an integer, got {value!r}", path=str(path), row=number, field=column)
    return value


def _problem(value: Any) -> str | None:
    """Why a text cell cannot be used, or None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "missing (null)"
    if not isinstance(value, str):
        kind = "a number" if isinstance(value, int | float) else f"a {type(value).__name__}"
        return f"{kind} ({value!r:.40}), not text"
    if not value.strip():
        return "whitespace only" if value else "empty"
    return None


class BadRow(InputError):
    """A row whose prompt, chosen or rejected text cannot be judged (null, empty, not text)."""


def row_texts(
    row: Mapping[str, Any],
    names: Sequence[str],
    path: Path,
    number: int,
    *,
    item: str,
    columns: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The row's text cells; the first unusable one is a BadRow naming file, row, item and column."""
    out: dict[str, str] = {}
    for name in names:
        value = row.get(name)
        problem = _problem(value)
        if problem is not None:
            raise BadRow(
                f"the {_WHAT.get(name, name)} is {problem}. Every row needs a prompt and both "
                f"responses (chosen and rejected) as text. {SKIP_HINT}",
                path=str(path),
                row=number,
                item=item,
                field=(columns or {}).get(name, name),
            )
        out[name] = str(value)
    return out


def skipped_line(exc: InputError) -> str:
    """One line of the skip report for a BadRow."""
    return f"{exc.path} row {exc.row} ({exc.item}, {exc.field}): {exc.reason.split('. ', 1)[0]}"


def optional_text(row: Mapping[str, Any], name: str) -> str | None:
    value = row.get(name)
    return value if isinstance(value, str) else None


def files_of(folder: Path, pattern: str) -> list[Path]:
    return sorted(p for p in folder.glob(pattern) if p.is_file())


# --- the English rows ------------------------------------------------------------------------------


@dataclass(frozen=True)
class English:
    item: Item
    chosen_model: str | None
    rejected_model: str | None


@dataclass
class EnglishSet:
    """A RewardBench-shaped table's records by id, the files read, and the rows left out."""

    records: dict[int, English]
    source: str
    sums: dict[str, str]
    skipped: list[str] = field(default_factory=list)
    # ids whose row was left out (their translations go with them)
    dropped: set[int] = field(default_factory=set)


def _category_of(categories: Mapping[str, Sequence[str]]) -> dict[str, str]:
    return {subset: category for category, subsets in categories.items() for subset in subsets}


def _english_record(
    row: Mapping[str, Any], path: Path, number: int, config: HubDataset, category: Mapping[str, str]
) -> English:
    """One row as an item: chosen and rejected in the item's seeded order; its subset under its
    category when the table has categories."""
    rb_id = row_id(row, path, number, config.columns["id"])
    texts = row_texts(
        row,
        ("subset", *TEXT_COLUMNS),
        path,
        number,
        item=item_id(rb_id, config.id_prefix),
        columns=config.columns,
    )
    subset = texts["subset"].strip()
    first = chosen_first(rb_id)
    cat = category.get(subset, OTHER_CATEGORY) if category else None
    chosen_model, rejected_model = optional_text(row, "chosen_model"), optional_text(row, "rejected_model")
    chosen, rejected = texts["chosen"], texts["rejected"]
    item = Item(
        id=item_id(rb_id, config.id_prefix),
        subset=f"{cat}/{subset}" if cat else subset,
        instruction=texts["prompt"],
        output_1=chosen if first else rejected,
        output_2=rejected if first else chosen,
        label=1 if first else 2,
        metadata={
            "rewardbench_id": rb_id,
            "rewardbench_subset": subset,
            "category": cat,
            "chosen_model": chosen_model,
            "rejected_model": rejected_model,
        },
    )
    return English(item, chosen_model, rejected_model)


def _english_items(paths: Sequence[Path], config: HubDataset, english: EnglishSet, skip: bool) -> None:
    category = _category_of(config.categories)
    for path in paths:
        english.sums[str(path)] = sha256_file(path)
        rows = read_parquet(path, ENGLISH_FIELDS, config.title, config.columns)
        for number, row in enumerate(rows, start=1):
            try:
                record = _english_record(row, path, number, config, category)
            except BadRow as exc:
                if not skip:
                    raise
                english.skipped.append(skipped_line(exc))
                english.dropped.add(row_id(row, path, number, config.columns["id"]))
                continue
            rb_id = int(record.item.metadata["rewardbench_id"])
            if rb_id in english.records:
                raise InputError(
                    f"duplicate id in {config.title}", path=str(path), row=number, item=record.item.id
                )
            english.records[rb_id] = record


def snapshot_folder(
    data_dir: str | Path | None,
    config: HubDataset,
    patterns: Sequence[str],
    *,
    names: Mapping[str, str] | None = None,
) -> tuple[Path, str]:
    """The folder holding a table's files (a local snapshot under `data_dir`, else the download at
    the pinned revision), and the source to record."""
    if data_dir is None:
        local = config.local_dir
        snap = fetch_snapshot(config.repo, config.revision, list(patterns), folder=local, names=names)
        return snap.root, snap.source
    root = Path(data_dir).expanduser()
    if not root.is_dir():
        raise InputError(
            f"no such folder: --data-dir holds {config.local_dir}/ (a snapshot of {config.repo})",
            path=str(data_dir),
        )
    folder = root / config.local_dir
    return folder, f"{folder.resolve()} (snapshot of hf://datasets/{config.repo})"


def load_english(
    data_dir: str | Path | None, *, skip_bad_rows: bool = False, config: HubDataset | None = None
) -> EnglishSet:
    """The rows of a RewardBench-shaped table (RewardBench's when `config` is None)."""
    config = config or hub_dataset(REWARDBENCH_SPEC)
    folder, source = snapshot_folder(data_dir, config, [config.files])
    paths = files_of(folder, config.files)
    if not paths:
        raise InputError(
            f"no {config.title} files: expected {config.files} under {folder} (a snapshot of {config.repo}, "
            f"e.g. `hf download {config.repo} --repo-type dataset --local-dir DIR/{config.local_dir}`)",
            path=str(folder),
        )
    english = EnglishSet(records={}, source=source, sums={})
    _english_items(paths, config, english, skip_bad_rows)
    if not english.records:
        raise InputError(f"{config.title} files hold no usable records", path=str(folder))
    return english


def category_counts(items: Iterable[Item]) -> dict[str, int]:
    return dict(Counter(item.subset.split("/", 1)[0] for item in items))


def skip_reason(name: str) -> str:
    return f"{name} rows with a null, empty or non-text prompt/chosen/rejected (skipped)"


def load_rewardbench(
    data_dir: str | Path | None = None, *, skip_bad_rows: bool = False, config: HubDataset | None = None
) -> Loaded:
    """A RewardBench-shaped table as items (English only; RewardBench's when `config` is None)."""
    config = config or hub_dataset(REWARDBENCH_SPEC)
    english = load_english(data_dir, skip_bad_rows=skip_bad_rows, config=config)
    items = [e.item for e in english.records.values()]
    excluded = {skip_reason(config.title): len(english.skipped)} if english.skipped else {}
    return Loaded(
        items=items,
        source=english.source,
        files=english.sums,
        categories=category_counts(items) if config.categories else {},
        excluded=excluded,
        skipped=list(english.skipped),
    )
