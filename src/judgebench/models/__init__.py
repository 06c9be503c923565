"""The provider layer: one request/response interface, adapters over official SDKs, the client.

What the layers above call:
- `traits_of(spec_or_name) -> ProviderTraits`: what a provider is (in process, completion-only, its
  Batch API backend or why it has none, translates, token counter...), without building it;
- `Judges` (judges.toml and prices.toml read once per command; `resolve(name) -> JudgeSpec`, the
  resolved judge) and `build_client(judge, *, use_cache, prices, cache, budget) -> ModelClient`;
- `SettingsOverrides`: every provider knob, optional (`apply(settings) -> ProviderSettings`);
- `CallResult` (its `refused` says why a call was never sent: "budget", "deferred", "offline"),
  `ClientStats` (the accounting live and batch calls share), `Budget`;
- `register` / `unregister` / `registered`: the provider registry.

Module map: `base` (request, response, Capabilities, ProviderTraits, Provider), `failures` (the three
error classes), `settings`, `registry` (ModelSpec, the provider lines), `client` (ModelClient),
`limits` (shared concurrency, rate limits, offline guard), `budget`, `results` (CallResult,
ClientStats), `cache`, `pricing`, `judge_spec` (JudgeSpec),
`config` (judges.toml, Judges, build_client), and one module per adapter
(`openai`, `anthropic`, `google`, `local`, `sim`).
"""

from judgebench.models.base import (
    Capabilities,
    Message,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderTraits,
)
from judgebench.models.client import ModelClient
from judgebench.models.config import Judges, build_client
from judgebench.models.judge_spec import JudgeSpec, RequestDefaults
from judgebench.models.provider_registry import ModelSpec, register, registered, traits_of, unregister
from judgebench.models.results import CallResult, ClientStats, Refusal
from judgebench.models.settings import ProviderSettings, SettingsOverrides
from judgebench.models.spend_cap import Budget

__all__ = [
    "Budget",
    "CallResult",
    "Capabilities",
    "ClientStats",
    "JudgeSpec",
    "Judges",
    "Message",
    "ModelClient",
    "ModelRequest",
    "ModelResponse",
    "ModelSpec",
    "Provider",
    "ProviderSettings",
    "ProviderTraits",
    "Refusal",
    "RequestDefaults",
    "SettingsOverrides",
    "build_client",
    "register",
    "registered",
    "traits_of",
    "unregister",
]
