"""`run_batch` against a local emulation of Gemini batch mode, through the official `google-genai` SDK."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from judgebench.batch import run_batch
from judgebench.models.cache import ResponseCache
from tests.batch.conftest import Recorder, batch_state, judge_requests, make_client, wait_for
from tests.batch.google_batch_server import GoogleBatchServer

SPEC = "google:gemini-2.5-flash"


@pytest.fixture(autouse=True)
def _google_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "test-gemini-key")


async def test_batch_equals_live_and_collects_by_key(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(60)
    with GoogleBatchServer() as server:
        live_cache = ResponseCache(tmp_path / "live.sqlite")
        async with make_client(SPEC, server.url, live_cache) as live:
            live_results = await live.map(requests)
        live_cache.close()
        assert server.live_calls() == 60

        recorder = Recorder()
        async with make_client(SPEC, server.url, cache) as client:
            results = await run_batch(client, requests, tmp_path / "run", on_result=recorder, poll_interval=0)
        assert server.live_calls() == 60
        (job,) = server.created()

    run_id = batch_state(tmp_path / "run")["run_id"]
    assert job["metadata"]["displayName"].startswith(f"judgebench {run_id} sub-")
    assert [r.response.text for r in results if r.response] == [
        r.response.text for r in live_results if r.response
    ]
    assert len({r.response.text for r in results if r.response}) > 3
    assert recorder.indices() == list(range(60))
    sent = job["_requests"][0][0]["request"]
    assert sent["generationConfig"]["responseMimeType"] == "application/json"
    assert sent["generationConfig"]["temperature"] == 0.0
    for result in results:
        assert result.response is not None and result.batch_id == job["name"]
        assert result.response.usage.output_tokens == 9
    (sub,) = batch_state(tmp_path / "run")["submissions"]
    assert sub["status"] == "JOB_STATE_SUCCEEDED" and sub["phase"] == "collected"


async def test_failed_and_lost_lines_resubmitted_invalid_not(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(8)
    faults: dict[str, str] = {}

    def fault(key: str, attempt: int) -> str | None:
        kind = faults.get(key)
        return kind if attempt == 1 or kind == "invalid" else None

    with GoogleBatchServer(line_fault=fault, polls_per_stage=1) as server:
        async with make_client(SPEC, server.url, cache) as client:
            keys = [client.key_for(r) for r in requests]
            faults.update({keys[1]: "error", keys[4]: "lost", keys[6]: "invalid"})
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        first, second = server.created()
    assert {r["metadata"]["key"] for r, _ in second["_requests"]} == {keys[1], keys[4]}
    assert [r.ok for r in results] == [i != 6 for i in range(8)]
    assert results[6].error is not None and "error 3" in results[6].error
    assert results[4].batch_id == second["name"] and results[0].batch_id == first["name"]


async def test_restart_mid_poll_and_kill_after_create(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(10)
    run = tmp_path / "run"
    with GoogleBatchServer(polls_per_stage=1) as server:
        server.hold.set()
        client = make_client(SPEC, server.url, cache)
        task = asyncio.create_task(run_batch(client, requests, run, poll_interval=0.001))
        await wait_for(lambda: bool(server.created()) and server.polls[server.created()[0]["name"]] >= 3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.aclose()
        (job,) = server.created()

        # as if the kill had come before the id was saved: the job is found by its display name
        state = batch_state(run)
        state["submissions"][0].update(batch_id=None, phase="submitting")
        (run / "batches.json").write_text(json.dumps(state), encoding="utf-8")

        server.hold.clear()
        async with make_client(SPEC, server.url, cache) as again:
            results = await run_batch(again, requests, run, poll_interval=0)
        assert len(server.created()) == 1
    assert all(r.ok and r.batch_id == job["name"] for r in results)
