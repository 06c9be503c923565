"""The one model client every stage uses: cache -> concurrency/rate limits -> retries -> cache put.

A call is answered from the response store when it can be (no request, no cost). Otherwise it waits
for a concurrency slot and a rate-limit slot shared by every client of the same connection (provider
and endpoint) in this process, and makes attempts with capped exponential backoff and full jitter on
transient faults (429 honouring Retry-After, 5xx, timeouts, connection errors, malformed 200s);
permanent faults (authentication, validation) fail at once. A received answer is committed to the
store before the caller sees it, so a killed run never pays for it again. Errors are never stored.

Safety for test suites: with `JUDGEBENCH_OFFLINE_TESTS=1` in the environment, any request to an
endpoint whose host is not 127.0.0.1/localhost fails at once without being sent.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from pydantic import BaseModel, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from judgebench.errors import JudgebenchError
from judgebench.models.base import (
    Capabilities,
    ModelRequest,
    ModelResponse,
    ModelSpec,
    PermanentError,
    Provider,
    ProviderError,
    ProviderSettings,
    TransientError,
    cache_key,
    create_provider,
    prompt_hash,
    provider_class,
)
from judgebench.models.cache import ResponseCache, default_cache
from judgebench.models.pricing import PriceTable, estimate_tokens, heuristic_tokens

if TYPE_CHECKING:
    from judgebench.progress import ProgressReporter

__all__ = [
    "OFFLINE_ENV",
    "Budget",
    "CallResult",
    "ClientStats",
    "ModelClient",
    "RateLimiter",
    "default_cache",
]

OFFLINE_ENV = "JUDGEBENCH_OFFLINE_TESTS"
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
_IN_PROCESS = {"local", "sim"}
# A server's Retry-After is honoured up to this many seconds (beyond it the backoff cap applies).
_MAX_RETRY_AFTER = 600.0


class CallResult(BaseModel):
    """The outcome of one logical call: an answer (possibly from the store) or why there is none."""

    cache_key: str
    prompt_hash: str
    response: ModelResponse | None
    error: str | None = None
    from_cache: bool = False
    attempts: int = 0
    cost_usd: float | None = None
    params_sent: dict[str, Any] = Field(default_factory=dict)
    # set for answers that came through a provider Batch API (judgebench.batch); None for live calls
    batch_id: str | None = None
    custom_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.response is not None


class ClientStats(BaseModel):
    """Totals for the manifest. Tokens and cost count only answers paid for in this session."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    budget_refusals: int = 0
    status_counts: dict[str, int] = Field(default_factory=dict)


class BudgetExceeded(Exception):
    """Raised internally; surfaces as a CallResult error starting with 'BudgetExceeded'."""


@dataclass
class Budget:
    """A spending cap shared by every client given the same object (e.g. all judges of a run).

    Before an uncached call is made, its cost is estimated (input tokens estimated, output at
    `max_tokens`) and reserved; the call is refused when spent + reserved + estimate > the cap."""

    max_cost_usd: float
    spent_usd: float = 0.0
    reserved_usd: float = 0.0

    def try_reserve(self, estimate: float) -> bool:
        if self.spent_usd + self.reserved_usd + estimate > self.max_cost_usd:
            return False
        self.reserved_usd += estimate
        return True

    def settle(self, estimate: float, actual: float) -> None:
        self.reserved_usd = max(0.0, self.reserved_usd - estimate)
        self.spent_usd += actual


class RateLimiter:
    """Smooth pacing for requests- and tokens-per-minute limits (no bursts).

    Callers pass one at a time (FIFO): each waits for the next slot, `60/rpm` seconds after the
    previous request left (and `tokens*60/tpm` after the previous token reservation), so requests
    leave evenly spaced and a limit is reached without a 429. A caller that wakes late keeps the
    schedule when it is less than half an interval behind (so sleep overshoot does not erode the
    rate) and restarts it from now otherwise (so an event-loop stall never turns into a burst).
    A 429 with Retry-After pauses every caller. Token reservations are estimates (prompt characters
    and `max_tokens`), as providers count `max_tokens` against the limit when a request arrives."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self._next_request = 0.0
        self._next_token = 0.0
        self.pause_until = 0.0
        self._lock = asyncio.Lock()

    @property
    def active(self) -> bool:
        return bool(self.rpm or self.tpm)

    def _slot(self, now: float) -> float:
        return max(now, self.pause_until, self._next_request, self._next_token)

    def _commit(self, slot: float, now: float, tokens: int) -> None:
        interval = 60.0 / self.rpm if self.rpm else 0.0
        base = slot if now - slot <= interval / 2 else now
        if self.rpm:
            self._next_request = base + interval
        if self.tpm:
            self._next_token = base + max(tokens, 1) * 60.0 / self.tpm

    def reserve(self, tokens: int = 0) -> float:
        """Take the next slot without waiting; returns the monotonic time it starts."""
        slot = self._slot(time.monotonic())
        self._commit(slot, slot, tokens)
        return slot

    async def acquire(self, tokens: int = 0) -> None:
        """Wait for this caller's slot (returns at once when no limit is set and nothing is paused)."""
        if not self.active and self.pause_until <= time.monotonic():
            return
        async with self._lock:
            now = time.monotonic()
            slot = self._slot(now)
            if slot > now:
                await asyncio.sleep(slot - now)
                now = time.monotonic()
            self._commit(slot, now, tokens)

    def pause(self, seconds: float) -> None:
        self.pause_until = max(self.pause_until, time.monotonic() + seconds)


@dataclass
class _Connection:
    """Concurrency shared by all clients of one provider endpoint in one event loop."""

    semaphore: asyncio.Semaphore
    capacity: int


_CONNECTIONS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Connection]] = (
    weakref.WeakKeyDictionary()
)
_LIMITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], RateLimiter]] = (
    weakref.WeakKeyDictionary()
)


def _connection(key: str, settings: ProviderSettings) -> _Connection:
    """The shared concurrency for endpoint `key` in the running loop: the largest concurrency any
    of its clients asked for (a semaphore is widened by releasing the difference)."""
    loop = asyncio.get_running_loop()
    per_loop = _CONNECTIONS.setdefault(loop, {})
    want = max(1, settings.concurrency)
    conn = per_loop.get(key)
    if conn is None:
        conn = _Connection(asyncio.Semaphore(want), want)
        per_loop[key] = conn
    elif want > conn.capacity:
        for _ in range(want - conn.capacity):
            conn.semaphore.release()
        conn.capacity = want
    return conn


def _limiter(key: str, model: str, settings: ProviderSettings) -> RateLimiter:
    """The shared rate limiter for one model at one endpoint (providers limit per model): the
    strictest rpm/tpm any of its clients set."""
    loop = asyncio.get_running_loop()
    per_loop = _LIMITERS.setdefault(loop, {})
    limiter = per_loop.get((key, model))
    if limiter is None:
        limiter = RateLimiter(settings.rpm, settings.tpm)
        per_loop[(key, model)] = limiter
    else:
        if settings.rpm and (limiter.rpm is None or settings.rpm < limiter.rpm):
            limiter.rpm = settings.rpm
        if settings.tpm and (limiter.tpm is None or settings.tpm < limiter.tpm):
            limiter.tpm = settings.tpm
    return limiter


def offline_block_reason(provider: Provider) -> str | None:
    """Why a request from `provider` must not be sent under JUDGEBENCH_OFFLINE_TESTS=1, or None."""
    if os.environ.get(OFFLINE_ENV) != "1" or provider.name in _IN_PROCESS:
        return None
    endpoint = getattr(provider, "endpoint", None)
    url = endpoint() if callable(endpoint) else None
    url = url or provider.settings.base_url or provider.default_base_url
    host = urlparse(url).hostname if url else None
    if host in _LOCAL_HOSTS:
        return None
    where = url or "its default endpoint"
    return f"{provider.name}: real model request blocked in tests ({OFFLINE_ENV}=1; endpoint {where})"


def _status_of(exc: BaseException) -> str:
    status = getattr(exc, "status", None)
    if status:
        return str(status)
    return {"MalformedResponseError": "malformed", "TransientError": "transient"}.get(
        type(exc).__name__, "permanent" if isinstance(exc, PermanentError) else type(exc).__name__
    )


class ModelClient:
    """Calls one model (`spec`) for a stage. Create one per judge/translator; share a `cache`."""

    def __init__(
        self,
        spec: ModelSpec | str,
        settings: ProviderSettings | None = None,
        *,
        cache: ResponseCache | None = None,
        use_cache: bool = True,
        prices: PriceTable | None = None,
        name: str | None = None,
        budget: Budget | None = None,
    ) -> None:
        """`cache=None` opens the user's store (`default_cache()`); `use_cache=False` skips reads
        (answers are still stored); `prices=None` loads `configs/prices.toml`."""
        self.spec = ModelSpec.parse(spec) if isinstance(spec, str) else spec
        self.settings = settings or ProviderSettings()
        self.name = name or self.spec.text
        self.use_cache = use_cache
        self.budget = budget
        self.stats = ClientStats()
        self._cache = cache
        self._own_cache = cache is None
        self._prices = prices
        self._provider: Provider | None = None
        self._blocked: str | None = None
        self._state: tuple[asyncio.AbstractEventLoop, _Connection, RateLimiter] | None = None
        cls = provider_class(self.spec.provider)
        env = getattr(cls, "base_url_env", None)
        env_url = os.environ.get(env) if isinstance(env, str) else None
        # The endpoint is part of the cache key: two servers may answer the same model differently.
        base_url = self.settings.base_url or env_url or cls.default_base_url
        self._key_base_url = base_url.rstrip("/") if base_url else None

    # --- lazily created parts ---------------------------------------------------------------------

    @property
    def cache(self) -> ResponseCache:
        if self._cache is None:
            self._cache = default_cache()
        return self._cache

    @property
    def prices(self) -> PriceTable:
        if self._prices is None:
            self._prices = PriceTable.load()
        return self._prices

    @property
    def provider(self) -> Provider:
        """The provider adapter, created on first use (a missing key raises ProviderConfigError here)."""
        if self._provider is None:
            provider = create_provider(self.spec, self.settings)
            self._blocked = offline_block_reason(provider)
            self._provider = provider
        return self._provider

    @property
    def capabilities(self) -> Capabilities:
        return self.provider.capabilities

    def key_for(self, request: ModelRequest) -> str:
        """The cache key of `request` for this model and endpoint (also the batch custom_id)."""
        return cache_key(self.spec.provider, self.spec.model, self._key_base_url, request)

    def cost_of(self, response: ModelResponse, *, batch: bool = False) -> float | None:
        return self.prices.cost(self.spec.provider, self.spec.model, response.usage, batch=batch)

    def estimate_cost(self, request: ModelRequest) -> float | None:
        """Upper-bound cost of an uncached request: estimated input tokens, output at `max_tokens`."""
        price = self.prices.price(self.spec.provider, self.spec.model)
        if price is None:
            return None
        text = request.prompt or "".join(m.content for m in request.messages or [])
        from judgebench.records import Usage

        usage = Usage(input_tokens=estimate_tokens(text, self.spec), output_tokens=request.max_tokens)
        return price.cost(usage)

    # --- one call ---------------------------------------------------------------------------------

    async def call(self, request: ModelRequest, *, refresh: bool = False) -> CallResult:
        """Answer `request` from the store or the provider; never raises for a provider fault
        (the result's `error` says why), only for configuration errors (missing key, SDK).
        `refresh=True` skips the store for this call (a stored answer the caller found unusable)."""
        key = self.key_for(request)
        phash = prompt_hash(request)
        self.stats.calls += 1
        if self.use_cache and not refresh:
            cached = self.cache.get(key)
            if cached is not None:
                self.stats.cache_hits += 1
                return CallResult.model_construct(
                    cache_key=key,
                    prompt_hash=phash,
                    response=cached,
                    error=None,
                    from_cache=True,
                    attempts=0,
                    cost_usd=self.cost_of(cached),
                    params_sent=cached.params_sent,
                )
        provider = self.provider
        if self._blocked is not None:
            return self._failed(key, phash, self._blocked, 0, request)

        estimate = 0.0
        if self.budget is not None:
            est = self.estimate_cost(request)
            estimate = est or 0.0
            if est is not None and not self.budget.try_reserve(est):
                self.stats.budget_refusals += 1
                b = self.budget
                why = (
                    f"BudgetExceeded: spent ${b.spent_usd:.4f} + in flight ${b.reserved_usd:.4f} + "
                    f"this call up to ${est:.4f} would pass the cap ${b.max_cost_usd:.4f}"
                )
                return self._failed(key, phash, why, 0, request)

        conn, limiter = self._shared_state(provider)
        attempts = 0
        response: ModelResponse | None = None
        error: str | None = None
        max_attempts = 1 + max(0, self.settings.max_retries)  # the first attempt, then the retries
        try:
            try:
                # The first attempt runs outside tenacity: most calls succeed at once, and this path
                # is the per-call overhead that bounds throughput where the SDK's CPU cost binds.
                attempts = 1
                response = await self._attempt(provider, conn, limiter, request)
            except TransientError as first:
                if max_attempts == 1:
                    raise
                await asyncio.sleep(self._backoff(1, first))
                retrying = AsyncRetrying(
                    stop=stop_after_attempt(max_attempts - 1),
                    wait=self._wait,
                    retry=retry_if_exception_type(TransientError),
                    reraise=True,
                )
                async for attempt in retrying:
                    with attempt:
                        attempts += 1
                        response = await self._attempt(provider, conn, limiter, request)
        except ProviderError as exc:
            error = self._describe(provider, exc, attempts)
        except JudgebenchError:
            raise  # configuration: the whole run must stop and say why
        except Exception as exc:  # an adapter let an unclassified error through: record it, no retry
            self._count(type(exc).__name__)
            error = f"{provider.name}: unexpected {type(exc).__name__}: {exc}"
        finally:
            if self.budget is not None:
                actual = (self.cost_of(response) or 0.0) if response is not None else 0.0
                self.budget.settle(estimate, actual)
        self.stats.retries += max(0, attempts - 1)
        if response is None:
            return self._failed(key, phash, error or "no answer", attempts, request)

        # Stored before anyone sees it: a kill from here on never pays for this answer again.
        await self.cache.aput(
            key, response, provider=self.spec.provider, model=self.spec.model, spec=self.spec.text
        )
        cost = self.cost_of(response)
        self.stats.input_tokens += response.usage.input_tokens
        self.stats.output_tokens += response.usage.output_tokens
        if cost is None:
            self.stats.unpriced_calls += 1
        else:
            self.stats.cost_usd += cost
        # fields built here are already typed; skipping validation keeps the per-call cost low
        return CallResult.model_construct(
            cache_key=key,
            prompt_hash=phash,
            response=response,
            error=None,
            from_cache=False,
            attempts=attempts,
            cost_usd=cost,
            params_sent=response.params_sent,
        )

    def _shared_state(self, provider: Provider) -> tuple[_Connection, RateLimiter]:
        """This loop's shared concurrency and rate limiter for the provider (looked up once per loop)."""
        loop = asyncio.get_running_loop()
        cached = self._state
        if cached is not None and cached[0] is loop:
            return cached[1], cached[2]
        key = provider.connection_key()
        conn, limiter = _connection(key, self.settings), _limiter(key, self.spec.model, self.settings)
        self._state = (loop, conn, limiter)
        return conn, limiter

    async def _attempt(
        self, provider: Provider, conn: _Connection, limiter: RateLimiter, request: ModelRequest
    ) -> ModelResponse:
        async with conn.semaphore:
            if limiter.active or limiter.pause_until:
                tokens = 0
                if limiter.tpm:
                    text = request.prompt or "".join(m.content for m in request.messages or [])
                    tokens = heuristic_tokens(text) + request.max_tokens
                await limiter.acquire(tokens)
            try:
                if provider.name in _IN_PROCESS or getattr(provider, "enforces_timeout", False):
                    response = await provider.generate(request)
                else:
                    # The SDKs enforce settings.timeout; this guard catches an adapter that does not.
                    async with asyncio.timeout(self.settings.timeout + 5.0):
                        response = await provider.generate(request)
            except TimeoutError:
                self._count("timeout")
                raise TransientError(
                    f"{provider.name}: no answer within {self.settings.timeout:g}s", provider=provider.name
                ) from None
            except ProviderError as exc:
                self._count(_status_of(exc))
                if exc.retry_after:
                    limiter.pause(min(exc.retry_after, _MAX_RETRY_AFTER))
                raise
        self._count("ok")
        return response

    def _backoff(self, failed_attempts: int, exc: BaseException | None) -> float:
        """Full-jitter exponential backoff (uniform in [0, min(cap, initial * 2^(n-1))]), never
        shorter than the server's Retry-After."""
        ceiling = min(self.settings.backoff_max, self.settings.backoff_initial * 2.0 ** (failed_attempts - 1))
        delay = random.uniform(0.0, max(0.0, ceiling))
        retry_after = getattr(exc, "retry_after", None)
        if retry_after:
            delay = max(delay, min(float(retry_after), _MAX_RETRY_AFTER))
        return delay

    def _wait(self, state: RetryCallState) -> float:
        """tenacity's wait hook for attempts after the first (its attempt 1 is our attempt 2)."""
        exc = state.outcome.exception() if state.outcome is not None else None
        return self._backoff(state.attempt_number + 1, exc)

    def _count(self, status: str) -> None:
        self.stats.status_counts[status] = self.stats.status_counts.get(status, 0) + 1

    def _describe(self, provider: Provider, exc: ProviderError, attempts: int) -> str:
        message = str(exc) or type(exc).__name__
        if not message.startswith(provider.name):
            message = f"{provider.name}: {message}"
        if exc.retryable:
            message += f" (gave up after {attempts} attempt{'s' if attempts != 1 else ''})"
        return message

    def _failed(self, key: str, phash: str, error: str, attempts: int, request: ModelRequest) -> CallResult:
        self.stats.failures += 1
        params: dict[str, Any] = {}
        build = getattr(self._provider, "build_params", None)
        if callable(build):
            try:
                params = dict(build(request))
            except Exception:  # describing the params must never mask the real error
                params = {}
        return CallResult(
            cache_key=key,
            prompt_hash=phash,
            response=None,
            error=error,
            attempts=attempts,
            params_sent=params,
        )

    # --- many calls -------------------------------------------------------------------------------

    async def map(
        self,
        requests: Sequence[ModelRequest],
        *,
        on_result: Callable[[int, CallResult], None] | None = None,
        progress: ProgressReporter | None = None,
    ) -> list[CallResult]:
        """Run all `requests` with the client's concurrency; `on_result(index, result)` is called as
        each finishes (after its answer is stored), so the caller can append its record at once."""
        results: list[CallResult | None] = [None] * len(requests)
        pending = iter(enumerate(requests))

        async def worker() -> None:
            since_yield = 0
            for index, request in pending:
                result = await self.call(request)
                results[index] = result
                if on_result is not None:
                    on_result(index, result)
                if progress is not None:
                    usage = (
                        result.response.usage
                        if result.response is not None and not result.from_cache
                        else None
                    )
                    progress.advance(
                        tokens=(usage.input_tokens + usage.output_tokens) if usage else 0,
                        cost=0.0 if result.from_cache or result.response is None else result.cost_usd,
                        cached=result.from_cache,
                        failed=result.response is None,
                    )
                since_yield = since_yield + 1 if result.from_cache else 0
                if since_yield >= 64:  # a long run of cache hits must not starve the event loop
                    since_yield = 0
                    await asyncio.sleep(0)

        workers = min(max(1, self.settings.concurrency), len(requests))
        async with asyncio.TaskGroup() as group:
            for _ in range(workers):
                group.create_task(worker())
        return [r for r in results if r is not None]

    async def aclose(self) -> None:
        """Close the provider's connections (and the store when this client opened it)."""
        if self._provider is not None:
            await self._provider.aclose()
            self._provider = None
        if self._own_cache and self._cache is not None:
            self._cache.close()
            self._cache = None

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
