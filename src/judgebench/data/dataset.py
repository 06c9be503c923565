"""`load_dataset(SPEC)`: one entry point for LLMBar, the bundled sample and the user's own files.

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

from judgebench.data.generic import load_file
from judgebench.data.hubconfig import hub_dataset
from judgebench.data.imported import IMPORTED_SPEC, load_imported
from judgebench.data.llmbar import load_llmbar
from judgebench.data.m_rewardbench import load_m_rewardbench
from judgebench.data.rewardbench import (
    M_REWARDBENCH_SPEC,
    REWARDBENCH_SPEC,
    Loaded,
    load_rewardbench,
)
from judgebench.errors import ConfigError, InputError
from judgebench.paths import data_dir as bundled_data_dir
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


def narrowed_to(spec: str, conditions: Sequence[str] | str | None) -> str:
    """The dataset a command asked for with its conditions: `m-rewardbench` with `--conditions zh,ja`
    is `m-rewardbench:zh,ja` (the languages asked for are the conditions asked for; `en` and
    conditions it does not carry, such as `ls`, are translated as before), so a snapshot holding only
    those languages serves. Any other spec is returned as it is."""
    if str(spec).strip().lower() != M_REWARDBENCH_SPEC:
        return spec
    if isinstance(conditions, str):
        conditions = [c.strip() for c in conditions.split(",") if c.strip()]
    carried = hub_dataset(M_REWARDBENCH_SPEC).languages
    targets = [c for c in conditions or [] if c in carried]
    if not targets:
        return spec
    return f"{M_REWARDBENCH_SPEC}:{','.join(targets)}"


def load_dataset(
    spec: str | Path,
    *,
    data_dir: str | Path | None = None,
    mapping: Mapping[str, str] | None = None,
    subset: str | None = None,
    skip_bad_rows: bool = False,
) -> Dataset:
    """Load SPEC: `llmbar`, `llmbar:SET` (e.g. `CaseStudy/Constraint`, `Processed/LLMEval^2`),
    `rewardbench`, `m-rewardbench` (with the variants of all its languages), `m-rewardbench:zh,ja`
    (those languages only), `sample`, or a path to a .jsonl/.json/.csv/.tsv file.

    For `rewardbench` / `m-rewardbench`, `data_dir` holds local hub snapshots (`reward-bench/`,
    `multilingual-reward-bench/`); without it they are fetched from the hub at pinned revisions. A
    language asked for that the copy lacks is an error. `skip_bad_rows` leaves out (and counts) their
    rows whose prompt, chosen or rejected text is null or empty, instead of stopping at the first.

    `data_dir` is a local LLMBar copy (the folder that holds Dataset/); without it LLMBar is downloaded
    into the cache. `mapping` is {field: column} for files whose columns have other names. `subset`
    keeps one subset and those below it. The names `llmbar` and `sample` win over files of that name:
    write `./sample` for a file.
    """
    text = str(spec).strip()
    lowered = text.lower()
    family = lowered.split(":", 1)[0]
    hub = family == M_REWARDBENCH_SPEC or lowered == REWARDBENCH_SPEC
    if hub:
        if mapping:
            raise ConfigError(f"a field mapping applies to dataset files, not to {family}")
        if family == REWARDBENCH_SPEC:
            loaded = load_rewardbench(data_dir, skip_bad_rows=skip_bad_rows)
        else:
            languages = text.split(":", 1)[1].split(",") if ":" in text else None
            loaded = load_m_rewardbench(data_dir, languages=languages, skip_bad_rows=skip_bad_rows)
        spec_name = lowered if family == REWARDBENCH_SPEC or ":" not in text else text
        return _from_loaded(spec_name, loaded, subset, skip_bad_rows)
    if lowered == LLMBAR_SPEC or lowered.startswith(LLMBAR_SPEC + ":"):
        if mapping:
            raise ConfigError("a field mapping applies to dataset files, not to LLMBar")
        name = text.split(":", 1)[1] if ":" in text else None
        items, source, files = load_llmbar(name, data_dir=data_dir)
    elif lowered == IMPORTED_SPEC:
        items, source, files = load_imported(data_dir)
    elif lowered == SAMPLE_SPEC:
        path = sample_path()
        if not path.is_file():
            raise InputError(
                "the bundled sample set is missing: judgebench expects data/sample.jsonl of its source "
                "checkout (or set JUDGEBENCH_DATA)",
                path=str(path),
            )
        items = load_file(path, mapping=mapping, id_prefix="sample")
        source, files = str(path), {str(path): _sha256_file(path)}
    else:
        path = Path(text).expanduser()
        if not path.exists():
            raise InputError(
                f"no such file; SPEC is {LLMBAR_SPEC}, {LLMBAR_SPEC}:SET, {REWARDBENCH_SPEC}, "
                f"{M_REWARDBENCH_SPEC}, {SAMPLE_SPEC}, or the path of a .jsonl, .json, .csv or .tsv file",
                path=text,
            )
        items = load_file(path, mapping=mapping)
        source, files = str(path.resolve()), {text: _sha256_file(path)}
    if subset is not None:
        items = select_subset(items, subset, shown=text)
    return Dataset(spec=text, items=items, source=source, subset=subset, files=files)


def _from_loaded(spec: str, loaded: Loaded, subset: str | None, skip_bad_rows: bool) -> Dataset:
    """A RewardBench-family dataset, narrowed to `subset` (its variants and counts with it)."""
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


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
