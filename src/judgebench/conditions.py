"""Language conditions as data (configs/conditions.toml): what `translate` writes and `judge` reads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgebench.config import defaults
from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError
from judgebench.records.conditions import Condition, ConditionAudit

SOURCE = "en"
__all__ = ["SOURCE", "Condition", "ConditionAudit", "load_conditions", "select_conditions"]
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


def select_conditions(names: list[str] | str | None, *, path: str | Path | None = None) -> list[Condition]:
    """The target conditions a command asked for (default zh, ls), checked against the config."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    names = names or defaults.CONDITIONS.split(",")
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
