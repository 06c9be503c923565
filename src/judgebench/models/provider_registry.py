"""The lazy provider registry: a provider name -> the adapter class that speaks it, and model specs.

Adding a provider is one adapter module (a `Provider` subclass declaring its `traits`) and one
`register(...)` line below, or, from another package, an entry point in the group
`judgebench.providers` (`name = "package.module:Class"`); an OpenAI-compatible vendor is a table of
`configs/vendors.toml` and no code (`vendors.py`). Its prices go in `configs/prices.toml`. Adapter
modules are imported on first use, so each SDK stays optional and start-up stays fast (adapters
import their SDK lazily too, so looking up a class or its traits never loads an SDK). This is the
only module that names providers; everything else asks a provider's traits (`traits_of`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points

from judgebench.errors import ConfigError, ProviderConfigError
from judgebench.models.base import Provider, ProviderTraits
from judgebench.models.settings import ProviderSettings
from judgebench.models.vendors import vendor_class, vendors

__all__ = [
    "ModelSpec",
    "create_provider",
    "provider_class",
    "register",
    "registered",
    "traits_of",
    "unregister",
]


@dataclass(frozen=True)
class _Registration:
    target: str  # "module:Class", imported on first use so each SDK stays optional
    default_model: str | None = None


_REGISTRY: dict[str, _Registration] = {}
PLUGIN_GROUP = "judgebench.providers"


@cache
def _plugins() -> dict[str, _Registration]:
    """Providers other packages declare as entry points (read once, on the first unknown name)."""
    return {ep.name: _Registration(target=ep.value) for ep in entry_points(group=PLUGIN_GROUP)}


def _registration(name: str) -> _Registration | None:
    """`name`'s registration: registered here, a plugin's, or a vendor of configs/vendors.toml."""
    found = _REGISTRY.get(name)
    if found is None:
        found = _plugins().get(name)
    if found is None and name in vendors():
        found = _Registration(target=f"{VENDOR}{name}")
    return found


VENDOR = "vendor:"  # a registration's target for a vendor table (built from it, not imported)


def register(name: str, target: str, *, default_model: str | None = None) -> None:
    """Make `name:MODEL` specs reach the adapter class `target` ("package.module:Class")."""
    _REGISTRY[name] = _Registration(target=target, default_model=default_model)


def unregister(name: str) -> None:
    """Forget a provider (tests that register a provider of their own remove it again)."""
    if _REGISTRY.pop(name, None) is None:
        raise ConfigError(f"unknown provider '{name}'; known: {', '.join(registered())}")


def registered() -> list[str]:
    return sorted({*_REGISTRY, *_plugins(), *vendors()})


@dataclass(frozen=True)
class ModelSpec:
    """`PROVIDER:MODEL` as a user writes it (`openai:gpt-4.1-mini`, `local`, `sim:biased`)."""

    provider: str
    model: str
    text: str

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        text = text.strip()
        if not text:
            raise ConfigError("empty model spec; expected PROVIDER:MODEL such as openai:gpt-4.1-mini")
        provider, sep, model = text.partition(":")
        registration = _registration(provider)
        if registration is None:
            known = ", ".join(registered())
            if not sep:  # a bare model name: `gpt-4.1-mini` for `openai:gpt-4.1-mini`
                guess = _guess_provider(text)
                hint = f"did you mean {guess}:{text}? " if guess else ""
                raise ConfigError(
                    f"unknown provider: model spec '{text}' names none; {hint}expected PROVIDER:MODEL, "
                    f"providers: {known}"
                )
            raise ConfigError(f"unknown provider '{provider}' in model spec '{text}'; known: {known}")
        if not sep or not model:
            model = registration.default_model or ""
            if not model:
                raise ConfigError(f"model spec '{text}' needs a model name: {provider}:MODEL")
        return cls(provider=provider, model=model, text=text)


# the model-name prefixes of each provider's family, only for "did you mean" hints
_FAMILIES = {"gpt-": "openai", "o1": "openai", "o3": "openai", "o4": "openai", "claude": "anthropic"}
_FAMILIES |= {"gemini": "google", "deepseek": "deepseek"}


def _guess_provider(model: str) -> str | None:
    lowered = model.lower()
    return next((p for prefix, p in _FAMILIES.items() if lowered.startswith(prefix)), None)


@cache
def _vendor_class(name: str) -> type[Provider]:
    cls: type[Provider] = vendor_class(name, vendors()[name])
    return cls


def provider_class(name: str) -> type[Provider]:
    """The adapter class registered as `name` (its module imported now; its SDK not yet)."""
    reg = _registration(name)
    if reg is None:
        raise ConfigError(f"unknown provider '{name}'; known: {', '.join(registered())}")
    if reg.target.startswith(VENDOR):
        return _vendor_class(name)
    module_name, _, cls_name = reg.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ProviderConfigError(
            f"provider '{name}' could not be loaded ({exc}); install its optional dependencies"
        ) from exc
    cls: type[Provider] = getattr(module, cls_name)
    return cls


def traits_of(spec_or_name: ModelSpec | str) -> ProviderTraits:
    """What the provider of a spec (`ModelSpec`, "PROVIDER:MODEL") or a provider name declares,
    without building it or reading a key. A judges.toml name is not a spec: resolve it first
    (`Judges.resolve(name).traits`)."""
    if isinstance(spec_or_name, ModelSpec):
        provider = spec_or_name.provider
    else:  # a provider name as it is, anything else through the one spec parser
        name = spec_or_name.strip()
        provider = name if _registration(name) is not None else ModelSpec.parse(name).provider
    return provider_class(provider).traits


def create_provider(spec: ModelSpec, settings: ProviderSettings) -> Provider:
    return provider_class(spec.provider)(spec.model, settings)


register("openai", "judgebench.models.openai:OpenAIProvider")
register("openai-compatible", "judgebench.models.openai:OpenAICompatibleProvider")
register("anthropic", "judgebench.models.anthropic:AnthropicProvider")
register("google", "judgebench.models.google:GoogleProvider")
register("local", "judgebench.models.local:LocalProvider", default_model="gemma3-270m")
register("sim", "judgebench.models.sim:SimProvider", default_model="default")
