"""The provider interface: one typed request, one typed response, one abstract `generate`.

A provider adapter owns the wire format of one API (over its official SDK, imported lazily) and
classifies failures into the three error classes below; everything else (retries, rate limits,
cache, accounting) lives once in `client.py`.
"""

from __future__ import annotations

import abc
import email.utils
import hashlib
import importlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from judgebench.errors import ConfigError, ProviderConfigError
from judgebench.records import Usage


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
    logprobs: bool = False
    top_logprobs: int | None = None
    stop: list[str] | None = None
    # Not sent and not part of the cache key: what the stage knows about the call (item id,
    # condition, order, gold label). Only simulated providers read it; records keep it.
    context: dict[str, Any] = Field(default_factory=dict)

    def output_params(self) -> dict[str, Any]:
        """Every field that can change the answer (the cache key's part besides provider/model)."""
        return self.model_dump(exclude={"context"}, exclude_none=False)


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


@dataclass(frozen=True)
class Capabilities:
    logprobs: bool = False
    json_mode: bool = False
    temperature: bool = True
    chat: bool = True
    completion: bool = False
    batch: bool = False


# --- the three failure classes an adapter raises -------------------------------------------------


class ProviderError(Exception):
    """A call failed. `retryable` decides whether the client tries again; `status` labels the
    outcome for the client's counts (an HTTP code, "timeout", "connection", "malformed")."""

    retryable: bool = False
    status: str | None = None

    def __init__(self, message: str, *, provider: str = "", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.retry_after = retry_after


class TransientError(ProviderError):
    """429, 5xx, timeout, connection error: worth another attempt (honour `retry_after`)."""

    retryable = True


class MalformedResponseError(TransientError):
    """A 200 whose body is not a usable answer (not JSON, empty choices or content)."""


class PermanentError(ProviderError):
    """Authentication, permission, validation, refusal by policy: retrying cannot help."""


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` in seconds or as an HTTP date."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


_PE = TypeVar("_PE", bound=ProviderError)


def tag_status(err: _PE, status: str) -> _PE:
    """Label a failure for the client's status counts; returns it for `raise tag_status(...)`."""
    err.status = status
    return err


def error_message(body: object, fallback: str) -> str:
    """The provider's own error text from a JSON error body ({"error": {"message": ...}}), cut to 300."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
    return fallback[:300]


# --- settings and specs ---------------------------------------------------------------------------


class ProviderSettings(BaseModel):
    """How to reach a provider and how hard to push it. Never holds a key: keys come from env."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    timeout: float = 120.0
    max_retries: int = Field(default=8, ge=0)  # retries after the first attempt; 0 = one attempt
    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    backoff_initial: float = 1.0
    backoff_max: float = 60.0


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
        if provider not in _REGISTRY:
            known = ", ".join(sorted(_REGISTRY))
            raise ConfigError(f"unknown provider '{provider}' in model spec '{text}'; known: {known}")
        if not sep or not model:
            model = _REGISTRY[provider].default_model or ""
            if not model:
                raise ConfigError(f"model spec '{text}' needs a model name: {provider}:MODEL")
        return cls(provider=provider, model=model, text=text)


class Provider(abc.ABC):
    """One API. Subclasses set `name`, `capabilities`, `key_env` and implement `generate`."""

    name: ClassVar[str] = ""
    key_env: ClassVar[tuple[str, ...]] = ()
    default_base_url: ClassVar[str | None] = None
    # False for a provider that only judges (the simulated judge): translate refuses it up front
    translates: ClassVar[bool] = True

    def __init__(self, model: str, settings: ProviderSettings) -> None:
        self.model = model
        self.settings = settings

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

    def api_key(self) -> str:
        """The key from the environment, or a clear error naming the variable to set."""
        for var in self.key_env:
            value = os.environ.get(var)
            if value:
                return value
        names = " or ".join(self.key_env)
        raise ProviderConfigError(f"provider '{self.name}' needs an API key: set {names} in the environment")


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

    def _scrub(self, text: str) -> str:
        """`text` with the API key masked: SDK error texts can echo request URLs and headers."""
        return text.replace(self._key, "***") if len(self._key) >= 6 else text


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


# --- the lazy registry ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Registration:
    target: str  # "module:Class", imported on first use so each SDK stays optional
    default_model: str | None = None


_REGISTRY: dict[str, _Registration] = {}


def register(name: str, target: str, *, default_model: str | None = None) -> None:
    _REGISTRY[name] = _Registration(target=target, default_model=default_model)


def registered() -> list[str]:
    return sorted(_REGISTRY)


def provider_class(name: str) -> type[Provider]:
    reg = _REGISTRY.get(name)
    if reg is None:
        raise ConfigError(f"unknown provider '{name}'; known: {', '.join(registered())}")
    module_name, _, cls_name = reg.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ProviderConfigError(
            f"provider '{name}' could not be loaded ({exc}); install its optional dependencies"
        ) from exc
    cls: type[Provider] = getattr(module, cls_name)
    return cls


def create_provider(spec: ModelSpec, settings: ProviderSettings) -> Provider:
    return provider_class(spec.provider)(spec.model, settings)


register("openai", "judgebench.models.openai:OpenAIProvider")
register("deepseek", "judgebench.models.openai:DeepSeekProvider")
register("openai-compatible", "judgebench.models.openai:OpenAICompatibleProvider")
register("anthropic", "judgebench.models.anthropic:AnthropicProvider")
register("google", "judgebench.models.google:GoogleProvider")
register("local", "judgebench.models.local:LocalProvider", default_model="gemma3-270m")
register("sim", "judgebench.models.sim:SimProvider", default_model="default")
