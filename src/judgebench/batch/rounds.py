"""Batch mode for stages whose next call depends on the last answer (translation re-asks, pieces).

`batch_rounds` runs the stage against a client that answers only from the response store and defers
every other call; the deferred calls go out in one batch (per provider limits), and the stage runs
again, now finding those answers in the store, until a pass defers nothing. That last pass is the
stage's real run: its records are what a live run would have written, and no call was made live.
Earlier passes see deferred calls as failed calls (`refused="deferred"`, error `DEFERRED`), so a
stage run this way must treat a failed call as "try again later" (judge and translate both do).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from judgebench.batch.backend import BatchError
from judgebench.batch.runner import BatchOptions, execute_batch
from judgebench.config import defaults
from judgebench.errors import ConfigError
from judgebench.models.base import ModelRequest, prompt_hash
from judgebench.models.client import ModelClient
from judgebench.models.results import CallResult

if TYPE_CHECKING:
    from judgebench.progress import ProgressReporter

T = TypeVar("T")

DEFERRED = "Deferred: answered by the next batch"


class DeferringClient(ModelClient):
    """A view of `inner` (same model, store, prices, budget) that answers from the store or defers.

    Calls whose batch already failed in this command are answered with that failure instead of being
    deferred again, so the rounds end."""

    def __init__(self, inner: ModelClient, failed: dict[str, CallResult], refreshed: set[str]) -> None:
        inner.provider  # noqa: B018 - created once, shared (a missing key fails here, before any pass)
        self.__dict__.update(inner.__dict__)
        self._own_cache = False
        self.inner = inner
        self.failed = failed
        self.refreshed = refreshed
        self.deferred: dict[str, ModelRequest] = {}
        self.refresh: set[str] = set()

    async def call(self, request: ModelRequest, *, refresh: bool = False) -> CallResult:
        """The stored answer, else a deferral; `refresh=True` (a stored answer the caller found unusable)
        defers the call to be asked again, once per command: later passes get the new answer."""
        key = self.key_for(request)
        phash = prompt_hash(request)
        again = refresh and key not in self.refreshed
        cached = None if again else self.cache.get(key)
        if cached is not None:
            batch_id = cached.params_sent.get("batch_id")
            return CallResult(
                cache_key=key,
                prompt_hash=phash,
                response=cached,
                from_cache=True,
                cost_usd=self.cost_of(cached, batch=batch_id is not None),
                params_sent=cached.params_sent,
                batch_id=batch_id,
                custom_id=key if batch_id else None,
            )
        before = self.failed.get(key)
        if before is not None:
            error = before.error or "failed"
            return CallResult(
                cache_key=key, prompt_hash=phash, response=None, error=error, refused=before.refused
            )
        self.deferred.setdefault(key, request)
        if again:
            self.refresh.add(key)
        return CallResult(cache_key=key, prompt_hash=phash, response=None, error=DEFERRED, refused="deferred")

    async def aclose(self) -> None:
        """Nothing of its own to close: the provider and store belong to `inner`."""


async def batch_rounds(
    client: ModelClient,
    stage: Callable[[ModelClient], Awaitable[T]],
    run_dir: Path,
    *,
    poll_interval: float = defaults.POLL_INTERVAL_S,
    resubmit_failed: bool = True,
    max_rounds: int = 8,
    progress: ProgressReporter | None = None,
    log: Callable[[str], None] | None = None,
) -> T:
    """Run `stage(client)` with every provider call sent through `client`'s Batch API, in rounds.

    Returns what the last pass of `stage` returned (the one that deferred nothing). `max_rounds` bounds
    the number of batches a chain of dependent calls may need (re-asks after re-asks)."""
    if max_rounds < 1:
        raise ConfigError(f"max_rounds must be at least 1, got {max_rounds}")
    failed: dict[str, CallResult] = {}
    refreshed: set[str] = set()
    for round_no in range(1, max_rounds + 2):
        view = DeferringClient(client, failed, refreshed)
        value = await stage(view)
        if not view.deferred:
            return value
        if round_no > max_rounds:
            break
        if log is not None:
            log(f"{client.name}: round {round_no}: {len(view.deferred)} calls to answer by batch")
        requests = list(view.deferred.values())
        options = BatchOptions(
            poll_interval=poll_interval, resubmit_failed=resubmit_failed, log=log, refresh=view.refresh
        )
        results = await execute_batch(client, requests, run_dir, options, progress=progress)
        refreshed.update(view.refresh)
        failed.update({r.cache_key: r for r in results if r.response is None})
    raise BatchError(
        f"{client.name}: the stage still asked new questions after {max_rounds} batch rounds; "
        "run it again (answers so far are kept) or raise the round limit"
    )
