"""The OpenAI family through the official SDK against a local chat-completions server: every fault."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgebench.errors import ProviderConfigError
from judgebench.models.base import Message, ModelRequest, ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.client import CallResult, ModelClient
from judgebench.models.pricing import PriceTable
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, chat_body, error_body


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv  # type: ignore[misc]


def client_for(
    server: OpenAIServer, tmp_path: Path, spec: str = "openai:gpt-4.1-mini", **settings: Any
) -> ModelClient:
    opts: dict[str, Any] = {
        "base_url": server.base_url,
        "timeout": 5.0,
        "max_retries": 4,
        "backoff_initial": 0.001,
        "backoff_max": 0.01,
    }
    opts.update(settings)
    return ModelClient(
        spec,
        ProviderSettings(**opts),
        cache=ResponseCache(tmp_path / "responses.sqlite"),
        prices=PriceTable.load(),
    )


def ask(text: str = "Which is better?", **kw: Any) -> ModelRequest:
    return ModelRequest(messages=[Message(role="user", content=text)], **kw)


def script(*replies: Reply | None) -> Any:
    """A responder that plays `replies` in order, then falls back to the default answer."""
    queue = list(replies)

    def responder(_req: SeenRequest) -> Reply | None:
        return queue.pop(0) if queue else None

    return responder


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")


async def call_once(
    server: OpenAIServer, tmp_path: Path, request: ModelRequest, **settings: Any
) -> CallResult:
    client = client_for(server, tmp_path, **settings)
    try:
        return await client.call(request)
    finally:
        await client.aclose()


async def test_success_normalises_the_answer_and_keeps_raw_and_params(
    server: OpenAIServer, tmp_path: Path
) -> None:
    server.text = '{"winner": "B"}'
    result = await call_once(server, tmp_path, ask(max_tokens=77, stop=["\n\n"]))
    assert result.response is not None and result.error is None
    assert result.response.text == '{"winner": "B"}'
    assert result.response.finish_reason == "stop"
    assert result.response.usage.input_tokens == 11 and result.response.usage.output_tokens == 3
    assert result.attempts == 1 and not result.from_cache
    # the raw body is the server's body, the params are what was sent
    (seen,) = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-test-openai"
    assert seen.body["messages"] == [{"role": "user", "content": "Which is better?"}]
    assert seen.body["max_completion_tokens"] == 77 and seen.body["temperature"] == 0
    assert seen.body["stop"] == ["\n\n"]
    assert result.response.raw is not None and result.response.raw["object"] == "chat.completion"
    assert result.params_sent["model"] == "gpt-4.1-mini"
    assert result.params_sent["max_completion_tokens"] == 77
    assert "messages" not in result.params_sent
    # priced from configs/prices.toml: 11 in and 3 out at gpt-4.1-mini's rates
    price = PriceTable.load().price("openai", "gpt-4.1-mini")
    assert price is not None
    assert result.cost_usd == pytest.approx((11 * price.input + 3 * price.output) / 1e6)


async def test_plain_prompt_is_one_user_message_for_chat_models(server: OpenAIServer, tmp_path: Path) -> None:
    result = await call_once(server, tmp_path, ModelRequest(prompt="Say A"))
    assert result.response is not None
    assert server.requests[0].body["messages"] == [{"role": "user", "content": "Say A"}]


async def test_json_mode_sends_response_format(server: OpenAIServer, tmp_path: Path) -> None:
    await call_once(server, tmp_path, ask(response_format="json"))
    assert server.requests[0].body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    ("spec", "env", "auth", "token_field"),
    [
        ("openai:gpt-4.1-mini", {"OPENAI_API_KEY": "sk-o"}, "Bearer sk-o", "max_completion_tokens"),
        ("deepseek:deepseek-v4-flash", {"DEEPSEEK_API_KEY": "sk-d"}, "Bearer sk-d", "max_tokens"),
        ("openai-compatible:qwen2.5-7b", {}, "Bearer EMPTY", "max_tokens"),
        ("openai-compatible:qwen2.5-7b", {"OPENAI_COMPATIBLE_API_KEY": "vk"}, "Bearer vk", "max_tokens"),
    ],
)
async def test_three_spec_forms(
    server: OpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spec: str,
    env: dict[str, str],
    auth: str,
    token_field: str,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    result = await call_once(server, tmp_path, ask(), spec=spec)
    assert result.response is not None, result.error
    (seen,) = server.requests
    assert seen.headers["authorization"] == auth
    assert seen.body["model"] == spec.split(":", 1)[1]
    assert token_field in seen.body


async def test_openai_compatible_takes_openai_base_url(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    client = ModelClient(
        "openai-compatible:m",
        ProviderSettings(max_retries=1),
        cache=ResponseCache(tmp_path / "r.sqlite"),
        prices=PriceTable.load(),
    )
    result = await client.call(ask())
    await client.aclose()
    assert result.response is not None and len(server.requests) == 1


async def test_openai_compatible_without_url_is_a_config_error(tmp_path: Path) -> None:
    client = ModelClient("openai-compatible:m", cache=ResponseCache(tmp_path / "r.sqlite"))
    with pytest.raises(ProviderConfigError, match="--base-url"):
        await client.call(ask())


async def test_completions_endpoint_for_plain_prompts_on_compatible_servers(
    server: OpenAIServer, tmp_path: Path
) -> None:
    result = await call_once(
        server,
        tmp_path,
        ModelRequest(prompt="Q: A or B?\nA:", logprobs=True, top_logprobs=2),
        spec="openai-compatible:m",
    )
    assert result.response is not None, result.error
    (seen,) = server.requests
    assert seen.path == "/v1/completions" and seen.body["prompt"] == "Q: A or B?\nA:"
    assert seen.body["logprobs"] == 2
    assert result.params_sent["endpoint"] == "completions"
    assert result.response.logprobs is not None and result.response.logprobs[0].top["B"] == pytest.approx(
        -1.6
    )


@pytest.mark.parametrize(
    ("spec", "request_"),
    [
        (
            "openai:gpt-4.1-mini",
            ModelRequest(
                messages=[
                    Message(role="system", content="Judge."),
                    Message(role="user", content="A or B? ü 中"),
                ],
                temperature=0.3,
                max_tokens=64,
                stop=["\n\n", "END"],
                response_format="json",
                logprobs=True,
                top_logprobs=5,
            ),
        ),
        ("deepseek:deepseek-v4-flash", ModelRequest(prompt="Say A", max_tokens=8)),
        ("openai-compatible:m", ModelRequest(prompt="Q: A or B?\nA:", logprobs=True, top_logprobs=2)),
    ],
)
async def test_wire_body_equals_the_sdks_typed_create(
    server: OpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spec: str,
    request_: ModelRequest,
) -> None:
    """The adapter posts its own JSON body through the SDK's low-level `post` (skipping the typed
    transform, a third of the SDK's CPU per call): the server must receive exactly what the SDK's
    typed `create` sends for the same parameters, headers that matter included."""
    import openai

    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test-deepseek")
    client = client_for(server, tmp_path, spec=spec)
    try:
        result = await client.call(request_)
        assert result.response is not None, result.error
        provider: Any = client.provider
        params = provider.build_params(request_)
        sdk = openai.AsyncOpenAI(api_key=provider._key, base_url=server.base_url, max_retries=0)
        if result.params_sent["endpoint"] == "completions":
            await sdk.completions.create(prompt=request_.prompt or "", **params)
        else:
            messages = [m.model_dump() for m in request_.messages or [Message(role="user", content="Say A")]]
            await sdk.chat.completions.create(messages=messages, **params)
        await sdk.close()
    finally:
        await client.aclose()
    ours, typed = server.requests
    assert ours.path == typed.path
    assert ours.body == typed.body
    for header in ("authorization", "content-type", "accept"):
        assert ours.headers.get(header) == typed.headers.get(header), header


async def test_logprobs_requested_and_returned(server: OpenAIServer, tmp_path: Path) -> None:
    result = await call_once(server, tmp_path, ask(logprobs=True, top_logprobs=3))
    assert result.response is not None
    assert server.requests[0].body["logprobs"] is True and server.requests[0].body["top_logprobs"] == 3
    lp = result.response.logprobs
    assert lp is not None and lp[0].token == "A"
    assert lp[0].top == pytest.approx({"A": -0.1, "B": -2.4, "Tie": -4.0})


async def test_reasoning_models_get_no_temperature_or_logprobs(server: OpenAIServer, tmp_path: Path) -> None:
    result = await call_once(server, tmp_path, ask(logprobs=True, top_logprobs=3), spec="openai:o4-mini")
    assert result.response is not None
    body = server.requests[0].body
    assert "temperature" not in body and "logprobs" not in body
    assert "temperature" not in result.params_sent and "logprobs" not in result.params_sent


async def test_429_with_retry_after_is_retried_and_honoured(server: OpenAIServer, tmp_path: Path) -> None:
    server.responder = script(
        Reply(status=429, body=error_body("slow down"), headers={"retry-after": "0.05"})
    )
    client = client_for(server, tmp_path)
    seen_retry_after: list[float | None] = []
    backoff = client._backoff

    def spy(n: int, exc: BaseException | None) -> float:
        seen_retry_after.append(getattr(exc, "retry_after", None))
        delay = backoff(n, exc)
        assert delay >= 0.05  # never shorter than the server asked
        return delay

    client._backoff = spy  # type: ignore[method-assign,assignment]
    result = await client.call(ask())
    await client.aclose()
    assert result.response is not None and result.attempts == 2
    assert seen_retry_after == [pytest.approx(0.05)]
    assert client.stats.status_counts == {"429": 1, "ok": 1} and client.stats.retries == 1
    assert len(server.requests) == 2


async def test_429_retry_after_ms_and_quota_exhaustion(server: OpenAIServer, tmp_path: Path) -> None:
    server.responder = script(
        Reply(
            status=429, body=error_body("quota", code="insufficient_quota"), headers={"retry-after-ms": "10"}
        )
    )
    result = await call_once(server, tmp_path, ask())
    assert result.response is None and result.attempts == 1  # billing, not pacing: retrying cannot help
    assert result.error is not None and "quota" in result.error
    assert len(server.requests) == 1


async def test_500_is_retried_then_given_up(server: OpenAIServer, tmp_path: Path) -> None:
    server.responder = script(Reply(status=500, body=error_body("boom", type_="server_error")))
    ok = await call_once(server, tmp_path, ask("first"))
    assert ok.response is not None and ok.attempts == 2

    server.responder = lambda _r: Reply(status=503, body=error_body("down", type_="server_error"))
    client = client_for(server, tmp_path, max_retries=2)  # 3 attempts: the first and 2 retries
    bad = await client.call(ask("second"))
    await client.aclose()
    assert bad.response is None and bad.attempts == 3
    assert bad.error is not None and "HTTP 503" in bad.error and "gave up after 3 attempts" in bad.error
    assert client.stats.failures == 1 and client.stats.status_counts == {"503": 3}
    assert bad.cache_key not in client.cache  # errors are never cached


async def test_timeout_is_retried(server: OpenAIServer, tmp_path: Path) -> None:
    server.responder = script(Reply(body=chat_body("late"), delay=1.0))
    client = client_for(server, tmp_path, timeout=0.4)
    result = await client.call(ask())
    await client.aclose()
    assert result.response is not None and result.response.text == "A" and result.attempts == 2
    assert client.stats.status_counts.get("timeout") == 1


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (Reply(body=json.dumps(chat_body("A"))[:57]), "not JSON"),
        (
            Reply(body="<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", content_type="text/html"),
            "HTML",
        ),
        (Reply(body={**chat_body("A"), "choices": []}), "no choices"),
        (Reply(body=chat_body(None)), "empty message content"),
        (Reply(body=chat_body("")), "empty message content"),
    ],
    ids=["truncated-json", "html", "empty-choices", "null-content", "empty-content"],
)
async def test_malformed_200_is_retried(server: OpenAIServer, tmp_path: Path, reply: Reply, why: str) -> None:
    server.responder = script(reply)
    client = client_for(server, tmp_path)
    result = await client.call(ask())
    assert result.response is not None and result.response.text == "A" and result.attempts == 2
    assert client.stats.status_counts == {"malformed": 1, "ok": 1}

    server.responder = lambda _r: reply
    failed = await client.call(ask("always broken"))
    await client.aclose()
    assert failed.response is None and failed.error is not None
    assert "malformed" in failed.error and why in failed.error


async def test_refusal_is_an_answer_not_a_retry(server: OpenAIServer, tmp_path: Path) -> None:
    server.responder = script(Reply(body=chat_body(None, refusal="I can't help with that.")))
    result = await call_once(server, tmp_path, ask())
    assert result.response is not None and result.attempts == 1
    assert result.response.finish_reason == "refusal"
    assert result.response.text == "I can't help with that."
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("spec", "status", "variable"),
    [
        ("openai:gpt-4.1-mini", 401, "OPENAI_API_KEY"),
        ("openai:gpt-4.1-mini", 403, "OPENAI_API_KEY"),
        ("deepseek:deepseek-v4-flash", 401, "DEEPSEEK_API_KEY"),
    ],
)
async def test_auth_errors_are_not_retried_and_name_the_variable(
    server: OpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spec: str,
    status: int,
    variable: str,
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-ds")
    server.responder = lambda _r: Reply(status=status, body=error_body("Incorrect API key provided"))
    result = await call_once(server, tmp_path, ask(), spec=spec)
    assert result.response is None and result.attempts == 1
    assert result.error is not None and variable in result.error and spec.split(":")[0] in result.error
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_validation_errors_are_permanent(server: OpenAIServer, tmp_path: Path, status: int) -> None:
    server.responder = lambda _r: Reply(status=status, body=error_body("max_tokens is too large"))
    result = await call_once(server, tmp_path, ask())
    assert result.response is None and result.attempts == 1 and len(server.requests) == 1
    assert (
        result.error is not None
        and f"HTTP {status}" in result.error
        and "max_tokens is too large" in result.error
    )


async def test_missing_key_is_a_config_error_naming_the_variable(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    client = client_for(server, tmp_path)
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        await client.call(ask())
    assert server.requests == []


async def test_connection_refused_is_transient(tmp_path: Path) -> None:
    srv = OpenAIServer()
    srv.start()
    url = srv.base_url
    srv.stop()  # nothing listens there any more
    client = ModelClient(
        "openai:gpt-4.1-mini",
        ProviderSettings(base_url=url, max_retries=1, backoff_initial=0.001, backoff_max=0.01, timeout=2),
        cache=ResponseCache(tmp_path / "r.sqlite"),
        prices=PriceTable.load(),
    )
    result = await client.call(ask())
    await client.aclose()
    assert result.response is None and result.attempts == 2
    assert result.error is not None and "connection error" in result.error


async def test_max_retries_counts_retries_after_the_first_attempt(
    server: OpenAIServer, tmp_path: Path
) -> None:
    """`--max-retries N` as the SDKs mean it: N retries, N + 1 attempts; 0 makes exactly one attempt."""
    server.responder = lambda _r: Reply(status=500, body=error_body("down", type_="server_error"))
    for retries in (0, 2):
        server.requests.clear()
        client = client_for(server, tmp_path, max_retries=retries)
        result = await client.call(ask(f"retries {retries}"))
        await client.aclose()
        assert result.response is None and result.attempts == retries + 1
        assert len(server.requests) == retries + 1


def test_max_retries_zero_is_accepted_by_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from judgebench.cli import app

    base = [
        "judge",
        "--run",
        str(tmp_path / "r"),
        "--model",
        "sim:default",
        "--dataset",
        "sample",
        "--dry-run",
    ]
    ok = CliRunner().invoke(app, [*base, "--max-retries", "0"])
    assert ok.exit_code == 0, ok.output
    refused = CliRunner().invoke(app, [*base, "--max-retries", "-1"])
    assert refused.exit_code == 2 and "--max-retries" in refused.output
