"""Named judges from `configs/judges.toml`: a short name for a spec with its parameters and limits.

`--model gpt41mini` then means `openai:gpt-4.1-mini` at the configured concurrency and rpm, and the
records call the judge `gpt41mini`. Anything not a configured name is parsed as a `PROVIDER:MODEL`
spec with default settings. Flags given on the command line override the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from judgebench.errors import ConfigError
from judgebench.models.base import ModelSpec, ProviderSettings
from judgebench.paths import configs_dir


class JudgeConfig(BaseModel):
    """One `[judges.NAME]` table; unknown keys are refused so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")

    spec: str
    description: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    max_retries: int | None = None
    concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    backoff_initial: float | None = None
    backoff_max: float | None = None
    # request defaults for this judge (the stage applies them to its ModelRequest)
    temperature: float | None = None
    max_tokens: int | None = None

    def settings_fields(self) -> dict[str, Any]:
        names = set(ProviderSettings.model_fields)
        return {k: v for k, v in self.model_dump(include=names).items() if v is not None}

    def request_defaults(self) -> dict[str, Any]:
        return {
            k: v
            for k, v in {"temperature": self.temperature, "max_tokens": self.max_tokens}.items()
            if v is not None
        }


class ResolvedJudge(NamedTuple):
    spec: ModelSpec
    settings: ProviderSettings
    name: str
    request_defaults: dict[str, Any]


def judges_path() -> Path:
    return configs_dir() / "judges.toml"


def load_judges(path: str | Path | None = None) -> dict[str, JudgeConfig]:
    """All named judges in `path` (default `configs/judges.toml`; a missing default file is empty)."""
    file = Path(path) if path is not None else judges_path()
    if not file.exists():
        if path is not None:
            raise ConfigError(f"{file}: judges file not found")
        return {}
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not valid TOML ({exc})") from exc
    unknown_top = set(data) - {"judges"}
    if unknown_top:
        raise ConfigError(
            f"{file}: unknown top-level key '{sorted(unknown_top)[0]}' (expected [judges.NAME] tables)"
        )
    judges: dict[str, JudgeConfig] = {}
    for name, table in (data.get("judges") or {}).items():
        if not isinstance(table, dict):
            raise ConfigError(f"{file}: judges.{name} must be a table")
        try:
            judges[name] = JudgeConfig.model_validate(table)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"]) or "?"
            if err["type"] == "extra_forbidden":
                allowed = ", ".join(JudgeConfig.model_fields)
                raise ConfigError(f"{file}: judges.{name}: unknown key '{key}' (allowed: {allowed})") from exc
            raise ConfigError(f"{file}: judges.{name}.{key}: {err['msg']}") from exc
    return judges


def resolve_judge_full(
    name_or_spec: str, *, path: str | Path | None = None, **overrides: Any
) -> ResolvedJudge:
    """Like `resolve_judge`, also returning the judge's request defaults (temperature, max_tokens).

    `overrides` are ProviderSettings fields from command-line flags; None values are ignored."""
    unknown = set(overrides) - set(ProviderSettings.model_fields)
    if unknown:
        raise ConfigError(
            f"unknown setting(s) {sorted(unknown)}; known: {sorted(ProviderSettings.model_fields)}"
        )
    given = {k: v for k, v in overrides.items() if v is not None}
    judges = load_judges(path)
    config = judges.get(name_or_spec)
    if config is not None:
        where = str(Path(path) if path is not None else judges_path())
        try:
            spec = ModelSpec.parse(config.spec)
        except ConfigError as exc:
            raise ConfigError(f"{where}: judges.{name_or_spec}.spec: {exc}") from exc
        fields = {**config.settings_fields(), **given}
        return ResolvedJudge(spec, ProviderSettings(**fields), name_or_spec, config.request_defaults())
    spec = ModelSpec.parse(name_or_spec)
    return ResolvedJudge(spec, ProviderSettings(**given), spec.text, {})


def resolve_judge(
    name_or_spec: str, *, path: str | Path | None = None, **overrides: Any
) -> tuple[ModelSpec, ProviderSettings, str]:
    """A configured judge name or a `PROVIDER:MODEL` spec -> (spec, settings, name for records)."""
    spec, settings, name, _ = resolve_judge_full(name_or_spec, path=path, **overrides)
    return spec, settings, name
