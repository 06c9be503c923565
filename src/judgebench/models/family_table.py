"""The model-family table (self-preference, issue 31): configs/model_families.toml, read by the
simulated judge (the families of the answers it is shown) and by the report (judge_family.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.records.family_names import FamilyTable

FAMILIES_FILE = "model_families.toml"


_FAMILY = Annotated[str, StringConstraints(min_length=1)]


class FamiliesFile(BaseModel):
    """configs/model_families.toml: `patterns` ([PATTERN, FAMILY] pairs, first match wins) and
    `[providers]` (provider = family)."""

    model_config = ConfigDict(extra="forbid")

    patterns: list[tuple[_FAMILY, _FAMILY]] = Field(default_factory=list)
    providers: dict[str, str] = Field(default_factory=dict)


def load_family_table(path: Path | None = None) -> FamilyTable:
    """The family table; a bad entry is an error naming the file and the entry."""
    table = load_config(path or configs_dir() / FAMILIES_FILE, FamiliesFile)
    patterns = tuple((pattern.lower(), family) for pattern, family in table.patterns)
    return FamilyTable(patterns, table.providers)
