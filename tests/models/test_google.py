"""The Gemini adapter, through the official google-genai SDK, against a local generateContent server."""

from __future__ import annotations

import json
import math
import re
import socket
import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from judgebench.errors import ProviderConfigError
from judgebench.models.base import (
    MalformedResponseError,
    Message,
    ModelRequest,
    PermanentError,
    ProviderSettings,
    TransientError,
)
from judgebench.models.google import GoogleProvider
from judgebench.models.provider_registry import ModelSpec, create_provider
from tests.servers import google_server as srv
from tests.servers.base import Reply
from tests.servers.google_server import GoogleServer

KEY = "AIza-test-SECRET-0123456789"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    for var in (
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_API_VERSION",
    ):
        monkeypatch.delenv(var, raising=False)


_SSL_CONTEXTS: dict[str, ssl.SSLContext] = {}
_create_default_context = ssl.create_default_context


@pytest.fixture(autouse=True)
def _reuse_ssl_contexts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each genai.Client loads the CA bundle twice (~0.25 s); these tests speak plain HTTP, so reuse one."""

    def cached(*args: object, **kwargs: object) -> ssl.SSLContext:
        key = repr((args, sorted(kwargs.items())))
        if key not in _SSL_CONTEXTS:
            _SSL_CONTEXTS[key] = _create_default_context(*args, **kwargs)  # type: ignore[arg-type]
        return _SSL_CONTEXTS[key]

    monkeypatch.setattr(ssl, "create_default_context", cached)


@pytest.fixture
def server() -> Iterator[GoogleServer]:
    with GoogleServer() as s:
        assert isinstance(s, GoogleServer)
        yield s


def _settings(url: str, timeout: float = 5.0) -> ProviderSettings:
    return ProviderSettings(base_url=url, timeout=timeout)


@pytest.fixture
async def provider(server: GoogleServer) -> AsyncIterator[GoogleProvider]:
    p = GoogleProvider("gemini-test", _settings(server.url))
    yield p
    await p.aclose()


def _chat(**kw: object) -> ModelRequest:
    return ModelRequest(
        messages=[
            Message(role="system", content="You are a careful judge."),
            Message(role="user", content="Which output is better?"),
            Message(role="assistant", content="Let me think."),
            Message(role="user", content="Answer A or B."),
        ],
        temperature=0.0,
        max_tokens=50,
        stop=["\n\n"],
        **kw,  # type: ignore[arg-type]
    )


def _no_key_anywhere(obj: object) -> None:
    assert KEY not in json.dumps(obj, default=str)


async def test_success_maps_text_usage_and_records_what_was_sent(
    server: GoogleServer, provider: GoogleProvider
) -> None:
    response = await provider.generate(_chat())

    seen = server.requests[-1]
    assert seen.method == "POST"
    assert seen.path.endswith("/models/gemini-test:generateContent")
    assert seen.headers.get("x-goog-api-key") == KEY
    assert KEY not in seen.path  # never in the URL (where it would land in logs)
    body = seen.body
    assert body["systemInstruction"]["parts"] == [{"text": "You are a careful judge."}]
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["contents"][-1]["parts"] == [{"text": "Answer A or B."}]
    config = body["generationConfig"]
    assert config["temperature"] == 0.0
    assert config["maxOutputTokens"] == 50
    assert config["stopSequences"] == ["\n\n"]
    assert "responseLogprobs" not in config and "responseMimeType" not in config

    assert response.text == "A"
    assert response.finish_reason == "stop"
    # thinking tokens are billed as output
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 5)
    assert response.model == "gemini-test"
    assert response.raw is not None and response.raw["candidates"][0]["content"]["parts"] == [{"text": "A"}]
    assert response.logprobs is None
    sent = response.params_sent
    assert sent["temperature"] == 0.0 and sent["max_output_tokens"] == 50 and sent["model"] == "gemini-test"
    assert "dropped" not in sent
    _no_key_anywhere(response.model_dump())


async def test_plain_prompt_and_json_mode(server: GoogleServer, provider: GoogleProvider) -> None:
    response = await provider.generate(
        ModelRequest(prompt="Say A.", temperature=None, response_format="json")
    )
    body = server.requests[-1].body
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Say A."}]}]
    assert "systemInstruction" not in body
    assert "temperature" not in body["generationConfig"]
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert response.params_sent["response_mime_type"] == "application/json"


async def test_logprobs_parsed_with_alternatives(server: GoogleServer, provider: GoogleProvider) -> None:
    assert provider.capabilities.logprobs is True
    response = await provider.generate(_chat(logprobs=True, top_logprobs=3))
    config = server.requests[-1].body["generationConfig"]
    assert config["responseLogprobs"] is True and config["logprobs"] == 3
    assert response.logprobs is not None and len(response.logprobs) == 1
    first = response.logprobs[0]
    assert first.token == "A"
    assert set(first.top) == {"A", "B", "Tie"}
    assert first.logprob == first.top["A"] == max(first.top.values())
    assert math.isclose(sum(math.exp(v) for v in first.top.values()), 1.0, rel_tol=1e-9)
    assert response.params_sent["response_logprobs"] is True


async def test_unsupported_logprobs_are_probed_once_and_remembered(tmp_path: Path) -> None:
    with GoogleServer(logprobs_supported=False) as server:
        p = GoogleProvider("gemini-test", _settings(server.url))
        try:
            response = await p.generate(_chat(logprobs=True, top_logprobs=3))
            assert response.text == "A" and response.logprobs is None
            first, second = server.requests
            assert first.body["generationConfig"]["responseLogprobs"] is True
            assert "responseLogprobs" not in second.body["generationConfig"]
            assert "not supported" in response.params_sent["dropped"]["logprobs"]
            assert "response_logprobs" not in response.params_sent
            assert p.capabilities.logprobs is False

            again = await p.generate(_chat(logprobs=True))
            assert len(server.requests) == 3
            assert "responseLogprobs" not in server.requests[-1].body["generationConfig"]
            assert "logprobs" in again.params_sent["dropped"]
        finally:
            await p.aclose()


@pytest.mark.parametrize("message", ["Invalid value at 'contents'", "logprobs must be in the range [0, 20]"])
async def test_other_400_is_not_mistaken_for_logprobs(
    server: GoogleServer, provider: GoogleProvider, message: str
) -> None:
    server.enqueue(srv.bad_request(message))
    with pytest.raises(PermanentError, match=re.escape(message[:20])):
        await provider.generate(_chat(logprobs=True))
    assert len(server.requests) == 1
    assert provider.capabilities.logprobs is True


@pytest.mark.parametrize(
    ("reply", "retry_after"),
    [
        (srv.rate_limited(2), 2.0),
        (srv.rate_limited(None, retry_delay="3s"), 3.0),
        (srv.rate_limited(None), None),
        (srv.server_error(500), None),
        (srv.server_error(503), None),
    ],
)
async def test_rate_limit_and_server_errors_are_transient(
    server: GoogleServer, provider: GoogleProvider, reply: Reply, retry_after: float | None
) -> None:
    server.enqueue(reply)
    with pytest.raises(TransientError) as info:
        await provider.generate(_chat())
    assert not isinstance(info.value, MalformedResponseError)
    assert info.value.retry_after == retry_after
    assert str(reply.status) in str(info.value)


async def test_timeout_is_transient(server: GoogleServer) -> None:
    p = GoogleProvider("gemini-test", _settings(server.url, timeout=0.3))
    server.enqueue(srv.slow(1.5))
    try:
        with pytest.raises(TransientError, match="timed out") as info:
            await p.generate(_chat())
        assert info.value.status == "timeout"  # type: ignore[attr-defined]
    finally:
        await p.aclose()


async def test_connection_refused_is_transient() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = GoogleProvider("gemini-test", _settings(f"http://127.0.0.1:{port}"))
    try:
        with pytest.raises(TransientError, match="connection"):
            await p.generate(_chat())
    finally:
        await p.aclose()


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (srv.truncated(), "not JSON"),
        (srv.html(), "HTML"),
        (Reply(200, ""), "empty"),
        (srv.no_candidates(), "no candidates"),
        (Reply(200, srv.response_body(None)), "no content"),
        (
            Reply(200, srv.response_body(candidates=[srv.candidate(parts=[{"inlineData": {}}])])),
            "no text part",
        ),
    ],
)
async def test_malformed_200_is_malformed(
    server: GoogleServer, provider: GoogleProvider, reply: Reply, why: str
) -> None:
    server.enqueue(reply)
    with pytest.raises(MalformedResponseError, match=why):
        await provider.generate(_chat())


@pytest.mark.parametrize("reply", [srv.safety_block(), srv.prompt_blocked(), srv.prompt_blocked("SAFETY")])
async def test_safety_block_is_an_answer_with_no_text(
    server: GoogleServer, provider: GoogleProvider, reply: Reply
) -> None:
    server.enqueue(reply)
    response = await provider.generate(_chat())
    assert response.finish_reason == "safety"
    assert response.text == ""
    assert len(server.requests) == 1


async def test_thoughts_are_not_the_answer(server: GoogleServer, provider: GoogleProvider) -> None:
    parts: list[dict[str, object]] = [{"text": "The user wants A or B...", "thought": True}, {"text": "B"}]
    server.enqueue(Reply(200, srv.response_body(candidates=[srv.candidate(parts=parts)])))
    response = await provider.generate(_chat())
    assert response.text == "B"


async def test_max_tokens_spent_thinking_is_an_empty_answer(
    server: GoogleServer, provider: GoogleProvider
) -> None:
    server.enqueue(Reply(200, srv.response_body(None, finish_reason="MAX_TOKENS")))
    response = await provider.generate(_chat())
    assert (response.text, response.finish_reason) == ("", "length")


@pytest.mark.parametrize("reply", [srv.auth_error(401), srv.auth_error(403), srv.invalid_key()])
async def test_auth_errors_are_permanent_and_name_the_variables(
    server: GoogleServer, provider: GoogleProvider, reply: Reply
) -> None:
    server.enqueue(reply)
    with pytest.raises(PermanentError, match="GEMINI_API_KEY or GOOGLE_API_KEY") as info:
        await provider.generate(_chat())
    assert KEY not in str(info.value)


@pytest.mark.parametrize("status", [400, 404])
async def test_client_errors_are_permanent(
    server: GoogleServer, provider: GoogleProvider, status: int
) -> None:
    server.enqueue(srv.bad_request("models/gemini-nope is not found", status=status))
    with pytest.raises(PermanentError, match="gemini-nope") as info:
        await provider.generate(_chat())
    assert not info.value.retryable


async def test_google_api_key_and_base_url_env(server: GoogleServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", KEY + "-g")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    p = create_provider(ModelSpec.parse("google:gemini-2.5-flash"), ProviderSettings(timeout=5.0))
    assert isinstance(p, GoogleProvider)
    try:
        assert p.endpoint() == server.url
        await p.generate(ModelRequest(prompt="hi"))
        seen = server.requests[-1]
        assert seen.headers["x-goog-api-key"] == KEY + "-g"
        assert seen.path.endswith("/models/gemini-2.5-flash:generateContent")
    finally:
        await p.aclose()


def test_missing_key_names_both_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ProviderConfigError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        GoogleProvider("gemini-test", ProviderSettings())


# --- through the client: retries happen there, once --------------------------------------------


def _client_settings(url: str, attempts: int = 3) -> ProviderSettings:
    """`attempts` in all: the first and `attempts - 1` retries."""
    return ProviderSettings(
        base_url=url, timeout=5.0, max_retries=attempts - 1, backoff_initial=0.01, backoff_max=0.05
    )


async def test_client_retries_429_then_answers_once(server: GoogleServer, tmp_path: Path) -> None:
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient

    server.enqueue(srv.rate_limited(None, retry_delay="0.05s"))
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        async with ModelClient("google:gemini-test", _client_settings(server.url), cache=cache) as client:
            result = await client.call(_chat(logprobs=True, top_logprobs=3))
            assert result.response is not None and result.error is None
            assert result.attempts == 2
            assert server.successes == 1 and len(server.requests) == 2
            again = await client.call(_chat(logprobs=True, top_logprobs=3))
            assert again.from_cache and again.response == result.response
            assert again.response is not None and again.response.logprobs is not None
            assert len(server.requests) == 2


async def test_client_gives_up_on_persistent_500(server: GoogleServer, tmp_path: Path) -> None:
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient

    server.enqueue(*[srv.server_error(500) for _ in range(3)])
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        async with ModelClient("google:gemini-test", _client_settings(server.url, 3), cache=cache) as client:
            result = await client.call(_chat())
    assert result.response is None and result.error is not None
    assert "500" in result.error
    assert result.attempts == 3 and len(server.requests) == 3


async def test_client_does_not_retry_auth(server: GoogleServer, tmp_path: Path) -> None:
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient

    server.enqueue(srv.invalid_key())
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        async with ModelClient("google:gemini-test", _client_settings(server.url, 5), cache=cache) as client:
            result = await client.call(_chat())
            assert result.response is None and result.error is not None
            assert "GEMINI_API_KEY" in result.error and KEY not in result.error
            assert result.attempts == 1 and len(server.requests) == 1
            _no_key_anywhere(result.params_sent)
            assert result.params_sent.get("temperature") == 0.0


async def test_client_retries_timeout_then_answers(server: GoogleServer, tmp_path: Path) -> None:
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient

    server.enqueue(srv.slow(1.0))
    settings = ProviderSettings(
        base_url=server.url, timeout=0.3, max_retries=3, backoff_initial=0.01, backoff_max=0.05
    )
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        async with ModelClient("google:gemini-test", settings, cache=cache) as client:
            result = await client.call(_chat())
    assert result.response is not None and result.response.text == "A"
    assert result.attempts == 2
