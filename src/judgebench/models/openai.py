"""OpenAI, DeepSeek and any OpenAI-compatible server, over the official `openai` SDK.

One attempt per `generate`: the SDK's own retries are off (`max_retries=0`) so that retries happen
once, in the client, with its backoff and accounting. Requests go through the SDK client's documented
low-level `post` (its "undocumented endpoints" API: the SDK's authentication, base URL, timeout and
error classes, with a JSON body built here) and the body comes back as text, parsed here:
- the SDK's typed `create` accepts malformed 200 bodies (HTML, truncated JSON, empty choices)
  silently, and reading the body raw keeps it exactly as received for the record;
- `create` runs every request through its TypedDict transform and every answer through its response
  models, together about a third of the SDK's CPU per call (`scripts/bench_client.py`). For the plain
  JSON parameters sent here (strings, numbers, string lists, `{"type": "json_object"}`) that
  transform is the identity; `tests/models/test_openai.py` checks the server receives the
  same JSON either way.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import TYPE_CHECKING, Any, ClassVar

from judgebench.errors import ProviderConfigError
from judgebench.models.base import (
    Capabilities,
    ModelRequest,
    ModelResponse,
    ProviderSettings,
    ProviderTraits,
    RemoteProvider,
    TokenLogprob,
)
from judgebench.models.bodylimit import WireRefusal, body_limit, bounded_http_client
from judgebench.models.failures import (
    KeyRejected,
    MalformedResponseError,
    PermanentError,
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
    import openai as openai_sdk

# OpenAI reasoning models reject temperature and logprobs; `max_tokens` is deprecated for them.
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
# OpenAI models from before Structured Outputs (json_schema answers with 400 there); JSON mode instead
_NO_SCHEMA_PREFIXES = ("gpt-3.5", "gpt-4-", "gpt-4o-2024-05-13")
_NO_SCHEMA_MODELS = ("gpt-4", "gpt-4o-2024-05-13")


def _error_code(body: object) -> str | None:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("code"):
            return str(inner["code"])
    return None


class OpenAIProvider(RemoteProvider):
    """`openai:MODEL`: api.openai.com (or OPENAI_BASE_URL, as the SDK honours it)."""

    name: ClassVar[str] = "openai"
    traits: ClassVar[ProviderTraits] = ProviderTraits(
        batch_backend="judgebench.batch.openai_batch:OpenAIBatch",
        # the SDK applies settings.timeout per read; the client's own total deadline bounds the attempt
        enforces_deadline=True,
        token_counter="tiktoken",
        base_url_env="OPENAI_BASE_URL",
    )
    key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    default_base_url: ClassVar[str | None] = None
    sdk_default_url: ClassVar[str] = "https://api.openai.com/v1"
    # OpenAI deprecated `max_tokens` for `max_completion_tokens`; other servers know only the first
    max_tokens_param: ClassVar[str] = "max_completion_tokens"

    def __init__(self, model: str, settings: ProviderSettings) -> None:
        super().__init__(model, settings)
        self._key = self._resolve_key()
        self._base_url = self._resolve_base_url()
        self._client: openai_sdk.AsyncOpenAI | None = None
        self._sdk: Any = None
        self._caps: Capabilities | None = None
        # set when the server answered a json_schema response_format with a 400 (a server or model
        # without structured output); later calls use JSON mode instead
        self.schema_rejected: str | None = None
        # Built now, not on the first request: building it loads TLS certificates (~0.1 s, blocking),
        # which would stall the event loop after rate-limit slots were handed out and bunch requests.
        self._sdk_client()

    # --- configuration --------------------------------------------------------------------------

    def _resolve_key(self) -> str:
        return self.api_key()

    def _resolve_base_url(self) -> str:
        if self.settings.base_url:
            return self.settings.base_url
        env = self.traits.base_url_env
        if env and os.environ.get(env):
            return os.environ[env]
        return self.default_base_url or self.sdk_default_url

    def _is_reasoning(self) -> bool:
        return self.model.startswith(_REASONING_PREFIXES)

    @property
    def capabilities(self) -> Capabilities:
        if self._caps is None:
            self._caps = self._capabilities()
        if self.schema_rejected is not None:
            return dataclasses.replace(self._caps, structured_output=False)
        return self._caps

    def _capabilities(self) -> Capabilities:
        reasoning = self._is_reasoning()
        schema = not (self.model in _NO_SCHEMA_MODELS or self.model.startswith(_NO_SCHEMA_PREFIXES))
        return Capabilities(
            logprobs=not reasoning,
            json_mode=True,
            structured_output=schema,
            temperature=not reasoning,
            chat=True,
        )

    def _sdk_client(self) -> openai_sdk.AsyncOpenAI:
        if self._client is None:
            import openai  # lazily: the SDK loads only when a call is made, keeping start-up fast

            self._sdk = openai
            self._client = openai.AsyncOpenAI(
                api_key=self._key,
                base_url=self._base_url,
                timeout=self.settings.timeout,
                max_retries=0,
                # the body read is bounded too: a 100 MB answer is refused, not held in memory
                http_client=bounded_http_client(
                    openai, body_limit(self.settings.max_answer_chars), self.name, self._base_url
                ),
            )
        return self._client

    # --- one attempt ----------------------------------------------------------------------------

    def _use_completions(self, request: ModelRequest) -> bool:
        return request.messages is None and self.capabilities.completion

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK keyword arguments for `request`, without the prompt text (that is not a param)."""
        caps = self.capabilities
        params: dict[str, Any] = {"model": self.model}
        if request.temperature is not None and caps.temperature:
            params["temperature"] = request.temperature
        params[self.max_tokens_param] = request.max_tokens
        if request.stop:
            params["stop"] = list(request.stop)
        completions = self._use_completions(request)
        if request.response_schema is not None and caps.structured_output and not completions:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "judge_verdict", "strict": True, "schema": request.response_schema},
            }
        elif request.response_format == "json" and caps.json_mode and not completions:
            params["response_format"] = {"type": "json_object"}
        if request.logprobs and caps.logprobs:
            if completions:
                params["logprobs"] = request.top_logprobs or 1
            else:
                params["logprobs"] = True
                if request.top_logprobs:
                    params["top_logprobs"] = request.top_logprobs
        return params

    def params_record(self, request: ModelRequest) -> dict[str, Any]:
        """What a judgment records as sent (live or in a batch): the params, the endpoint, and what
        was asked for and not sent, with why (`dropped`)."""
        params = self.build_params(request)
        completions = self._use_completions(request)
        sent = dict(params, endpoint="completions" if completions else "chat.completions")
        schema_sent = (params.get("response_format") or {}).get("type") == "json_schema"
        if request.response_schema is not None and not schema_sent:
            sent["dropped"] = {"response_schema": self._schema_refusal(completions)}
        return sent

    def _body(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        params = self.build_params(request)
        if self._use_completions(request):
            return "/completions", dict(params, prompt=request.prompt or "")
        if request.messages is not None:
            messages = [{"role": m.role, "content": m.content} for m in request.messages]
        else:
            messages = [{"role": "user", "content": request.prompt or ""}]
        return "/chat/completions", dict(params, messages=messages)

    async def generate(self, request: ModelRequest) -> ModelResponse:
        client = self._sdk_client()
        path, body = self._body(request)
        start = time.perf_counter()
        try:
            try:
                content: str = await client.post(path, cast_to=str, body=body)
            except Exception as exc:
                reason = self._schema_rejection(exc, body)
                if reason is None:
                    raise
                self.schema_rejected = reason  # asked again in JSON mode, once; remembered
                path, body = self._body(request)
                start = time.perf_counter()
                content = await client.post(path, cast_to=str, body=body)
        except Exception as exc:
            raise self._classify(exc) from None
        latency = time.perf_counter() - start
        answer = self._decode(content)
        sent = self.params_record(request)
        if self._use_completions(request):
            return self._parse_completion(answer, sent, latency)
        return self._parse_chat(answer, sent, latency)

    def _schema_rejection(self, exc: Exception, body: dict[str, Any]) -> str | None:
        """The server's message when `exc` is a 400 refusing the json_schema we sent, else None."""
        sdk = self._sdk
        sent_schema = (body.get("response_format") or {}).get("type") == "json_schema"
        if sdk is None or not sent_schema or not isinstance(exc, sdk.BadRequestError):
            return None
        message = _error_message(exc.body, str(exc))
        lowered = message.lower()
        if not any(word in lowered for word in ("response_format", "json_schema", "structured output")):
            return None
        return self._scrub(message)

    def _schema_refusal(self, completions: bool) -> str:
        """Why a requested response schema was not sent (recorded in `params_sent.dropped`)."""
        if completions:
            return "the completions endpoint takes no response schema"
        if self.schema_rejected is not None:
            return f"rejected by the server ({self.schema_rejected}); JSON mode instead"
        fallback = "JSON mode instead" if self.capabilities.json_mode else "the prompt asks for JSON"
        return f"{self.name}:{self.model} offers no schema-constrained output; {fallback}"

    def _classify(self, exc: Exception) -> Exception:
        """Map an SDK exception to the client's three failure classes."""
        sdk = self._sdk
        if sdk is None or not isinstance(exc, sdk.OpenAIError):
            return exc
        provider = self.name
        if isinstance(exc, sdk.APITimeoutError):
            message = f"{provider}: request timed out after {self.settings.timeout:g}s"
            return _tag(TransientError(message, provider=provider), "timeout")
        if isinstance(exc.__cause__, WireRefusal):  # the SDK wrapped our bounded read's refusal
            return exc.__cause__
        if isinstance(exc, sdk.APIConnectionError):
            message = f"{provider}: connection error ({self._scrub(str(exc))})"
            return _tag(TransientError(message, provider=provider), "connection")
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            message = self._scrub(_error_message(exc.body, str(exc)))
            code = _error_code(exc.body)
            perm: PermanentError | TransientError
            if status == 429 and code == "insufficient_quota":
                perm = PermanentError(
                    f"{provider}: quota exhausted (HTTP 429 insufficient_quota): {message}", provider=provider
                )
            elif status == 429 or status in (408, 409) or status >= 500:
                perm = TransientError(
                    f"{provider}: HTTP {status}: {message}",
                    provider=provider,
                    retry_after=retry_after_seconds(exc.response.headers),
                )
            elif status in (401, 403):
                what = "authentication failed" if status == 401 else "permission denied"
                perm = KeyRejected(
                    f"{provider}: {what} (HTTP {status}): {self._key_hint()}", provider=provider
                )
            else:
                perm = PermanentError(f"{provider}: HTTP {status}: {message}", provider=provider)
            return _tag(perm, str(status))
        return TransientError(f"{provider}: {type(exc).__name__}: {self._scrub(str(exc))}", provider=provider)

    def _key_hint(self) -> str:
        names = " or ".join(self.key_env) or "the API key variable"
        return f"check {names} (the key was rejected by {self.shown_url})"

    def _malformed(self, why: str) -> MalformedResponseError:
        err = MalformedResponseError(f"{self.name}: malformed 200 response: {why}", provider=self.name)
        return _tag(err, "malformed")

    def _decode(self, content: str) -> dict[str, Any]:
        try:
            body = json.loads(content)
        except ValueError:
            start = content[:60].strip()
            kind = "an HTML page" if start.lower().startswith(("<!doctype", "<html")) else "not JSON"
            raise self._malformed(f"body is {kind} ({start[:40]!r}...)") from None
        if not isinstance(body, dict):
            raise self._malformed("body is not a JSON object")
        return body

    def _usage(self, body: dict[str, Any]) -> Usage:
        usage = body.get("usage") or {}
        if not isinstance(usage, dict):
            return Usage()
        return Usage(
            input_tokens=reported_tokens(usage.get("prompt_tokens")),
            output_tokens=reported_tokens(usage.get("completion_tokens")),
        )

    def _first_choice(self, body: dict[str, Any]) -> dict[str, Any]:
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._malformed("no choices")
        choice: dict[str, Any] = choices[0]
        return choice

    def _parse_chat(self, body: dict[str, Any], sent: dict[str, Any], latency: float) -> ModelResponse:
        choice = self._first_choice(body)
        message = choice.get("message")
        if not isinstance(message, dict):
            raise self._malformed("choice has no message")
        finish = choice.get("finish_reason")
        refusal = message.get("refusal")
        content = message.get("content")
        if refusal:
            text, finish = str(refusal), "refusal"
        elif isinstance(content, str) and content:
            text = content
        elif finish == "content_filter":
            text = ""
        else:
            raise self._malformed(f"empty message content (finish_reason {finish!r})")
        logprobs: list[TokenLogprob] | None = None
        lp = choice.get("logprobs")
        if isinstance(lp, dict) and isinstance(lp.get("content"), list):
            logprobs = [
                TokenLogprob(
                    token=str(t.get("token", "")),
                    logprob=float(t.get("logprob", 0.0)),
                    top={
                        str(a.get("token", "")): float(a.get("logprob", 0.0))
                        for a in t.get("top_logprobs") or []
                    },
                )
                for t in lp["content"]
                if isinstance(t, dict)
            ]
        return ModelResponse(
            text=text,
            finish_reason=finish,
            usage=self._usage(body),
            logprobs=logprobs,
            latency_s=latency,
            model=body.get("model"),
            raw=body,
            params_sent=sent,
        )

    def _parse_completion(self, body: dict[str, Any], sent: dict[str, Any], latency: float) -> ModelResponse:
        choice = self._first_choice(body)
        text = choice.get("text")
        if not isinstance(text, str) or not text:
            raise self._malformed("empty completion text")
        logprobs: list[TokenLogprob] | None = None
        lp = choice.get("logprobs")
        if isinstance(lp, dict) and isinstance(lp.get("tokens"), list):
            tops = lp.get("top_logprobs") or []
            values = lp.get("token_logprobs") or []
            logprobs = []
            for i, token in enumerate(lp["tokens"]):
                top = tops[i] if i < len(tops) and isinstance(tops[i], dict) else {}
                value = values[i] if i < len(values) and values[i] is not None else 0.0
                logprobs.append(
                    TokenLogprob(
                        token=str(token), logprob=float(value), top={str(k): float(v) for k, v in top.items()}
                    )
                )
        return ModelResponse(
            text=text,
            finish_reason=choice.get("finish_reason"),
            usage=self._usage(body),
            logprobs=logprobs,
            latency_s=latency,
            model=body.get("model"),
            raw=body,
            params_sent=sent,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


class OpenAICompatibleProvider(OpenAIProvider):
    """`openai-compatible:MODEL`: vLLM, llama.cpp server, Ollama... at `--base-url` or OPENAI_BASE_URL.

    A plain `prompt` request goes to `/v1/completions` (no chat template), `messages` to chat."""

    name: ClassVar[str] = "openai-compatible"
    # the OpenAI Batch API at the server's URL (a server without one is told about vLLM's batch files)
    traits: ClassVar[ProviderTraits] = OpenAIProvider.traits
    # Never OPENAI_API_KEY: a user's OpenAI key must not be sent to whatever server --base-url names.
    key_env: ClassVar[tuple[str, ...]] = ("OPENAI_COMPATIBLE_API_KEY",)
    max_tokens_param: ClassVar[str] = "max_tokens"

    def _resolve_key(self) -> str:
        for var in self.key_env:
            value = os.environ.get(var)
            if value:
                return value
        return "EMPTY"

    @classmethod
    def key_missing(cls) -> str | None:
        return None  # a local server that needs no key gets a placeholder

    def _resolve_base_url(self) -> str:
        url = self.settings.base_url or os.environ.get(self.traits.base_url_env or "")
        if not url:
            raise ProviderConfigError(
                "provider 'openai-compatible' needs the server's URL: pass --base-url "
                "(e.g. http://127.0.0.1:8000/v1) or set OPENAI_BASE_URL"
            )
        return url

    def _capabilities(self) -> Capabilities:
        # vLLM, llama.cpp's server and Ollama all take OpenAI's json_schema response_format
        return Capabilities(
            logprobs=True,
            json_mode=True,
            structured_output=True,
            temperature=True,
            chat=True,
            completion=True,
        )
