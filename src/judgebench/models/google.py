"""Gemini (`google:MODEL`) over the official `google-genai` SDK's generateContent.

One attempt per `generate`: the SDK's retries are off (`HttpRetryOptions(attempts=1)`, which also
stops its implicit retry of connection errors) so that retries happen once, in the client. The SDK
is asked for the HTTP body as received (`should_return_http_response`) and that JSON is parsed here,
because the SDK turns a malformed 200 (HTML, truncated JSON, no candidates) into an empty answer
without complaint; the body is also what the record keeps.

Log-probabilities are probed, not assumed: they are requested when asked for, and a model that
answers 400 saying it does not support them is remembered (per provider instance) and asked again
without them; the response then has no log-probabilities and `params_sent["dropped"]` says why.
"""

from __future__ import annotations

import json
import os
import re
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
from judgebench.models.bodylimit import WireRefusal, body_limit, client_hooks
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
    from google import genai as genai_sdk

SDK_DEFAULT_URL = "https://generativelanguage.googleapis.com"

# finishReason values that mean the answer was withheld by a content policy
_SAFETY = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"}
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "RECITATION": "recitation"}
_UNSUPPORTED_WORDS = ("not supported", "unsupported", "does not support", "not enabled", "not available")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _retry_delay(body: object) -> float | None:
    """The `RetryInfo.retryDelay` ("37s") that Google APIs put in a 429's error details."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    details = inner.get("details") if isinstance(inner, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _is_key_rejection(body: object, message: str) -> bool:
    """The Gemini API answers a wrong key with a 400 (reason API_KEY_INVALID), not a 401."""
    return "API_KEY_INVALID" in json.dumps(body, default=str) or "api key not valid" in message.lower()


def _transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout, other transport) exception classes of httpx and httpx2, whichever the SDK uses."""
    timeouts: list[type[BaseException]] = []
    transport: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        try:
            module = __import__(name)  # whichever HTTP library the installed SDK uses
        except ImportError:
            continue
        timeouts.append(module.TimeoutException)
        transport.append(module.TransportError)
    return tuple(timeouts), tuple(transport)


# Gemini models from before responseJsonSchema: JSON mode instead
_NO_JSON_SCHEMA_PREFIXES = ("gemini-1.", "gemini-2.0", "gemini-pro")


class GoogleProvider(RemoteProvider):
    """`google:MODEL`: the Gemini API, or `--base-url` / GOOGLE_GEMINI_BASE_URL as the SDK honours it."""

    name: ClassVar[str] = "google"
    traits: ClassVar[ProviderTraits] = ProviderTraits(
        batch_backend="judgebench.batch.google_batch:GoogleBatch", base_url_env="GOOGLE_GEMINI_BASE_URL"
    )
    key_env: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    default_base_url: ClassVar[str | None] = None

    def __init__(self, model: str, settings: ProviderSettings) -> None:
        super().__init__(model, settings)
        self._key = self.api_key()
        # None leaves the SDK its own default (and its own handling of it)
        self._base_url_override = settings.base_url or os.environ.get(self.traits.base_url_env or "") or None
        self._base_url = self._base_url_override or SDK_DEFAULT_URL
        self._client: genai_sdk.Client | None = None
        # set when this model answered that it has no log-probabilities; later calls do not ask
        self.logprobs_unsupported: str | None = None

    # --- configuration --------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            logprobs=self.logprobs_unsupported is None,
            json_mode=True,
            # responseJsonSchema (JSON Schema as written) came with the Gemini 2.5 models
            structured_output=not self.model.startswith(_NO_JSON_SCHEMA_PREFIXES),
            temperature=True,
            chat=True,
        )

    def http_options(self, types: Any, *, retries: int) -> Any:
        """The SDK's HttpOptions: this base URL and deadline, `retries` attempts, and the body read
        bounded and kept on this origin (where this SDK version lets its httpx client be set up)."""
        hooks = client_hooks(body_limit(self.settings.max_answer_chars), self.name, self._base_url)
        settable = "async_client_args" in types.HttpOptions.model_fields
        bounded: dict[str, Any] = {"async_client_args": {"event_hooks": hooks}} if settable else {}
        return types.HttpOptions(
            base_url=self._base_url_override,
            timeout=max(1, round(self.settings.timeout * 1000)),  # milliseconds
            retry_options=types.HttpRetryOptions(attempts=retries),
            **bounded,
        )

    def _sdk_client(self) -> genai_sdk.Client:
        if self._client is None:
            # lazily: the SDK loads only when a call is made, keeping start-up fast
            from google import genai
            from google.genai import types

            options = self.http_options(types, retries=1)
            self._client = genai.Client(api_key=self._key, vertexai=False, http_options=options)
        return self._client

    # --- one attempt ----------------------------------------------------------------------------

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """What would be sent for `request` (prompt text excluded), as recorded in `params_sent`."""
        return self._sent(*self._plan(request))

    def _sent(self, params: dict[str, Any], dropped: dict[str, str]) -> dict[str, Any]:
        sent = dict(params, model=self.model, endpoint="generateContent")
        if dropped:
            sent["dropped"] = dict(dropped)
        return sent

    def _plan(self, request: ModelRequest) -> tuple[dict[str, Any], dict[str, str]]:
        """GenerateContentConfig fields for `request` (no prompt text) and what was left out, with why."""
        params: dict[str, Any] = {"max_output_tokens": request.max_tokens}
        dropped: dict[str, str] = {}
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.stop:
            params["stop_sequences"] = list(request.stop)
        if request.response_format == "json" or request.response_schema is not None:
            params["response_mime_type"] = "application/json"
        if request.response_schema is not None and self.capabilities.structured_output:
            # JSON Schema as written (enum, required, additionalProperties), not the OpenAPI subset
            params["response_json_schema"] = request.response_schema
        elif request.response_schema is not None:
            dropped["response_schema"] = f"{self.model} takes no JSON Schema; JSON mode instead"
        if request.logprobs:
            if self.logprobs_unsupported is None:
                params["response_logprobs"] = True
                if request.top_logprobs:
                    params["logprobs"] = request.top_logprobs
            else:
                dropped["logprobs"] = f"not supported by the model: {self.logprobs_unsupported}"
        return params, dropped

    @staticmethod
    def _contents(request: ModelRequest) -> tuple[str | None, list[dict[str, Any]]]:
        if request.messages is None:
            return None, [{"role": "user", "parts": [{"text": request.prompt or ""}]}]
        system = [m.content for m in request.messages if m.role == "system"]
        contents = [
            {"role": "model" if m.role == "assistant" else "user", "parts": [{"text": m.content}]}
            for m in request.messages
            if m.role != "system"
        ]
        return ("\n\n".join(system) if system else None), contents

    async def _send(self, contents: list[dict[str, Any]], system: str | None, params: dict[str, Any]) -> str:
        from google.genai import types  # lazily, as in _sdk_client (loaded by then)

        fields = types.GenerateContentConfig.model_fields
        if "should_return_http_response" not in fields:
            raise ProviderConfigError(
                "the installed google-genai cannot return the raw response body that judgebench checks; "
                "upgrade it: pip install -U google-genai"
            )
        # no automatic follow-up requests: one generate is one request
        extra: dict[str, Any] = (
            {"automatic_continuation": False} if "automatic_continuation" in fields else {}
        )
        config = types.GenerateContentConfig(
            system_instruction=system, should_return_http_response=True, **extra, **params
        )
        client = self._sdk_client()
        response = await client.aio.models.generate_content(
            model=self.model,
            contents=contents,  # type: ignore[arg-type]
            config=config,
        )
        http = response.sdk_http_response
        return (http.body if http is not None else None) or ""

    async def generate(self, request: ModelRequest) -> ModelResponse:
        system, contents = self._contents(request)
        params, dropped = self._plan(request)
        start = time.perf_counter()
        try:
            try:
                body_text = await self._send(contents, system, params)
            except Exception as exc:
                reason = self._logprobs_rejection(exc, params)
                if reason is None:
                    raise
                self.logprobs_unsupported = reason
                params.pop("response_logprobs", None)
                params.pop("logprobs", None)
                dropped["logprobs"] = f"not supported by the model: {reason}"
                start = time.perf_counter()
                body_text = await self._send(contents, system, params)
        except Exception as exc:
            raise self._classify(exc) from None
        latency = time.perf_counter() - start
        return self._parse(self._decode(body_text), self._sent(params, dropped), latency)

    def _logprobs_rejection(self, exc: Exception, params: dict[str, Any]) -> str | None:
        """The API's message when `exc` is a 400 saying the model has no log-probabilities, else None."""
        from google.genai import errors  # lazily, as in _sdk_client (loaded by then)

        if "response_logprobs" not in params or not isinstance(exc, errors.ClientError) or exc.code != 400:
            return None
        message = _error_message(exc.details, str(exc))
        lowered = message.lower()
        # "not supported for this model", not a complaint about the value asked for (e.g. too many)
        if "logprob" not in lowered or not any(w in lowered for w in _UNSUPPORTED_WORDS):
            return None
        return self._scrub(message)

    # --- classification and parsing ------------------------------------------------------------

    def _classify(self, exc: Exception) -> Exception:
        """Map an SDK or transport exception to the client's three failure classes."""
        from google.genai import errors  # lazily, as in _sdk_client (loaded by then)

        provider = self.name
        timeouts, transport = _transport_errors()
        err: ProviderError
        if isinstance(exc, ProviderError):
            return exc
        if isinstance(exc.__cause__, WireRefusal):  # wrapped by the SDK or its transport
            return exc.__cause__
        if isinstance(exc, timeouts):
            err = TransientError(
                f"{provider}: request timed out after {self.settings.timeout:g}s", provider=provider
            )
            _tag(err, "timeout")
            return err
        if isinstance(exc, transport):
            err = TransientError(f"{provider}: connection error ({self._scrub(str(exc))})", provider=provider)
            _tag(err, "connection")
            return err
        if not isinstance(exc, errors.APIError):
            return exc
        status = int(exc.code or 0)
        message = self._scrub(_error_message(exc.details, str(exc)))
        headers = getattr(exc.response, "headers", None)
        if status == 429 or status == 408 or isinstance(exc, errors.ServerError) or status >= 500:
            retry_after = retry_after_seconds(headers)
            if retry_after is None:
                retry_after = _retry_delay(exc.details)
            err = TransientError(
                f"{provider}: HTTP {status}: {message}", provider=provider, retry_after=retry_after
            )
        elif status in (401, 403) or (status == 400 and _is_key_rejection(exc.details, message)):
            what = "permission denied" if status == 403 else "authentication failed"
            err = KeyRejected(
                f"{provider}: {what} (HTTP {status}): check GEMINI_API_KEY or GOOGLE_API_KEY "
                f"(the key was rejected by {self.shown_url})",
                provider=provider,
            )
        elif isinstance(exc, errors.ClientError):
            err = PermanentError(f"{provider}: HTTP {status}: {message}", provider=provider)
        else:
            err = TransientError(f"{provider}: HTTP {status}: {message}", provider=provider)
        _tag(err, str(status))
        return err

    def _malformed(self, why: str) -> MalformedResponseError:
        err = MalformedResponseError(f"{self.name}: malformed 200 response: {why}", provider=self.name)
        _tag(err, "malformed")
        return err

    def _decode(self, text: str) -> dict[str, Any]:
        try:
            body = json.loads(text)
        except ValueError:
            head = text[:60].strip()
            kind = "an HTML page" if head.lower().startswith(("<!doctype", "<html")) else "not JSON"
            if not head:
                kind = "empty"
            raise self._malformed(f"body is {kind} ({head[:40]!r}...)") from None
        if not isinstance(body, dict):
            raise self._malformed("body is not a JSON object")
        return body

    @staticmethod
    def _usage(body: dict[str, Any]) -> Usage:
        meta = body.get("usageMetadata")
        if not isinstance(meta, dict):
            return Usage()
        # thinking tokens are billed as output
        parts = [
            reported_tokens(meta.get("candidatesTokenCount")),
            reported_tokens(meta.get("thoughtsTokenCount")),
        ]
        output = min(parts) if min(parts) < 0 else sum(parts)  # a bad part is not summed away
        return Usage(input_tokens=reported_tokens(meta.get("promptTokenCount")), output_tokens=output)

    @staticmethod
    def _logprobs(candidate: dict[str, Any]) -> list[TokenLogprob] | None:
        result = candidate.get("logprobsResult")
        if not isinstance(result, dict) or not isinstance(result.get("chosenCandidates"), list):
            return None
        raw_tops = result.get("topCandidates")
        tops: list[Any] = raw_tops if isinstance(raw_tops, list) else []
        out: list[TokenLogprob] = []
        for i, chosen in enumerate(result["chosenCandidates"]):
            if not isinstance(chosen, dict):
                continue
            alternatives = tops[i].get("candidates") if i < len(tops) and isinstance(tops[i], dict) else None
            top = {
                str(a.get("token", "")): float(a.get("logProbability", 0.0))
                for a in alternatives or []
                if isinstance(a, dict)
            }
            out.append(
                TokenLogprob(
                    token=str(chosen.get("token", "")),
                    logprob=float(chosen.get("logProbability", 0.0)),
                    top=top,
                )
            )
        return out

    def _parse(self, body: dict[str, Any], sent: dict[str, Any], latency: float) -> ModelResponse:
        model = str(body.get("modelVersion") or self.model)
        if "error" in body:
            raise self._malformed(
                f"error object in a 200 body: {self._scrub(_error_message(body, 'no message'))}"
            )
        feedback = body.get("promptFeedback")
        blocked = feedback.get("blockReason") if isinstance(feedback, dict) else None
        candidates = body.get("candidates")
        if blocked and not candidates:
            return ModelResponse(
                text="",
                finish_reason="safety",
                usage=self._usage(body),
                latency_s=latency,
                model=model,
                raw=body,
                params_sent=sent,
            )
        if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
            raise self._malformed("no candidates")
        candidate: dict[str, Any] = candidates[0]
        reason = str(candidate.get("finishReason") or "")
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        texts = [
            str(p["text"])
            for p in (parts if isinstance(parts, list) else [])
            if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
        ]
        finish: str | None
        if reason in _SAFETY:
            text, finish = "", "safety"
        elif texts:
            text, finish = "".join(texts), _FINISH.get(reason, reason.lower() or None)
        elif reason == "MAX_TOKENS":  # the budget went on thinking: a real, empty answer
            text, finish = "", "length"
        else:
            raise self._malformed("no text part in the candidate" if parts else "candidate has no content")
        return ModelResponse(
            text=text,
            finish_reason=finish,
            usage=self._usage(body),
            logprobs=self._logprobs(candidate) if finish != "safety" else None,
            latency_s=latency,
            model=model,
            raw=body,
            params_sent=sent,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aio.aclose()
            self._client.close()
            self._client = None
