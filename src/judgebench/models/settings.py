"""The provider knobs, stated once: `ProviderSettings` (how to reach and pace a provider) and
`SettingsOverrides` (the same fields, each optional: what a flag, a judges.toml table or a library
caller changes). Every layer that takes knobs (the CLI flags, `api.CallOptions`, `configs/judges.toml`)
hands them over as a `SettingsOverrides` and lets `apply` merge and validate them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgebench.config import defaults
from judgebench.records.numbers import USER_NUMBERS, NonNegative, Positive
from judgebench.records.sanitize import mask_url


class ProviderSettings(BaseModel):
    """How to reach a provider and how hard to push it. Never holds a key: keys come from env."""

    model_config = USER_NUMBERS

    base_url: str | None = None
    timeout: Positive = defaults.TIMEOUT_S
    max_retries: int = Field(default=defaults.MAX_RETRIES, ge=0)  # after the first attempt; 0 = one
    concurrency: int = Field(default=defaults.CONCURRENCY, ge=1)
    rpm: Positive | None = None
    tpm: Positive | None = None
    backoff_initial: NonNegative = 1.0
    backoff_max: NonNegative = 60.0
    # the stored answer text is cut to this many characters (the original size is recorded)
    max_answer_chars: int = Field(default=defaults.MAX_ANSWER_CHARS, ge=1)

    def for_record(self) -> dict[str, Any]:
        """The settings as the run folder keeps them: a credential in the base URL masked."""
        data = self.model_dump()
        if self.base_url:
            data["base_url"] = mask_url(self.base_url)
        return data


class SettingsOverrides(BaseModel):
    """Every `ProviderSettings` field, optional: None leaves the setting as it is.

    Unknown names are refused (`extra="forbid"`), so a misspelt knob never passes silently; the
    values are validated as settings when they are applied. Built from any object with these
    attributes too: `SettingsOverrides.model_validate(options, from_attributes=True)`."""

    model_config = ConfigDict(**USER_NUMBERS, frozen=True)

    base_url: str | None = None
    timeout: Positive | None = None
    max_retries: int | None = Field(default=None, ge=0)
    concurrency: int | None = Field(default=None, ge=1)
    rpm: Positive | None = None
    tpm: Positive | None = None
    backoff_initial: NonNegative | None = None
    backoff_max: NonNegative | None = None
    max_answer_chars: int | None = Field(default=None, ge=1)

    @field_validator("base_url")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        return value or None  # `--base-url ""` means no override, as it always has

    def given(self) -> dict[str, Any]:
        """The fields that override something (those not None)."""
        return {name: value for name, value in self.model_dump().items() if value is not None}

    def over(self, base: SettingsOverrides) -> SettingsOverrides:
        """These overrides on top of `base` (a flag over a judges.toml table)."""
        return SettingsOverrides.model_validate({**base.given(), **self.given()})

    def apply(self, settings: ProviderSettings | None = None) -> ProviderSettings:
        """`settings` (default: the defaults) with these fields replaced, validated as settings."""
        current = settings.model_dump() if settings is not None else {}
        return ProviderSettings.model_validate({**current, **self.given()})
