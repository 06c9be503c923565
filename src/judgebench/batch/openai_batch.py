"""OpenAI Batch API (`openai:` and `openai-compatible:` at their base URL) over the official SDK.

The request file is the OpenAI Batch JSONL (`custom_id` = the cache key), uploaded with
`files.create(purpose="batch")`; the batch carries this run's id and the submission's id in its
metadata, which is how a batch created by a killed command is found again. Bodies are built and
parsed by the live adapter, so a batch answer equals the live one. The SDK's own retries (bounded by
`--max-retries`, each attempt bounded by `--timeout`) cover every upload, poll and download.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import TYPE_CHECKING, Any

from judgebench.batch.backend import VLLM_HINT, BatchBackend, BatchError, BatchStatus, LineOutcome
from judgebench.errors import ProviderConfigError
from judgebench.models.base import MalformedResponseError, ModelRequest, PermanentError, ProviderError
from judgebench.models.bodylimit import batch_results_bound
from judgebench.models.client import ModelClient
from judgebench.models.openai import OpenAIProvider

if TYPE_CHECKING:
    import openai as openai_sdk

    from judgebench.batch.state import Submission

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
_ENDED = {"completed", "failed", "expired", "cancelled"}
# per-line failures that another batch cannot fix
_PERMANENT_STATUS = {400, 401, 403, 404, 413, 422}


def openai_line(
    provider: OpenAIProvider, custom_id: str, request: ModelRequest
) -> tuple[str, dict[str, Any]]:
    """(endpoint, Batch JSONL line) for `request`: the body the live adapter would send."""
    params = provider.build_params(request)
    if provider._use_completions(request):
        url, body = COMPLETIONS, {**params, "prompt": request.prompt or ""}
    else:
        if request.messages is not None:
            messages = [m.model_dump() for m in request.messages]
        else:
            messages = [{"role": "user", "content": request.prompt or ""}]
        url, body = CHAT, {**params, "messages": messages}
    return url, {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


def parse_output_line(provider: OpenAIProvider, obj: dict[str, Any], where: str) -> LineOutcome:
    """One line of an OpenAI (or `vllm run-batch`) output or error file, parsed by the live adapter."""
    cid = str(obj.get("custom_id") or "")
    resp = obj.get("response")
    err = obj.get("error")
    name = provider.name
    if isinstance(resp, dict) and resp.get("status_code") == 200 and isinstance(resp.get("body"), dict):
        body: dict[str, Any] = resp["body"]
        try:
            if body.get("object") == "text_completion":
                response = provider._parse_completion(body, {}, 0.0)
            else:
                response = provider._parse_chat(body, {}, 0.0)
        except MalformedResponseError as exc:
            return LineOutcome(cid, error=f"{exc} ({where})", retryable=True)
        return LineOutcome(cid, response=response)
    if isinstance(resp, dict) and resp.get("status_code") is not None:
        status = int(resp["status_code"])
        rbody = resp.get("body")
        message = "no message"
        if isinstance(rbody, dict):
            inner = rbody.get("error", rbody)
            if isinstance(inner, dict) and inner.get("message"):
                message = str(inner["message"])[:300]
        return LineOutcome(
            cid,
            error=f"{name}: HTTP {status} in {where}: {message}",
            retryable=status not in _PERMANENT_STATUS,
        )
    if isinstance(err, dict):
        code = err.get("code") or "error"
        message = str(err.get("message") or "no message")[:300]
        return LineOutcome(cid, error=f"{name}: {code} in {where}: {message}", retryable=True)
    return LineOutcome(cid, error=f"{name}: result line without response or error in {where}", retryable=True)


class OpenAIBatch(BatchBackend):
    name = "openai"
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024

    def __init__(self, client: ModelClient) -> None:
        super().__init__(client)
        provider = client.provider
        if not isinstance(provider, OpenAIProvider):  # pragma: no cover - the provider names its backend
            raise ProviderConfigError(f"{client.spec.text}: not an OpenAI-family provider")
        self.provider = provider
        self._sdk: openai_sdk.AsyncOpenAI | None = None

    def sdk(self) -> openai_sdk.AsyncOpenAI:
        """The adapter's SDK client, with the SDK's retries on for polls and downloads."""
        if self._sdk is None:
            settings = self.client.settings
            self._sdk = self.provider._sdk_client().with_options(
                max_retries=max(0, settings.max_retries), timeout=settings.timeout
            )
        return self._sdk

    def encode(self, custom_id: str, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        return openai_line(self.provider, custom_id, request)

    def params_sent(self, request: ModelRequest) -> dict[str, Any]:
        return self.provider.params_record(request)

    def _error(self, exc: Exception, doing: str) -> Exception:
        """A clear error for a failed upload/create/poll/download (a missing Batch API says so)."""
        sdk = self.provider._sdk
        base = self.provider.endpoint()
        if sdk is not None and isinstance(exc, sdk.APIStatusError) and exc.status_code in (404, 405, 501):
            return ProviderConfigError(
                f"{self.provider.name}: the server at {base} has no OpenAI Batch API ({doing} answered HTTP "
                f"{exc.status_code}); {VLLM_HINT}"
            )
        err = self.provider._classify(exc)
        if isinstance(err, PermanentError) and err.status in ("401", "403"):
            return ProviderConfigError(str(err))
        if isinstance(err, ProviderError):
            return BatchError(f"{err} (while {doing})")
        return err

    async def submit(self, sub: Submission, lines: list[dict[str, Any]], run_id: str) -> str:
        sdk = self.sdk()
        data = b"".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
            for line in lines
        )
        try:
            upload = await sdk.files.create(
                file=(f"judgebench-{sub.id}.jsonl", data, "application/jsonl"), purpose="batch"
            )
        except Exception as exc:
            raise self._error(exc, "uploading the request file (POST /files)") from None
        try:
            batch = await sdk.batches.create(
                input_file_id=upload.id,
                endpoint=sub.endpoint,  # type: ignore[arg-type]
                completion_window="24h",
                metadata={
                    "judgebench_run": run_id,
                    "judgebench_submission": sub.id,
                    "judgebench_spec": sub.spec[:512],
                },
            )
        except Exception as exc:
            raise self._error(exc, "creating the batch (POST /batches)") from None
        return str(batch.id)

    async def recover(self, sub: Submission, run_id: str) -> str | None:
        """List the account's batches (newest first) back to a day before `sub` was recorded."""
        cutoff = _dt.datetime.fromisoformat(sub.created_at).timestamp() - 86_400
        doing = "listing batches (GET /batches)"
        try:
            async with self.deadline(doing):
                async for batch in self.sdk().batches.list(limit=100):
                    meta = batch.metadata or {}
                    if meta.get("judgebench_run") == run_id and meta.get("judgebench_submission") == sub.id:
                        return str(batch.id)
                    if batch.created_at < cutoff:
                        break
        except Exception as exc:
            raise self._error(exc, doing) from None
        return None

    async def _retrieve(self, batch_id: str) -> Any:
        doing = f"polling batch {batch_id}"
        try:
            async with self.deadline(doing):
                return await self.sdk().batches.retrieve(batch_id)
        except Exception as exc:
            raise self._error(exc, doing) from None

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._retrieve(batch_id)
        rc = batch.request_counts
        counts = {"total": rc.total, "completed": rc.completed, "failed": rc.failed} if rc is not None else {}
        return BatchStatus(status=batch.status, ended=batch.status in _ENDED, counts=counts)

    async def results(self, sub: Submission) -> list[LineOutcome]:
        assert sub.batch_id is not None
        sdk = self.sdk()
        where = f"batch {sub.batch_id}"
        batch = await self._retrieve(sub.batch_id)
        outcomes: list[LineOutcome] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            doing = f"downloading {file_id} of {where}"
            try:
                limit = batch_results_bound(self.client.settings.max_answer_chars, len(sub.custom_ids))
                async with self.deadline(doing):
                    with limit:
                        content = (await sdk.files.content(file_id)).content
            except Exception as exc:
                raise self._error(exc, doing) from None
            for raw in content.splitlines():
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    continue  # a torn line names no custom_id: that call counts as missing, and is resent
                if isinstance(obj, dict):
                    outcomes.append(parse_output_line(self.provider, obj, where))
        if batch.status == "failed" and not outcomes:
            errors = batch.errors.data if batch.errors is not None and batch.errors.data else []
            why = (
                "; ".join(f"{e.code or 'error'}: {e.message or ''}" for e in errors[:3]) or "no reason given"
            )
            message = f"{self.provider.name}: {where} failed validation: {why}"
            outcomes = [LineOutcome(cid, error=message, retryable=False) for cid in sub.custom_ids]
        return outcomes
