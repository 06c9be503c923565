"""`run_batch` against a local emulation of the OpenAI Batch API, through the official `openai` SDK."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from judgebench.batch import run_batch
from judgebench.batch.openai_batch import OpenAIBatch
from judgebench.errors import ProviderConfigError
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from tests.batch.conftest import (
    OPENAI_MODEL,
    PRICES,
    Recorder,
    batch_state,
    judge_requests,
    make_client,
    wait_for,
    warned,
)
from tests.servers.openai_batch_server import OpenAIBatchServer

SPEC = f"openai:{OPENAI_MODEL}"


async def test_419_requests_batch_equals_live(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(419)
    with OpenAIBatchServer() as server:
        live_cache = ResponseCache(tmp_path / "live.sqlite")
        async with make_client(SPEC, server.base_url, live_cache) as live:
            live_results = await live.map(requests)
        live_cache.close()
        assert server.live_calls() == 419

        recorder = Recorder()
        async with make_client(SPEC, server.base_url, cache) as client:
            results = await run_batch(client, requests, tmp_path / "run", on_result=recorder, poll_interval=0)
        assert server.live_calls() == 419  # batch mode makes no live call
        created = server.created()

    assert len(created) == 1 and created[0]["request_counts"]["total"] == 419
    assert created[0]["metadata"]["judgebench_run"] == batch_state(tmp_path / "run")["run_id"]
    assert [r.response.text for r in results if r.response] == [
        r.response.text for r in live_results if r.response
    ]
    assert len({r.response.text for r in results if r.response}) > 3  # the answers really differ per prompt
    assert recorder.indices() == list(range(419))
    for index, result in recorder.calls:
        assert result is results[index]
        assert result.batch_id == created[0]["id"] and result.custom_id == result.cache_key
        assert cache.get(result.cache_key) is not None  # stored before on_result saw it
        assert result.response is not None
        usage = result.response.usage
        assert result.cost_usd == pytest.approx(PRICES.cost("openai", OPENAI_MODEL, usage, batch=True))
        assert result.cost_usd < PRICES.cost("openai", OPENAI_MODEL, usage)  # type: ignore[operator]
        assert result.response.params_sent["batch_id"] == created[0]["id"]
        assert result.response.params_sent["response_format"] == {"type": "json_object"}


async def test_status_moves_through_stages_and_is_recorded(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(5)
    run = tmp_path / "run"
    with OpenAIBatchServer(polls_per_stage=2) as server:
        async with make_client(SPEC, server.base_url, cache) as client:
            results = await run_batch(client, requests, run, poll_interval=0)
        (batch,) = server.created()
        polls = server.polls[batch["id"]]
    assert all(r.ok for r in results)
    assert polls == 6  # validating -> in_progress -> finalizing -> completed, two polls per stage
    (sub,) = batch_state(run)["submissions"]
    assert sub["batch_id"] == batch["id"]
    assert sub["status"] == "completed" and sub["phase"] == "collected" and sub["succeeded"] == 5
    assert sub["counts"] == {"total": 5, "completed": 5, "failed": 0}


async def test_failed_expired_and_lost_lines_are_resubmitted_and_only_they(
    tmp_path: Path, cache: ResponseCache
) -> None:
    requests = judge_requests(30)
    faults: dict[str, str] = {}

    def fault(cid: str, attempt: int) -> str | None:
        return faults.get(cid) if attempt == 1 or faults.get(cid) == "invalid" else None

    with OpenAIBatchServer(line_fault=fault) as server:
        async with make_client(SPEC, server.base_url, cache) as client:
            keys = [client.key_for(r) for r in requests]
            kinds = {1: "server_error", 4: "expired", 7: "lost", 9: "cancelled", 12: "invalid"}
            faults.update({keys[i]: kind for i, kind in kinds.items()})
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        created = server.created()
    assert created[0]["status"] == "expired"
    assert len(created) == 2
    resent = {line["custom_id"] for line, _ in created[1]["_lines"]}
    assert resent == {keys[1], keys[4], keys[7], keys[9]}  # the 400 line is not worth a second batch
    assert all(r.ok for i, r in enumerate(results) if i != 12)
    assert results[1].batch_id == created[1]["id"] and results[0].batch_id == created[0]["id"]
    assert results[12].error is not None and "HTTP 400" in results[12].error


async def test_gives_up_after_max_retries_batches(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(4)
    bad: list[str] = []
    with OpenAIBatchServer(line_fault=lambda cid, attempt: "server_error" if cid in bad else None) as server:
        async with make_client(SPEC, server.base_url, cache, max_retries=2) as client:
            bad.append(client.key_for(requests[2]))
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
            assert client.stats.failures == 1
        assert len(server.created()) == 3
    assert [r.ok for r in results] == [True, True, False, True]
    assert results[2].error is not None and "HTTP 500" in results[2].error and "3 batches" in results[2].error


async def test_resubmit_failed_false_fails_at_once(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(3)
    with OpenAIBatchServer(line_fault=lambda cid, attempt: "expired") as server:
        async with make_client(SPEC, server.base_url, cache) as client:
            results = await run_batch(
                client, requests, tmp_path / "run", poll_interval=0, resubmit_failed=False
            )
        assert len(server.created()) == 1
    assert all(r.error is not None and "batch_expired" in r.error for r in results)


async def test_restart_mid_poll_resumes_the_same_batch(
    tmp_path: Path, cache: ResponseCache, caplog: pytest.LogCaptureFixture
) -> None:
    requests = judge_requests(40)
    run = tmp_path / "run"
    with OpenAIBatchServer() as server:
        server.hold.set()
        first = Recorder()
        client = make_client(SPEC, server.base_url, cache)
        task = asyncio.create_task(run_batch(client, requests, run, on_result=first, poll_interval=0.001))
        await wait_for(lambda: bool(server.created()) and server.polls[server.created()[0]["id"]] >= 3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.aclose()
        (batch,) = server.created()
        assert "run the same command again" in warned(caplog)
        (sub,) = batch_state(run)["submissions"]
        assert sub["batch_id"] == batch["id"] and sub["phase"] == "running" and sub["status"] == "in_progress"
        assert first.calls == []

        server.hold.clear()
        second = Recorder()
        lines: list[str] = []
        async with make_client(SPEC, server.base_url, cache) as again:
            results = await run_batch(
                again, requests, run, on_result=second, poll_interval=0, log=lines.append
            )
        assert lines[0].startswith(f"{SPEC}: resuming batch {batch['id']}")
        assert any("completed" in line for line in lines) and not any("submitted" in line for line in lines)
        assert len(server.created()) == 1  # no new batch: the known one was polled to its end
        assert server.live_calls() == 0
        seen = len(server.requests)

        # a third run finds everything in the store: no batch, no request at all
        async with make_client(SPEC, server.base_url, cache) as third:
            again_results = await run_batch(third, requests, run, poll_interval=0)
        assert len(server.requests) == seen
    assert second.indices() == list(range(40))
    assert all(r.ok and r.batch_id == batch["id"] for r in results)
    assert all(r.from_cache for r in again_results)
    assert [r.response.text for r in again_results if r.response] == [
        r.response.text for r in results if r.response
    ]


async def test_kill_between_create_and_save_is_recovered_by_listing(
    tmp_path: Path, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = judge_requests(6)
    run = tmp_path / "run"
    original = OpenAIBatch.submit

    async def created_then_killed(self: OpenAIBatch, sub: object, lines: object, run_id: str) -> str:
        await original(self, sub, lines, run_id)  # type: ignore[arg-type]
        raise asyncio.CancelledError  # the process dies before the id is saved

    with OpenAIBatchServer() as server:
        monkeypatch.setattr(OpenAIBatch, "submit", created_then_killed)
        async with make_client(SPEC, server.base_url, cache) as client:
            with pytest.raises(asyncio.CancelledError):
                await run_batch(client, requests, run, poll_interval=0)
        (sub,) = batch_state(run)["submissions"]
        assert sub["phase"] == "submitting" and sub["batch_id"] is None
        monkeypatch.setattr(OpenAIBatch, "submit", original)

        async with make_client(SPEC, server.base_url, cache) as client:
            results = await run_batch(client, requests, run, poll_interval=0)
        (batch,) = server.created()
    assert all(r.ok and r.batch_id == batch["id"] for r in results)
    (sub,) = batch_state(run)["submissions"]
    assert sub["batch_id"] == batch["id"] and sub["phase"] == "collected"


async def test_recorded_submission_never_created_is_submitted_again(
    tmp_path: Path, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = judge_requests(3)
    run = tmp_path / "run"
    original = OpenAIBatch.submit

    async def killed_before_create(self: OpenAIBatch, sub: object, lines: object, run_id: str) -> str:
        raise asyncio.CancelledError

    with OpenAIBatchServer() as server:
        monkeypatch.setattr(OpenAIBatch, "submit", killed_before_create)
        async with make_client(SPEC, server.base_url, cache) as client:
            with pytest.raises(asyncio.CancelledError):
                await run_batch(client, requests, run, poll_interval=0)
        monkeypatch.setattr(OpenAIBatch, "submit", original)
        async with make_client(SPEC, server.base_url, cache) as client:
            results = await run_batch(client, requests, run, poll_interval=0)
        assert len(server.created()) == 1
    assert all(r.ok for r in results)
    assert [s["phase"] for s in batch_state(run)["submissions"]] == ["collected"]


async def test_split_at_provider_limits_and_cache_hits_not_submitted(
    tmp_path: Path, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = judge_requests(50)
    monkeypatch.setattr(OpenAIBatch, "max_requests", 16)
    with OpenAIBatchServer() as server:
        async with make_client(SPEC, server.base_url, cache) as client:
            await client.map(requests[:10])  # answered live: in the store already
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        totals = [b["request_counts"]["total"] for b in server.created()]
        assert server.live_calls() == 10
    assert totals == [16, 16, 8]
    assert [r.from_cache for r in results] == [True] * 10 + [False] * 40
    assert all(r.ok for r in results)

    monkeypatch.setattr(OpenAIBatch, "max_requests", 50_000)
    sized = judge_requests(7, tag="size ")  # one-digit indices: every line has the same length
    with OpenAIBatchServer() as server:
        async with make_client(SPEC, server.base_url, cache) as client:
            _, line = OpenAIBatch(client).encode(client.key_for(sized[0]), sized[0])
            line_bytes = len(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode()) + 1
            monkeypatch.setattr(OpenAIBatch, "max_bytes", 3 * line_bytes)
            await run_batch(client, sized, tmp_path / "run2", poll_interval=0)
        assert [b["request_counts"]["total"] for b in server.created()] == [3, 3, 1]


async def test_duplicate_requests_are_sent_once(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(3)
    requests = [requests[0], requests[1], requests[0], requests[2]]
    with OpenAIBatchServer() as server:
        async with make_client(SPEC, server.base_url, cache) as client:
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        assert server.created()[0]["request_counts"]["total"] == 3
    assert results[0].response is not None and results[2].response is not None
    assert results[0].response.text == results[2].response.text
    assert [r.from_cache for r in results] == [False, False, True, False]


async def test_server_without_batch_api_points_to_vllm(tmp_path: Path, cache: ResponseCache) -> None:
    with OpenAIBatchServer(no_batch_api=True) as server:
        async with make_client("openai-compatible:qwen", server.base_url, cache) as client:
            with pytest.raises(ProviderConfigError, match=r"no OpenAI Batch API.*vllm run-batch"):
                await run_batch(client, judge_requests(2), tmp_path / "run", poll_interval=0)
    assert batch_state(tmp_path / "run")["submissions"] == []


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("deepseek:deepseek-chat", "DeepSeek has no Batch API"),
        ("sim:default", "runs in this process"),
        ("local", "runs in this process"),
    ],
)
async def test_specs_without_batch_support_are_refused(
    tmp_path: Path, cache: ResponseCache, spec: str, needle: str
) -> None:
    client = ModelClient(spec, cache=cache, prices=PRICES)
    with pytest.raises(ProviderConfigError, match=needle):
        await run_batch(client, judge_requests(1), tmp_path / "run")
    assert not (tmp_path / "run" / "batches.json").exists()


async def test_two_judges_side_by_side_share_one_state_file(tmp_path: Path, cache: ResponseCache) -> None:
    run = tmp_path / "run"
    with OpenAIBatchServer() as server:
        async with (
            make_client(SPEC, server.base_url, cache) as one,
            make_client("openai:gpt-4o-mini", server.base_url, cache) as two,
        ):
            first, second = await asyncio.gather(
                run_batch(one, judge_requests(7), run, poll_interval=0),
                run_batch(two, judge_requests(5), run, poll_interval=0),
            )
        assert len(server.created()) == 2  # one batch per judge
    assert all(r.ok for r in first + second)
    subs = batch_state(run)["submissions"]
    assert sorted((s["spec"], len(s["custom_ids"]), s["phase"]) for s in subs) == [
        (SPEC, 7, "collected"),
        ("openai:gpt-4o-mini", 5, "collected"),
    ]
