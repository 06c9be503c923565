"""Issue 17, the provider layer: what a hostile server can do to a call, through the official SDKs
against the local wire-format servers. Nothing paid twice, nothing leaked, no hang."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgebench.models.base import Message, ModelRequest, ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from judgebench.models.pricing import PriceTable
from judgebench.records.sanitize import clip, mask_url, scrub, scrub_clip
from tests.servers import anthropic_server as ant
from tests.servers import google_server as goo
from tests.servers.anthropic_server import AnthropicServer
from tests.servers.base import Reply, SeenRequest, WireServer
from tests.servers.google_server import GoogleServer
from tests.servers.openai_server import OpenAIServer, chat_body, error_body

KEY = "sk-test-HARDEN-0123456789abcdef"


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    for var in ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(var, raising=False)


def client_for(
    url: str, cache: ResponseCache, spec: str = "openai-compatible:m", **settings: Any
) -> ModelClient:
    opts: dict[str, Any] = {
        "base_url": url,
        "timeout": 5.0,
        "max_retries": 0,
        "backoff_initial": 0.001,
        "backoff_max": 0.01,
    }
    opts.update(settings)
    return ModelClient(spec, ProviderSettings(**opts), cache=cache, prices=PriceTable.load())


def ask(text: str = "Which is better?") -> ModelRequest:
    return ModelRequest(messages=[Message(role="user", content=text)])


def _servers(text: str) -> Iterator[tuple[str, WireServer, str]]:
    yield "openai-compatible:m", OpenAIServer(text=text), "/v1"
    yield "anthropic:claude-x", AnthropicServer(text=text), ""
    yield "google:gemini-x", GoogleServer(), ""


# --- 1. a lone surrogate in a reply ---------------------------------------------------------------


@pytest.mark.parametrize("which", [0, 1], ids=["openai-compatible", "anthropic"])
async def test_lone_surrogate_in_a_reply_is_stored_and_never_paid_twice(tmp_path: Path, which: int) -> None:
    """Before: the cache write raised PydanticSerializationError, the answer was lost and every rerun
    paid again. Now: U+FFFD in its place, stored, and the second call is a cache hit."""
    spec, server, suffix = list(_servers("A \ud800 because"))[which]
    cache = ResponseCache(tmp_path / "responses.sqlite")
    with server:
        for round_no in range(2):
            client = client_for(server.url + suffix, cache, spec)
            try:
                result = await client.call(ask())
            finally:
                await client.aclose()
            assert result.ok, result.error
            assert result.response is not None and result.response.text == "A \ufffd because"
            assert result.from_cache == (round_no == 1)
        assert server.successes == 1
    # the stored answer is plain UTF-8 JSON
    json.dumps(result.response.model_dump(), ensure_ascii=False).encode("utf-8")


# --- 7. a cache that cannot be written ------------------------------------------------------------


async def test_full_cache_disk_is_said_once_and_loses_no_answer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: an ExceptionGroup ending in 'database or disk is full', no answer. Now: every answer is
    returned (for the run folder), one warning, the store skipped afterwards."""
    cache = ResponseCache(tmp_path / "responses.sqlite")
    # a store that is full: SQLite answers SQLITE_FULL ("database or disk is full"), as on a full tmpfs
    (pages,) = cache._conn.execute("PRAGMA page_count").fetchone()
    cache._conn.execute(f"PRAGMA max_page_count={pages}")
    with OpenAIServer(text="A" * 5000) as server:
        client = client_for(server.base_url, cache, concurrency=4)
        try:
            with caplog.at_level(logging.WARNING, logger="judgebench.models.cache"):
                results = await client.map([ask(f"q{i}") for i in range(12)])
        finally:
            await client.aclose()
    assert len(results) == 12 and all(r.ok for r in results)
    warnings = [r for r in caplog.records if "cannot be used" in r.getMessage()]
    assert len(warnings) == 1 and "full" in warnings[0].getMessage()
    assert cache.disabled is not None
    with pytest.raises(sqlite3.OperationalError):
        cache._conn.execute("INSERT INTO responses VALUES ('k','p','m','s','" + "x" * 9000 + "','t')")


# --- 2. a server that drips one byte at a time ----------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("which", [0, 1, 2], ids=["openai-compatible", "anthropic", "google"])
async def test_dripping_server_is_cut_at_the_total_deadline(tmp_path: Path, which: int) -> None:
    """Before: each read came within the SDK timeout, so `--timeout 1` held the call for minutes
    (the OpenAI family skipped the client's guard). Now: the client's total deadline ends it."""
    spec, server, suffix = list(_servers("A"))[which]
    body = [chat_body("A" * 400), ant.message_body("A" * 400), goo.response_body("A" * 400)][which]
    server.responder = lambda _r: Reply(body=body, drip=0.05)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    with server:
        client = client_for(server.url + suffix, cache, spec, timeout=1.0)
        try:
            result = await client.call(ask())
        finally:
            await client.aclose()
    assert not result.ok and result.error is not None
    assert "timed out after 1s" in result.error or "no answer within 1s" in result.error
    assert client.stats.status_counts.get("timeout") == 1


# --- 5. a key split by the cut of a long error text ----------------------------------------------


def test_scrub_before_cut_leaves_no_part_of_a_key() -> None:
    text = "x" * 280 + f" Bearer {KEY} more"
    # before: cut to 300 first, then masked: the key's first characters survived the cut
    assert KEY[:12] in text[:300].replace(KEY, "***")
    assert KEY[:8] not in scrub_clip(text, 300, [KEY])
    assert "Bearer ***" in scrub(f"auth: Bearer {KEY}")
    assert scrub("key sk-abcdefgh12345 here") == "key *** here"
    assert clip("abcdef", 4) == "abc…"


async def test_error_echoing_the_key_at_the_cut_leaks_no_character(tmp_path: Path) -> None:
    def echo(request: SeenRequest) -> Reply:
        auth = request.headers.get("authorization", "")
        return Reply(status=400, body=error_body("y" * 285 + f" you sent {auth}"))

    cache = ResponseCache(tmp_path / "responses.sqlite")
    with OpenAIServer(echo) as server:
        client = client_for(server.base_url, cache)
        try:
            result = await client.call(ask())
        finally:
            await client.aclose()
    assert result.error is not None and "HTTP 400" in result.error
    for n in range(6, len(KEY)):
        assert KEY[:n] not in result.error and KEY[-n:] not in result.error


# --- 4. credentials in --base-url -----------------------------------------------------------------


def test_mask_url_hides_userinfo_and_token_parameters() -> None:
    assert mask_url("http://user:tok3n@host:8000/v1") == "http://***@host:8000/v1"
    assert mask_url("https://h/v1?api-key=abc&x=1") == "https://h/v1?api-key=***&x=1"
    assert ProviderSettings(base_url="http://u:secret99@h/v1").for_record()["base_url"] == "http://***@h/v1"


async def test_401_hint_masks_the_credential_in_the_base_url(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    with OpenAIServer(lambda _r: Reply(status=401, body=error_body("bad key"))) as server:
        url = server.base_url.replace("http://", "http://user:hunter2-token@")
        client = client_for(url, cache)
        try:
            result = await client.call(ask())
        finally:
            await client.aclose()
    assert result.error is not None and "authentication failed" in result.error
    assert "hunter2" not in result.error and "***@127.0.0.1" in result.error


# --- 6. a huge answer -----------------------------------------------------------------------------


async def test_huge_answer_is_capped_with_its_size_recorded(tmp_path: Path) -> None:
    """Before: stored whole, twice (text and raw). Now: cut to max_answer_chars, sizes recorded."""
    cache = ResponseCache(tmp_path / "responses.sqlite")
    with OpenAIServer(text="B" * 300_000) as server:
        client = client_for(server.base_url, cache, max_answer_chars=1000)
        try:
            result = await client.call(ask())
            again = await client.call(ask())
        finally:
            await client.aclose()
    assert result.response is not None
    assert len(result.response.text) == 1000
    assert result.response.text_chars == 300_000 and result.response.text_cap == 1000
    assert len(json.dumps(result.response.raw)) < 5000
    assert again.from_cache and again.response is not None and again.response.text_chars == 300_000
    assert (tmp_path / "responses.sqlite").stat().st_size < 200_000


def test_default_answer_cap_is_64_kib_of_text() -> None:
    assert ProviderSettings().max_answer_chars == 65536


@pytest.mark.timeout(120)
@pytest.mark.parametrize("which", [0, 1, 2], ids=["openai-compatible", "anthropic", "google"])
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_huge_http_body_is_not_read_into_memory(tmp_path: Path, which: int, chunked: bool) -> None:
    """Before: a 100 MB body was read whole (886 MB RSS at concurrency). Now: the read stops past the
    limit (8 MiB at the default cap) and the call fails at once, permanently (asking again would
    get the same body)."""
    spec, server, suffix = list(_servers("A"))[which]
    huge = b'{"id": "x", "choices": [{"message": {"content": "' + b"A" * (10 * 1024 * 1024) + b'"}}]}'

    if chunked:  # no content-length: the body arrives in chunks, the limit must count them

        def responder(_r: SeenRequest) -> Reply:
            return Reply(body=huge, headers={"transfer-encoding": "chunked"})
    else:

        def responder(_r: SeenRequest) -> Reply:
            return Reply(body=huge)

    server.responder = responder
    cache = ResponseCache(tmp_path / "responses.sqlite")
    with server:
        client = client_for(server.url + suffix, cache, spec, max_retries=3)
        try:
            result = await client.call(ask())
        finally:
            await client.aclose()
    assert not result.ok and result.error is not None
    assert "response body over 8 MiB" in result.error and result.attempts == 1


async def test_lone_surrogate_in_an_error_text_is_kept_as_text(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    with OpenAIServer(lambda _r: Reply(status=400, body=error_body("bad \ud800 request"))) as server:
        client = client_for(server.base_url, cache)
        try:
            result = await client.call(ask())
        finally:
            await client.aclose()
    assert result.error is not None and "bad \ufffd request" in result.error
    result.error.encode("utf-8")


async def test_a_store_that_cannot_be_opened_is_skipped_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A full tmpfs fails already at the store's first page ('disk I/O error'); the run goes on."""
    blocked = tmp_path / "responses.sqlite"
    blocked.mkdir()  # SQLite cannot open a folder: the same OperationalError path as a full disk
    with caplog.at_level(logging.WARNING, logger="judgebench.models.cache"):
        cache = ResponseCache(blocked)
    assert cache.disabled is not None and cache.info()["disabled"] == cache.disabled
    with OpenAIServer() as server:
        client = client_for(server.base_url, cache)
        try:
            results = [await client.call(ask()) for _ in range(2)]
        finally:
            await client.aclose()
    assert all(r.ok and not r.from_cache for r in results)
    assert sum("cannot be used" in r.getMessage() for r in caplog.records) == 1
