"""Probes as data: every `configs/probes/*.toml` file declares one probe, read here and nowhere else.

A probe file names the probe, the steps it is made of (a registered transform, the fields it
touches, its parameters), whether it needs a model call, and which conditions it is applied to.
Adding a probe is adding a file (`tests/probes` adds a toy one from a temporary configs folder).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgebench.config.load import read_config, validate_config
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError, InputError, JudgebenchError
from judgebench.probes.transforms import TRANSFORMS, check_regex

# which texts a step touches: the instruction, an output by number, the gold (`chosen`) or the
# other (`rejected`) output of a labelled item, or both outputs
ProbeField = Literal["instruction", "output_1", "output_2", "chosen", "rejected", "outputs"]
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,23}$")
ALL = "all"


class ProbeStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    transform: str
    fields: list[ProbeField] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known(self) -> ProbeStep:
        if self.transform not in TRANSFORMS:
            raise ValueError(f"unknown transform '{self.transform}'; known: {', '.join(TRANSFORMS)}")
        if self.transform == "template":
            if self.fields:
                raise ValueError("the template transform touches no field (leave `fields` out)")
            templates = self.params.get("templates")
            if (
                not isinstance(templates, list)
                or not templates
                or not all(isinstance(t, str) for t in templates)
            ):
                raise ValueError("the template transform needs params.templates: a list of template files")
        elif not self.fields:
            raise ValueError(f"transform '{self.transform}' needs `fields` (the texts it rewrites)")
        if self.transform == "regex":
            problem = check_regex(self.params)
            if problem:
                raise ValueError(problem)
        return self


class ProbeSpec(BaseModel):
    """One probe file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    needs_model: bool = False
    # the conditions it is applied to: the source (`en`), a language (`zh`), or `all` judged ones
    languages: list[str] = Field(default_factory=lambda: [ALL])
    # items whose texts the probe leaves exactly as they were get no variant (e.g. no Markdown to
    # strip): judging the same prompt again measures nothing but the cache
    skip_unchanged: bool = True
    steps: list[ProbeStep]
    # length categories the data declares (the length probe): dataset subset -> category, used
    # where an item's metadata has no `length_category` (probes/lengths.py measures the rest)
    categories: dict[str, str] = Field(default_factory=dict)
    # where it was read from, for messages
    path: str = ""

    @model_validator(mode="after")
    def _check(self) -> ProbeSpec:
        if not _NAME.match(self.name):
            raise ValueError(f"bad probe name '{self.name}' (lowercase letters, digits, '_'; at most 24)")
        if not self.steps:
            raise ValueError("a probe needs at least one [[steps]] entry")
        wanted = any(TRANSFORMS[s.transform].needs_model for s in self.steps)
        if self.needs_model != wanted:
            raise ValueError(
                f"needs_model = {str(self.needs_model).lower()}, but its transforms "
                f"{'need' if wanted else 'make no'} model call(s)"
            )
        if sum(s.transform == "template" for s in self.steps) > 1:
            raise ValueError("at most one template step")
        return self

    def templates(self) -> list[str]:
        """The judge template files of a template probe (relative to configs/templates/), else []."""
        for step in self.steps:
            if step.transform == "template":
                return [str(t) for t in step.params["templates"]]
        return []

    def instances(self) -> list[str]:
        """The conditions it makes on the source: itself, or one per template (`template-1`, ...)."""
        templates = self.templates()
        if len(templates) > 1:
            return [f"{self.name}-{k}" for k in range(1, len(templates) + 1)]
        return [self.name]

    def template_of(self, instance: str) -> str | None:
        templates = self.templates()
        if not templates:
            return None
        return templates[self.instances().index(instance)]

    def applies_to(self, base: str) -> bool:
        return ALL in self.languages or base in self.languages


def probes_dir() -> Path:
    return configs_dir() / "probes"


def _load_file(file: Path) -> ProbeSpec:
    data, text = read_config(file)
    spec = validate_config(data, ProbeSpec, path=file, text=text)
    return spec.model_copy(update={"path": str(file)})


def load_probes(folder: str | Path | None = None) -> dict[str, ProbeSpec]:
    """Every probe of the folder (default configs/probes/), by name, in file-name order. Errors name
    the file and the bad key; two files declaring one name is an error."""
    root = Path(folder) if folder is not None else probes_dir()
    out: dict[str, ProbeSpec] = {}
    if not root.is_dir():
        return out
    for file in sorted(root.glob("*.toml")):
        spec = _load_file(file)
        if spec.name in out:
            raise InputError(
                f"probe '{spec.name}' is declared twice (also in {out[spec.name].path})", path=str(file)
            )
        out[spec.name] = spec
    return out


def select_probes(names: str | Sequence[str] | None, folder: str | Path | None = None) -> list[ProbeSpec]:
    """The probes a command asked for (`length,format` or `all`), checked against the configs."""
    if names is None:
        return []
    wanted = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    wanted = [n for n in wanted if n]
    known = load_probes(folder)
    if wanted == [ALL]:
        return list(known.values())
    missing = [n for n in wanted if n not in known]
    if missing:
        where = folder or probes_dir()
        raise ConfigError(f"unknown probe '{missing[0]}'; declared in {where}: {', '.join(known) or 'none'}")
    return [known[n] for n in dict.fromkeys(wanted)]


def probes_help(lead: str) -> str:
    """`--probes`' help: `lead`, then the probes declared now (configs/probes/, or JUDGEBENCH_CONFIGS),
    so a probe added as a file is named with no edit to the CLI. A broken probe file does not break
    the help: it says so, and the command names the file and key when run."""
    try:
        known = ", ".join(load_probes())
    except JudgebenchError as exc:
        known = f"none readable ({exc})"
    return f"{lead} (declared: {known or 'none'}; or all)."
