"""The provider interface: one typed request, one typed response, one abstract `generate`, and what a
provider declares about itself.

A provider adapter owns the wire format of one API (over its official SDK, imported lazily) and
classifies failures into the three error classes of `failures.py`; everything else (retries, rate
limits, cache, accounting) lives once in `client.py`. Two kinds of facts describe a provider:
- `ProviderTraits` (a `ClassVar` of the class): what it *is*, known without constructing it or
  reading a key: in process or over the network, base model or chat, which Batch API backend,
  whether it enforces its own deadline, whether it translates, how to count its tokens, which
  environment variable names its endpoint. Every decision that used to compare provider names
  reads one of these (`judgebench.models.traits_of`).
- `Capabilities` (a property of an instance): what one model at one endpoint accepts (log-probs,
  JSON mode, temperature); it can depend on the model name and on what the API answered.
"""

from __future__ import annotations

import abc
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from judgebench.errors import ProviderConfigError
from judgebench.models.failures import (
    MalformedResponseError,
    PermanentError,
    ProviderError,
    TransientError,
    error_message,
    retry_after_seconds,
    tag_status,
)
from judgebench.models.settings import ProviderSettings
from judgebench.records import Usage
from judgebench.records.sanitize import mask_url, scrub_clip

# Outside error text is kept and shown up to this many characters (after scrubbing).
ERROR_TEXT_LIMIT = 300

__all__ = [
    "Capabilities",
    "MalformedResponseError",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "PermanentError",
    "Provider",
    "ProviderError",
    "ProviderSettings",
    "ProviderTraits",
    "RemoteProvider",
    "TokenCounter",
    "TokenLogprob",
    "TransientError",
    "cache_key",
    "error_message",
    "prompt_hash",
    "retry_after_seconds",
    "tag_status",
]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class ModelRequest(BaseModel):
    """What a stage asks of a model. Either chat `messages` or a plain completion `prompt`."""

    model_config = ConfigDict(extra="forbid")

    messages: list[Message] | None = None
    prompt: str | None = None
    temperature: float | None = 0.0
    max_tokens: int = 900
    response_format: Literal["text", "json"] = "text"
    # A JSON Schema the answer must follow (structured output), where the provider offers it; a
    # provider that does not falls back to `response_format` and records what it dropped. Part of the
    # cache key only when set, so requests without one keep the keys they always had.
    response_schema: dict[str, Any] | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    stop: list[str] | None = None
    # Not sent and not part of the cache key: what the stage knows about the call (item id,
    # condition, order, gold label). Only simulated providers read it; records keep it.
    context: dict[str, Any] = Field(default_factory=dict)

    def output_params(self) -> dict[str, Any]:
        """Every field that can change the answer (the cache key's part besides provider/model)."""
        params = self.model_dump(exclude={"context"}, exclude_none=False)
        if params["response_schema"] is None:
            del params["response_schema"]
        return params


class TokenLogprob(BaseModel):
    """Log-probability of one generated token and the most likely alternatives at that position."""

    token: str
    logprob: float
    top: dict[str, float] = Field(default_factory=dict)


class ModelResponse(BaseModel):
    """A provider's answer, normalised; `raw` is the provider's body as received, for the record."""

    text: str
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    logprobs: list[TokenLogprob] | None = None
    latency_s: float = 0.0
    model: str | None = None
    raw: dict[str, Any] | None = None
    # the parameters actually sent to the provider (after dropping unsupported ones)
    params_sent: dict[str, Any] = Field(default_factory=dict)
    # set when the text was cut to the stored-answer cap: its length (characters) before the cut
    text_chars: int | None = None
    text_cap: int | None = None


@dataclass(frozen=True)
class Capabilities:
    """What one model at one endpoint accepts; stages shape their requests by it."""

    logprobs: bool = False
    json_mode: bool = False
    # the answer can be constrained to a JSON Schema (`ModelRequest.response_schema`)
    structured_output: bool = False
    temperature: bool = True
    chat: bool = True
    completion: bool = False


TokenCounter = Literal["tiktoken", "heuristic"]


@dataclass(frozen=True)
class ProviderTraits:
    """What a provider is, declared on its class (`traits`), read without constructing it.

    - `in_process`: runs in this process, no network: the offline test guard lets it through, the
      client adds no deadline guard around it, and it has no Batch API.
    - `completion_only`: a base model: stages send it plain completion prompts, never chat.
    - `batch_backend`: "module:Class" of its `judgebench.batch` backend (imported when a batch is
      run), or None; then `batch_refusal` says why `--batch` is refused (None: a generic reason).
    - `enforces_deadline`: its SDK applies `settings.timeout` itself (per read, for the OpenAI family).
      Informational: the client puts a total per-attempt deadline on every provider that is not in
      process whatever the SDK does, since a per-read timeout never ends a server that drips.
    - `translates`: False for a provider that only judges (translate refuses it up front).
    - `token_counter`: how dry runs and budgets estimate its input tokens.
    - `base_url_env`: the environment variable its SDK reads for the endpoint (part of the cache key).
    """

    in_process: bool = False
    completion_only: bool = False
    batch_backend: str | None = None
    batch_refusal: str | None = None
    enforces_deadline: bool = False
    translates: bool = True
    token_counter: TokenCounter = "heuristic"
    base_url_env: str | None = None


class Provider(abc.ABC):
    """One API. Subclasses set `name`, `traits`, `key_env`, `capabilities` and implement `generate`;
    the other hooks have defaults."""

    name: ClassVar[str] = ""
    traits: ClassVar[ProviderTraits] = ProviderTraits()
    key_env: ClassVar[tuple[str, ...]] = ()
    default_base_url: ClassVar[str | None] = None

    def __init__(self, model: str, settings: ProviderSettings) -> None:
        self.model = model
        self.settings = settings

    @classmethod
    def check_model(cls, model: str) -> None:
        """Refuse, with a ConfigError, a model name this provider can tell is wrong without a key or a
        call (an undefined simulated scenario, a local model that is neither bundled nor a file), so
        that a judge is checked before anything is estimated or written. API models are checked by
        their provider on the first call: nothing to do here."""
        del model

    @property
    @abc.abstractmethod
    def capabilities(self) -> Capabilities: ...

    @abc.abstractmethod
    async def generate(self, request: ModelRequest) -> ModelResponse:
        """Make one attempt. Raise TransientError/MalformedResponseError/PermanentError on failure."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients, servers, model weights."""

    def connection_key(self) -> str:
        """Calls sharing this key share one concurrency and rate-limit budget."""
        return f"{self.name}:{self.settings.base_url or self.default_base_url or ''}"

    def endpoint(self) -> str | None:
        """The URL this provider calls (the client's offline guard checks its host); None: unknown
        here (the SDK's own default), or nowhere for an in-process provider."""
        return self.settings.base_url or self.default_base_url

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """What would be sent for `request` besides the prompt (a failed call records it); {} when
        the adapter does not say."""
        return {}

    def scrub(self, text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
        """Outside text (an SDK or server error) as it may be kept or shown: credentials masked
        first, then cut to `limit` characters."""
        return scrub_clip(text, limit, self._secrets())

    def _secrets(self) -> tuple[str, ...]:
        return ()

    def api_key(self) -> str:
        """The key from the environment, or a clear error naming the variable to set."""
        for var in self.key_env:
            value = os.environ.get(var)
            if value:
                return value
        raise ProviderConfigError(self.key_missing() or f"provider '{self.name}' needs an API key")

    @classmethod
    def key_missing(cls) -> str | None:
        """Why a call would fail for want of a key (checked before estimating or asking); None when a
        key is set or none is needed."""
        if not cls.key_env or any(os.environ.get(var) for var in cls.key_env):
            return None
        names = " or ".join(cls.key_env)
        return f"provider '{cls.name}' needs an API key: set {names} in the environment"


class RemoteProvider(Provider):
    """A provider reached over HTTP with a key from the environment. Subclasses set `_key` and
    `_base_url` in `__init__`; this class answers where calls go and keeps the key out of messages."""

    _key: str
    _base_url: str

    def endpoint(self) -> str:
        """The URL this provider actually calls (the client's offline guard checks its host)."""
        return self._base_url

    def connection_key(self) -> str:
        return f"{self.name}:{self._base_url}"

    @property
    def shown_url(self) -> str:
        """The endpoint as messages show it (a `user:token@` in it masked)."""
        return mask_url(self._base_url)

    def _secrets(self) -> tuple[str, ...]:
        return (self._key,)

    def _scrub(self, text: str) -> str:
        """`text` with the API key (and anything shaped like a credential) masked, then cut: SDK
        error texts can echo request URLs and headers."""
        return self.scrub(text)


def cache_key(provider: str, model: str, base_url: str | None, request: ModelRequest) -> str:
    """Content address of a call: same key, same answer; used as the batch custom_id too."""
    payload = {
        "provider": provider,
        "model": model,
        "base_url": base_url or "",
        "params": request.output_params(),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def prompt_hash(request: ModelRequest) -> str:
    """Hash of the prompt text alone (messages or prompt), for tracing a judgment to its prompt."""
    if request.messages is not None:
        blob = json.dumps([m.model_dump() for m in request.messages], ensure_ascii=False, sort_keys=True)
    else:
        blob = request.prompt or ""
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
