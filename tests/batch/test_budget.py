"""`--max-cost`: a shared Budget stops a run at the cap, and everything answered before it is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebench.batch import batch_estimate, run_batch
from judgebench.models.cache import ResponseCache
from judgebench.models.client import Budget
from tests.batch.conftest import OPENAI_MODEL, Recorder, judge_requests, make_client
from tests.servers.openai_batch_server import OpenAIBatchServer

SPEC = f"openai:{OPENAI_MODEL}"


async def test_live_map_stops_at_the_budget_and_keeps_what_it_did(
    tmp_path: Path, cache: ResponseCache
) -> None:
    requests = judge_requests(40)
    with OpenAIBatchServer(completion_tokens=900) as server:  # answers cost about what was reserved
        client = make_client(SPEC, server.base_url, cache)
        estimate = client.estimate_cost(requests[0])
        assert estimate is not None
        cap = 12.5 * estimate
        client.budget = Budget(max_cost_usd=cap)
        recorder = Recorder()
        results = await client.map(requests, on_result=recorder)
        answered = [r for r in results if r.ok]
        refused = [r for r in results if not r.ok]

        assert 0 < len(answered) < len(requests)
        assert server.live_calls() == len(answered)  # refused calls were never sent
        assert all(r.error is not None and r.error.startswith("BudgetExceeded") for r in refused)
        assert all(r.refused == "budget" for r in refused) and not any(r.refused for r in answered)
        assert client.budget.spent_usd <= cap
        assert client.budget.spent_usd == pytest.approx(sum(r.cost_usd or 0.0 for r in answered))
        assert client.stats.budget_refusals == len(refused)
        assert recorder.indices() == list(range(40))  # every call reported, the refused ones as failures
        assert all(cache.get(r.cache_key) is not None for r in answered)
        await client.aclose()

        # resuming with more budget pays only for what was refused
        again = make_client(SPEC, server.base_url, cache)
        again.budget = Budget(max_cost_usd=1000.0)
        rerun = await again.map(requests)
        assert server.live_calls() == len(requests)
        assert sum(r.from_cache for r in rerun) == len(answered)
        assert all(r.ok for r in rerun)
        await again.aclose()


async def test_batch_reserves_at_batch_prices_and_submits_only_what_fits(
    tmp_path: Path, cache: ResponseCache
) -> None:
    requests = judge_requests(30)
    with OpenAIBatchServer(completion_tokens=900) as server:
        client = make_client(SPEC, server.base_url, cache)
        estimates = [batch_estimate(client, r) for r in requests]
        live_estimate = client.estimate_cost(requests[0])
        assert estimates[0] is not None and live_estimate is not None
        assert estimates[0] < live_estimate
        cap = 10.5 * live_estimate  # room for 10 calls at live prices, about 21 at batch prices
        fits, total = 0, 0.0
        for est in estimates:
            assert est is not None
            if total + est > cap:
                break
            total += est
            fits += 1
        client.budget = Budget(max_cost_usd=cap)
        results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        (batch,) = server.created()
        await client.aclose()

    assert fits > 10
    assert batch["request_counts"]["total"] == fits
    assert [r.ok for r in results] == [i < fits for i in range(30)]
    assert all(r.error is not None and "batch price" in r.error for r in results[fits:])
    assert [r.refused for r in results] == [None] * fits + ["budget"] * (30 - fits)
    assert client.stats.budget_refusals == 30 - fits and client.stats.failures == 30 - fits
    assert client.budget.spent_usd == pytest.approx(sum(r.cost_usd or 0.0 for r in results[:fits]))
    assert client.budget.spent_usd <= cap and client.budget.reserved_usd == pytest.approx(0.0, abs=1e-12)
