"""`run_batch` against a local emulation of Anthropic Message Batches, through the `anthropic` SDK."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from judgebench.batch import run_batch
from judgebench.models.cache import ResponseCache
from tests.batch.conftest import (
    ANTHROPIC_MODEL,
    PRICES,
    Recorder,
    batch_state,
    judge_requests,
    make_client,
    wait_for,
    warned,
)
from tests.servers.anthropic_batch_server import AnthropicBatchServer

SPEC = f"anthropic:{ANTHROPIC_MODEL}"


async def test_419_requests_batch_equals_live(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(419)
    with AnthropicBatchServer(polls_per_stage=3) as server:
        live_cache = ResponseCache(tmp_path / "live.sqlite")
        async with make_client(SPEC, server.url, live_cache) as live:
            live_results = await live.map(requests)
        live_cache.close()
        assert server.live_calls() == 419

        recorder = Recorder()
        async with make_client(SPEC, server.url, cache) as client:
            results = await run_batch(client, requests, tmp_path / "run", on_result=recorder, poll_interval=0)
        assert server.live_calls() == 419
        (batch,) = server.created()

    assert server.polls[batch["id"]] == 3
    assert [r.response.text for r in results if r.response] == [
        r.response.text for r in live_results if r.response
    ]
    assert recorder.indices() == list(range(419))
    sent = batch["_requests"][0][0]["params"]
    assert sent["temperature"] == 0.0 and sent["system"].startswith("You judge") and sent["max_tokens"] == 900
    for result in results:
        assert result.response is not None and result.batch_id == batch["id"]
        assert result.cost_usd == pytest.approx(
            PRICES.cost("anthropic", ANTHROPIC_MODEL, result.response.usage, batch=True)
        )
        assert result.response.params_sent["dropped"]["response_format"]  # as a live call records it
    (sub,) = batch_state(tmp_path / "run")["submissions"]
    assert sub["status"] == "ended" and sub["counts"]["succeeded"] == 419


async def test_errored_expired_canceled_lines_resubmitted_invalid_not(
    tmp_path: Path, cache: ResponseCache
) -> None:
    requests = judge_requests(12)
    faults: dict[str, str] = {}

    def fault(cid: str, attempt: int) -> str | None:
        kind = faults.get(cid)
        return kind if attempt == 1 or kind == "invalid" else None

    with AnthropicBatchServer(line_fault=fault, polls_per_stage=1) as server:
        async with make_client(SPEC, server.url, cache) as client:
            keys = [client.key_for(r) for r in requests]
            kinds = {0: "errored", 3: "expired", 5: "canceled", 8: "lost", 10: "invalid"}
            faults.update({keys[i]: kind for i, kind in kinds.items()})
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        created = server.created()
    assert len(created) == 2
    assert {r["custom_id"] for r, _ in created[1]["_requests"]} == {keys[0], keys[3], keys[5], keys[8]}
    assert [r.ok for r in results] == [i != 10 for i in range(12)]
    assert results[10].error is not None and "invalid_request_error" in results[10].error
    assert results[3].batch_id == created[1]["id"]


async def test_restart_mid_poll_resumes_the_same_batch(
    tmp_path: Path, cache: ResponseCache, caplog: pytest.LogCaptureFixture
) -> None:
    requests = judge_requests(25)
    run = tmp_path / "run"
    with AnthropicBatchServer(polls_per_stage=1) as server:
        server.hold.set()
        client = make_client(SPEC, server.url, cache)
        task = asyncio.create_task(run_batch(client, requests, run, poll_interval=0.001))
        await wait_for(lambda: bool(server.created()) and server.polls[server.created()[0]["id"]] >= 3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.aclose()
        (batch,) = server.created()
        assert batch["id"] in warned(caplog)
        (sub,) = batch_state(run)["submissions"]
        assert sub["batch_id"] == batch["id"] and sub["phase"] == "running"

        server.hold.clear()
        async with make_client(SPEC, server.url, cache) as again:
            results = await run_batch(again, requests, run, poll_interval=0)
        assert len(server.created()) == 1
        assert server.live_calls() == 0
    assert all(r.ok and r.batch_id == batch["id"] for r in results)


async def test_model_rejecting_temperature_is_asked_again_without_it(
    tmp_path: Path, cache: ResponseCache
) -> None:
    requests = judge_requests(4)
    with AnthropicBatchServer(line_fault=lambda cid, attempt: "no_temperature", polls_per_stage=1) as server:
        async with make_client(SPEC, server.url, cache) as client:
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        first, second = server.created()
    assert all("temperature" in r["params"] for r, _ in first["_requests"])
    assert not any("temperature" in r["params"] for r, _ in second["_requests"])
    assert all(r.response is not None and "temperature" in r.response.params_sent["dropped"] for r in results)
