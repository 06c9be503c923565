"""One accounting record for live and batch calls: the same calls count the same in ClientStats
whichever way they went (only the price differs: batch answers are priced at batch rates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebench.batch import run_batch
from judgebench.models import CallResult, ClientStats, ModelResponse
from judgebench.models.cache import ResponseCache
from judgebench.records import Usage
from tests.batch.conftest import OPENAI_MODEL, PRICES, judge_requests, make_client
from tests.servers.openai_batch_server import OpenAIBatchServer

SPEC = f"openai:{OPENAI_MODEL}"


def test_record_result_counts_each_kind_of_outcome_once() -> None:
    answer = ModelResponse(text="x", usage=Usage(input_tokens=10, output_tokens=2))
    stats = ClientStats()
    stats.record_result(CallResult(cache_key="a", prompt_hash="h", response=answer, cost_usd=0.5))
    stats.record_result(CallResult(cache_key="b", prompt_hash="h", response=answer, cost_usd=None))
    stats.record_result(
        CallResult(cache_key="c", prompt_hash="h", response=answer, from_cache=True, cost_usd=9.0)
    )
    stats.record_result(CallResult(cache_key="d", prompt_hash="h", response=None, error="x"))
    stats.record_result(
        CallResult(cache_key="e", prompt_hash="h", response=None, error="y", refused="budget")
    )
    assert (stats.cache_hits, stats.failures, stats.budget_refusals, stats.unpriced_calls) == (1, 2, 1, 1)
    assert (stats.input_tokens, stats.output_tokens, stats.cost_usd) == (20, 4, 0.5)


async def test_live_and_batch_runs_of_the_same_calls_count_alike(tmp_path: Path) -> None:
    requests = judge_requests(6)
    requests.insert(3, requests[1])  # a repeated call: the second is a store hit either way
    totals = {}
    with OpenAIBatchServer() as server:
        for mode in ("live", "batch"):
            cache = ResponseCache(tmp_path / mode / "responses.sqlite")
            async with make_client(SPEC, server.base_url, cache, concurrency=1) as client:
                if mode == "live":
                    results = await client.map(requests)
                else:
                    results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
            cache.close()
            assert all(r.ok for r in results) and [r.from_cache for r in results].count(True) == 1
            totals[mode] = client.stats
    live, batch = totals["live"], totals["batch"]
    fields = ("calls", "cache_hits", "failures", "input_tokens", "output_tokens", "unpriced_calls")
    assert [getattr(live, f) for f in fields] == [getattr(batch, f) for f in fields]
    assert (live.calls, live.cache_hits) == (7, 1)
    usage = Usage(input_tokens=batch.input_tokens, output_tokens=batch.output_tokens)
    assert batch.cost_usd == pytest.approx(PRICES.cost("openai", OPENAI_MODEL, usage, batch=True))
    assert live.cost_usd == pytest.approx(PRICES.cost("openai", OPENAI_MODEL, usage))
