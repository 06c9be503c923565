"""A multilingual hub dataset (a table of configs/hub_datasets.toml with `english` and `languages`;
M-RewardBench, CohereLabsCommunity/multilingual-reward-bench, one config per language) as the
variants of its English table's items (RewardBench's), one condition per language.

Its records carry RewardBench's ids: each language config becomes the variants of one condition
(configs/hub_datasets.toml maps `zh` to `zho_Hans`, ...), aligned with the English items by id.
Alignment is checked, never assumed: an id RewardBench lacks, an id twice in one config, or a record
whose chosen/rejected model differs from RewardBench's for that id is an error naming the file and
the id. Items absent from a language are counted (`missing`) and that condition simply has no variant
for them; RewardBench items in no language are counted (`excluded`) and left out.

`m-rewardbench` asks for every configured language, `m-rewardbench:zh,ja` for those only. A language
asked for that the snapshot (or the pinned commit) lacks is an error naming it and the revision, never
a silent "absent": the commit pinned before had only 17 of the 23 languages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgebench.data.hub import COMPLETE, HubDownloadError, sha256_file, snapshot_root
from judgebench.data.hubconfig import (
    M_REWARDBENCH_SPEC,
    HubDataset,
    hub_dataset,
    hub_datasets,
    hub_datasets_path,
)
from judgebench.data.rewardbench import (
    TEXT_COLUMNS,
    BadRow,
    English,
    Loaded,
    category_counts,
    files_of,
    item_id,
    load_english,
    optional_text,
    read_parquet,
    row_id,
    row_texts,
    skip_reason,
    skipped_line,
    snapshot_folder,
)
from judgebench.errors import ConfigError, InputError
from judgebench.records import Variant

LANGUAGE_FIELDS = ("id", *TEXT_COLUMNS)


def requested_languages(names: Sequence[str] | None, config: HubDataset) -> list[str]:
    """The conditions asked for (all configured ones when None); an unknown one is an error."""
    if not config.languages:
        raise ConfigError(f"[{config.name}.languages] is empty in {hub_datasets_path()}")
    if names is None:
        return sorted(config.languages)
    wanted = [n.strip() for n in names if n.strip()]
    unknown = [n for n in wanted if n not in config.languages]
    if unknown or not wanted:
        raise InputError(
            f"{config.title} has no language {', '.join(unknown) or '(none named)'}: write "
            f"{config.name}:zh,ja,... with conditions among {', '.join(sorted(config.languages))}"
        )
    return sorted(dict.fromkeys(wanted))


def _named(conditions: Sequence[str], config: HubDataset) -> str:
    return ", ".join(f"{c} ({config.languages[c]})" for c in conditions)


def _check_known_gaps(requested: Sequence[str], config: HubDataset) -> None:
    """A pinned commit recorded as lacking a language asked for stops the load before any download."""
    facts = config.facts()
    if facts is None or not facts.lacks:
        return
    lacking = [c for c in requested if config.languages[c] in facts.lacks]
    if not lacking:
        return
    complete = config.complete_revision()
    fix = (
        f"unset {config.override_env}" if config.overridden else f"fix the revision in {hub_datasets_path()}"
    )
    raise HubDownloadError(
        f"{config.title} revision {config.revision} ({facts.note}) has no test parquet for "
        f"{_named(lacking, config)}. The first commit that holds all {len(config.languages)} languages is "
        f"{complete}: {fix}, or ask only for languages that commit holds ({config.name}:ja,es,...)"
    )


def _check_alignment(
    row: Mapping[str, Any],
    english: English,
    path: Path,
    number: int,
    *,
    config_name: str,
    known_subsets: frozenset[str],
    base: str,
) -> None:
    """The record must be the translation of RewardBench's record with the same id: its models (and
    its `source`, when that names a RewardBench subset) must be RewardBench's for that id."""
    subset = str(english.item.metadata["rewardbench_subset"])
    source = optional_text(row, "source")
    if source is not None and source.strip() in known_subsets and source.strip() != subset:
        raise InputError(
            f"{config_name} puts this id in {source.strip()!r}, {base} in {subset!r}: the ids of the "
            f"two datasets do not line up (a different {base} revision?)",
            path=str(path),
            row=number,
            item=english.item.id,
            field="source",
        )
    for name, expected in (
        ("chosen_model", english.chosen_model),
        ("rejected_model", english.rejected_model),
    ):
        got = optional_text(row, name)
        if got is not None and expected is not None and got.strip() != expected.strip():
            raise InputError(
                f"{config_name} says {got!r} where {base}'s record with this id says {expected!r}: "
                f"the ids of the two datasets do not line up (a different {base} revision?)",
                path=str(path),
                row=number,
                item=english.item.id,
                field=name,
            )


class _LanguageReader:
    """Reads one language config's files into variants, checking every row against the English one."""

    def __init__(
        self,
        english: Mapping[int, English],
        dropped: set[int],
        sums: dict[str, str],
        skip: bool,
        tables: tuple[HubDataset, HubDataset],
    ) -> None:
        self.config, self.base = tables
        self.english = english
        self.dropped = dropped
        self.sums = sums
        self.skip = skip
        self.known = frozenset(str(e.item.metadata["rewardbench_subset"]) for e in english.values())
        self.skipped: list[str] = []

    def read(self, condition: str, config_name: str, paths: Sequence[Path]) -> dict[int, Variant]:
        out: dict[int, Variant] = {}
        first_row: dict[int, tuple[Path, int]] = {}
        for path in paths:
            self.sums[str(path)] = sha256_file(path)
            rows = read_parquet(path, LANGUAGE_FIELDS, self.config.title, self.config.columns)
            for number, row in enumerate(rows, start=1):
                rb_id = row_id(row, path, number, self.config.columns["id"])
                if rb_id in first_row:
                    where = first_row[rb_id]
                    raise InputError(
                        f"duplicate id in {config_name} (first at {where[0].name} row {where[1]})",
                        path=str(path),
                        row=number,
                        item=item_id(rb_id, self.base.id_prefix),
                    )
                first_row[rb_id] = (path, number)
                if rb_id in self.dropped:  # its English row was skipped: the translation goes too
                    continue
                variant = self._variant(
                    row, path, number, rb_id, condition=condition, config_name=config_name
                )
                if variant is not None:
                    out[rb_id] = variant
        return out

    def _variant(
        self, row: Mapping[str, Any], path: Path, number: int, rb_id: int, *, condition: str, config_name: str
    ) -> Variant | None:
        source = self.english.get(rb_id)
        if source is None:
            raise InputError(
                f"id {rb_id} of {config_name} is not in {self.base.title}'s rows: the datasets do "
                "not line up (check both revisions in configs/hub_datasets.toml)",
                path=str(path),
                row=number,
                item=item_id(rb_id, self.base.id_prefix),
                field=self.config.columns["id"],
            )
        _check_alignment(
            row, source, path, number, config_name=config_name, known_subsets=self.known, base=self.base.title
        )
        try:
            texts = row_texts(
                row, TEXT_COLUMNS, path, number, item=source.item.id, columns=self.config.columns
            )
        except BadRow as exc:
            if not self.skip:
                raise
            self.skipped.append(skipped_line(exc))
            return None
        first = source.item.label == 1
        chosen, rejected = texts["chosen"], texts["rejected"]
        return Variant(
            item_id=source.item.id,
            condition=condition,
            instruction=texts["prompt"],
            output_1=chosen if first else rejected,
            output_2=rejected if first else chosen,
            source=f"dataset:{self.config.name}",
        )


def _m_rewardbench_root(
    data_dir: str | Path | None, config: HubDataset, requested: Sequence[str]
) -> tuple[Path, str]:
    if data_dir is None:
        patterns = {config.pattern(c): c for c in requested}
        names = {p: f"{c} ({config.languages[c]})" for p, c in patterns.items()}
        return snapshot_folder(None, config, list(patterns), names=names)
    folder = Path(data_dir).expanduser() / config.local_dir
    if not folder.is_dir():
        raise InputError(
            f"no {config.title} snapshot: --data-dir holds {config.local_dir}/ with {config.files} "
            f"(a snapshot of {config.repo} at revision {config.revision})",
            path=str(folder),
        )
    return folder, f"{folder.resolve()} (snapshot of hf://datasets/{config.repo})"


def _lacking_error(
    folder: Path, config: HubDataset, requested: Sequence[str], lacking: Sequence[str]
) -> InputError:
    held = [c for c in sorted(config.languages) if files_of(folder, config.pattern(c))]
    expected = "; ".join(f"{c} ({config.languages[c]}): no {config.pattern(c)}" for c in lacking)
    wanted = {config.languages[c] for c in lacking}
    older = [f for f in config.revisions.values() if set(f.lacks) & wanted]
    hint = f" (revision {older[0].revision[:12]} lacked {', '.join(older[0].lacks)})" if older else ""
    partial = f"{config.name}:{','.join(held) if held else 'LANG,...'}"
    return InputError(
        f"this {config.title} snapshot lacks {len(lacking)} of the {len(requested)} languages asked for: "
        f"{expected}. judgebench pins revision {config.revision}, which holds all "
        f"{len(config.languages)}; a snapshot of an older commit misses some{hint}. Download that revision "
        f"(`hf download {config.repo} --repo-type dataset --revision {config.revision} --local-dir "
        f"DIR/{config.local_dir}`), or ask only for the languages this copy holds: --dataset {partial}",
        path=str(folder),
    )


def load_m_rewardbench(
    data_dir: str | Path | None = None,
    *,
    languages: Sequence[str] | None = None,
    skip_bad_rows: bool = False,
    config: HubDataset | None = None,
) -> Loaded:
    """The English items a multilingual table (M-RewardBench's when `config` is None) holds in some
    language asked for, with their variants."""
    config = config or hub_dataset(M_REWARDBENCH_SPEC)
    base = hub_dataset(str(config.english))
    requested = requested_languages(languages, config)
    if data_dir is None:
        _check_known_gaps(requested, config)
    english = load_english(data_dir, skip_bad_rows=skip_bad_rows, config=base)
    folder, source = _m_rewardbench_root(data_dir, config, requested)
    paths = {c: files_of(folder, config.pattern(c)) for c in requested}
    lacking = [c for c in requested if not paths[c]]
    if lacking:
        raise _lacking_error(folder, config, requested, lacking)
    reader = _LanguageReader(english.records, english.dropped, english.sums, skip_bad_rows, (config, base))
    by_language = {c: reader.read(c, config.languages[c], paths[c]) for c in requested}
    held = set().union(*(set(v) for v in by_language.values()))
    items = [e.item for rb_id, e in english.records.items() if rb_id in held]
    excluded: dict[str, int] = {}
    if english.skipped:
        excluded[skip_reason(base.title) + ", with their translations"] = len(english.skipped)
    if reader.skipped:
        excluded[skip_reason(config.title)] = len(reader.skipped)
    if len(items) < len(english.records):
        excluded[f"{base.name} items in no language config"] = len(english.records) - len(items)
    variants = {
        condition: [found[rb_id] for rb_id in english.records if rb_id in found]
        for condition, found in by_language.items()
    }
    spec = f"{config.name}:{','.join(requested)}"
    absent = {
        c: f"not asked for; name it in the dataset spec ({spec},{c}) to load it"
        for c in sorted(config.languages)
        if c not in by_language
    }
    return Loaded(
        items=items,
        source=f"{source}; English: {english.source}",
        files=english.sums,
        variants=variants,
        configs={c: config.languages[c] for c in requested},
        missing={condition: len(items) - len(found) for condition, found in variants.items()},
        absent=absent,
        excluded=excluded,
        categories=category_counts(items) if base.categories else {},
        skipped=[*english.skipped, *reader.skipped],
    )


# --- availability (`data list`) -------------------------------------------------------------------


def holds_snapshots(data_dir: str | Path) -> bool:
    """Whether a --data-dir holds the snapshot folder of some hub dataset."""
    root = Path(data_dir).expanduser()
    return any((root / c.local_dir).is_dir() for c in hub_datasets().values())


def held_languages(data_dir: str | Path, config: HubDataset | None = None) -> list[str]:
    """The languages (M-RewardBench's when `config` is None) whose files a local snapshot holds."""
    config = config or hub_dataset(M_REWARDBENCH_SPEC)
    root = Path(data_dir).expanduser() / config.local_dir
    return sorted(c for c in config.languages if files_of(root, config.pattern(c)))


def availability(config: HubDataset, data_dir: str | Path | None) -> str:
    """Where a hub dataset is: a local snapshot under `data_dir`, the download cache, or neither."""
    if data_dir is None:
        cached = (snapshot_root(config.local_dir, config.revision) / COMPLETE).is_file()
        return "download cache" if cached else "downloads on use"
    root = Path(data_dir).expanduser()
    base = hub_dataset(config.english) if config.english else config
    english = bool(files_of(root / base.local_dir, base.files))
    if not config.languages:
        return "local copy" if english else "missing"
    languages, total = held_languages(root, config), len(config.languages)
    if not english or not languages:
        return "missing"
    if len(languages) == total:
        return f"local copy ({total} of {total} languages)"
    return (
        f"local copy ({len(languages)} of {total} languages; load them as "
        f"{config.name}:{','.join(languages)})"
    )
