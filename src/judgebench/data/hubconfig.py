"""configs/hub_datasets.toml as typed records: one table per hub dataset of RewardBench's shape
(a prompt, a chosen and a rejected response, a subset, an integer id per row), its pinned commit,
its column names, its languages when it carries them, and what is known of the files at each commit
(so that a commit known to lack a language is refused by name before anything is downloaded).

Each table is a dataset of the registry (data/catalog.py) with no code: `data/hub_family.py` loads
any of them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from judgebench.config.load import key_line, read_config, validate_config
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigFileError, InputError

# the names of the two tables judgebench ships; kept for callers that ask for these two by name
REWARDBENCH_SPEC = "rewardbench"
M_REWARDBENCH_SPEC = "m-rewardbench"

# field -> the column that holds it, unless a table's [NAME.columns] says otherwise
ColumnField = Literal[
    "id", "prompt", "chosen", "rejected", "subset", "chosen_model", "rejected_model", "source"
]
DEFAULT_COLUMNS: dict[str, str] = {
    "id": "id",
    "prompt": "prompt",
    "chosen": "chosen",
    "rejected": "rejected",
    "subset": "subset",
    "chosen_model": "chosen_model",
    "rejected_model": "rejected_model",
    "source": "source",
}


@dataclass(frozen=True)
class RevisionFacts:
    """What the repository's public history says about one commit."""

    revision: str
    note: str = ""
    # language configs (zho_Hans, ...) that have no test parquet at this commit
    lacks: tuple[str, ...] = ()
    # rows per file group (a config name, or `filtered` for RewardBench), where known
    rows: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class HubDataset:
    """One table of configs/hub_datasets.toml."""

    name: str
    repo: str
    revision: str
    local_dir: str
    files: str
    # how messages name it (RewardBench), and the line `data list` and the help show
    title: str = ""
    description: str = ""
    # a multilingual table: the table whose rows are the English items its languages translate
    english: str | None = None
    # item ids are <id_prefix><row id>
    id_prefix: str = ""
    columns: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_COLUMNS))
    categories: dict[str, list[str]] = field(default_factory=dict)
    # condition name -> hub config
    languages: dict[str, str] = field(default_factory=dict)
    # commit -> what is known of it
    revisions: dict[str, RevisionFacts] = field(default_factory=dict)
    # subset -> its weight in the leaderboard score (the dataset's own EXAMPLE_COUNTS)
    example_counts: dict[str, int] = field(default_factory=dict)
    # whether `revision` was set by JUDGEBENCH_HF_REVISION_<NAME> rather than the config
    overridden: bool = False

    @property
    def override_env(self) -> str:
        return revision_env(self.name)

    def facts(self) -> RevisionFacts | None:
        """What is known of the commit this dataset is pinned to (None: nothing recorded)."""
        return self.revisions.get(self.revision)

    def complete_revision(self) -> str | None:
        """A recorded commit that lacks no language (the one to point a user at)."""
        if (facts := self.revisions.get(self.revision)) is not None and not facts.lacks:
            return self.revision
        return next((r for r, f in self.revisions.items() if not f.lacks), None)

    def pattern(self, condition: str) -> str:
        """The files of one language (`files` with {config} filled in)."""
        return self.files.format(config=self.languages[condition])


def hub_datasets_path() -> Path:
    return configs_dir() / "hub_datasets.toml"


def revision_env(name: str) -> str:
    return "JUDGEBENCH_HF_REVISION_" + name.upper().replace("-", "_")


class RevisionTable(BaseModel):
    """`[NAME.revisions.<commit>]`: what the repository's public history says about one commit."""

    model_config = ConfigDict(extra="forbid")

    note: str = ""
    lacks: list[str] = Field(default_factory=list)
    rows: dict[str, int] = Field(default_factory=dict)


class HubTable(BaseModel):
    """One `[NAME]` table of configs/hub_datasets.toml, as written (`HubDataset` is it resolved)."""

    model_config = ConfigDict(extra="forbid")

    repo: str
    revision: str
    local_dir: str
    files: str
    title: str | None = None
    description: str | None = None
    english: str | None = None
    id_prefix: str | None = None
    columns: dict[ColumnField, str] = Field(default_factory=dict)
    categories: dict[str, list[str]] = Field(default_factory=dict)
    languages: dict[str, str] = Field(default_factory=dict)
    revisions: dict[str, RevisionTable] = Field(default_factory=dict)
    example_counts: dict[str, int] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _languages(self) -> HubTable:
        if self.languages and self.english is None:
            raise ValueError("a table with languages names the table of its English items: english = NAME")
        if self.languages and "{config}" not in self.files:
            raise ValueError("files must hold {config} (a language's hub config) when there are languages")
        return self

    def resolved(self, name: str) -> HubDataset:
        return HubDataset(
            name=name,
            repo=self.repo,
            revision=self.revision,
            local_dir=self.local_dir,
            files=self.files,
            title=self.title if self.title is not None else name,
            description=self.description or f"{self.repo} from the Hugging Face hub",
            english=self.english,
            id_prefix=self.id_prefix if self.id_prefix is not None else f"{name}/",
            columns={**DEFAULT_COLUMNS, **{str(k): v for k, v in self.columns.items()}},
            categories=dict(self.categories),
            languages=dict(self.languages),
            revisions={
                commit: RevisionFacts(revision=commit, note=f.note, lacks=tuple(f.lacks), rows=dict(f.rows))
                for commit, f in self.revisions.items()
            },
            example_counts=dict(self.example_counts),
        )


class HubDatasetsFile(RootModel[dict[str, HubTable]]):
    """configs/hub_datasets.toml: one table per hub dataset."""


def hub_datasets() -> dict[str, HubDataset]:
    """Every table of configs/hub_datasets.toml, in file order (JUDGEBENCH_CONFIGS moves the file);
    JUDGEBENCH_HF_REVISION_<NAME> overrides a table's revision. A bad table is named with the file."""
    file = hub_datasets_path()
    data, text = read_config(file)
    tables = validate_config(data, HubDatasetsFile, path=file, text=text).root
    out: dict[str, HubDataset] = {}
    for name, table in tables.items():
        if table.english is not None and table.english not in tables:
            raise ConfigFileError(
                f"english = {table.english!r} names no table of this file",
                path=str(file),
                key=f"{name}.english",
                line=key_line(text, (name, "english")),
            )
        entry = table.resolved(name)
        override = os.environ.get(revision_env(name), "").strip()
        out[name] = replace(entry, revision=override, overridden=True) if override else entry
    return out


def hub_dataset(name: str) -> HubDataset:
    """The configured hub dataset `name`."""
    found = hub_datasets().get(name)
    if found is None:
        raise InputError(f"no [{name}] table", path=str(hub_datasets_path()))
    return found


def language_configs() -> dict[str, str]:
    """Condition name -> M-RewardBench config (`zh` -> `zho_Hans`), as configured."""
    return dict(hub_dataset(M_REWARDBENCH_SPEC).languages)
