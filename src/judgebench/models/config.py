"""Named judges from `configs/judges.toml`, resolved once per command, and a client for each.

`--model gpt41mini` then means `openai:gpt-4.1-mini` at the configured concurrency and rpm, and the
records call the judge `gpt41mini`. Anything not a configured name is parsed as a `PROVIDER:MODEL`
spec with default settings. Flags given on the command line override the file: they arrive as one
`SettingsOverrides`. `Judges` reads the files once and resolves each name to a `JudgeSpec`;
`build_client` turns a `JudgeSpec` into a `ModelClient` (the api layer's way to a provider).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError, JudgebenchError
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from judgebench.models.judge_spec import JudgeSpec, RequestDefaults
from judgebench.models.pricing import PriceTable
from judgebench.models.provider_registry import ModelSpec, provider_class
from judgebench.models.settings import ProviderSettings, SettingsOverrides
from judgebench.models.spend_cap import Budget
from judgebench.records.numbers import Temperature

__all__ = ["JudgeConfig", "Judges", "JudgesFile", "build_client", "judges_path", "load_judges"]


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

    def request_defaults(self) -> RequestDefaults:
        return RequestDefaults(temperature=self.temperature, max_tokens=self.max_tokens)


def judges_path() -> Path:
    return configs_dir() / "judges.toml"


class JudgesFile(BaseModel):
    """configs/judges.toml: `[judges.NAME]` tables and nothing else."""

    model_config = ConfigDict(extra="forbid")

    judges: dict[str, JudgeConfig] = Field(default_factory=dict)


def load_judges(path: str | Path | None = None) -> dict[str, JudgeConfig]:
    """All named judges in `path` (default `configs/judges.toml`; a missing default file is empty)."""
    file = Path(path) if path is not None else judges_path()
    return load_config(file, JudgesFile, missing_ok=path is None).judges


class Judges:
    """The judges of one command: `configs/judges.toml` (or `path`) and `configs/prices.toml` read
    once, the command's flag overrides on top, each name resolved once (`resolve`).

    The one parser of `--model` values: a configured name, else a `PROVIDER:MODEL` spec."""

    def __init__(
        self,
        configured: Mapping[str, JudgeConfig],
        prices: PriceTable,
        overrides: SettingsOverrides | None = None,
        *,
        source: Path | None = None,
    ) -> None:
        self.configured = dict(configured)
        self.prices = prices
        self.overrides = overrides or SettingsOverrides()
        self.source = source or judges_path()
        self._resolved: dict[str, JudgeSpec] = {}

    @classmethod
    def load(
        cls,
        overrides: SettingsOverrides | None = None,
        *,
        path: str | Path | None = None,
        prices: PriceTable | None = None,
    ) -> Judges:
        """Read the judges file (`path`, default configs/judges.toml) and, unless given, the prices."""
        source = Path(path) if path is not None else judges_path()
        return cls(load_judges(path), prices or PriceTable.load(), overrides, source=source)

    def resolve(self, name_or_spec: str) -> JudgeSpec:
        """The judge a `--model` value names; a bad spec is a ConfigError naming what is known."""
        found = self._resolved.get(name_or_spec)
        if found is None:
            found = self._resolved[name_or_spec] = self._resolve(name_or_spec)
        return found

    def resolve_all(self, names: Iterable[str]) -> dict[str, JudgeSpec]:
        """Each distinct name resolved, in order (all checked before anything is built)."""
        return {name: self.resolve(name) for name in dict.fromkeys(names)}

    def _resolve(self, name_or_spec: str) -> JudgeSpec:
        config = self.configured.get(name_or_spec)
        if config is not None:
            try:
                spec = ModelSpec.parse(config.spec)
            except ConfigError as exc:
                raise ConfigError(f"{self.source}: judges.{name_or_spec}.spec: {exc}") from exc
            return self._judge(
                name_or_spec, spec, self.overrides.over(config.overrides()).apply(), config=config
            )
        try:
            spec = ModelSpec.parse(name_or_spec)
        except ConfigError as exc:
            names = ", ".join(self.configured) if ":" not in name_or_spec else ""
            if not names:
                raise
            raise ConfigError(f"{exc}; or a judge named in {self.source}: {names}") from exc
        return self._judge(spec.text, spec, self.overrides.apply())

    def _judge(
        self, name: str, spec: ModelSpec, settings: ProviderSettings, *, config: JudgeConfig | None = None
    ) -> JudgeSpec:
        provider = provider_class(spec.provider)
        provider.check_model(spec.model)  # an undefined sim scenario or local model: before anything runs
        return JudgeSpec(
            name=name,
            spec=spec,
            settings=settings,
            traits=provider.traits,
            price=self.prices.price(spec.provider, spec.model),
            request=config.request_defaults() if config is not None else RequestDefaults(),
            configured_in=str(self.source) if config is not None else None,
            description=config.description if config is not None else None,
        )

    def same_model(self, a: str, b: str) -> bool:
        """Two `--model` values for the same provider and model; a name that resolves to no judge
        matches nothing."""
        try:
            return self.resolve(a).same_model(self.resolve(b))
        except JudgebenchError:
            return False


def build_client(
    judge: JudgeSpec,
    *,
    use_cache: bool = True,
    prices: PriceTable | None = None,
    cache: ResponseCache | None = None,
    budget: Budget | None = None,
) -> ModelClient:
    """A client for a resolved judge, named as the user typed it, with its request defaults.

    Builds no provider and reads no key yet (that happens on the first uncached call)."""
    return ModelClient(
        judge.spec,
        judge.settings,
        cache=cache,
        use_cache=use_cache,
        prices=prices,
        name=judge.name,
        budget=budget,
        request_defaults=judge.request.given(),
    )
