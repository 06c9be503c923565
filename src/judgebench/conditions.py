"""Language conditions as data (configs/conditions.toml): what `translate` writes and `judge` reads."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgebench import defaults
from judgebench.errors import ConfigError, InputError
from judgebench.outside import toml_loads
from judgebench.paths import configs_dir
from judgebench.records.conditions import Condition, ConditionAudit

SOURCE = "en"
__all__ = ["SOURCE", "Condition", "ConditionAudit", "load_conditions", "parse_names", "select_conditions"]
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def conditions_path() -> Path:
    return configs_dir() / "conditions.toml"


def load_conditions(path: str | Path | None = None) -> dict[str, Condition]:
    """All conditions of the file, by name. Errors name the file and the bad entry."""
    file = Path(path) if path else conditions_path()
    try:
        data = toml_loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("conditions file not found", path=str(file)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", path=str(file)) from None
    table: Any = data.get("conditions")
    if not isinstance(table, dict) or not table:
        raise InputError("no [conditions.NAME] tables", path=str(file))
    out: dict[str, Condition] = {}
    for name, body in table.items():
        if not _NAME.match(name) or name == SOURCE:
            raise InputError(
                f"bad condition name '{name}' (lowercase letters/digits; 'en' is the source)", path=str(file)
            )
        try:
            out[name] = Condition.model_validate({"name": name, **body})
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise InputError(err["msg"], path=str(file), field=f"conditions.{name}.{loc}") from None
    return out


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
