"""Issue 29, class 7 at the provider layer, through every official SDK: a server that rejects the key
stops the client after a few calls in a row, naming the provider and its key variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebench.models.base import Message, ModelRequest, ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.client import KEY_REJECTIONS_TO_STOP, ModelClient
from judgebench.models.pricing import PriceTable
from tests.models.test_wire import IDS, PROVIDERS, Provider, _keys  # noqa: F401 - the fixture
from tests.servers.base import Reply, SeenRequest, reject_key

KEY_VAR = {
    "openai": "OPENAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google": "GEMINI_API_KEY",
}


def _client(spec: str, url: str, tmp_path: Path, concurrency: int) -> ModelClient:
    settings = ProviderSettings(base_url=url, timeout=60.0, max_retries=2, concurrency=concurrency)
    return ModelClient(
        spec, settings, cache=ResponseCache(tmp_path / "responses.sqlite"), prices=PriceTable.load()
    )


def _asks(n: int) -> list[ModelRequest]:
    return [ModelRequest(messages=[Message(role="user", content=f"Which is better? {i}")]) for i in range(n)]


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
async def test_a_rejected_key_stops_the_client_after_a_few_calls(tmp_path: Path, provider: Provider) -> None:
    spec, factory, suffix, _ok = provider
    server = factory()
    server.responder = reject_key
    with server:
        client = _client(spec, server.url + suffix, tmp_path, concurrency=2)
        try:
            results = await client.map(_asks(40))
        finally:
            await client.aclose()
    assert KEY_REJECTIONS_TO_STOP <= len(server.requests) <= KEY_REJECTIONS_TO_STOP + 1
    assert len(results) == len(server.requests)  # the rest were never started
    assert all(not r.ok and r.attempts == 1 for r in results)  # a rejected key is not retried
    assert client.stopped is not None
    name = spec.split(":")[0]
    assert client.stopped.startswith(f"{name}: the key was rejected on {KEY_REJECTIONS_TO_STOP} calls")
    assert KEY_VAR[name] in client.stopped and "rerun" in client.stopped


@pytest.mark.parametrize("provider", PROVIDERS[2:4], ids=IDS[2:4])
async def test_rejections_between_answers_do_not_stop(tmp_path: Path, provider: Provider) -> None:
    spec, factory, suffix, ok = provider
    count = {"n": 0}

    def every_other(request: SeenRequest) -> Reply:
        count["n"] += 1
        return reject_key(request) if count["n"] % 2 else Reply(body=ok("A"))

    server = factory()
    server.responder = every_other
    with server:
        client = _client(spec, server.url + suffix, tmp_path, concurrency=1)
        try:
            results = await client.map(_asks(12))
        finally:
            await client.aclose()
    assert len(server.requests) == 12 and client.stopped is None
    assert sum(r.ok for r in results) == 6
