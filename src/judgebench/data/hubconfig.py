"""configs/hub_datasets.toml as typed records: the hub datasets, their pinned commits, and what is
known of the files at each commit (so that a commit known to lack a language is refused by name
before anything is downloaded)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from judgebench.errors import InputError
from judgebench.outside import toml_loads
from judgebench.paths import configs_dir

REWARDBENCH_SPEC = "rewardbench"
M_REWARDBENCH_SPEC = "m-rewardbench"


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
    """One entry of configs/hub_datasets.toml."""

    name: str
    repo: str
    revision: str
    local_dir: str
    files: str
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


def hub_dataset(name: str) -> HubDataset:
    """The configured hub dataset `name`; JUDGEBENCH_HF_REVISION_<NAME> overrides its revision."""
    file = hub_datasets_path()
    try:
        data = toml_loads(file.read_text(encoding="utf-8"))
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
            revisions={str(k): _facts(str(k), v) for k, v in dict(body.get("revisions", {})).items()},
            example_counts={str(k): int(v) for k, v in dict(body.get("example_counts", {})).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"bad [{name}] table ({type(exc).__name__}: {exc})", path=str(file)) from None
    override = os.environ.get(revision_env(name), "").strip()
    if override:
        entry = replace(entry, revision=override, overridden=True)
    return entry


def language_configs() -> dict[str, str]:
    """Condition name -> M-RewardBench config (`zh` -> `zho_Hans`), as configured."""
    return dict(hub_dataset(M_REWARDBENCH_SPEC).languages)
