"""`batch_rounds`: a stage with dependent calls (ask, then ask again) runs as batches, never live."""

from __future__ import annotations

import json
from pathlib import Path

from judgebench.batch import DEFERRED, DeferringClient, batch_rounds
from judgebench.models.base import Message, ModelRequest
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from tests.batch.conftest import OPENAI_MODEL, batch_state, judge_requests, make_client
from tests.servers.openai_batch_server import OpenAIBatchServer

SPEC = f"openai:{OPENAI_MODEL}"


def follow_up(request: ModelRequest, answer: str) -> ModelRequest:
    assert request.messages is not None
    messages = [
        *request.messages,
        Message(role="assistant", content=answer),
        Message(role="user", content="Sure?"),
    ]
    return request.model_copy(update={"messages": messages})


async def two_step_stage(
    client: ModelClient, requests: list[ModelRequest], log: list[str]
) -> list[str | None]:
    """Ask each question; when the verdict is B, ask again and keep the second answer."""
    first = await client.map(requests)
    log.extend(r.error for r in first if r.error)
    out: list[str | None] = []
    for request, result in zip(requests, first, strict=True):
        if result.response is None:
            out.append(None)
            continue
        text = result.response.text
        if json.loads(text)["winner"] == "B":
            again = await client.call(follow_up(request, text))
            out.append(again.response.text if again.response else None)
        else:
            out.append(text)
    return out


async def test_dependent_calls_go_out_in_rounds_and_match_a_live_run(
    tmp_path: Path, cache: ResponseCache
) -> None:
    requests = judge_requests(24)
    with OpenAIBatchServer() as server:
        live_cache = ResponseCache(tmp_path / "live.sqlite")
        async with make_client(SPEC, server.base_url, live_cache) as live:
            expected = await two_step_stage(live, requests, [])
        live_cache.close()
        live_calls = server.live_calls()
        assert live_calls > 24  # some verdicts were B, so the stage really asked again

        errors: list[str] = []
        lines: list[str] = []
        async with make_client(SPEC, server.base_url, cache) as client:
            got = await batch_rounds(
                client,
                lambda c: two_step_stage(c, requests, errors),
                tmp_path / "run",
                poll_interval=0,
                log=lines.append,
            )
        assert server.live_calls() == live_calls  # nothing live in batch mode
        totals = [b["request_counts"]["total"] for b in server.created()]
    assert got == expected
    assert totals == [24, live_calls - 24]
    assert errors and set(errors) == {DEFERRED}  # only the first passes saw deferred calls
    assert sum("round" in line for line in lines) == 2
    assert [s["phase"] for s in batch_state(tmp_path / "run")["submissions"]] == ["collected", "collected"]


async def test_a_deferred_call_is_a_typed_refusal(cache: ResponseCache) -> None:
    with OpenAIBatchServer() as server:
        async with make_client(SPEC, server.base_url, cache) as client:
            view = DeferringClient(client, {}, set())
            result = await view.call(judge_requests(1)[0])
        assert server.live_calls() == 0
    assert (result.ok, result.refused, result.error) == (False, "deferred", DEFERRED)
    assert list(view.deferred) == [result.cache_key]


async def test_refresh_asks_again_once_by_batch(tmp_path: Path, cache: ResponseCache) -> None:
    """A stored answer the stage finds unusable (`refresh=True`) is asked again in the next batch."""
    requests = judge_requests(15)

    async def stage(client: ModelClient) -> list[str | None]:
        out: list[str | None] = []
        for request in requests:
            result = await client.call(request)
            if result.response is not None and json.loads(result.response.text)["winner"] == "Tie":
                result = await client.call(request, refresh=True)
            out.append(result.response.text if result.response else None)
        return out

    with OpenAIBatchServer() as server:
        async with make_client(SPEC, server.base_url, cache) as client:
            keys = [client.key_for(r) for r in requests]
            got = await batch_rounds(client, stage, tmp_path / "run", poll_interval=0)
        first, second = server.created()
        assert server.live_calls() == 0
    ties = {
        k
        for k, text in zip(keys, got, strict=True)
        if text is not None and json.loads(text)["winner"] == "Tie"
    }
    assert ties and all(text is not None for text in got)
    assert {line["custom_id"] for line, _ in second["_lines"]} == ties
    assert first["request_counts"]["total"] == 15
