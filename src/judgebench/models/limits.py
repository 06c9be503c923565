"""Where a request may go and how fast: shared concurrency and rate limits per endpoint, and the
offline guard of the test suite.

Every client of one connection (provider and endpoint) in one event loop shares one concurrency
semaphore, and every client of one model at that endpoint shares one rate limiter: two judges on
one server never push it past the limits either was given. With `JUDGEBENCH_OFFLINE_TESTS=1` in
the environment, any request to an endpoint whose host is not 127.0.0.1/localhost fails at once
without being sent (in-process providers need no network and pass).
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from dataclasses import dataclass
from urllib.parse import urlparse

from judgebench.models.base import Provider
from judgebench.models.settings import ProviderSettings
from judgebench.records.sanitize import mask_url

__all__ = ["OFFLINE_ENV", "Connection", "RateLimiter", "offline_block_reason", "shared_limits"]

OFFLINE_ENV = "JUDGEBENCH_OFFLINE_TESTS"
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


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

    def tighten(self, settings: ProviderSettings) -> None:
        """Keep the strictest rpm/tpm of every client sharing this limiter."""
        if settings.rpm and (self.rpm is None or settings.rpm < self.rpm):
            self.rpm = settings.rpm
        if settings.tpm and (self.tpm is None or settings.tpm < self.tpm):
            self.tpm = settings.tpm


@dataclass
class Connection:
    """Concurrency shared by all clients of one provider endpoint in one event loop."""

    semaphore: asyncio.Semaphore
    capacity: int

    def widen(self, want: int) -> None:
        """Let `want` calls in at once if that is more than now (a semaphore widens by releases)."""
        if want > self.capacity:
            for _ in range(want - self.capacity):
                self.semaphore.release()
            self.capacity = want


_CONNECTIONS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Connection]] = (
    weakref.WeakKeyDictionary()
)
_LIMITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], RateLimiter]] = (
    weakref.WeakKeyDictionary()
)


def _connection(key: str, settings: ProviderSettings) -> Connection:
    """The shared concurrency for endpoint `key` in the running loop: the largest concurrency any
    of its clients asked for."""
    per_loop = _CONNECTIONS.setdefault(asyncio.get_running_loop(), {})
    want = max(1, settings.concurrency)
    conn = per_loop.get(key)
    if conn is None:
        conn = per_loop[key] = Connection(asyncio.Semaphore(want), want)
    else:
        conn.widen(want)
    return conn


def _limiter(key: str, model: str, settings: ProviderSettings) -> RateLimiter:
    """The shared rate limiter for one model at one endpoint (providers limit per model)."""
    per_loop = _LIMITERS.setdefault(asyncio.get_running_loop(), {})
    limiter = per_loop.get((key, model))
    if limiter is None:
        limiter = per_loop[(key, model)] = RateLimiter(settings.rpm, settings.tpm)
    else:
        limiter.tighten(settings)
    return limiter


def shared_limits(provider: Provider, settings: ProviderSettings) -> tuple[Connection, RateLimiter]:
    """The running loop's shared concurrency and rate limiter for `provider`'s model and endpoint."""
    key = provider.connection_key()
    return _connection(key, settings), _limiter(key, provider.model, settings)


def offline_block_reason(provider: Provider) -> str | None:
    """Why a request from `provider` must not be sent under JUDGEBENCH_OFFLINE_TESTS=1, or None."""
    if os.environ.get(OFFLINE_ENV) != "1" or provider.traits.in_process:
        return None
    url = provider.endpoint() or provider.settings.base_url or provider.default_base_url
    host = urlparse(url).hostname if url else None
    if host in _LOCAL_HOSTS:
        return None
    where = mask_url(url) if url else "its default endpoint"
    return f"{provider.name}: real model request blocked in tests ({OFFLINE_ENV}=1; endpoint {where})"
