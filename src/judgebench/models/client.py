"""The one model client every stage uses: cache -> budget -> concurrency/rate limits -> retries -> cache put.

A call is answered from the response store when it can be (no request, no cost). Otherwise it is
priced against the run's budget, if any, then waits for a concurrency slot and a rate-limit slot
shared by every client of the same connection (`limits.py`), and makes attempts with capped
exponential backoff and full jitter on transient faults (429 honouring Retry-After, 5xx, timeouts,
connection errors, malformed 200s); permanent faults (authentication, validation) fail at once, and
after `KEY_REJECTIONS_TO_STOP` rejected keys in a row the client sends nothing more (`stopped` says
why, once; the calls not sent stay pending, so a rerun resumes them). A
received answer is committed to the store before the caller sees it, so a killed run never pays for
it again. Errors are never stored. Safety for test suites: see `limits.offline_block_reason`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from judgebench.errors import JudgebenchError
from judgebench.models.base import (
    Capabilities,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderError,
    ProviderSettings,
    ProviderTraits,
    TransientError,
    cache_key,
    prompt_hash,
)
from judgebench.models.cache import ResponseCache, default_cache
from judgebench.models.failures import KeyRejected
from judgebench.models.limits import (
    OFFLINE_ENV,
    Connection,
    RateLimiter,
    offline_block_reason,
    shared_limits,
)
from judgebench.models.pricing import PriceTable, estimate_tokens, heuristic_tokens, usage_problem
from judgebench.models.provider_registry import ModelSpec, create_provider, provider_class
from judgebench.models.results import CallResult, ClientStats, Refusal, advance_progress, kept_answer
from judgebench.models.spend_cap import Budget
from judgebench.records import Usage

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
    "offline_block_reason",
]

_log = logging.getLogger(__name__)  # the CLI shows its warnings on stderr

# A server's Retry-After is honoured up to this many seconds (beyond it the backoff cap applies).
_MAX_RETRY_AFTER = 600.0
# The client's own deadline on an attempt: settings.timeout plus this much (an SDK's own timeout,
# where it fires, comes first and names itself).
_DEADLINE_GRACE = 0.5
# A failed call's error text is kept up to this many characters (after scrubbing).
_ERROR_LIMIT = 500
# This many calls in a row whose key was rejected (401, 403) stop the client: every later call would
# be rejected too.
KEY_REJECTIONS_TO_STOP = 3
# A long run of cache hits yields to the event loop this often, so it cannot starve other tasks.
_YIELD_EVERY = 64


@dataclass
class _Trial:
    """The attempts of one uncached call: how many were made and what came of them."""

    attempts: int = 0
    response: ModelResponse | None = None
    error: str | None = None
    # the status of a rejected key ("HTTP 401"), None when the call's key was not rejected
    key_rejected: str | None = None


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
        request_defaults: Mapping[str, Any] | None = None,
    ) -> None:
        """`cache=None` opens the user's store (`default_cache()`); `use_cache=False` skips reads
        (answers are still stored); `prices=None` loads `configs/prices.toml`; `request_defaults`:
        the judge's own ModelRequest fields (judges.toml temperature, max_tokens)."""
        self.spec = ModelSpec.parse(spec) if isinstance(spec, str) else spec
        self.settings = settings or ProviderSettings()
        self.name = name or self.spec.text
        self.use_cache = use_cache
        self.budget = budget
        self.request_defaults: dict[str, Any] = dict(request_defaults or {})
        self.stats = ClientStats()
        self._cache = cache
        self._own_cache = cache is None
        self._prices = prices
        self._provider: Provider | None = None
        self._blocked: str | None = None
        # calls in a row whose key was rejected, and why the client stopped sending (None: it did not)
        self._rejections = 0
        self.stopped: str | None = None
        # answers whose reported usage was not a count (costed at their estimate; warned once)
        self.bad_usage = 0
        self._state: tuple[asyncio.AbstractEventLoop, Connection, RateLimiter] | None = None
        cls = provider_class(self.spec.provider)
        self.traits: ProviderTraits = cls.traits
        # A total deadline per attempt, whatever the SDK does (an SDK timeout bounds each read, so a
        # server dripping one byte at a time would hold a call open for ever); in-process providers
        # excepted: their work runs in this process, where a deadline cannot stop it.
        self._guard_deadline = not self.traits.in_process
        env = self.traits.base_url_env
        env_url = os.environ.get(env) if env else None
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

    def holds(self, request: ModelRequest) -> bool:
        """Whether the response store would answer `request` now, without a call (time estimates)."""
        return self.use_cache and self.cache.get(self.key_for(request)) is not None

    def cost_of(self, response: ModelResponse, *, batch: bool = False) -> float | None:
        return self.prices.cost(self.spec.provider, self.spec.model, response.usage, batch=batch)

    def estimate_usage(self, request: ModelRequest) -> Usage:
        """The usage a call is reserved at: estimated input tokens, output at `max_tokens`."""
        text = request.prompt or "".join(m.content for m in request.messages or [])
        return Usage(input_tokens=estimate_tokens(text, self.spec), output_tokens=request.max_tokens)

    def estimate_cost(self, request: ModelRequest, *, batch: bool = False) -> float | None:
        """Upper-bound cost of an uncached request: estimated input tokens, output at `max_tokens`."""
        price = self.prices.price(self.spec.provider, self.spec.model)
        if price is None:
            return None
        return price.cost(self.estimate_usage(request), batch=batch)

    def checked_usage(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        """The answer with its usage checked before it is priced: counts that are not counts
        (negative, past any call's size, unreadable) are replaced by the call's estimate, so the
        answer is kept and costed at what was reserved for it (never negative money)."""
        problem = usage_problem(response.usage)
        if problem is None:
            return response
        self.bad_usage += 1
        if self.bad_usage == 1:
            _log.warning(
                "judgebench: %s: the provider's reply reports %s; such answers are kept and costed at "
                "the call's estimate (input estimated, output at max_tokens)",
                self.name,
                problem,
            )
        return response.model_copy(update={"usage": self.estimate_usage(request)})

    # --- one call ---------------------------------------------------------------------------------

    async def call(self, request: ModelRequest, *, refresh: bool = False) -> CallResult:
        """Answer `request` from the store or the provider; never raises for a provider fault
        (the result's `error` says why), only for configuration errors (missing key, SDK).
        `refresh=True` skips the store for this call (a stored answer the caller found unusable)."""
        key = self.key_for(request)
        phash = prompt_hash(request)
        self.stats.record_calls()
        if self.use_cache and not refresh:
            stored = self._stored(key, phash)
            if stored is not None:
                return stored
        provider = self.provider
        if self._blocked is not None:
            return self._failed(key, phash, request, self._blocked, refused="offline")
        if self.stopped is not None:
            return self._failed(key, phash, request, self.stopped, refused="key")
        reserved, refusal = self._reserve(request)
        if refusal is not None:
            return self._failed(key, phash, request, refusal, refused="budget")
        trial = await self._send(provider, request, reserved)
        self._count_rejection(provider, trial)
        if trial.response is None:
            return self._failed(key, phash, request, trial.error or "no answer", attempts=trial.attempts)
        return await self._answered(key, phash, trial)

    def _count_rejection(self, provider: Provider, trial: _Trial) -> None:
        """Count rejected keys in a row; at `KEY_REJECTIONS_TO_STOP`, stop sending (`stopped`)."""
        if trial.key_rejected is None:
            if trial.response is not None:
                self._rejections = 0
            return
        self._rejections += 1
        if self._rejections >= KEY_REJECTIONS_TO_STOP and self.stopped is None:
            names = " or ".join(provider.key_env) or "the provider's key variable"
            where = getattr(provider, "shown_url", None)
            self.stopped = (
                f"{provider.name}: the key was rejected on {self._rejections} calls in a row"
                f"{f' by {where}' if where else ''} ({trial.key_rejected}); no more calls were sent. "
                f"Set {names} to a working key and rerun the command: it resumes where this left "
                "off, and answers already received are kept"
            )

    def _stored(self, key: str, phash: str) -> CallResult | None:
        """The stored answer as a result (it costs nothing now), or None."""
        cached = self.cache.get(key)
        if cached is None:
            return None
        self.stats.record_cache_hit()
        return CallResult.model_construct(
            cache_key=key,
            prompt_hash=phash,
            response=cached,
            from_cache=True,
            attempts=0,
            cost_usd=self.cost_of(cached),
            params_sent=cached.params_sent,
        )

    def _reserve(self, request: ModelRequest) -> tuple[float, str | None]:
        """(USD reserved for this call, the refusal text when the budget cannot take it)."""
        if self.budget is None:
            return 0.0, None
        estimate = self.estimate_cost(request)
        if estimate is None:
            return 0.0, None  # unpriced: nothing to reserve (--max-cost refuses such models up front)
        if not self.budget.try_reserve(estimate):
            return 0.0, self.budget.refusal(estimate)
        return estimate, None

    async def _send(self, provider: Provider, request: ModelRequest, reserved: float) -> _Trial:
        """Make the attempts (`_retrying`), turning a provider fault into the trial's error and
        settling the budget whatever happens (a cancel included)."""
        trial = _Trial()
        try:
            trial.response = self.checked_usage(await self._retrying(provider, request, trial), request)
        except ProviderError as exc:
            trial.error = self._describe(provider, exc, trial.attempts)
            trial.key_rejected = f"HTTP {exc.status_label()}" if isinstance(exc, KeyRejected) else None
        except JudgebenchError:
            raise  # configuration: the whole run must stop and say why
        except Exception as exc:  # an adapter let an unclassified error through: record it, no retry
            self.stats.record_status(type(exc).__name__)
            trial.error = f"{provider.name}: unexpected {type(exc).__name__}: {provider.scrub(str(exc))}"
        finally:
            if self.budget is not None:
                actual = (self.cost_of(trial.response) or 0.0) if trial.response is not None else 0.0
                self.budget.settle(reserved, actual)
        self.stats.record_retries(trial.attempts)
        if trial.error is not None:
            trial.error = provider.scrub(trial.error, limit=_ERROR_LIMIT)
        return trial

    async def _retrying(self, provider: Provider, request: ModelRequest, trial: _Trial) -> ModelResponse:
        """The first attempt, then (on a transient fault) up to `max_retries` more with backoff."""
        conn, limiter = self._shared_state(provider)
        max_attempts = 1 + max(0, self.settings.max_retries)  # the first attempt, then the retries
        # The first attempt runs outside tenacity: most calls succeed at once, and this path is the
        # per-call overhead that bounds throughput where the SDK's CPU cost binds.
        trial.attempts = 1
        try:
            return await self._attempt(provider, conn, limiter, request)
        except TransientError as first:
            if max_attempts == 1:
                raise
            delay = self._backoff(1, first)
        await asyncio.sleep(delay)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(max_attempts - 1),
            wait=self._wait,
            retry=retry_if_exception_type(TransientError),
            reraise=True,
        )
        response: ModelResponse | None = None
        async for attempt in retrying:
            with attempt:
                trial.attempts += 1
                response = await self._attempt(provider, conn, limiter, request)
        assert response is not None  # tenacity re-raises the last fault when every attempt fails
        return response

    async def _answered(self, key: str, phash: str, trial: _Trial) -> CallResult:
        """Store a received answer (before anyone sees it), account for it, hand it over."""
        assert trial.response is not None
        response = kept_answer(trial.response, self.settings.max_answer_chars)
        # Stored before anyone sees it: a kill from here on never pays for this answer again. A
        # store that cannot be written says so once and is skipped: the caller still records the
        # answer in the run folder, which is the record.
        await self.cache.aput(
            key, response, provider=self.spec.provider, model=self.spec.model, spec=self.spec.text
        )
        cost = self.cost_of(response)
        self.stats.record_answer(response, cost)
        # fields built here are already typed; skipping validation keeps the per-call cost low
        return CallResult.model_construct(
            cache_key=key,
            prompt_hash=phash,
            response=response,
            from_cache=False,
            attempts=trial.attempts,
            cost_usd=cost,
            params_sent=response.params_sent,
        )

    def _shared_state(self, provider: Provider) -> tuple[Connection, RateLimiter]:
        """This loop's shared concurrency and rate limiter for the provider (looked up once per loop)."""
        loop = asyncio.get_running_loop()
        cached = self._state
        if cached is not None and cached[0] is loop:
            return cached[1], cached[2]
        conn, limiter = shared_limits(provider, self.settings)
        self._state = (loop, conn, limiter)
        return conn, limiter

    async def _attempt(
        self, provider: Provider, conn: Connection, limiter: RateLimiter, request: ModelRequest
    ) -> ModelResponse:
        """One attempt inside the connection's concurrency and rate limits, its outcome counted."""
        async with conn.semaphore:
            if limiter.active or limiter.pause_until:
                await limiter.acquire(self._tokens_for(limiter, request))
            try:
                if self._guard_deadline:
                    # The whole attempt (connect, headers, body) within settings.timeout; a little
                    # grace lets an SDK that enforces it say so itself.
                    async with asyncio.timeout(self.settings.timeout + _DEADLINE_GRACE):
                        response = await provider.generate(request)
                else:
                    response = await provider.generate(request)
            except TimeoutError:
                self.stats.record_status("timeout")
                raise TransientError(
                    f"{provider.name}: no answer within {self.settings.timeout:g}s", provider=provider.name
                ) from None
            except ProviderError as exc:
                self.stats.record_status(exc.status_label())
                if exc.retry_after:
                    limiter.pause(min(exc.retry_after, _MAX_RETRY_AFTER))
                raise
        self.stats.record_status("ok")
        return response

    @staticmethod
    def _tokens_for(limiter: RateLimiter, request: ModelRequest) -> int:
        """The tokens a tokens-per-minute limit reserves for `request` (prompt estimate + max_tokens)."""
        if not limiter.tpm:
            return 0
        text = request.prompt or "".join(m.content for m in request.messages or [])
        return heuristic_tokens(text) + request.max_tokens

    def _backoff(self, failed_attempts: int, exc: ProviderError | None) -> float:
        """Full-jitter exponential backoff (uniform in [0, min(cap, initial * 2^(n-1))]), never
        shorter than the server's Retry-After."""
        ceiling = min(self.settings.backoff_max, self.settings.backoff_initial * 2.0 ** (failed_attempts - 1))
        delay = random.uniform(0.0, max(0.0, ceiling))
        retry_after = exc.retry_after if exc is not None else None
        if retry_after:
            delay = max(delay, min(float(retry_after), _MAX_RETRY_AFTER))
        return delay

    def _wait(self, state: RetryCallState) -> float:
        """tenacity's wait hook for attempts after the first (its attempt 1 is our attempt 2)."""
        exc = state.outcome.exception() if state.outcome is not None else None
        return self._backoff(state.attempt_number + 1, exc if isinstance(exc, ProviderError) else None)

    def _describe(self, provider: Provider, exc: ProviderError, attempts: int) -> str:
        message = str(exc) or type(exc).__name__
        if not message.startswith(provider.name):
            message = f"{provider.name}: {message}"
        if exc.retryable:
            message += f" (gave up after {attempts} attempt{'s' if attempts != 1 else ''})"
        return message

    def _failed(
        self,
        key: str,
        phash: str,
        request: ModelRequest,
        error: str,
        *,
        attempts: int = 0,
        refused: Refusal | None = None,
    ) -> CallResult:
        result = CallResult(
            cache_key=key,
            prompt_hash=phash,
            response=None,
            error=error,
            refused=refused,
            attempts=attempts,
            params_sent=self._params(request),
        )
        self.stats.record_result(result)
        return result

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        """What the provider would send for `request` (recorded with a failed call)."""
        if self._provider is None:
            return {}
        try:
            return dict(self._provider.build_params(request))
        except Exception:  # describing the params must never mask the real error
            return {}

    # --- many calls -------------------------------------------------------------------------------

    async def map(
        self,
        requests: Sequence[ModelRequest],
        *,
        on_result: Callable[[int, CallResult], None] | None = None,
        progress: ProgressReporter | None = None,
    ) -> list[CallResult]:
        """Run all `requests` with the client's concurrency; `on_result(index, result)` is called as
        each finishes (after its answer is stored), so the caller can append its record at once.
        Once the client has `stopped`, the requests not yet started are left out (no result)."""
        results: list[CallResult | None] = [None] * len(requests)
        pending = iter(enumerate(requests))

        async def worker() -> None:
            since_yield = 0
            for index, request in pending:
                if self.stopped is not None:
                    return  # the key was rejected: the rest are not sent (and get no record)
                result = await self.call(request)
                results[index] = result
                if on_result is not None:
                    on_result(index, result)
                advance_progress(progress, result)
                since_yield = since_yield + 1 if result.from_cache else 0
                if since_yield >= _YIELD_EVERY:
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
