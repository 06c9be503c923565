"""Issue 29, classes 1 and 4 at the provider layer, through the official SDKs against local servers:
a key never follows a redirect to another host, and a body is bounded by its decoded size."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgebench.models.base import Message, ModelRequest, ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from judgebench.models.pricing import PriceTable
from tests.servers import anthropic_server as ant
from tests.servers import google_server as goo
from tests.servers.anthropic_server import AnthropicServer
from tests.servers.base import (
    CatchServer,
    Reply,
    SeenRequest,
    WireServer,
    gzip_bomb,
    gzip_bytes,
    gzipped,
    redirect_to,
)
from tests.servers.google_server import GoogleServer
from tests.servers.openai_server import OpenAIServer, chat_body

KEY = "sk-test-WIRE-0123456789abcdef"
KEY_VARS = (
    "OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_COMPATIBLE_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
)


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in KEY_VARS:
        monkeypatch.setenv(var, KEY)
    for var in ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


# (spec, server factory, URL suffix, a 200 body in the provider's format with `text` as the answer)
Provider = tuple[str, Callable[[], WireServer], str, Callable[[str], dict[str, Any]]]
PROVIDERS: list[Provider] = [
    ("openai:gpt-4.1-mini", OpenAIServer, "/v1", chat_body),
    ("deepseek:deepseek-chat", OpenAIServer, "/v1", chat_body),
    ("openai-compatible:m", OpenAIServer, "/v1", chat_body),
    ("anthropic:claude-haiku-4-5", AnthropicServer, "", ant.message_body),
    ("google:gemini-2.5-flash", GoogleServer, "", goo.response_body),
]
IDS = [p[0].split(":")[0] for p in PROVIDERS]


async def one_call(spec: str, url: str, tmp_path: Path, **settings: Any) -> tuple[Any, ModelClient]:
    opts: dict[str, Any] = {"base_url": url, "timeout": 60.0, "max_retries": 2, "backoff_max": 0.01}
    opts.update(settings)
    client = ModelClient(
        spec,
        ProviderSettings(**opts),
        cache=ResponseCache(tmp_path / "responses.sqlite"),
        prices=PriceTable.load(),
    )
    try:
        result = await client.call(ModelRequest(messages=[Message(role="user", content="Which is better?")]))
    finally:
        await client.aclose()
    return result, client


def _carries_key(request: SeenRequest) -> bool:
    return any(KEY in value for value in request.headers.values())


# --- 1. a key re-sent to another host ------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
async def test_a_redirect_to_another_host_is_refused_and_carries_no_key(
    tmp_path: Path, provider: Provider
) -> None:
    """Before: a 307 to another host was followed, and the Google adapter sent x-goog-api-key there.
    Now: not followed at all, one attempt, a permanent failure that says why."""
    spec, factory, suffix, _ok = provider
    with CatchServer(host="127.0.0.2") as other:
        named = factory()
        named.responder = lambda r: redirect_to(f"{other.url}{r.path}")
        with named:
            result, client = await one_call(spec, named.url + suffix, tmp_path)
        assert [r for r in other.requests if _carries_key(r)] == []
        assert other.requests == []
        assert len(named.requests) == 1 and _carries_key(named.requests[0])
    assert not result.ok and result.attempts == 1
    assert "redirected to another host (http://127.0.0.2:" in result.error
    assert KEY not in result.error
    assert client.stats.status_counts.get("redirect") == 1


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
async def test_a_redirect_on_the_same_host_is_still_followed(tmp_path: Path, provider: Provider) -> None:
    spec, factory, suffix, ok = provider
    named = factory()

    def responder(request: SeenRequest) -> Reply:
        if "moved=1" in request.path:
            return Reply(body=ok("A"))
        sep = "&" if "?" in request.path else "?"
        return redirect_to(f"{named.url}{request.path}{sep}moved=1")

    named.responder = responder
    with named:
        result, _client = await one_call(spec, named.url + suffix, tmp_path)
    assert result.ok, result.error
    assert result.response is not None and result.response.text == "A"
    assert len(named.requests) == 2 and all(_carries_key(r) for r in named.requests)


# --- 4. a decompression bomb ---------------------------------------------------------------------

_HEAD = {
    "openai": b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": '
    b'{"role": "assistant", "content": "',
    "anthropic": b'{"id": "m", "type": "message", "role": "assistant", '
    b'"content": [{"type": "text", "text": "',
    "google": b'{"candidates": [{"content": {"role": "model", "parts": [{"text": "',
}
_TAIL = {
    "openai": b'"}, "finish_reason": "stop"}]}',
    "anthropic": b'"}], "stop_reason": "end_turn"}',
    "google": b'"}]}, "finishReason": "STOP"}]}',
}


def _family(spec: str) -> str:
    head = spec.split(":")[0]
    return head if head in ("anthropic", "google") else "openai"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
async def test_a_gzip_bomb_is_cut_at_the_decoded_limit(tmp_path: Path, provider: Provider) -> None:
    """Before: the 8 MiB limit counted compressed bytes: ~64 KB of gzip decoding to 64 MiB was read
    whole (and 300 KB to 300 MB took the process to 1.1 GB). Now: decoding stops past 8 MiB, the
    call fails at once and permanently, and the memory it took stays near the limit."""
    spec, factory, suffix, _ok = provider
    family = _family(spec)
    bomb = gzip_bomb(_HEAD[family], 64, _TAIL[family])
    assert len(bomb) < 200_000
    server = factory()
    server.responder = lambda _r: gzipped(bomb)
    tracemalloc.start()
    try:
        with server:
            result, _client = await one_call(spec, server.url + suffix, tmp_path)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not result.ok and result.error is not None
    assert "over 8 MiB" in result.error and "decoded" in result.error
    assert result.attempts == 1 and len(server.requests) == 1
    assert peak < 48 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
async def test_an_ordinary_gzip_body_is_decoded(tmp_path: Path, provider: Provider) -> None:
    spec, factory, suffix, ok = provider
    body = gzip_bytes(json.dumps(ok("B because")).encode())
    server = factory()
    server.responder = lambda _r: gzipped(body)
    with server:
        result, _client = await one_call(spec, server.url + suffix, tmp_path)
    assert result.ok, result.error
    assert result.response is not None and result.response.text == "B because"
    assert server.requests[0].headers.get("accept-encoding") == "gzip, deflate"
