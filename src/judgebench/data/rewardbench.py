"""RewardBench (allenai/reward-bench, `filtered`) and M-RewardBench (CohereLabsCommunity/multilingual-
reward-bench, one config per language) as Judge-LS datasets.

Each RewardBench record becomes one pairwise item `rewardbench/<id>`: `output_1`/`output_2` are the
chosen and the rejected response in an order drawn per item from its id (seeded, the same in every
language and on every machine), `label` says which one is the chosen, so gold is not always output 1.
Its subset is `<category>/<subset>` (`Chat Hard/llmbar-natural`), so RewardBench's four categories are
aggregates like LLMBar's `Adversarial`, and `--subset llmbar` keeps the five LLMBar subsets.

M-RewardBench's records carry RewardBench's ids: each language config becomes the variants of one
condition (configs/hub_datasets.toml maps `zh` to `zho_Hans`, ...), aligned with the English items by
id. Alignment is checked, never assumed: an id RewardBench lacks, an id twice in one config, or a
record whose chosen/rejected model differs from RewardBench's for that id is an error naming the file
and the id. Items absent from a language are counted (`missing`) and that condition simply has no
variant for them; RewardBench items in no language are counted (`excluded`) and left out.

Local snapshots (`--data-dir DIR`) are in the hub's own layout: `DIR/reward-bench/data/filtered-*.
parquet` and `DIR/multilingual-reward-bench/<config>/test-*.parquet`. Without `--data-dir` the files
are fetched from the hub at the pinned revision (data/hub.py).
"""

from __future__ import annotations

import hashlib
import math
import os
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgebench.data.hub import COMPLETE, fetch_snapshot, sha256_file, snapshot_root
from judgebench.errors import ConfigError, InputError
from judgebench.paths import configs_dir
from judgebench.records import Item, Variant

REWARDBENCH_SPEC = "rewardbench"
M_REWARDBENCH_SPEC = "m-rewardbench"
ID_PREFIX = "rewardbench/"
OTHER_CATEGORY = "Other"
REWARDBENCH_COLUMNS = ("id", "prompt", "chosen", "rejected", "subset")
M_REWARDBENCH_COLUMNS = ("id", "prompt", "chosen", "rejected")
_ORDER_SALT = b"judgebench:rewardbench-order:"


@dataclass(frozen=True)
class HubDataset:
    """One entry of configs/hub_datasets.toml."""

    name: str
    repo: str
    revision: str
    local_dir: str
    files: str
    categories: dict[str, list[str]] = field(default_factory=dict)
    # condition name -> hub config
    languages: dict[str, str] = field(default_factory=dict)


@dataclass
class Loaded:
    """What a RewardBench-family loader returns to `load_dataset`."""

    items: list[Item]
    source: str
    files: dict[str, str]
    # condition -> its variants (M-RewardBench); empty for RewardBench
    variants: dict[str, list[Variant]] = field(default_factory=dict)
    # condition -> hub config it was read from
    configs: dict[str, str] = field(default_factory=dict)
    # condition -> number of the dataset's items that language lacks
    missing: dict[str, int] = field(default_factory=dict)
    # configured languages with no config in the snapshot: condition -> the files expected
    absent: dict[str, str] = field(default_factory=dict)
    # reason -> number of records left out
    excluded: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)


def hub_datasets_path() -> Path:
    return configs_dir() / "hub_datasets.toml"


def hub_dataset(name: str) -> HubDataset:
    """The configured hub dataset `name`; JUDGEBENCH_HF_REVISION_<NAME> overrides its revision."""
    file = hub_datasets_path()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("hub datasets config not found", path=str(file)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", path=str(file)) from None
    body = data.get(name)
    if not isinstance(body, dict):
        raise InputError(f"no [{name}] table", path=str(file))
    try:
        entry = HubDataset(
            name=name,
            repo=str(body["repo"]),
            revision=str(body["revision"]),
            local_dir=str(body["local_dir"]),
            files=str(body["files"]),
            categories={str(k): [str(s) for s in v] for k, v in dict(body.get("categories", {})).items()},
            languages={str(k): str(v) for k, v in dict(body.get("languages", {})).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"bad [{name}] table ({type(exc).__name__}: {exc})", path=str(file)) from None
    override = os.environ.get("JUDGEBENCH_HF_REVISION_" + name.upper().replace("-", "_"))
    if override:
        entry = HubDataset(**{**entry.__dict__, "revision": override.strip()})
    return entry


def language_configs() -> dict[str, str]:
    """Condition name -> M-RewardBench config (`zh` -> `zho_Hans`), as configured."""
    return dict(hub_dataset(M_REWARDBENCH_SPEC).languages)


def chosen_first(rb_id: int) -> bool:
    """Whether the chosen response is output_1 for this item: one seeded draw per id, never random."""
    digest = hashlib.sha256(_ORDER_SALT + str(rb_id).encode("ascii")).digest()
    return digest[0] % 2 == 0


def item_id(rb_id: int) -> str:
    return f"{ID_PREFIX}{rb_id}"


# --- reading parquet -----------------------------------------------------------------------------


def _read_parquet(path: Path, required: Sequence[str], schema_hint: str) -> list[dict[str, Any]]:
    """The rows of one parquet file as dicts; a missing column is an error naming file and field."""
    import pandas as pd  # pyarrow engine

    try:
        frame = pd.read_parquet(path, engine="pyarrow")
    except Exception as exc:  # pyarrow raises several types for a file that is not parquet
        raise InputError(f"cannot read as parquet ({type(exc).__name__}: {exc})", path=str(path)) from None
    for column in required:
        if column not in frame.columns:
            raise InputError(
                f"column missing; expected the {schema_hint} schema ({', '.join(required)}), "
                f"found {', '.join(map(str, frame.columns))}",
                path=str(path),
                field=column,
            )
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict(orient="records")]


def _row_id(row: Mapping[str, Any], path: Path, number: int) -> int:
    value: Any = row.get("id")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    elif value is not None and not isinstance(value, bool | int) and hasattr(value, "__index__"):
        value = int(value.__index__())  # numpy integers
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"id must be an integer, got {value!r}", path=str(path), line=number, field="id")
    return value


def _text(row: Mapping[str, Any], name: str, path: Path, number: int, rb_id: int) -> str:
    """A text column; null becomes "" (the audit flags an empty variant field, so it is counted)."""
    value = row.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if not isinstance(value, str):
        raise InputError(
            f"must be text, got {type(value).__name__}",
            path=str(path),
            line=number,
            item=item_id(rb_id),
            field=name,
        )
    return value


def _optional(row: Mapping[str, Any], name: str) -> str | None:
    value = row.get(name)
    return value if isinstance(value, str) else None


def _files(folder: Path, pattern: str) -> list[Path]:
    return sorted(p for p in folder.glob(pattern) if p.is_file())


# --- RewardBench ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _English:
    item: Item
    chosen_model: str | None
    rejected_model: str | None


def _category_of(categories: Mapping[str, Sequence[str]]) -> dict[str, str]:
    return {subset: category for category, subsets in categories.items() for subset in subsets}


def _english_record(row: Mapping[str, Any], path: Path, number: int, category: Mapping[str, str]) -> _English:
    """One RewardBench row as an item: chosen and rejected in the item's seeded order."""
    rb_id = _row_id(row, path, number)
    texts = {
        name: _text(row, name, path, number, rb_id) for name in ("subset", "prompt", "chosen", "rejected")
    }
    for name, value in texts.items():
        if not value.strip():
            raise InputError("empty text", path=str(path), line=number, item=item_id(rb_id), field=name)
    subset = texts["subset"].strip()
    first = chosen_first(rb_id)
    cat = category.get(subset, OTHER_CATEGORY)
    chosen_model, rejected_model = _optional(row, "chosen_model"), _optional(row, "rejected_model")
    chosen, rejected = texts["chosen"], texts["rejected"]
    item = Item(
        id=item_id(rb_id),
        subset=f"{cat}/{subset}",
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
    return _English(item, chosen_model, rejected_model)


def _english_items(paths: Sequence[Path], config: HubDataset) -> tuple[dict[int, _English], dict[str, str]]:
    """RewardBench records by RewardBench id, and {file: sha256}."""
    category = _category_of(config.categories)
    out: dict[int, _English] = {}
    sums: dict[str, str] = {}
    for path in paths:
        sums[str(path)] = sha256_file(path)
        for number, row in enumerate(_read_parquet(path, REWARDBENCH_COLUMNS, "RewardBench"), start=1):
            record = _english_record(row, path, number, category)
            rb_id = int(record.item.metadata["rewardbench_id"])
            if rb_id in out:
                raise InputError(
                    "duplicate id in RewardBench", path=str(path), line=number, item=record.item.id
                )
            out[rb_id] = record
    return out, sums


def _rewardbench_root(data_dir: str | Path | None, config: HubDataset) -> tuple[Path, str]:
    """The folder holding RewardBench's files, and the source to record."""
    if data_dir is None:
        snap = fetch_snapshot(config.repo, config.revision, [config.files], folder=config.local_dir)
        return snap.root, snap.source
    root = Path(data_dir).expanduser()
    if not root.is_dir():
        raise InputError(
            f"no such folder: --data-dir holds {config.local_dir}/ (a snapshot of {config.repo})",
            path=str(data_dir),
        )
    folder = root / config.local_dir
    return folder, f"{folder.resolve()} (snapshot of hf://datasets/{config.repo})"


def _load_english(data_dir: str | Path | None) -> tuple[dict[int, _English], str, dict[str, str]]:
    config = hub_dataset(REWARDBENCH_SPEC)
    folder, source = _rewardbench_root(data_dir, config)
    paths = _files(folder, config.files)
    if not paths:
        raise InputError(
            f"no RewardBench files: expected {config.files} under {folder} (a snapshot of {config.repo}, "
            "e.g. `hf download allenai/reward-bench --repo-type dataset --local-dir DIR/reward-bench`)",
            path=str(folder),
        )
    english, sums = _english_items(paths, config)
    if not english:
        raise InputError("RewardBench files hold no records", path=str(folder))
    return english, source, sums


def _category_counts(items: Iterable[Item]) -> dict[str, int]:
    return dict(Counter(item.subset.split("/", 1)[0] for item in items))


def load_rewardbench(data_dir: str | Path | None = None) -> Loaded:
    """RewardBench's filtered split as items (English only)."""
    english, source, sums = _load_english(data_dir)
    items = [e.item for e in english.values()]
    return Loaded(items=items, source=source, files=sums, categories=_category_counts(items))


# --- M-RewardBench -------------------------------------------------------------------------------


def _check_alignment(
    row: Mapping[str, Any],
    english: _English,
    path: Path,
    number: int,
    *,
    config_name: str,
    known_subsets: frozenset[str],
) -> None:
    """The record must be the translation of RewardBench's record with the same id: its models (and
    its `source`, when that names a RewardBench subset) must be RewardBench's for that id."""
    subset = str(english.item.metadata["rewardbench_subset"])
    source = _optional(row, "source")
    if source is not None and source.strip() in known_subsets and source.strip() != subset:
        raise InputError(
            f"{config_name} puts this id in {source.strip()!r}, RewardBench in {subset!r}: the ids of the "
            "two datasets do not line up (a different RewardBench revision?)",
            path=str(path),
            line=number,
            item=english.item.id,
            field="source",
        )
    for name, expected in (
        ("chosen_model", english.chosen_model),
        ("rejected_model", english.rejected_model),
    ):
        got = _optional(row, name)
        if got is not None and expected is not None and got.strip() != expected.strip():
            raise InputError(
                f"{config_name} says {got!r} where RewardBench's record with this id says {expected!r}: "
                "the ids of the two datasets do not line up (a different RewardBench revision?)",
                path=str(path),
                line=number,
                item=english.item.id,
                field=name,
            )


def _language_variants(
    condition: str,
    config_name: str,
    paths: Sequence[Path],
    english: Mapping[int, _English],
    sums: dict[str, str],
) -> dict[int, Variant]:
    out: dict[int, Variant] = {}
    first_row: dict[int, tuple[Path, int]] = {}
    known = frozenset(str(e.item.metadata["rewardbench_subset"]) for e in english.values())
    for path in paths:
        sums[str(path)] = sha256_file(path)
        for number, row in enumerate(_read_parquet(path, M_REWARDBENCH_COLUMNS, "M-RewardBench"), start=1):
            rb_id = _row_id(row, path, number)
            if rb_id in first_row:
                where = first_row[rb_id]
                raise InputError(
                    f"duplicate id in {config_name} (first at {where[0].name} line {where[1]})",
                    path=str(path),
                    line=number,
                    item=item_id(rb_id),
                )
            first_row[rb_id] = (path, number)
            source = english.get(rb_id)
            if source is None:
                raise InputError(
                    f"id {rb_id} of {config_name} is not in RewardBench's filtered split: the datasets do "
                    "not line up (check both revisions in configs/hub_datasets.toml)",
                    path=str(path),
                    line=number,
                    item=item_id(rb_id),
                    field="id",
                )
            _check_alignment(row, source, path, number, config_name=config_name, known_subsets=known)
            chosen = _text(row, "chosen", path, number, rb_id)
            rejected = _text(row, "rejected", path, number, rb_id)
            first = source.item.label == 1
            out[rb_id] = Variant(
                item_id=source.item.id,
                condition=condition,
                instruction=_text(row, "prompt", path, number, rb_id),
                output_1=chosen if first else rejected,
                output_2=rejected if first else chosen,
                source=f"dataset:{M_REWARDBENCH_SPEC}",
            )
    return out


def _m_rewardbench_root(data_dir: str | Path | None, config: HubDataset) -> tuple[Path, str]:
    if data_dir is None:
        patterns = [config.files.format(config=name) for name in config.languages.values()]
        snap = fetch_snapshot(config.repo, config.revision, patterns, folder=config.local_dir)
        return snap.root, snap.source
    folder = Path(data_dir).expanduser() / config.local_dir
    return folder, f"{folder.resolve()} (snapshot of hf://datasets/{config.repo})"


def load_m_rewardbench(data_dir: str | Path | None = None) -> Loaded:
    """RewardBench items that M-RewardBench holds in some language, with every language's variants."""
    config = hub_dataset(M_REWARDBENCH_SPEC)
    if not config.languages:
        raise ConfigError(f"[{M_REWARDBENCH_SPEC}.languages] is empty in {hub_datasets_path()}")
    english, en_source, sums = _load_english(data_dir)
    folder, source = _m_rewardbench_root(data_dir, config)
    if data_dir is not None and not folder.is_dir():
        raise InputError(
            f"no M-RewardBench snapshot: --data-dir holds {config.local_dir}/ with <config>/test-*.parquet "
            f"(a snapshot of {config.repo})",
            path=str(folder),
        )
    by_language: dict[str, dict[int, Variant]] = {}
    configs: dict[str, str] = {}
    absent: dict[str, str] = {}
    for condition, name in sorted(config.languages.items()):
        pattern = config.files.format(config=name)
        paths = _files(folder, pattern)
        if not paths:
            absent[condition] = str(folder / pattern)
            continue
        by_language[condition] = _language_variants(condition, name, paths, english, sums)
        configs[condition] = name
    if not by_language:
        raise InputError(
            "no language config of M-RewardBench found (expected e.g. "
            f"{config.files.format(config='zho_Hans')} under {folder}; configured: "
            f"{', '.join(sorted(config.languages.values()))})",
            path=str(folder),
        )
    held = set().union(*(set(v) for v in by_language.values()))
    items = [e.item for rb_id, e in english.items() if rb_id in held]
    excluded: dict[str, int] = {}
    if len(items) < len(english):
        excluded["rewardbench items in no language config"] = len(english) - len(items)
    variants = {
        condition: [found[rb_id] for rb_id in english if rb_id in found]
        for condition, found in by_language.items()
    }
    missing = {condition: len(items) - len(found) for condition, found in variants.items()}
    return Loaded(
        items=items,
        source=f"{source}; English: {en_source}",
        files=sums,
        variants=variants,
        configs=configs,
        missing=missing,
        absent=absent,
        excluded=excluded,
        categories=_category_counts(items),
    )


# --- availability (`data list`) -------------------------------------------------------------------


def holds_snapshots(data_dir: str | Path) -> bool:
    """Whether a --data-dir holds a RewardBench or M-RewardBench snapshot folder."""
    root = Path(data_dir).expanduser()
    names = (hub_dataset(REWARDBENCH_SPEC).local_dir, hub_dataset(M_REWARDBENCH_SPEC).local_dir)
    return any((root / name).is_dir() for name in names)


def availability(data_dir: str | Path | None) -> dict[str, str]:
    """{spec: where it is}: a local snapshot under `data_dir`, the download cache, or neither."""
    rb, mrb = hub_dataset(REWARDBENCH_SPEC), hub_dataset(M_REWARDBENCH_SPEC)
    if data_dir is None:
        return {
            spec: "download cache"
            if (snapshot_root(c.local_dir, c.revision) / COMPLETE).is_file()
            else "downloads on use"
            for spec, c in ((REWARDBENCH_SPEC, rb), (M_REWARDBENCH_SPEC, mrb))
        }
    root = Path(data_dir).expanduser()
    english = bool(_files(root / rb.local_dir, rb.files))
    languages = [
        c for c, name in mrb.languages.items() if _files(root / mrb.local_dir, mrb.files.format(config=name))
    ]
    return {
        REWARDBENCH_SPEC: "local copy" if english else "missing",
        M_REWARDBENCH_SPEC: (
            f"local copy ({len(languages)} of {len(mrb.languages)} languages)"
            if english and languages
            else "missing"
        ),
    }
