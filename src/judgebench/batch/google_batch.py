"""Gemini batch mode (`google:`) over the official `google-genai` SDK (`client.aio.batches`).

Requests go inline (the Gemini API takes up to 20 MB of inline requests per batch job; larger runs
are split into several jobs), each carrying its cache key in `metadata.key`, and the job's display
name carries this run's id and the submission's id, which is how a job created by a killed command is
found again by listing. Each answer is turned back into the API's JSON body and parsed by the live
adapter, so it equals a live answer. The SDK's retries (`--max-retries`) cover polls and downloads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgebench.batch.backend import BatchBackend, BatchError, BatchStatus, LineOutcome
from judgebench.errors import ProviderConfigError
from judgebench.models.base import MalformedResponseError, ModelRequest, PermanentError, ProviderError
from judgebench.models.bodylimit import batch_results_bound
from judgebench.models.client import ModelClient
from judgebench.models.google import GoogleProvider

if TYPE_CHECKING:
    from google import genai as genai_sdk

    from judgebench.batch.state import Submission

ENDPOINT = "batchGenerateContent"
_ENDED = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}
# google.rpc codes (and their HTTP forms) a new batch cannot fix: invalid argument, not found, denied
_PERMANENT_CODES = {3, 5, 7, 16, 400, 401, 403, 404}


def display_name(run_id: str, sub_id: str) -> str:
    return f"judgebench {run_id} {sub_id}"


class GoogleBatch(BatchBackend):
    name = "google"
    max_requests = 100_000
    max_bytes = 20 * 1024 * 1024  # inline requests per batch job

    def __init__(self, client: ModelClient) -> None:
        super().__init__(client)
        provider = client.provider
        if not isinstance(provider, GoogleProvider):  # pragma: no cover - the provider names its backend
            raise ProviderConfigError(f"{client.spec.text}: not a Gemini provider")
        self.provider = provider
        self._sdk: genai_sdk.Client | None = None

    def sdk(self) -> genai_sdk.Client:
        """A client like the adapter's, with the SDK's retries on for polls and downloads."""
        if self._sdk is None:
            # lazily, as the live adapter does: the SDK loads only when a batch is run
            from google import genai
            from google.genai import types

            # the adapter's options (bounded bodies, no redirect to another host), more attempts
            options = self.provider.http_options(types, retries=1 + max(0, self.client.settings.max_retries))
            self._sdk = genai.Client(api_key=self.provider._key, vertexai=False, http_options=options)
        return self._sdk

    def encode(self, custom_id: str, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        system, contents = self.provider._contents(request)
        params, _dropped = self.provider._plan(request)
        config: dict[str, Any] = dict(params)
        if system is not None:
            config["system_instruction"] = system
        return ENDPOINT, {"contents": contents, "config": config, "metadata": {"key": custom_id}}

    def params_sent(self, request: ModelRequest) -> dict[str, Any]:
        return self.provider.build_params(request)

    def _error(self, exc: Exception, doing: str) -> Exception:
        err = self.provider._classify(exc)
        if isinstance(err, PermanentError) and err.status in ("400", "401", "403"):
            return ProviderConfigError(f"{err} (while {doing})")
        if isinstance(err, ProviderError):
            return BatchError(f"{err} (while {doing})")
        return err

    async def submit(self, sub: Submission, lines: list[dict[str, Any]], run_id: str) -> str:
        sdk = self.sdk()
        try:
            job = await sdk.aio.batches.create(
                model=self.provider.model,
                src=lines,  # type: ignore[arg-type]
                config={"display_name": display_name(run_id, sub.id)},
            )
        except Exception as exc:
            raise self._error(exc, "creating the batch job") from None
        if not job.name:
            raise BatchError(f"{self.name}: the batch job was created without a name")
        return str(job.name)

    async def recover(self, sub: Submission, run_id: str) -> str | None:
        wanted = display_name(run_id, sub.id)
        doing = "listing batch jobs"
        try:
            async with self.deadline(doing):
                async for job in await self.sdk().aio.batches.list(config={"page_size": 100}):
                    if job.display_name == wanted and job.name:
                        return str(job.name)
        except Exception as exc:
            raise self._error(exc, doing) from None
        return None

    async def _get(self, batch_id: str) -> Any:
        doing = f"polling batch job {batch_id}"
        try:
            async with self.deadline(doing):
                return await self.sdk().aio.batches.get(name=batch_id)
        except Exception as exc:
            raise self._error(exc, doing) from None

    async def status(self, batch_id: str) -> BatchStatus:
        job = await self._get(batch_id)
        state = str(job.state.value if job.state is not None else "JOB_STATE_UNSPECIFIED")
        counts: dict[str, int] = {}
        if job.dest is not None and job.dest.inlined_responses is not None:
            counts["answered"] = len(job.dest.inlined_responses)
        return BatchStatus(status=state, ended=state in _ENDED, counts=counts)

    async def results(self, sub: Submission) -> list[LineOutcome]:
        assert sub.batch_id is not None
        with batch_results_bound(self.client.settings.max_answer_chars, len(sub.custom_ids)):
            job = await self._get(sub.batch_id)  # the answers come inlined in the job
        where = f"batch job {sub.batch_id}"
        name = self.provider.name
        responses = job.dest.inlined_responses if job.dest is not None else None
        state = str(job.state.value if job.state is not None else "")
        if not responses:
            if state == "JOB_STATE_FAILED":
                why = job.error.message if job.error is not None and job.error.message else "no reason given"
                return [LineOutcome(cid, error=f"{name}: {where} failed: {why}") for cid in sub.custom_ids]
            return []
        outcomes: list[LineOutcome] = []
        for index, item in enumerate(responses):
            meta = item.metadata or {}
            cid = str(meta.get("key") or (sub.custom_ids[index] if index < len(sub.custom_ids) else ""))
            if item.response is not None:
                body = item.response.model_dump(mode="json", by_alias=True, exclude_none=True)
                body.pop("sdkHttpResponse", None)
                try:
                    outcomes.append(LineOutcome(cid, response=self.provider._parse(body, {}, 0.0)))
                except MalformedResponseError as exc:
                    outcomes.append(LineOutcome(cid, error=f"{exc} ({where})", retryable=True))
                continue
            error = item.error
            code = getattr(error, "code", None)
            message = str(getattr(error, "message", None) or "no answer")[:300]
            outcomes.append(
                LineOutcome(
                    cid,
                    error=f"{name}: error {code} in {where}: {message}",
                    retryable=code not in _PERMANENT_CODES,
                )
            )
        return outcomes
