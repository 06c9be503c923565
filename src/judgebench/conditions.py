"""Language conditions as data (configs/conditions.toml): what `translate` writes and `judge` reads."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgebench.config import defaults
from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError
from judgebench.records.condition_specs import Condition, ConditionAudit

SOURCE = "en"
__all__ = ["SOURCE", "Condition", "ConditionAudit", "load_conditions", "parse_names", "select_conditions"]
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def conditions_path() -> Path:
    return configs_dir() / "conditions.toml"


class ConditionsFile(BaseModel):
    """configs/conditions.toml: `[conditions.NAME]` tables (each a `Condition` but for its name)."""

    model_config = ConfigDict(extra="forbid")

    conditions: dict[str, Condition] = Field(min_length=1)

    @field_validator("conditions", mode="before")
    @classmethod
    def _named(cls, tables: Any) -> Any:
        """Each table's name is its key: a lowercase name that is not the source's."""
        if not isinstance(tables, dict):
            return tables
        for name in tables:
            if not _NAME.match(name) or name == SOURCE:
                raise ValueError(
                    f"bad condition name '{name}' (lowercase letters/digits; 'en' is the source)"
                )
        return {n: {"name": n, **t} if isinstance(t, dict) else t for n, t in tables.items()}


def load_conditions(path: str | Path | None = None) -> dict[str, Condition]:
    """All conditions of the file, by name. Errors name the file and the bad entry."""
    return load_config(Path(path) if path else conditions_path(), ConditionsFile).conditions


def parse_names(value: str | Sequence[str] | None) -> list[str] | None:
    """The condition names a `--conditions` value (`en,zh,ls`) or a list gives, in order, each once: the
    one place a comma string of conditions is read (the Study, the dataset's languages and the CLI call
    it). None stays None (the stage's default); a value that names no condition is an error."""
    if value is None:
        return None
    parts = value.split(",") if isinstance(value, str) else list(value)
    names = list(dict.fromkeys(n.strip() for n in parts if n.strip()))
    if not names:
        raise ConfigError(f"--conditions '{value}' names no condition; e.g. --conditions en,zh,ls")
    return names


def select_conditions(
    names: Sequence[str] | str | None, *, path: str | Path | None = None
) -> list[Condition]:
    """The target conditions a command asked for (default zh, ls), checked against the config; the
    source (en) is not a target and is left out."""
    names = parse_names(names) or parse_names(defaults.CONDITIONS) or []
    known = load_conditions(path)
    chosen: list[Condition] = []
    for name in names:
        if name == SOURCE:
            continue
        if name not in known:
            raise ConfigError(
                f"unknown condition '{name}'; defined in {path or conditions_path()}: {', '.join(known)}"
            )
        chosen.append(known[name])
    return chosen
