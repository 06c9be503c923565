"""Anthropic Message Batches (`anthropic:`) over the official SDK (`messages.batches`).

Each request's `params` are what the live adapter would send (temperature as a plain parameter,
since batch params are the raw Messages API body) and each succeeded result is parsed by the live
adapter's parser; a model that rejects `temperature` is remembered, as in live calls, and its lines
go out again without it. Message Batches carry no metadata, so a batch created by a command killed before
it saved the id cannot be found again by listing: that window is a single create call wide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgebench.batch.backend import BatchBackend, BatchError, BatchStatus, LineOutcome
from judgebench.errors import ProviderConfigError
from judgebench.models.anthropic import AnthropicProvider
from judgebench.models.base import MalformedResponseError, ModelRequest, PermanentError, ProviderError
from judgebench.models.bodylimit import batch_results_bound
from judgebench.models.client import ModelClient

if TYPE_CHECKING:
    import anthropic as anthropic_sdk

    from judgebench.batch.state import Submission

MESSAGES = "/v1/messages"
# error types in an `errored` result that another batch cannot fix
_PERMANENT = {"invalid_request_error", "authentication_error", "permission_error", "not_found_error"}


class AnthropicBatch(BatchBackend):
    name = "anthropic"
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(self, client: ModelClient) -> None:
        super().__init__(client)
        provider = client.provider
        if not isinstance(provider, AnthropicProvider):  # pragma: no cover - the provider names its backend
            raise ProviderConfigError(f"{client.spec.text}: not an Anthropic provider")
        self.provider = provider
        self._sdk: anthropic_sdk.AsyncAnthropic | None = None

    def sdk(self) -> anthropic_sdk.AsyncAnthropic:
        if self._sdk is None:
            settings = self.client.settings
            self._sdk = self.provider._sdk_client().with_options(
                max_retries=max(0, settings.max_retries), timeout=settings.timeout
            )
        return self._sdk

    def encode(self, custom_id: str, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        params, _dropped = self.provider._plan(request)
        extra = params.pop("extra_body", None) or {}
        system, messages = self.provider._messages(request)
        body: dict[str, Any] = {**params, **extra, "messages": messages}
        if system is not None:
            body["system"] = system
        return MESSAGES, {"custom_id": custom_id, "params": body}

    def params_sent(self, request: ModelRequest) -> dict[str, Any]:
        return self.provider.build_params(request)

    def _error(self, exc: Exception, doing: str) -> Exception:
        err = self.provider._classify(exc)
        if isinstance(err, PermanentError) and err.status in ("401", "403"):
            return ProviderConfigError(str(err))
        if isinstance(err, ProviderError):
            return BatchError(f"{err} (while {doing})")
        return err

    async def submit(self, sub: Submission, lines: list[dict[str, Any]], run_id: str) -> str:
        try:
            batch = await self.sdk().messages.batches.create(requests=lines)  # type: ignore[arg-type]
        except Exception as exc:
            raise self._error(exc, "creating the message batch") from None
        return str(batch.id)

    async def status(self, batch_id: str) -> BatchStatus:
        doing = f"polling message batch {batch_id}"
        try:
            async with self.deadline(doing):
                batch = await self.sdk().messages.batches.retrieve(batch_id)
        except Exception as exc:
            raise self._error(exc, doing) from None
        rc = batch.request_counts
        counts = {
            "processing": rc.processing,
            "succeeded": rc.succeeded,
            "errored": rc.errored,
            "canceled": rc.canceled,
            "expired": rc.expired,
        }
        return BatchStatus(
            status=batch.processing_status, ended=batch.processing_status == "ended", counts=counts
        )

    async def results(self, sub: Submission) -> list[LineOutcome]:
        assert sub.batch_id is not None
        where = f"message batch {sub.batch_id}"
        outcomes: list[LineOutcome] = []
        doing = f"downloading the results of {where}"
        try:
            limit = batch_results_bound(self.client.settings.max_answer_chars, len(sub.custom_ids))
            async with self.deadline(doing):
                with limit:
                    decoder = await self.sdk().messages.batches.results(sub.batch_id)
                    async for item in decoder:
                        result = item.result.model_dump(mode="json")
                        outcomes.append(self._line(item.custom_id, result, where))
        except Exception as exc:
            raise self._error(exc, doing) from None
        return outcomes

    def _line(self, cid: str, result: dict[str, Any], where: str) -> LineOutcome:
        kind = result.get("type")
        name = self.provider.name
        if kind == "succeeded" and isinstance(result.get("message"), dict):
            try:
                return LineOutcome(cid, response=self.provider._parse(result["message"], {}, 0.0))
            except MalformedResponseError as exc:
                return LineOutcome(cid, error=f"{exc} ({where})", retryable=True)
        if kind == "errored":
            outer = result.get("error") if isinstance(result.get("error"), dict) else {}
            assert isinstance(outer, dict)
            inner = outer.get("error") if isinstance(outer.get("error"), dict) else outer
            assert isinstance(inner, dict)
            etype = str(inner.get("type") or "error")
            message = str(inner.get("message") or "no message")[:300]
            retryable = etype not in _PERMANENT
            if etype == "invalid_request_error" and "temperature" in message.lower():
                # as live calls do: this model takes no temperature; the next batch leaves it out
                self.provider.temperature_rejected = self.provider._scrub(message)
                retryable = True
            return LineOutcome(cid, error=f"{name}: {etype} in {where}: {message}", retryable=retryable)
        return LineOutcome(cid, error=f"{name}: request {kind or 'lost'} in {where}", retryable=True)
