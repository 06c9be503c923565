"""OpenAI-compatible vendors as configuration (configs/vendors.toml): a vendor is a table, not a
class. Each table becomes a subclass of the OpenAI adapter with the vendor's endpoint, key variables
and traits, built when its name is first asked for; the wire format stays the OpenAI adapter's."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.models.base import Capabilities, ProviderTraits


class Vendor(BaseModel):
    """One table of configs/vendors.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(pattern=r"^https?://")
    key_env: list[str] = Field(min_length=1)
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    json_schema: bool = False
    no_sampling: list[str] = Field(default_factory=list)
    batch_refusal: str | None = None


class VendorsFile(RootModel[dict[str, Vendor]]):
    """configs/vendors.toml: one table per vendor."""


def vendors_path() -> Path:
    return configs_dir() / "vendors.toml"


@cache
def _vendors(path: Path) -> dict[str, Vendor]:
    return load_config(path, VendorsFile, missing_ok=True).root


def vendors() -> dict[str, Vendor]:
    """The vendors of configs/vendors.toml (read once per path; JUDGEBENCH_CONFIGS moves it)."""
    return _vendors(vendors_path())


def vendor_class(name: str, vendor: Vendor) -> type[Any]:
    """The OpenAI adapter made into `name`'s: its endpoint, key variables and traits (the adapter's
    module is imported here, on first use, like every adapter the registry names)."""
    base: Any = importlib.import_module("judgebench.models.openai").OpenAIProvider

    class VendorProvider(base):  # type: ignore[misc,valid-type]
        config: ClassVar[Vendor] = vendor

        def _capabilities(self) -> Capabilities:
            sampling = not any(marker in self.model for marker in self.config.no_sampling)
            return Capabilities(
                logprobs=sampling,
                json_mode=True,
                structured_output=self.config.json_schema,
                temperature=sampling,
                chat=True,
            )

    VendorProvider.name = name
    VendorProvider.traits = ProviderTraits(batch_refusal=vendor.batch_refusal, enforces_deadline=True)
    VendorProvider.key_env = tuple(vendor.key_env)
    VendorProvider.default_base_url = vendor.base_url
    VendorProvider.max_tokens_param = vendor.max_tokens_param
    VendorProvider.__name__ = VendorProvider.__qualname__ = f"{name.title().replace('-', '')}Provider"
    VendorProvider.__doc__ = f"`{name}:MODEL`: an OpenAI-compatible vendor of configs/vendors.toml."
    return VendorProvider
