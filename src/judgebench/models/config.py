"""Named judges from `configs/judges.toml`, and building a client for a name or a spec.

`--model gpt41mini` then means `openai:gpt-4.1-mini` at the configured concurrency and rpm, and the
records call the judge `gpt41mini`. Anything not a configured name is parsed as a `PROVIDER:MODEL`
spec with default settings. Flags given on the command line override the file: they arrive as one
`SettingsOverrides` (`build_client`, the api layer's way to a `ModelClient`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ConfigDict, Field, ValidationError

from judgebench.errors import ConfigError
from judgebench.models.budget import Budget
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from judgebench.models.pricing import PriceTable
from judgebench.models.registry import ModelSpec
from judgebench.models.settings import ProviderSettings, SettingsOverrides
from judgebench.paths import configs_dir
from judgebench.records.numbers import Temperature

__all__ = [
    "JudgeConfig",
    "ResolvedJudge",
    "build_client",
    "judges_path",
    "load_judges",
    "resolve_judge",
    "resolve_judge_full",
]


class JudgeConfig(SettingsOverrides):
    """One `[judges.NAME]` table: a spec, its settings (every `SettingsOverrides` field) and request
    defaults; unknown keys are refused so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid", frozen=False)

    spec: str
    description: str | None = None
    # request defaults for this judge (the stage applies them to its ModelRequest)
    temperature: Temperature | None = None
    max_tokens: int | None = Field(default=None, ge=1)

    def overrides(self) -> SettingsOverrides:
        """The table's provider settings alone."""
        return SettingsOverrides.model_validate(self.model_dump(include=set(SettingsOverrides.model_fields)))

    def settings_fields(self) -> dict[str, Any]:
        return self.overrides().given()

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
    unknown = set(overrides) - set(SettingsOverrides.model_fields)
    if unknown:
        raise ConfigError(
            f"unknown setting(s) {sorted(unknown)}; known: {sorted(ProviderSettings.model_fields)}"
        )
    return _resolve(name_or_spec, path, SettingsOverrides(**overrides))


def _resolve(name_or_spec: str, path: str | Path | None, overrides: SettingsOverrides) -> ResolvedJudge:
    config = load_judges(path).get(name_or_spec)
    if config is not None:
        where = str(Path(path) if path is not None else judges_path())
        try:
            spec = ModelSpec.parse(config.spec)
        except ConfigError as exc:
            raise ConfigError(f"{where}: judges.{name_or_spec}.spec: {exc}") from exc
        settings = overrides.over(config.overrides()).apply()
        return ResolvedJudge(spec, settings, name_or_spec, config.request_defaults())
    try:
        spec = ModelSpec.parse(name_or_spec)
    except ConfigError as exc:
        names = ", ".join(load_judges(path)) if ":" not in name_or_spec else ""
        if not names:
            raise
        named_in = Path(path) if path is not None else judges_path()
        raise ConfigError(f"{exc}; or a judge named in {named_in}: {names}") from exc
    return ResolvedJudge(spec, overrides.apply(), spec.text, {})


def build_client(
    name_or_spec: str,
    overrides: SettingsOverrides | None = None,
    *,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    cache: ResponseCache | None = None,
    budget: Budget | None = None,
    judges: str | Path | None = None,
) -> ModelClient:
    """A client for a judges.toml name (`judges`: that file instead of configs/judges.toml) or a
    `PROVIDER:MODEL` spec: the configured settings with `overrides` on top, named as given.

    Builds no provider and reads no key yet (that happens on the first uncached call)."""
    resolved = _resolve(name_or_spec, judges, overrides or SettingsOverrides())
    return ModelClient(
        resolved.spec,
        resolved.settings,
        cache=cache,
        use_cache=use_cache,
        prices=prices,
        name=resolved.name,
        budget=budget,
    )


def resolve_judge(
    name_or_spec: str, *, path: str | Path | None = None, **overrides: Any
) -> tuple[ModelSpec, ProviderSettings, str]:
    """A configured judge name or a `PROVIDER:MODEL` spec -> (spec, settings, name for records)."""
    spec, settings, name, _ = resolve_judge_full(name_or_spec, path=path, **overrides)
    return spec, settings, name
