"""The importer registry: a format name -> the one module that reads it.

Built-in importers are the modules of this package that define `IMPORTER`; a package adds its own
through the entry point group `judgebench.importers` (each entry point loads an `Importer`), so a new
format is one module and no edit of judgebench. The CLI's `import` help lists this registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from judgebench.errors import ConfigError
from judgebench.importers.log import ImportedLog

ENTRY_POINT_GROUP = "judgebench.importers"


@dataclass(frozen=True)
class ImportOptions:
    """What every import takes beside its files: the judge's name as the run will show it (None: the
    source's own), human-label files, and format settings (`--set KEY=VALUE`)."""

    judge: str | None = None
    human: tuple[Path, ...] = ()
    settings: Mapping[str, str] = field(default_factory=dict)

    def setting(self, key: str, default: str | None = None) -> str | None:
        return self.settings.get(key, default)


@dataclass(frozen=True)
class Importer:
    """One format: its name on the command line, a line of help, and the function that reads it."""

    name: str
    summary: str
    read: Callable[[Sequence[Path], ImportOptions], ImportedLog]
    settings: Mapping[str, str] = field(default_factory=dict)  # KEY -> what it sets
    takes_human: bool = False  # reads --human FILE
    own_command: bool = False  # has its own CLI command and flags (llmbar-results)


def _builtin() -> dict[str, Importer]:
    found: dict[str, Importer] = {}
    package = importlib.import_module("judgebench.importers")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"judgebench.importers.{info.name}")
        importer = getattr(module, "IMPORTER", None)
        if isinstance(importer, Importer):
            found[importer.name] = importer
    return found


def _plugins() -> dict[str, Importer]:
    found: dict[str, Importer] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            importer = point.load()
        except Exception as exc:  # a broken plugin names itself, it does not break judgebench
            raise ConfigError(
                f"importer plugin '{point.name}' ({point.value}) failed to load: {exc}"
            ) from None
        if not isinstance(importer, Importer):
            raise ConfigError(f"importer plugin '{point.name}' ({point.value}) is not an Importer")
        found[importer.name] = importer
    return found


def importers() -> dict[str, Importer]:
    """Every importer by name: the built-in ones, then plugins (a plugin may not replace a built-in)."""
    registry = _builtin()
    for name, importer in _plugins().items():
        if name in registry:
            raise ConfigError(f"importer plugin '{name}' clashes with the built-in importer of that name")
        registry[name] = importer
    return dict(sorted(registry.items()))


def get_importer(name: str) -> Importer:
    registry = importers()
    if name not in registry:
        raise ConfigError(f"no importer '{name}'; formats: {', '.join(registry)}")
    return registry[name]
