"""configs/hub_datasets.toml as typed records: one table per hub dataset of RewardBench's shape
(a prompt, a chosen and a rejected response, a subset, an integer id per row), its pinned commit,
its column names, its languages when it carries them, and what is known of the files at each commit
(so that a commit known to lack a language is refused by name before anything is downloaded).

Each table is a dataset of the registry (data/catalog.py) with no code: `data/hub_family.py` loads
any of them."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from judgebench.errors import InputError
from judgebench.outside import toml_loads
from judgebench.paths import configs_dir

# the names of the two tables judgebench ships; kept for callers that ask for these two by name
REWARDBENCH_SPEC = "rewardbench"
M_REWARDBENCH_SPEC = "m-rewardbench"

# field -> the column that holds it, unless a table's [NAME.columns] says otherwise
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
_KEYS = {
    "repo",
    "revision",
    "local_dir",
    "files",
    "title",
    "description",
    "english",
    "id_prefix",
    "columns",
    "categories",
    "languages",
    "revisions",
    "example_counts",
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


def _facts(revision: str, body: Any) -> RevisionFacts:
    if not isinstance(body, dict):
        raise TypeError(f"revisions.{revision} must be a table")
    rows = body.get("rows", {})
    if not isinstance(rows, dict):
        raise TypeError(f"revisions.{revision}.rows must be a table of counts")
    return RevisionFacts(
        revision=revision,
        note=str(body.get("note", "")),
        lacks=tuple(str(c) for c in body.get("lacks", [])),
        rows={str(k): int(v) for k, v in rows.items()},
    )


def _table(name: str, body: dict[str, Any]) -> HubDataset:
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; a table takes {', '.join(sorted(_KEYS))}")
    columns = {str(k): str(v) for k, v in dict(body.get("columns", {})).items()}
    if bad := sorted(set(columns) - set(DEFAULT_COLUMNS)):
        raise ValueError(f"columns.{bad[0]} is not a field; fields: {', '.join(DEFAULT_COLUMNS)}")
    languages = {str(k): str(v) for k, v in dict(body.get("languages", {})).items()}
    english = str(body["english"]) if "english" in body else None
    if languages and english is None:
        raise ValueError("a table with languages names the table of its English items: english = NAME")
    if languages and "{config}" not in str(body["files"]):
        raise ValueError("files must hold {config} (a language's hub config) when there are languages")
    return HubDataset(
        name=name,
        repo=str(body["repo"]),
        revision=str(body["revision"]),
        local_dir=str(body["local_dir"]),
        files=str(body["files"]),
        title=str(body.get("title", name)),
        description=str(body.get("description", f"{body['repo']} from the Hugging Face hub")),
        english=english,
        id_prefix=str(body.get("id_prefix", f"{name}/")),
        columns={**DEFAULT_COLUMNS, **columns},
        categories={str(k): [str(s) for s in v] for k, v in dict(body.get("categories", {})).items()},
        languages=languages,
        revisions={str(k): _facts(str(k), v) for k, v in dict(body.get("revisions", {})).items()},
        example_counts={str(k): int(v) for k, v in dict(body.get("example_counts", {})).items()},
    )


def hub_datasets() -> dict[str, HubDataset]:
    """Every table of configs/hub_datasets.toml, in file order (JUDGEBENCH_CONFIGS moves the file);
    JUDGEBENCH_HF_REVISION_<NAME> overrides a table's revision. A bad table is named with the file."""
    file = hub_datasets_path()
    try:
        data = toml_loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("hub datasets config not found", path=str(file)) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"not valid TOML ({exc})", path=str(file)) from None
    out: dict[str, HubDataset] = {}
    for name, body in data.items():
        if not isinstance(body, dict):
            raise InputError(f"{name} must be a table ([{name}])", path=str(file), field=name)
        try:
            entry = _table(name, body)
        except KeyError as exc:
            raise InputError(f"bad [{name}] table (missing key {exc})", path=str(file), field=name) from None
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"bad [{name}] table ({type(exc).__name__}: {exc})", path=str(file), field=name
            ) from None
        override = os.environ.get(revision_env(name), "").strip()
        out[name] = replace(entry, revision=override, overridden=True) if override else entry
    for entry in out.values():
        if entry.english is not None and entry.english not in out:
            raise InputError(
                f"[{entry.name}] names english = {entry.english!r}, which is no table here",
                path=str(file),
                field=f"{entry.name}.english",
            )
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
