"""The model-family table (self-preference, issue 31): configs/model_families.toml, read by the
simulated judge (the families of the answers it is shown) and by the report (judge_family.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from judgebench.errors import InputError
from judgebench.outside import toml_loads
from judgebench.paths import configs_dir
from judgebench.records.families import FamilyTable

FAMILIES_FILE = "model_families.toml"


def load_family_table(path: Path | None = None) -> FamilyTable:
    """The family table; a bad entry is an error naming the file and the entry."""
    file = path or configs_dir() / FAMILIES_FILE
    try:
        data = toml_loads(file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read the model families ({exc})", path=str(file)) from None
    patterns: list[tuple[str, str]] = []
    for index, entry in enumerate(data.get("patterns", [])):
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(v, str) and v for v in entry)):
            raise InputError(
                f"expected [PATTERN, FAMILY] (two non-empty strings), got {entry!r}",
                path=str(file),
                field=f"patterns[{index}]",
            )
        patterns.append((entry[0].lower(), entry[1]))
    providers = data.get("providers", {})
    if not isinstance(providers, dict) or not all(isinstance(v, str) for v in providers.values()):
        raise InputError('expected a table of provider = "family"', path=str(file), field="providers")
    return FamilyTable(tuple(patterns), dict(providers))
