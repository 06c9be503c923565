"""The Anthropic adapter, through the official SDK, against a local Messages API server."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from judgebench.errors import ProviderConfigError
from judgebench.models.anthropic import AnthropicProvider
from judgebench.models.base import (
    MalformedResponseError,
    Message,
    ModelRequest,
    PermanentError,
    ProviderSettings,
    TransientError,
    retry_after_seconds,
)
from judgebench.models.provider_registry import ModelSpec, create_provider
from tests.servers import anthropic_server as srv
from tests.servers.anthropic_server import AnthropicServer
from tests.servers.base import Reply

KEY = "sk-ant-test-SECRET-0123456789"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as s:
        assert isinstance(s, AnthropicServer)
        yield s


def _settings(url: str, timeout: float = 5.0) -> ProviderSettings:
    return ProviderSettings(base_url=url, timeout=timeout)


@pytest.fixture
async def provider(server: AnthropicServer) -> AsyncIterator[AnthropicProvider]:
    p = AnthropicProvider("claude-test", _settings(server.url))
    yield p
    await p.aclose()


def _chat() -> ModelRequest:
    return ModelRequest(
        messages=[
            Message(role="system", content="You are a careful judge."),
            Message(role="user", content="Which output is better?"),
        ],
        temperature=0.0,
        max_tokens=50,
        stop=["\n\n"],
    )


def _no_key_anywhere(obj: object) -> None:
    assert KEY not in json.dumps(obj, default=str)


async def test_success_maps_text_usage_and_records_what_was_sent(
    server: AnthropicServer, provider: AnthropicProvider
) -> None:
    response = await provider.generate(_chat())

    seen = server.requests[-1]
    assert seen.path == "/v1/messages"
    # the key travels in the SDK's auth header (x-api-key, or a bearer token in anthropic>=2)
    assert seen.headers.get("x-api-key") == KEY or seen.headers.get("authorization") == f"Bearer {KEY}"
    assert seen.body["system"] == "You are a careful judge."
    assert seen.body["messages"] == [{"role": "user", "content": "Which output is better?"}]
    assert seen.body["temperature"] == 0.0
    assert seen.body["max_tokens"] == 50
    assert seen.body["stop_sequences"] == ["\n\n"]

    assert response.text == "Output (a)"
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
    assert response.model == "claude-test"
    assert response.raw is not None and response.raw["type"] == "message"
    assert response.raw["content"] == [{"type": "text", "text": "Output (a)"}]
    assert response.logprobs is None
    assert response.latency_s > 0
    sent = response.params_sent
    assert sent["temperature"] == 0.0 and sent["max_tokens"] == 50 and sent["model"] == "claude-test"
    assert "messages" not in sent and "system" not in sent and "dropped" not in sent
    _no_key_anywhere(response.model_dump())


async def test_plain_prompt_is_one_user_message(server: AnthropicServer, provider: AnthropicProvider) -> None:
    await provider.generate(ModelRequest(prompt="Say A.", temperature=None))
    body = server.requests[-1].body
    assert body["messages"] == [{"role": "user", "content": "Say A."}]
    assert "system" not in body and "temperature" not in body


async def test_declares_no_logprobs_and_no_json_mode(
    server: AnthropicServer, provider: AnthropicProvider
) -> None:
    assert provider.capabilities.logprobs is False
    assert provider.capabilities.json_mode is False
    response = await provider.generate(
        ModelRequest(prompt="x", logprobs=True, top_logprobs=5, response_format="json")
    )
    body = server.requests[-1].body
    assert not {"logprobs", "top_logprobs", "response_format"} & set(body)
    assert response.logprobs is None
    assert set(response.params_sent["dropped"]) == {"logprobs", "response_format"}


@pytest.mark.parametrize(
    ("reply", "retry_after"),
    [(srv.rate_limited(2), 2.0), (srv.rate_limited(None), None), (srv.server_error(500), None)],
)
async def test_rate_limit_and_server_errors_are_transient(
    server: AnthropicServer, provider: AnthropicProvider, reply: Reply, retry_after: float | None
) -> None:
    server.enqueue(reply)
    with pytest.raises(TransientError) as info:
        await provider.generate(_chat())
    assert not isinstance(info.value, MalformedResponseError)
    assert info.value.retry_after == retry_after
    assert str(reply.status) in str(info.value)


async def test_overloaded_529_is_transient(server: AnthropicServer, provider: AnthropicProvider) -> None:
    server.enqueue(srv.overloaded())
    with pytest.raises(TransientError, match="overloaded"):
        await provider.generate(_chat())


async def test_timeout_is_transient(server: AnthropicServer) -> None:
    p = AnthropicProvider("claude-test", _settings(server.url, timeout=0.3))
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
    p = AnthropicProvider("claude-test", _settings(f"http://127.0.0.1:{port}"))
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
        (srv.empty_content(), "empty content"),
        (srv.no_text_block(), "no text block"),
        (
            Reply(200, {"type": "error", "error": {"type": "api_error", "message": "boom"}}),
            "error object",
        ),
    ],
)
async def test_malformed_200_is_malformed(
    server: AnthropicServer, provider: AnthropicProvider, reply: Reply, why: str
) -> None:
    server.enqueue(reply)
    with pytest.raises(MalformedResponseError, match=why):
        await provider.generate(_chat())


async def test_refusal_is_an_answer_not_an_error(
    server: AnthropicServer, provider: AnthropicProvider
) -> None:
    server.enqueue(srv.refusal())
    response = await provider.generate(_chat())
    assert response.finish_reason == "refusal"
    assert response.text == ""


async def test_max_tokens_maps_to_length(server: AnthropicServer, provider: AnthropicProvider) -> None:
    server.enqueue(srv.ok("Output (", stop_reason="max_tokens"))
    response = await provider.generate(_chat())
    assert (response.text, response.finish_reason) == ("Output (", "length")


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_are_permanent_and_name_the_variable(
    server: AnthropicServer, provider: AnthropicProvider, status: int
) -> None:
    server.enqueue(srv.auth_error(status))
    with pytest.raises(PermanentError, match="ANTHROPIC_API_KEY") as info:
        await provider.generate(_chat())
    assert KEY not in str(info.value)


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_client_errors_are_permanent(
    server: AnthropicServer, provider: AnthropicProvider, status: int
) -> None:
    server.enqueue(srv.bad_request("model: claude-nope not found", status=status))
    with pytest.raises(PermanentError, match="claude-nope") as info:
        await provider.generate(_chat())
    assert not info.value.retryable


async def test_rejected_temperature_is_dropped_once_and_remembered(
    server: AnthropicServer, provider: AnthropicProvider
) -> None:
    server.enqueue(srv.temperature_rejected())
    response = await provider.generate(_chat())
    assert response.text == "Output (a)"
    first, second = server.requests
    assert first.body["temperature"] == 0.0
    assert "temperature" not in second.body
    assert "temperature" not in response.params_sent
    assert "deprecated" in response.params_sent["dropped"]["temperature"]
    assert provider.capabilities.temperature is False

    again = await provider.generate(_chat())
    assert len(server.requests) == 3 and "temperature" not in server.requests[-1].body
    assert "temperature" in again.params_sent["dropped"]


@pytest.mark.parametrize(
    "message", ["max_tokens: must be at least 1", "temperature: Input should be less than or equal to 1"]
)
async def test_other_400_is_not_mistaken_for_temperature(
    server: AnthropicServer, provider: AnthropicProvider, message: str
) -> None:
    server.enqueue(srv.bad_request(message))
    with pytest.raises(PermanentError):
        await provider.generate(_chat())
    assert len(server.requests) == 1
    assert provider.capabilities.temperature is True


async def test_base_url_env_is_honoured(server: AnthropicServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    p = create_provider(ModelSpec.parse("anthropic:claude-haiku-4-5"), ProviderSettings(timeout=5.0))
    assert isinstance(p, AnthropicProvider)
    try:
        assert p.endpoint() == server.url
        response = await p.generate(ModelRequest(prompt="hi"))
        assert response.text == "Output (a)" and server.requests[-1].body["model"] == "claude-haiku-4-5"
    finally:
        await p.aclose()


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider("claude-test", ProviderSettings())


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


# --- through the client: retries happen there, once --------------------------------------------


def _client_settings(url: str, attempts: int = 3) -> ProviderSettings:
    """`attempts` in all: the first and `attempts - 1` retries."""
    return ProviderSettings(
        base_url=url, timeout=5.0, max_retries=attempts - 1, backoff_initial=0.01, backoff_max=0.05
    )


async def test_client_retries_429_then_answers_once(server: AnthropicServer, tmp_path: Path) -> None:
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient

    server.enqueue(srv.rate_limited(0.05))
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        async with ModelClient("anthropic:claude-test", _client_settings(server.url), cache=cache) as client:
            result = await client.call(_chat())
            assert result.response is not None and result.error is None
            assert result.response.text == "Output (a)"
            assert result.attempts == 2
            assert server.successes == 1 and len(server.requests) == 2
            # the stored answer round-trips: asked again, no request is made
            again = await client.call(_chat())
            assert again.from_cache and again.response == result.response
            assert len(server.requests) == 2


async def test_client_gives_up_on_persistent_500(server: AnthropicServer, tmp_path: Path) -> None:
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient

    server.enqueue(*[srv.server_error(500) for _ in range(3)])
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        async with ModelClient(
            "anthropic:claude-test", _client_settings(server.url, 3), cache=cache
        ) as client:
            result = await client.call(_chat())
    assert result.response is None and result.error is not None
    assert "500" in result.error
    assert result.attempts == 3 and len(server.requests) == 3
    assert KEY not in result.error


async def test_client_does_not_retry_auth(server: AnthropicServer, tmp_path: Path) -> None:
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient

    server.enqueue(srv.auth_error(401))
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        async with ModelClient(
            "anthropic:claude-test", _client_settings(server.url, 5), cache=cache
        ) as client:
            result = await client.call(_chat())
            assert result.response is None and result.error is not None
            assert "ANTHROPIC_API_KEY" in result.error
            assert result.attempts == 1 and len(server.requests) == 1
            _no_key_anywhere(result.params_sent)
            assert result.params_sent.get("temperature") == 0.0


async def test_client_retries_malformed_then_answers(server: AnthropicServer, tmp_path: Path) -> None:
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient

    server.enqueue(srv.html(), srv.truncated())
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        async with ModelClient(
            "anthropic:claude-test", _client_settings(server.url, 4), cache=cache
        ) as client:
            result = await client.call(_chat())
    assert result.response is not None and result.attempts == 3
