"""The dataset registry: every dataset family `load_dataset` knows, and what `data list`, the API's
descriptions and the CLI's `--dataset` help say about each (they are generated from here; no other
module keeps a list of dataset names).

A family is a name (the SPEC, or NAME:SUFFIX when it takes a suffix), a one-line description, how it
takes a suffix, the language conditions it carries (none, or those it holds variants for, which need
no translator), and its loader (`module:function`, imported on first use, given a `DatasetRequest`,
returning a `Dataset`). Three kinds arrive here:

- the shapes judgebench codes itself, one module each (`sample`, `llmbar`), registered below;
- every table of configs/hub_datasets.toml (RewardBench's shape: a table and no code);
- the `judgebench.datasets` entry points of other packages, each naming a `DatasetFamily`.

A SPEC that names no family is the path of a file (`generic.py`).
"""

from __future__ import annotations

import importlib
import logging
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError, JudgebenchError
from judgebench.outside import toml_loads

if TYPE_CHECKING:
    from judgebench.data.dataset import Dataset

logger = logging.getLogger(__name__)

PLUGIN_GROUP = "judgebench.datasets"


@dataclass(frozen=True)
class DatasetRequest:
    """What a loader is asked for: SPEC split into the family's name and its suffix, and the flags."""

    spec: str  # as given
    name: str  # the family
    suffix: str | None  # what followed NAME:, if anything
    data_dir: str | Path | None = None
    mapping: Mapping[str, str] | None = None
    subset: str | None = None
    skip_bad_rows: bool = False


@dataclass(frozen=True)
class Listing:
    """One row of `data list`."""

    spec: str
    what: str
    available: str  # "yes", "local copy", "download cache", "downloads on use", "missing", ...


Loader = Callable[[DatasetRequest], "Dataset"]
Lister = Callable[[str, str | None], list[Listing]]
Holder = Callable[[str, str | Path], list[str]]


@dataclass(frozen=True)
class DatasetFamily:
    """One registered dataset family. `load`, `listing` and `held` are callables or `module:function`
    strings, imported when first called (so the help can be made without importing any loader)."""

    name: str
    description: str
    load: str | Loader
    # NAME:SUFFIX, as the help shows it ("SET", "LANG,..."), and what it selects; None: no suffix
    suffix: str | None = None
    suffix_help: str = ""
    # language conditions it carries variants for (judged without a translator)
    conditions: tuple[str, ...] = ()
    # whether --field FIELD=COLUMN applies (files of the user's own)
    takes_mapping: bool = False
    # its rows of `data list` ((name, data_dir) -> rows); None: one row, "not listed"
    listing: str | Lister | None = None
    # (name, data_dir) -> the conditions a local copy holds, for a family with conditions
    held: str | Holder | None = None

    def loader(self) -> Loader:
        found: Loader = _resolve(self.load, self.name)
        return found

    def rows(self, data_dir: str | None) -> list[Listing]:
        if self.listing is None:
            return [Listing(self.name, self.description, "not listed")]
        lister: Lister = _resolve(self.listing, self.name)
        return lister(self.name, data_dir)

    def held_conditions(self, data_dir: str | Path) -> list[str] | None:
        """The conditions a local copy under `data_dir` holds (None: the family cannot tell)."""
        if self.held is None:
            return None
        holder: Holder = _resolve(self.held, self.name)
        return holder(self.name, data_dir)


def _resolve(target: str | Any, name: str) -> Any:
    if not isinstance(target, str):
        return target
    module_name, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"dataset {name}: cannot import {target} ({exc})") from None


_BUILTIN: dict[str, DatasetFamily] = {}


def register(family: DatasetFamily) -> None:
    """Add a family judgebench codes itself (a package outside uses the entry point group instead)."""
    _BUILTIN[family.name] = family


def unregister(name: str) -> None:
    _BUILTIN.pop(name, None)


# A SPEC that names no family: a file of the user's own.
FILES = DatasetFamily(
    name="PATH",
    description="the path of a .jsonl, .json, .csv or .tsv file of your own (write ./NAME for a file named "
    "like a dataset)",
    load="judgebench.data.generic_dataset:load_path",
    takes_mapping=True,
)


def _hub_family(name: str, languages: Mapping[str, str], description: str) -> DatasetFamily:
    """A table of configs/hub_datasets.toml as a family, loaded by data/hub_family.py."""
    return DatasetFamily(
        name=name,
        description=f"{description}; {len(languages)} languages, no translator needed"
        if languages
        else description,
        load="judgebench.data.hub_family:load",
        suffix="LANG,..." if languages else None,
        suffix_help="those languages only, as --conditions selects them too" if languages else "",
        conditions=tuple(sorted(languages)),
        listing="judgebench.data.hub_family:listing",
        held="judgebench.data.hub_family:held",
    )


@cache
def _plugins() -> dict[str, DatasetFamily]:
    """Families other packages declare as entry points (each names a DatasetFamily), read once."""
    # imported here: importlib.metadata brings email, zipfile and socket (~50 ms), which the help,
    # made from judgebench's own families and the hub tables, does not pay for
    from importlib.metadata import entry_points

    found: dict[str, DatasetFamily] = {}
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            family = ep.load()
        except Exception as exc:  # a broken plugin names itself, and judgebench goes on without it
            logger.warning("dataset plugin %s (%s) cannot be loaded: %s", ep.name, ep.value, exc)
            continue
        if not isinstance(family, DatasetFamily):
            raise ConfigError(
                f"entry point {ep.name} = {ep.value} of group {PLUGIN_GROUP} is a {type(family).__name__}, "
                "not a judgebench.data.catalog.DatasetFamily"
            )
        found[family.name.lower()] = family
    return found


# each hub table's languages (condition -> hub config) and description
HubTables = dict[str, tuple[dict[str, str], str]]


def _hub_tables_unchecked() -> HubTables:
    """Each hub table's languages and description, read as plain TOML without its model: what a help
    page names (the help loads no pydantic; loading a dataset validates the whole file, data/hubconfig.py)."""
    path = configs_dir() / "hub_datasets.toml"
    try:
        tables = toml_loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    out: dict[str, tuple[dict[str, str], str]] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ConfigError(f"hub_datasets.toml: [{name}] is not a table")
        languages = table.get("languages") or {}
        about = table.get("description") or f"{table.get('repo', name)} from the Hugging Face hub"
        out[name] = (dict(languages) if isinstance(languages, dict) else {}, str(about))
    return out


def _hub_tables_checked() -> HubTables:
    hub_datasets = _resolve("judgebench.data.hubconfig:hub_datasets", "hub tables")
    return {name: (dict(t.languages), t.description) for name, t in hub_datasets().items()}


# (path, checked) -> ((mtime_ns, size) of the file when read, what it held)
_HUB_READ: dict[tuple[str, bool], tuple[tuple[int, int], HubTables]] = {}


def _hub_tables(checked: bool) -> HubTables:
    """The hub tables, read (and with `checked` validated) once per version of the file: `resolve` and
    `family_of` ask for them on every dataset a command names, and each read parsed and validated the
    whole file again. A file edited since (another mtime or size) is read anew; a file that cannot be
    read is left to the reader, which names the problem, and nothing of it is kept."""
    path = configs_dir() / "hub_datasets.toml"
    read = _hub_tables_checked if checked else _hub_tables_unchecked
    try:
        stat = path.stat()
    except OSError:
        return read()
    stamp = (stat.st_mtime_ns, stat.st_size)
    key = (str(path), checked)
    kept = _HUB_READ.get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    tables = read()
    _HUB_READ[key] = (stamp, tables)
    return tables


def families(*, plugins: bool = True, checked: bool = True) -> dict[str, DatasetFamily]:
    """Every family by name: judgebench's own, then the hub tables, then the plugins' (a plugin whose
    name is taken is left out with a warning; `plugins=False` leaves them all out). `checked=False`
    reads the hub tables without validating them (help pages)."""
    out = dict(_BUILTIN)
    tables = _hub_tables(checked)
    for name, (languages, description) in tables.items():
        out.setdefault(name, _hub_family(name, languages, description))
    for name, family in _plugins().items() if plugins else ():
        if name in out:
            logger.warning("dataset plugin %s is left out: judgebench has a dataset of that name", name)
            continue
        out[name] = family
    return out


def resolve(spec: str | Path) -> DatasetRequest:
    """SPEC as a request: the family it names (PATH when none) and its suffix. A suffix given to a
    family that takes none is an error naming what it takes."""
    text = str(spec).strip()
    name, sep, suffix = text.partition(":")
    family = families().get(name.lower())
    if family is None:
        return DatasetRequest(spec=text, name=FILES.name, suffix=None)
    if sep and family.suffix is None:
        raise ConfigError(f"dataset '{text}': {family.name} takes no :SUFFIX; write {family.name}")
    return DatasetRequest(spec=text, name=family.name, suffix=suffix if sep else None)


def family_of(request: DatasetRequest) -> DatasetFamily:
    return FILES if request.name == FILES.name else families()[request.name]


def _for_help() -> tuple[list[DatasetFamily], str]:
    """The families a help text names, and a note when some cannot be read: a help page (made when
    the CLI starts) never fails on a bad config; loading a dataset reports the error in full. The
    plugins' families are left to `data list` (finding them costs every command ~50 ms at start)."""
    try:
        return list(families(plugins=False, checked=False).values()), ""
    except JudgebenchError as exc:
        return list(_BUILTIN.values()), f" (hub datasets left out: {exc})"


def spec_names() -> str:
    """The short form for a --dataset option: each family's name (NAME[:SUFFIX]), then a file."""
    found, note = _for_help()
    names = [f"{f.name}[:{f.suffix}]" if f.suffix is not None else f.name for f in found]
    return ", ".join(names) + f" or a .jsonl/.json/.csv/.tsv file (plugins' too: judgebench data list){note}"


def spec_help() -> str:
    """The help of every SPEC argument and --dataset option: each family, then PATH."""
    parts = []
    found, note = _for_help()
    for family in found:
        part = f"{family.name} ({family.description})"
        if family.suffix is not None:
            part += f", {family.name}:{family.suffix} ({family.suffix_help})"
        parts.append(part)
    return "; ".join(parts) + f"; or {FILES.description}. Plugins' datasets: judgebench data list.{note}"


register(
    DatasetFamily(
        name="sample",
        description="the bundled sample set",
        load="judgebench.data.generic_dataset:load_sample",
        takes_mapping=True,
        listing="judgebench.data.generic_dataset:sample_listing",
    )
)
register(
    DatasetFamily(
        name="imported",
        description="the items of a run made by `judgebench import` (--data-dir: that run's folder)",
        load="judgebench.data.imported:load_family",
        listing="judgebench.data.imported:listing",
    )
)
register(
    DatasetFamily(
        name="llmbar",
        description="LLMBar, 419 items: Natural and the four Adversarial sets",
        load="judgebench.data.llmbar:load_family",
        suffix="SET",
        suffix_help="another of its sets, e.g. llmbar:CaseStudy/Constraint, llmbar:Processed/MT-Bench, "
        "llmbar:Adversarial",
        listing="judgebench.data.llmbar:listing",
    )
)
