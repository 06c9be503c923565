"""`load_dataset(SPEC)`: one entry point for every dataset of the registry (data/catalog.py: LLMBar,
the bundled sample, the hub tables of configs/hub_datasets.toml, plugins) and the user's own files.

A `Dataset` carries a checksum over its items' canonical JSON and, for a dataset that carries its
own language variants (M-RewardBench), over each language's variants too, so that every file that
contributes items is covered: a run folder can tell whether it is being resumed on the same data
(RunDir.init refuses to mix two datasets in one run), and the manifest records the sum per condition.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgebench.config.paths import data_dir as bundled_data_dir
from judgebench.data.catalog import DatasetRequest, family_of, resolve
from judgebench.errors import ConfigError, InputError
from judgebench.records import Item, Variant
from judgebench.records.manifest import DatasetEntry

SAMPLE_SPEC = "sample"
LLMBAR_SPEC = "llmbar"


def sample_path() -> Path:
    """The bundled sample set (Item JSONL), `data/sample.jsonl`."""
    return bundled_data_dir() / "sample.jsonl"


def sample_variants_path() -> Path:
    """Ready-made zh/ls variants of the bundled sample (INTERFACE variants format)."""
    return bundled_data_dir() / "sample_variants.jsonl"


def _canonical_sha(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def items_checksum(items: list[Item]) -> str:
    """SHA-256 over the items' canonical JSON (sorted keys, no spaces, UTF-8): stable across runs."""
    return _canonical_sha([item.model_dump(mode="json") for item in items])


def variants_checksum(variants: list[Variant]) -> str:
    """SHA-256 over one condition's variants' canonical JSON, in their order."""
    return _canonical_sha([v.model_dump(mode="json") for v in variants])


def condition_checksums(items: list[Item], variants: Mapping[str, list[Variant]]) -> dict[str, str]:
    """{"en": the items' sum, condition: its variants' sum}; only "en" for a dataset without variants."""
    return {"en": items_checksum(items), **{c: variants_checksum(v) for c, v in sorted(variants.items())}}


def dataset_checksum(sums: Mapping[str, str]) -> str:
    """The dataset's one sum: the items' sum alone (as before) when it has no variants, else one over
    every condition's sum, so a changed translation changes it."""
    if set(sums) == {"en"}:
        return sums["en"]
    return _canonical_sha(dict(sorted(sums.items())))


@dataclass(frozen=True, eq=False)
class Dataset:
    """Items plus where they came from. `checksum` identifies the exact items (order included)."""

    spec: str
    items: list[Item]
    source: str
    subset: str | None = None
    # every file read, with the SHA-256 of its bytes as read
    files: dict[str, str] = field(default_factory=dict)
    # language variants the dataset carries itself (M-RewardBench): condition -> variants
    variants: dict[str, list[Variant]] = field(default_factory=dict)
    # condition -> the dataset's own name for that language (the hub config, e.g. zho_Hans)
    language_configs: dict[str, str] = field(default_factory=dict)
    # condition -> number of items that language lacks (left out of its paired metrics)
    missing: dict[str, int] = field(default_factory=dict)
    # configured languages the copy lacks: condition -> the files that were expected
    absent_languages: dict[str, str] = field(default_factory=dict)
    # reason -> number of source records left out
    excluded: dict[str, int] = field(default_factory=dict)
    # top-level aggregates of the subsets (RewardBench's four categories), when the dataset has them
    categories: dict[str, int] = field(default_factory=dict)
    # rows left out by skip_bad_rows, one line each (file, row, item, field, problem)
    skipped_rows: list[str] = field(default_factory=list)
    skip_bad_rows: bool = False
    checksum: str = field(init=False)
    # condition -> SHA-256 of what that condition reads ("en": the items)
    condition_checksums: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        sums = condition_checksums(self.items, self.variants)
        object.__setattr__(self, "condition_checksums", sums)
        object.__setattr__(self, "checksum", dataset_checksum(sums))

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def by_id(self) -> dict[str, Item]:
        return {item.id: item for item in self.items}

    def subsets(self) -> dict[str, int]:
        """Item count per subset, in order of first appearance."""
        return dict(Counter(item.subset for item in self.items))

    def describe(self) -> dict[str, Any]:
        """The `data show --json` object of INTERFACE.md: items, subsets, labels.

        `labels` always has "1" and "2"; "none" is added only when some items are unlabelled.
        """
        counts = Counter(item.label for item in self.items)
        labels: dict[str, int] = {"1": counts[1], "2": counts[2]}
        if counts[None]:
            labels["none"] = counts[None]
        info: dict[str, Any] = {"items": len(self.items), "subsets": self.subsets()}
        if self.categories:
            info["categories"] = dict(self.categories)
        if self.variants or self.absent_languages:
            info["languages"] = {c: len(v) for c, v in sorted(self.variants.items())}
            info["language_configs"] = dict(sorted(self.language_configs.items()))
            info["missing"] = dict(sorted(self.missing.items()))
            if self.absent_languages:
                info["absent_languages"] = sorted(self.absent_languages)
            # what `checksum` covers: the items ("en") and each language's variants
            info["condition_checksums"] = dict(self.condition_checksums)
        if self.excluded:
            info["excluded"] = dict(self.excluded)
        if self.skipped_rows:
            info["skipped_rows"] = list(self.skipped_rows)
        info["labels"] = labels
        return info

    def provides(self, condition: str) -> bool:
        """Whether the dataset carries its own variants for `condition` (no translation needed)."""
        return condition in self.variants

    def manifest_entry(self, data_dir: str | None = None) -> DatasetEntry:
        """What a run manifest records about its dataset (RunDir.init(dataset=...))."""
        return DatasetEntry(
            spec=self.spec,
            subset=self.subset,
            source=self.source,
            checksum=self.checksum,
            items=len(self.items),
            files=dict(self.files),
            data_dir=data_dir,
            conditions=dict(self.condition_checksums) if self.variants else {},
            skip_bad_rows=self.skip_bad_rows,
            skipped_rows=len(self.skipped_rows),
        )


def select_subset(items: list[Item], subset: str, *, shown: str) -> list[Item]:
    """Items whose subset is `subset` or below it (`Adversarial` matches `Adversarial/Neighbor`)."""
    want = subset.strip().strip("/")

    def match(name: str, case: bool) -> bool:
        a, b = (name, want) if case else (name.lower(), want.lower())
        return a == b or a.startswith(b + "/")

    picked = [item for item in items if match(item.subset, True)]
    if not picked:
        picked = [item for item in items if match(item.subset, False)]
    if not picked:
        # a part of the path, or the family a part begins with: `llmbar-natural` or `llmbar` matches
        # `Chat Hard/llmbar-natural` (RewardBench), `hep` its hep-* subsets
        def part(name: str) -> bool:
            low = want.lower()
            return any(p == low or p.startswith(low + "-") for p in name.lower().split("/"))

        picked = [item for item in items if part(item.subset)]
    if not picked:
        names = list(dict.fromkeys(item.subset for item in items))
        raise InputError(f"no items in subset '{subset}'; subsets: {', '.join(names)}", path=shown)
    return picked


def narrowed_to(spec: str, conditions: Sequence[str] | None) -> str:
    """The dataset a command asked for with its conditions: a family that carries languages
    (`m-rewardbench`) with `--conditions zh,ja` is `m-rewardbench:zh,ja` (the languages asked for are
    the conditions asked for; `en` and conditions it does not carry, such as `ls`, are translated as
    before), so a snapshot holding only those languages serves. Any other spec is returned as it is."""
    request = resolve(spec)
    carried = family_of(request).conditions
    if request.suffix is not None or not carried:
        return spec
    # the names as parsed once (conditions.parse_names, the Study's `conditions`)
    targets = [c for c in conditions or [] if c in carried]
    if not targets:
        return spec
    return f"{request.name}:{','.join(targets)}"


def load_dataset(
    spec: str | Path,
    *,
    data_dir: str | Path | None = None,
    mapping: Mapping[str, str] | None = None,
    subset: str | None = None,
    skip_bad_rows: bool = False,
) -> Dataset:
    """Load SPEC: the name of a registered dataset (`judgebench data list`; e.g. `llmbar`,
    `llmbar:SET`, `sample`, a table of configs/hub_datasets.toml such as `rewardbench` or
    `m-rewardbench[:zh,ja]`), or a path to a .jsonl/.json/.csv/.tsv file. Names win over files of
    that name: write `./sample` for a file.

    `data_dir` is the family's local copy (LLMBar's folder that holds Dataset/; the folder of hub
    snapshots); without it the family downloads what it needs. `mapping` is {field: column} for
    files whose columns have other names. `subset` keeps one subset and those below it.
    `skip_bad_rows` leaves out (and counts) rows a hub dataset cannot use, instead of stopping.
    """
    request = resolve(spec)
    family = family_of(request)
    if mapping and not family.takes_mapping:
        raise ConfigError(f"a field mapping applies to dataset files, not to {family.name}")
    request = DatasetRequest(
        spec=request.spec,
        name=request.name,
        suffix=request.suffix,
        data_dir=data_dir,
        mapping=mapping,
        subset=subset,
        skip_bad_rows=skip_bad_rows,
    )
    dataset: Dataset = family.loader()(request)
    return dataset


def sha256_file(path: Path) -> str:
    """SHA-256 of a small file's bytes (what a Dataset's `files` records)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
