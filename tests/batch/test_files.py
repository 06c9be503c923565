"""The vLLM path: write the OpenAI batch request file, run it elsewhere, import the output back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judgebench.batch import import_batch_output, write_batch_file
from judgebench.errors import InputError
from judgebench.models.cache import ResponseCache
from tests.batch.conftest import Recorder, judge_requests, make_client
from tests.servers.openai_batch_server import OpenAIBatchServer

SPEC = "openai-compatible:Qwen/Qwen2.5-7B-Instruct"


def run_like_vllm(
    server: OpenAIBatchServer, request_file: Path, output_file: Path, *, skip: int = -1
) -> None:
    """What `vllm run-batch` does with the file: one output line per input line, answered by the model."""
    out: list[str] = []
    for n, raw in enumerate(request_file.read_text(encoding="utf-8").splitlines()):
        line = json.loads(raw)
        assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
        if n == skip:
            continue
        body: dict[str, Any] = server._chat(line["body"])
        response = {"status_code": 200, "request_id": f"vllm-batch-{n}", "body": body}
        out.append(
            json.dumps(
                {"id": f"vllm-{n}", "custom_id": line["custom_id"], "response": response, "error": None}
            )
        )
    output_file.write_text("\n".join(out) + "\n", encoding="utf-8")


async def test_request_file_holds_the_live_body_and_imports_back(
    tmp_path: Path, cache: ResponseCache
) -> None:
    requests = judge_requests(20)
    requests.append(requests[3])  # a repeated call is written once
    request_file, output_file = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    with OpenAIBatchServer() as server:
        live_cache = ResponseCache(tmp_path / "live.sqlite")
        async with make_client(SPEC, server.base_url, live_cache) as live:
            live_results = await live.map(requests[:20])
        live_cache.close()
        live_bodies = {json.dumps(r.body, sort_keys=True) for r in server.requests}

        client = make_client(SPEC, server.base_url, cache)
        assert write_batch_file(client, requests, request_file) == 20
        lines = [json.loads(x) for x in request_file.read_text(encoding="utf-8").splitlines()]
        assert [x["custom_id"] for x in lines] == [client.key_for(r) for r in requests[:20]]
        assert {
            json.dumps(x["body"], sort_keys=True) for x in lines
        } == live_bodies  # byte-for-byte the live call

        run_like_vllm(server, request_file, output_file, skip=5)
        recorder = Recorder()
        results = import_batch_output(client, requests, output_file, on_result=recorder)
        assert recorder.indices() == list(range(21))
        assert [r.from_cache for r in results].count(True) == 1  # the repeat of call 3
        for i, result in enumerate(results[:20]):
            if i == 5:
                assert result.response is None and result.error is not None and "no line" in result.error
                continue
            live_response = live_results[i].response
            assert result.response is not None and live_response is not None
            assert result.response.text == live_response.text
            assert result.batch_id == "file:results.jsonl" and result.custom_id == result.cache_key

        # the imported answers sit in the store under the live keys: a live run now pays only for call 5
        before = len(server.requests)
        rerun = await client.map(requests)
        assert len(server.requests) == before + 1
        assert [r.from_cache for r in rerun] == [i != 5 for i in range(21)]
        await client.aclose()


async def test_import_rejects_a_file_for_another_model_or_endpoint(
    tmp_path: Path, cache: ResponseCache
) -> None:
    requests = judge_requests(3)
    request_file, output_file = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    with OpenAIBatchServer() as server:
        writer = make_client(SPEC, server.base_url, cache)
        write_batch_file(writer, requests, request_file)
        run_like_vllm(server, request_file, output_file)
        other = make_client("openai-compatible:another-model", server.base_url, cache)
        with pytest.raises(InputError, match="none of its 3 lines matches"):
            import_batch_output(other, requests, output_file)


def test_import_reports_error_lines_and_bad_json(tmp_path: Path, cache: ResponseCache) -> None:
    requests = judge_requests(2)
    client = make_client(SPEC, "http://127.0.0.1:8000/v1", cache)
    keys = [client.key_for(r) for r in requests]
    output_file = tmp_path / "results.jsonl"
    error = {"status_code": 400, "request_id": "x", "body": {"error": {"message": "prompt too long"}}}
    lines = [
        {"id": "a", "custom_id": keys[0], "response": error, "error": None},
        {
            "id": "b",
            "custom_id": keys[1],
            "response": None,
            "error": {"code": "server_error", "message": "boom"},
        },
    ]
    output_file.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    results = import_batch_output(client, requests, output_file)
    assert (
        results[0].error is not None
        and "HTTP 400" in results[0].error
        and "prompt too long" in results[0].error
    )
    assert results[1].error is not None and "server_error" in results[1].error
    assert len(cache) == 0

    output_file.write_text(json.dumps(lines[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2"):
        import_batch_output(client, requests, output_file)


def test_request_file_needs_no_key_or_server(
    tmp_path: Path, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file for a GPU machine can be written where no server runs (no --base-url, no key)."""
    monkeypatch.delenv("OPENAI_API_KEY")
    client = make_client("openai:gpt-4.1-mini", "", cache)
    client_no_url = make_client(SPEC, "", cache)
    for c in (client, client_no_url):
        path = tmp_path / f"{c.spec.provider}.jsonl"
        assert write_batch_file(c, judge_requests(2), path) == 2
        body = json.loads(path.read_text(encoding="utf-8").splitlines()[0])["body"]
        assert body["model"] == c.spec.model and body["temperature"] == 0.0
        assert body["messages"][0]["role"] == "system" and body["response_format"] == {"type": "json_object"}
