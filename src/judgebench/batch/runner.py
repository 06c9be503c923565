"""`run_batch`: the same contract as `ModelClient.map`, with the calls sent through a provider Batch API.

Answers already in the response store are served from it without submitting. The rest go out in
as few batches as the provider's limits allow (one endpoint per batch), each recorded in
`run_dir/batches.json` before and after it is created, then polled until it ends. Every answer is
committed to the store under its cache key (= the line's `custom_id`) before `on_result` sees it,
so a killed command never pays for an answer again; a restarted command resumes polling the batches
it finds recorded and submits only calls that are neither answered nor in a known batch. Lines that
failed, expired or were cancelled are sent again, only they, in a new batch (at most
1 + `settings.max_retries` batches per call in all); what still fails is returned as a failed call.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgebench.batch.backend import BatchBackend, BatchError, LineOutcome, backend_for
from judgebench.batch.state import BatchStore, Submission, new_id
from judgebench.config import defaults
from judgebench.errors import JudgebenchError, ProviderConfigError
from judgebench.models.base import ModelRequest, ModelResponse, prompt_hash
from judgebench.models.client import ModelClient
from judgebench.models.limits import offline_block_reason
from judgebench.models.results import CallResult, Refusal, advance_progress, kept_answer
from judgebench.records.clock import now_iso

_log = logging.getLogger(__name__)  # the CLI shows its warnings on stderr

if TYPE_CHECKING:
    from judgebench.progress import ProgressReporter

__all__ = ["BatchOptions", "batch_estimate", "execute_batch", "resume_hint", "run_batch"]


@dataclass(frozen=True)
class BatchOptions:
    """How a batch run waits and retries: seconds between polls, whether failed lines go out again
    in a new batch, where the progress lines go, and which cache keys skip the store (asked again,
    like `ModelClient.call(refresh=True)`)."""

    poll_interval: float = defaults.POLL_INTERVAL_S
    resubmit_failed: bool = True
    log: Callable[[str], None] | None = None
    refresh: Collection[str] = ()


def batch_estimate(client: ModelClient, request: ModelRequest) -> float | None:
    """Upper-bound batch-price cost of a call (estimated input tokens, output at `max_tokens`)."""
    return client.estimate_cost(request, batch=True)


def resume_hint(run_dir: Path, batch_ids: Sequence[str]) -> str:
    """What Ctrl-C prints: the batches keep running and the same command picks them up again."""
    ids = ", ".join(batch_ids) if batch_ids else "(being created)"
    return (
        f"batch {ids} left running at the provider (recorded in {Path(run_dir) / 'batches.json'}); "
        "run the same command again to resume polling: nothing already submitted is paid twice"
    )


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


class _BatchRun:
    def __init__(
        self,
        client: ModelClient,
        backend: BatchBackend,
        requests: Sequence[ModelRequest],
        run_dir: Path,
        options: BatchOptions,
        *,
        on_result: Callable[[int, CallResult], None] | None,
        progress: ProgressReporter | None,
    ) -> None:
        self.client = client
        self.backend = backend
        self.requests = requests
        self.run_dir = Path(run_dir)
        self.on_result = on_result
        self.poll_interval = max(0.0, options.poll_interval)
        self.resubmit_failed = options.resubmit_failed
        self.progress = progress
        self._log = options.log
        self.refresh = frozenset(options.refresh)
        self.store = BatchStore(self.run_dir)
        self.max_attempts = 1 + max(0, client.settings.max_retries)
        self.results: list[CallResult | None] = [None] * len(requests)
        self.indices: dict[str, list[int]] = {}
        self.request_of: dict[str, ModelRequest] = {}
        for index, request in enumerate(requests):
            key = client.key_for(request)
            self.indices.setdefault(key, []).append(index)
            self.request_of.setdefault(key, request)
        self.delivered: set[str] = set()
        self.estimates: dict[str, float] = {}
        self.run_id = ""
        self.group: asyncio.TaskGroup | None = None

    def log(self, message: str) -> None:
        if self._log is not None:
            self._log(f"{self.client.name}: {message}")

    # --- handing results to the caller ------------------------------------------------------------

    def deliver(
        self,
        key: str,
        response: ModelResponse | None,
        *,
        error: str | None = None,
        refused: Refusal | None = None,
        from_cache: bool = False,
        cost: float | None = None,
        batch_id: str | None = None,
        attempts: int = 0,
    ) -> None:
        """Fill every request with this key (the first one pays; repeats are store hits)."""
        if key in self.delivered:
            return
        self.delivered.add(key)
        for n, index in enumerate(self.indices.get(key, [])):
            request = self.requests[index]
            hit = from_cache or (n > 0 and response is not None)
            result = CallResult(
                cache_key=key,
                prompt_hash=prompt_hash(request),
                response=response,
                error=error,
                refused=refused,
                from_cache=hit,
                attempts=0 if hit else attempts,
                cost_usd=cost,
                params_sent=response.params_sent if response is not None else self._params(request),
                batch_id=batch_id,
                custom_id=key if batch_id else None,
            )
            self.client.stats.record_result(result)
            self.results[index] = result
            if self.on_result is not None:
                self.on_result(index, result)
            advance_progress(self.progress, result)

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        try:
            return self.backend.params_sent(request)
        except Exception:  # describing the params must never mask the real error
            return {}

    def fail(self, key: str, error: str, attempts: int = 0, *, refused: Refusal | None = None) -> None:
        if key in self.estimates and self.client.budget is not None:
            self.client.budget.settle(self.estimates.pop(key), 0.0)
        self.deliver(key, None, error=error, refused=refused, attempts=attempts)

    def accept(self, key: str, response: ModelResponse, sub: Submission) -> None:
        """Store a batch answer (before anyone sees it), settle its reservation, hand it over."""
        request = self.request_of.get(key)
        sent = self._params(request) if request is not None else {}
        client = self.client
        if request is not None:  # priced below: a usage that is not a count is costed at the estimate
            response = client.checked_usage(response, request)
        response = kept_answer(response, client.settings.max_answer_chars)  # storable, capped
        response.params_sent = {**sent, "batch_id": sub.batch_id, "custom_id": key}
        client.cache.put(
            key, response, provider=client.spec.provider, model=client.spec.model, spec=client.spec.text
        )
        if key not in self.indices or key in self.delivered:
            return  # paid for by an earlier command's batch: stored, nothing to hand over
        cost = client.cost_of(response, batch=True)
        if client.budget is not None:
            client.budget.settle(self.estimates.pop(key, 0.0), cost or 0.0)
        self.deliver(key, response, cost=cost, batch_id=sub.batch_id, attempts=sub.attempt)

    # --- the run ---------------------------------------------------------------------------------

    async def execute(self) -> list[CallResult]:
        client = self.client
        client.stats.record_calls(len(self.requests))
        data = self.store.load()
        collected = {cid for s in data.submissions if s.phase == "collected" for cid in s.custom_ids}
        remaining: list[str] = []
        for key in self.indices:
            if key in self.refresh:
                remaining.append(key)  # asked again on purpose: a stored answer was found unusable
                continue
            if client.use_cache or key in collected:
                cached = client.cache.get(key)
                if cached is not None:
                    batch_id = cached.params_sent.get("batch_id")
                    cost = client.cost_of(cached, batch=batch_id is not None)
                    self.deliver(key, cached, from_cache=True, cost=cost, batch_id=batch_id)
                    continue
            remaining.append(key)
        if not remaining:
            return self._finish()
        wanted = set(remaining)
        resumed = [
            s
            for s in data.submissions
            if s.phase != "collected"
            and s.provider == client.spec.provider
            and wanted.intersection(s.custom_ids)
        ]
        in_flight = {cid for s in resumed for cid in s.custom_ids}
        fresh = [k for k in remaining if k not in in_flight]
        self.run_id = self.store.run_id()
        try:
            async with asyncio.TaskGroup() as group:
                self.group = group
                for sub in resumed:
                    self.log(
                        f"resuming batch {sub.batch_id or '(being created)'} recorded in {self.store.path}"
                    )
                    group.create_task(self.drive(sub))
                await self.submit(fresh, attempt=1)
        except BaseExceptionGroup as eg:
            leaf = _first_leaf(eg)
            if isinstance(leaf, asyncio.CancelledError):
                raise  # pragma: no cover - cancellation is re-raised by the group itself
            raise leaf from None
        return self._finish()

    def _finish(self) -> list[CallResult]:
        for key in self.indices:
            if key not in self.delivered:  # pragma: no cover - every path delivers; kept as a guard
                self.fail(key, f"{self.backend.name}: no answer from any batch")
        return [r for r in self.results if r is not None]

    async def submit(self, keys: Sequence[str], attempt: int) -> None:
        """Create as few batches as the limits allow for `keys` and start polling each."""
        keys = [k for k in keys if k not in self.delivered]
        if not keys:
            return
        groups: dict[str, list[tuple[str, dict[str, Any], int]]] = {}
        for key in keys:
            request = self.request_of[key]
            if attempt == 1 and not self._reserve(key, request):
                continue
            endpoint, line = self.backend.encode(key, request)
            size = len(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) + 1
            if size > self.backend.max_bytes:
                self.fail(key, f"{self.backend.name}: request of {size:,} bytes exceeds the batch size limit")
                continue
            groups.setdefault(endpoint, []).append((key, line, size))
        for endpoint, entries in groups.items():
            for chunk in self._chunks(entries):
                await self._create(endpoint, chunk, attempt)

    def _reserve(self, key: str, request: ModelRequest) -> bool:
        """Reserve the call's batch-price estimate in the budget; False (the call refused) if it
        does not fit. Only first submissions reserve: a resent line keeps its reservation."""
        budget = self.client.budget
        if budget is None:
            return True
        estimate = batch_estimate(self.client, request)
        if estimate is None:
            return True  # unpriced: nothing to reserve (--max-cost refuses such models up front)
        if not budget.try_reserve(estimate):
            self.fail(key, budget.refusal(estimate, batch=True), refused="budget")
            return False
        self.estimates[key] = estimate
        return True

    def _chunks(
        self, entries: list[tuple[str, dict[str, Any], int]]
    ) -> list[list[tuple[str, dict[str, Any], int]]]:
        """Split at the provider's request-count and byte limits."""
        chunks: list[list[tuple[str, dict[str, Any], int]]] = []
        current: list[tuple[str, dict[str, Any], int]] = []
        size = 0
        for entry in entries:
            if current and (
                len(current) >= self.backend.max_requests or size + entry[2] > self.backend.max_bytes
            ):
                chunks.append(current)
                current, size = [], 0
            current.append(entry)
            size += entry[2]
        if current:
            chunks.append(current)
        return chunks

    async def _create(
        self, endpoint: str, chunk: list[tuple[str, dict[str, Any], int]], attempt: int
    ) -> None:
        client = self.client
        sub = Submission(
            id=new_id("sub-"),
            spec=client.spec.text,
            provider=client.spec.provider,
            backend=self.backend.name,
            endpoint=endpoint,
            attempt=attempt,
            custom_ids=[key for key, _, _ in chunk],
        )
        # recorded before the create call: a kill during it leaves a trace to recover from
        self.store.upsert(sub)
        try:
            sub.batch_id = await self.backend.submit(sub, [line for _, line, _ in chunk], self.run_id)
        except ProviderConfigError:
            self.store.remove(sub.id)
            raise
        except BatchError as exc:
            self.store.remove(sub.id)  # the provider answered with an error: no batch exists
            for key in sub.custom_ids:
                self.fail(key, str(exc), attempts=attempt)
            return
        sub.phase = "running"
        sub.status = "submitted"
        self.store.upsert(sub)
        again = f" (attempt {attempt}: lines that failed before)" if attempt > 1 else ""
        self.log(f"submitted {self.backend.name} batch {sub.batch_id} with {len(chunk)} calls{again}")
        assert self.group is not None
        self.group.create_task(self.drive(sub))

    async def drive(self, sub: Submission) -> None:
        """Poll one batch to its end, collect its lines, send the retryable failures again."""
        if sub.batch_id is None:
            try:
                found = await self.backend.recover(sub, self.run_id)
            except BatchError as exc:
                self._lost(sub, f"{exc}; run the command again to look for it once more")
                return
            if found is None:  # the create never happened: these calls were never submitted
                self.store.remove(sub.id)
                await self.submit([k for k in sub.custom_ids if k in self.indices], sub.attempt)
                return
            sub.batch_id = found
            sub.phase = "running"
            self.store.upsert(sub)
            self.log(f"found batch {found}, created by an interrupted run; polling it")
        batch_id = sub.batch_id
        try:
            while True:
                status = await self.backend.status(batch_id)
                if status.status != sub.status or status.counts != sub.counts:
                    sub.status, sub.counts = status.status, status.counts
                    self.store.upsert(sub)
                    counts = ", ".join(f"{k} {v}" for k, v in status.counts.items())
                    self.log(f"batch {batch_id}: {status.status}" + (f" ({counts})" if counts else ""))
                if status.ended:
                    break
                await asyncio.sleep(self.poll_interval)
            outcomes = await self.backend.results(sub)
        except BatchError as exc:
            self._lost(
                sub, f"{exc}; batch {batch_id} is recorded in batches.json: run the command again to resume"
            )
            return
        await self._collect(sub, outcomes)

    def _lost(self, sub: Submission, error: str) -> None:
        """Polling or downloading failed: the calls fail for now, the batch stays recorded."""
        for key in sub.custom_ids:
            if key in self.indices:
                self.fail(key, error, attempts=sub.attempt)

    async def _collect(self, sub: Submission, outcomes: list[LineOutcome]) -> None:
        ours = set(sub.custom_ids)
        seen: set[str] = set()
        retry: list[str] = []
        succeeded = failed = 0
        for outcome in outcomes:
            key = outcome.custom_id
            if key in seen or not key:
                continue
            seen.add(key)
            if outcome.response is not None:
                succeeded += 1
                self.accept(key, outcome.response, sub)
                continue
            failed += 1
            if key in ours:
                self._failed_line(key, outcome.error or "failed", outcome.retryable, sub, retry)
        for key in sub.custom_ids:
            if key not in seen:
                failed += 1
                error = f"{self.backend.name}: no result line for this call in batch {sub.batch_id}"
                self._failed_line(key, error, True, sub, retry)
        sub.phase = "collected"
        sub.ended_at = now_iso()
        sub.succeeded, sub.failed = succeeded, failed
        self.store.upsert(sub)
        self.log(
            f"batch {sub.batch_id} collected: {succeeded} answered, {failed} failed, {len(retry)} to resend"
        )
        await self.submit(retry, sub.attempt + 1)

    def _failed_line(self, key: str, error: str, retryable: bool, sub: Submission, retry: list[str]) -> None:
        if key not in self.indices or key in self.delivered:
            return
        if retryable and self.resubmit_failed and sub.attempt < self.max_attempts:
            retry.append(key)
            return
        if retryable and sub.attempt >= self.max_attempts:
            error += f" (gave up after {sub.attempt} batch{'es' if sub.attempt != 1 else ''})"
        self.fail(key, error, attempts=sub.attempt)

    def running_batches(self) -> list[str]:
        return [
            s.batch_id or "(being created)"
            for s in self.store.active()
            if s.spec == self.client.spec.text and set(s.custom_ids) & set(self.indices)
        ]


async def run_batch(
    client: ModelClient,
    requests: Sequence[ModelRequest],
    run_dir: Path,
    *,
    on_result: Callable[[int, CallResult], None] | None = None,
    poll_interval: float = defaults.POLL_INTERVAL_S,
    resubmit_failed: bool = True,
    progress: ProgressReporter | None = None,
    log: Callable[[str], None] | None = None,
) -> list[CallResult]:
    """Answer `requests` through `client`'s provider Batch API; same contract as `ModelClient.map`.

    Raises ProviderConfigError for a spec without batch support (deepseek, local, sim) or an
    endpoint without a Batch API; provider faults become failed CallResults. `log` receives one line
    per submission, status change and collection (for stderr; the progress bar counts answers).
    Cancelling it (Ctrl-C) leaves the batches running and prints how to resume."""
    options = BatchOptions(poll_interval=poll_interval, resubmit_failed=resubmit_failed, log=log)
    return await execute_batch(client, requests, run_dir, options, on_result=on_result, progress=progress)


async def execute_batch(
    client: ModelClient,
    requests: Sequence[ModelRequest],
    run_dir: Path,
    options: BatchOptions,
    *,
    on_result: Callable[[int, CallResult], None] | None = None,
    progress: ProgressReporter | None = None,
) -> list[CallResult]:
    """`run_batch` with its options as one `BatchOptions` (which can also name keys to refresh)."""
    backend = backend_for(client)
    blocked = offline_block_reason(client.provider)
    if blocked is not None:
        raise ProviderConfigError(blocked)
    run = _BatchRun(client, backend, requests, run_dir, options, on_result=on_result, progress=progress)
    try:
        return await run.execute()
    except (asyncio.CancelledError, KeyboardInterrupt):
        try:
            running = run.running_batches()
        except JudgebenchError:  # pragma: no cover - an unreadable state file must not mask the interrupt
            running = []
        if running:
            _log.warning("judgebench: %s: %s", client.name, resume_hint(run.run_dir, running))
        raise
    finally:
        await backend.aclose()
