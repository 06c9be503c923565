"""Anthropic (`anthropic:MODEL`) over the official `anthropic` SDK's Messages API.

One attempt per `generate`: the SDK's own retries are off (`max_retries=0`) so that retries happen
once, in the client. The body is read raw (`with_raw_response`) and parsed here, because the SDK
accepts a malformed 200 (HTML, truncated JSON, empty content) without complaint; reading it raw also
keeps the body exactly as received for the record.

The current SDK's `messages.create()` has no `temperature` argument, so temperature travels in
`extra_body`; a model that rejects it (a 400 naming temperature) is asked again without it, once,
and the provider remembers that for the rest of the run. The API offers no log-probabilities and no
JSON mode; a response schema (structured output) goes in `output_config.format` for the models that
have it. `params_sent["dropped"]` says what was asked for and not sent, and why.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import TYPE_CHECKING, Any, ClassVar

from judgebench.models.base import (
    Capabilities,
    ModelRequest,
    ModelResponse,
    ProviderSettings,
    ProviderTraits,
    RemoteProvider,
)
from judgebench.models.bodylimit import WireRefusal, body_limit, bounded_http_client
from judgebench.models.failures import (
    KeyRejected,
    MalformedResponseError,
    PermanentError,
    ProviderError,
    TransientError,
    retry_after_seconds,
)
from judgebench.models.failures import (
    error_message as _error_message,
)
from judgebench.models.failures import (
    tag_status as _tag,
)
from judgebench.models.pricing import reported_tokens
from judgebench.records import Usage

if TYPE_CHECKING:
    import anthropic as anthropic_sdk

SDK_DEFAULT_URL = "https://api.anthropic.com"

# stop_reason -> the finish_reason vocabulary the rest of judgebench uses (OpenAI's)
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "tool_use": "tool_calls",
}
# stop reasons for which an answer with no text is a real (deterministic) answer, not a broken body
_EMPTY_OK = {"refusal", "max_tokens", "model_context_window_exceeded"}
_RANGE_WORDS = ("less than", "greater than", "range", "between")
# Structured outputs (`output_config.format`) came with Claude Opus 4.1 and Sonnet/Haiku 4.5: the
# first version of each family that has them; older names (claude-3-*, claude-sonnet-4-0) do not.
_SCHEMA_SINCE = {"opus": (4, 1), "sonnet": (4, 5), "haiku": (4, 5)}
_VERSIONED = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d)(?!\d))?")


def offers_structured_output(model: str) -> bool:
    """Whether `model` takes a JSON Schema in `output_config.format`; names this does not recognise
    (aliases, later families) are assumed to, since every model since late 2025 does."""
    if model.startswith(("claude-2", "claude-3", "claude-instant")):
        return False
    found = _VERSIONED.match(model)
    if found is None:
        return True
    family, major, minor = found.group(1), int(found.group(2)), int(found.group(3) or 0)
    return (major, minor) >= _SCHEMA_SINCE[family]


class AnthropicProvider(RemoteProvider):
    """`anthropic:MODEL`: api.anthropic.com, or `--base-url` / ANTHROPIC_BASE_URL as the SDK honours it."""

    name: ClassVar[str] = "anthropic"
    traits: ClassVar[ProviderTraits] = ProviderTraits(
        batch_backend="judgebench.batch.anthropic_batch:AnthropicBatch", base_url_env="ANTHROPIC_BASE_URL"
    )
    key_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)
    default_base_url: ClassVar[str | None] = None

    def __init__(self, model: str, settings: ProviderSettings) -> None:
        super().__init__(model, settings)
        self._key = self.api_key()
        env_url = os.environ.get(self.traits.base_url_env or "")
        self._base_url = settings.base_url or env_url or SDK_DEFAULT_URL
        self._client: anthropic_sdk.AsyncAnthropic | None = None
        self._sdk: Any = None
        # set when this model answered a 400 naming temperature; later calls leave it out
        self.temperature_rejected: str | None = None

    # --- configuration --------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            logprobs=False,
            json_mode=False,
            structured_output=offers_structured_output(self.model),
            temperature=self.temperature_rejected is None,
            chat=True,
        )

    def _sdk_client(self) -> anthropic_sdk.AsyncAnthropic:
        if self._client is None:
            import anthropic  # lazily: the SDK loads only when a call is made, keeping start-up fast

            self._sdk = anthropic
            self._client = anthropic.AsyncAnthropic(
                api_key=self._key,
                base_url=self._base_url,
                max_retries=0,
                timeout=self.settings.timeout,
                # the body read is bounded too: a 100 MB answer is refused, not held in memory
                http_client=bounded_http_client(
                    anthropic, body_limit(self.settings.max_answer_chars), self.name, self._base_url
                ),
            )
        return self._client

    # --- one attempt ----------------------------------------------------------------------------

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """What would be sent for `request` (prompt text excluded), as recorded in `params_sent`."""
        return self._sent(*self._plan(request))

    def _plan(self, request: ModelRequest) -> tuple[dict[str, Any], dict[str, str]]:
        """SDK keyword arguments for `request` (prompt text excluded) and what was left out, with why."""
        params: dict[str, Any] = {"model": self.model, "max_tokens": request.max_tokens}
        dropped: dict[str, str] = {}
        if request.temperature is not None:
            if self.temperature_rejected is None:
                params["extra_body"] = {"temperature": request.temperature}
            else:
                dropped["temperature"] = f"rejected by the model: {self.temperature_rejected}"
        if request.stop:
            params["stop_sequences"] = list(request.stop)
        if request.response_schema is not None and self.capabilities.structured_output:
            # in extra_body, as temperature is: SDK releases before structured outputs have no argument
            output = {"format": {"type": "json_schema", "schema": request.response_schema}}
            params.setdefault("extra_body", {})["output_config"] = output
        elif request.response_schema is not None:
            dropped["response_schema"] = f"{self.model} has no structured outputs; the prompt asks for JSON"
        elif request.response_format == "json":
            dropped["response_format"] = "the Messages API has no JSON mode; the prompt asks for JSON"
        if request.logprobs:
            dropped["logprobs"] = "the Messages API returns no log-probabilities"
        return params, dropped

    @staticmethod
    def _messages(request: ModelRequest) -> tuple[str | None, list[dict[str, str]]]:
        if request.messages is None:
            return None, [{"role": "user", "content": request.prompt or ""}]
        system = [m.content for m in request.messages if m.role == "system"]
        chat = [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"]
        return ("\n\n".join(system) if system else None), chat

    @staticmethod
    def _sent(params: dict[str, Any], dropped: dict[str, str]) -> dict[str, Any]:
        sent = {k: v for k, v in params.items() if k != "extra_body"}
        sent.update(params.get("extra_body") or {})
        sent["endpoint"] = "messages"
        if dropped:
            sent["dropped"] = dict(dropped)
        return sent

    async def generate(self, request: ModelRequest) -> ModelResponse:
        client = self._sdk_client()
        system, messages = self._messages(request)
        params, dropped = self._plan(request)
        if system is not None:
            params["system"] = system
        start = time.perf_counter()
        try:
            try:
                raw = await client.messages.with_raw_response.create(messages=messages, **params)  # type: ignore[arg-type]
            except Exception as exc:
                reason = self._temperature_rejection(exc, params)
                if reason is None:
                    raise
                self.temperature_rejected = reason
                extra = params.get("extra_body") or {}
                extra.pop("temperature", None)
                if not extra:
                    params.pop("extra_body", None)
                dropped["temperature"] = f"rejected by the model: {reason}"
                start = time.perf_counter()
                raw = await client.messages.with_raw_response.create(messages=messages, **params)  # type: ignore[arg-type]
            content = raw.http_response.content
        except Exception as exc:
            raise self._classify(exc) from None
        latency = time.perf_counter() - start
        params.pop("system", None)
        return self._parse(self._decode(content), self._sent(params, dropped), latency)

    def _temperature_rejection(self, exc: Exception, params: dict[str, Any]) -> str | None:
        """The API's message when `exc` is a 400 refusing the temperature we sent, else None."""
        sdk = self._sdk
        sent_temperature = "temperature" in (params.get("extra_body") or {})
        if sdk is None or not sent_temperature or not isinstance(exc, sdk.BadRequestError):
            return None
        message = _error_message(exc.body, str(exc))
        lowered = message.lower()
        # a value out of range is the caller's mistake, not a model that refuses the parameter
        if "temperature" not in lowered or any(w in lowered for w in _RANGE_WORDS):
            return None
        return self._scrub(message)

    # --- classification and parsing ------------------------------------------------------------

    def _classify(self, exc: Exception) -> Exception:
        """Map an SDK exception to the client's three failure classes."""
        sdk = self._sdk
        if isinstance(exc, ProviderError) or sdk is None or not isinstance(exc, sdk.AnthropicError):
            return exc
        provider = self.name
        err: ProviderError
        if isinstance(exc, sdk.APITimeoutError):
            err = TransientError(
                f"{provider}: request timed out after {self.settings.timeout:g}s", provider=provider
            )
            _tag(err, "timeout")
            return err
        if isinstance(exc.__cause__, WireRefusal):  # the SDK wrapped our bounded read's refusal
            return exc.__cause__
        if isinstance(exc, sdk.APIConnectionError):
            err = TransientError(f"{provider}: connection error ({self._scrub(str(exc))})", provider=provider)
            _tag(err, "connection")
            return err
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            message = self._scrub(_error_message(exc.body, str(exc)))
            if status == 429 or status in (408, 409) or status >= 500:
                what = "overloaded" if status == 529 else f"HTTP {status}"
                err = TransientError(
                    f"{provider}: {what}: {message}",
                    provider=provider,
                    retry_after=retry_after_seconds(exc.response.headers),
                )
            elif status in (401, 403):
                what = "authentication failed" if status == 401 else "permission denied"
                err = KeyRejected(
                    f"{provider}: {what} (HTTP {status}): check ANTHROPIC_API_KEY "
                    f"(the key was rejected by {self.shown_url})",
                    provider=provider,
                )
            else:
                err = PermanentError(f"{provider}: HTTP {status}: {message}", provider=provider)
            _tag(err, str(status))
            return err
        err = TransientError(f"{provider}: {type(exc).__name__}: {self._scrub(str(exc))}", provider=provider)
        return err

    def _malformed(self, why: str) -> MalformedResponseError:
        err = MalformedResponseError(f"{self.name}: malformed 200 response: {why}", provider=self.name)
        _tag(err, "malformed")
        return err

    def _decode(self, content: bytes) -> dict[str, Any]:
        try:
            body = json.loads(content)
        except (ValueError, UnicodeDecodeError):
            head = content[:60].decode("utf-8", "replace").strip()
            kind = "an HTML page" if head.lower().startswith(("<!doctype", "<html")) else "not JSON"
            raise self._malformed(f"body is {kind} ({head[:40]!r}...)") from None
        if not isinstance(body, dict):
            raise self._malformed("body is not a JSON object")
        return body

    def _parse(self, body: dict[str, Any], sent: dict[str, Any], latency: float) -> ModelResponse:
        if body.get("type") == "error":
            raise self._malformed(
                f"error object in a 200 body: {self._scrub(_error_message(body, 'no message'))}"
            )
        blocks = body.get("content")
        if not isinstance(blocks, list):
            raise self._malformed("no content list")
        stop_reason = body.get("stop_reason")
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and "text" in b]
        if not texts and stop_reason not in _EMPTY_OK:
            raise self._malformed("empty content list" if not blocks else "no text block in content")
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        counts = [
            reported_tokens(usage.get(k))
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        input_tokens = min(counts) if min(counts) < 0 else sum(counts)  # a bad part is not summed away
        return ModelResponse(
            text="".join(str(t) for t in texts),
            finish_reason=_FINISH.get(str(stop_reason), None if stop_reason is None else str(stop_reason)),
            usage=Usage(input_tokens=input_tokens, output_tokens=reported_tokens(usage.get("output_tokens"))),
            logprobs=None,
            latency_s=latency,
            model=str(body.get("model") or self.model),
            raw=body,
            params_sent=sent,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
