"""The resolved judge: everything a command knows about one `--model`, as one frozen object.

A `--model` value (a `configs/judges.toml` name or a `PROVIDER:MODEL` spec) is resolved once per
command (`Judges.resolve`, models/config.py) from the spec string, judges.toml, prices.toml and the
command's flags. Everything below reads this object (the plan, estimates, the key and batch checks,
the client) and never the string or the files again, so one command resolves each name once.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgebench.models.base import ProviderTraits
from judgebench.models.pricing import Price
from judgebench.models.provider_registry import ModelSpec, provider_class
from judgebench.models.settings import ProviderSettings

__all__ = ["JudgeSpec", "RequestDefaults"]


class RequestDefaults(BaseModel):
    """A judge's own request defaults (judges.toml `temperature`, `max_tokens`); None: the stage's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)

    def given(self) -> dict[str, Any]:
        """The defaults that are set, as ModelRequest fields."""
        return {name: value for name, value in self.model_dump().items() if value is not None}


class JudgeSpec(BaseModel):
    """One judge as a command resolved it: its name as typed (records call it so), the provider and
    model it reaches, how (settings, with the command's flags on top), what the provider is (traits),
    what it costs (price, None: not in prices.toml) and its request defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    name: str
    spec: ModelSpec
    settings: ProviderSettings
    traits: ProviderTraits
    price: Price | None = None
    request: RequestDefaults = RequestDefaults()
    # the judges.toml table it came from (None: a plain PROVIDER:MODEL spec)
    configured_in: str | None = None
    description: str | None = None

    @property
    def provider(self) -> str:
        return self.spec.provider

    @property
    def model(self) -> str:
        return self.spec.model

    @property
    def base_url(self) -> str | None:
        return self.settings.base_url

    def key_missing(self) -> str | None:
        """Why a call would fail for want of an API key (None: set, or none needed)."""
        return provider_class(self.provider).key_missing()

    def same_model(self, other: JudgeSpec) -> bool:
        """The same provider and model (`local` and `local:gemma3-270m`, a name and its spec)."""
        return (self.provider, self.model) == (other.provider, other.model)
