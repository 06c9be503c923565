"""Issue 41 (third hardening pass), classes 1 and 4 in batch mode, through the official SDKs against
hostile local servers: a key never follows a URL a response body names to another host, and no poll
or download outlives `--timeout x (retries + 1)`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from judgebench.batch import run_batch
from judgebench.models.cache import ResponseCache
from judgebench.wire import sync_hooks
from tests.batch.conftest import ANTHROPIC_MODEL, OPENAI_MODEL, batch_state, judge_requests, make_client
from tests.servers.anthropic_batch_server import AnthropicBatchServer
from tests.servers.base import CatchServer, Reply, SeenRequest
from tests.servers.openai_batch_server import OpenAIBatchServer

KEY = "sk-ant-test-batch"  # the conftest's ANTHROPIC_API_KEY


def _carries_key(request: SeenRequest) -> bool:
    return any(KEY in value for value in request.headers.values())


# --- 1. a URL in a response body ------------------------------------------------------------------


async def test_a_results_url_on_another_host_gets_no_key(tmp_path: Path, cache: ResponseCache) -> None:
    """Before: the SDK downloaded the results from the `results_url` the server named, with
    x-api-key, wherever it pointed. Now: the download is not sent; the calls fail saying why and the
    batch stays recorded, so a rerun resumes it."""
    requests = judge_requests(3)
    empty = CatchServer(lambda r: Reply(body=b"", content_type="application/binary"), host="127.0.0.2")
    with empty as other, AnthropicBatchServer(polls_per_stage=1) as server:

        def elsewhere(request: SeenRequest) -> Reply | None:
            reply = server.default_reply(request)
            if isinstance(reply.body, dict) and reply.body.get("results_url"):
                reply.body = {**reply.body, "results_url": f"{other.url}/steal"}
            return reply

        server.responder = elsewhere
        async with make_client(f"anthropic:{ANTHROPIC_MODEL}", server.url, cache, max_retries=1) as client:
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        assert all(_carries_key(r) for r in server.requests)  # the named host got the key, as it should
    assert [r for r in other.requests if _carries_key(r)] == []
    assert other.requests == []
    assert len(results) == 3 and not any(r.ok for r in results)
    for result in results:
        assert result.error is not None and "another host (http://127.0.0.2:" in result.error
        assert KEY not in result.error
    (sub,) = batch_state(tmp_path / "run")["submissions"]
    assert sub["phase"] != "collected"  # kept for the next run to resume


async def test_a_results_url_on_the_same_host_is_still_fetched(tmp_path: Path, cache: ResponseCache) -> None:
    """The other side: the provider's own results_url (same scheme, host and port) is fetched."""
    requests = judge_requests(3)
    with AnthropicBatchServer(polls_per_stage=1) as server:
        async with make_client(f"anthropic:{ANTHROPIC_MODEL}", server.url, cache) as client:
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
    assert all(r.ok for r in results)


def test_the_hub_client_sends_no_credential_to_another_origin() -> None:
    """The credential-free policy (the hub's): a request to another origin goes, without its
    credential headers; one to the home origin keeps them."""
    with CatchServer(host="127.0.0.2") as other, CatchServer() as home:
        refuse = lambda kind, message: RuntimeError(message)  # noqa: E731 - never called here
        hooks = sync_hooks(1 << 20, refuse, "credential-free", home=home.url)
        secret = {"authorization": "Bearer hf_SECRET", "x-api-key": "SECRET"}
        with httpx.Client(event_hooks=hooks) as client:
            client.get(f"{other.url}/file", headers=secret)
            client.get(f"{home.url}/api", headers=secret)
    (away,) = other.requests
    assert "authorization" not in away.headers and "x-api-key" not in away.headers
    (mine,) = home.requests
    assert mine.headers["authorization"] == "Bearer hf_SECRET" and mine.headers["x-api-key"] == "SECRET"


# --- 4. a poll answered one byte at a time ---------------------------------------------------------


def _drip_polls(server: Any, path_part: str) -> None:
    """Answer every GET whose path holds `path_part` one byte every 0.05 s (each read succeeds)."""

    def drip(request: SeenRequest) -> Reply | None:
        if request.method != "GET" or path_part not in request.path:
            return None
        reply = server.default_reply(request)
        reply.drip = 0.05
        return reply

    server.responder = drip


@pytest.mark.timeout(120)
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_dripping_poll_ends_at_the_deadline(
    tmp_path: Path, cache: ResponseCache, provider: str
) -> None:
    """Before: the SDK's read timeout restarts at every byte, so a poll dripped one byte every 50 ms
    ran for minutes (a batch object is ~1 KB). Now: each poll ends within timeout x (retries + 1)."""
    timeout, retries = 0.5, 1
    requests = judge_requests(2)
    if provider == "openai":
        server: Any = OpenAIBatchServer()
        spec, url, part = f"openai:{OPENAI_MODEL}", None, "/batches/"
    else:
        server = AnthropicBatchServer(polls_per_stage=1)
        spec, url, part = f"anthropic:{ANTHROPIC_MODEL}", None, "/v1/messages/batches/"
    with server:
        url = server.base_url if provider == "openai" else server.url
        _drip_polls(server, part)
        started = time.monotonic()
        async with make_client(spec, url, cache, timeout=timeout, max_retries=retries) as client:
            results = await run_batch(client, requests, tmp_path / "run", poll_interval=0)
        took = time.monotonic() - started
    assert took < timeout * (retries + 1) + 5.0, f"polling ran {took:.1f}s"
    assert not any(r.ok for r in results)
    assert all(r.error is not None and "no answer within" in r.error for r in results)
    (sub,) = batch_state(tmp_path / "run")["submissions"]
    assert sub["batch_id"] and sub["phase"] != "collected"  # the batch is kept for a rerun
