"""Structured output (issue 18): a template that opts in asks each provider, in its own wire format,
to hold the reply to the verdict schema; a provider or model without it falls back and says so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgebench.batch.anthropic_batch import AnthropicBatch
from judgebench.batch.google_batch import GoogleBatch
from judgebench.batch.openai_batch import openai_line
from judgebench.config.paths import configs_dir
from judgebench.errors import InputError
from judgebench.judge.parse import parse_verdict
from judgebench.judge.provider_requests import reask_request
from judgebench.judge.templates import JudgeTemplate, load_template
from judgebench.models.anthropic import AnthropicProvider, offers_structured_output
from judgebench.models.base import ModelRequest, ProviderSettings, cache_key
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from judgebench.models.google import GoogleProvider
from judgebench.models.openai import OpenAIProvider
from judgebench.models.pricing import PriceTable
from judgebench.records import Judgment
from tests.servers import anthropic_server, google_server
from tests.servers.anthropic_server import AnthropicServer
from tests.servers.base import Reply, SeenRequest
from tests.servers.google_server import GoogleServer
from tests.servers.openai_server import OpenAIServer, chat_body, error_body

TEMPLATES = configs_dir() / "templates"
ITEM = {"instruction": "Name a prime.", "output_a": "7", "output_b": "8", "language": None}


def schema_template() -> JudgeTemplate:
    return load_template(TEMPLATES / "judge_verdict_schema.toml")


def schema_request() -> ModelRequest:
    return schema_template().render(**ITEM, completion=False)


# --- the template ----------------------------------------------------------------------------------


def test_the_schema_pins_the_winner_to_the_labels_and_nothing_else() -> None:
    schema = schema_template().verdict_schema()
    assert schema == {
        "type": "object",
        "properties": {
            "winner": {"type": "string", "enum": ["A", "B", "Tie"]},
            "confidence": {"type": "number"},
        },
        "required": ["winner", "confidence"],
        "additionalProperties": False,
    }
    no_tie = schema_template().model_copy(update={"allow_tie": False})
    assert no_tie.verdict_schema()["properties"]["winner"]["enum"] == ["A", "B"]
    default = load_template(TEMPLATES / "judge_default.toml").model_copy(update={"structured_output": True})
    assert default.verdict_schema()["required"] == ["winner", "confidence", "reason"]


def test_only_the_chat_form_carries_the_schema() -> None:
    template = schema_template()
    chat = template.render(**ITEM, completion=False)
    assert chat.response_schema == template.verdict_schema() and chat.response_format == "json"
    assert template.render(**ITEM, completion=True).response_schema is None  # the base model's letter
    plain = load_template(TEMPLATES / "judge_verdict_only.toml").render(**ITEM, completion=False)
    assert plain.response_schema is None


def test_templates_and_requests_without_a_schema_keep_their_recorded_hashes() -> None:
    """The new keys must not re-key old runs: these are the digests and cache keys main had before."""
    pinned = {
        "judge_default": (
            "7ec9b318b3d7d332",
            "6873fecf47ba48954a2afabce46f44a4e1a94b0bd2b2cee9f3908a0529e12d07",
        ),
        "judge_llmbar": (
            "483b8e99cbce20c8",
            "d4897e5e785ac2022d2edb55e5f66ca4b6c51a2141302be68edc23cf4a6e434e",
        ),
        "judge_verdict_only": (
            "1cd53762b68e2390",
            "9f1ce3281ca3edc4d62e759d435a23577eb19819ea353818f4abf91942678064",
        ),
    }
    for name, (digest, key) in pinned.items():
        template = load_template(TEMPLATES / f"{name}.toml")
        request = template.render(
            instruction="I", output_a="a", output_b="b", language=None, completion=False
        )
        assert template.digest() == digest, name
        assert cache_key("openai", "gpt-4.1-mini", None, request) == key, name
    structured = schema_request()
    bare = structured.model_copy(update={"response_schema": None})
    assert cache_key("openai", "m", None, structured) != cache_key("openai", "m", None, bare)
    assert schema_template().digest() != load_template(TEMPLATES / "judge_verdict_only.toml").digest()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('answer_format = "letter"\nstructured_output = true\n', "structured_output needs answer_format"),
        ('structured_output = true\nreply_fields = ["reason"]\n', "reply_fields"),
        ('reply_fields = ["winner", "verdict"]\n', "reply_fields"),
    ],
)
def test_a_bad_structured_template_names_the_file_and_key(tmp_path: Path, extra: str, message: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(f'name = "t"\n{extra}user = "{{output_a}} {{output_b}}"\n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_template(bad)
    assert message in str(err.value) and "bad.toml" in str(err.value)


# --- the OpenAI family -----------------------------------------------------------------------------


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer(text='{"winner": "Tie", "confidence": 0.5}') as srv:
        yield srv  # type: ignore[misc]


def _client(spec: str, url: str, tmp_path: Path) -> ModelClient:
    return ModelClient(
        spec,
        ProviderSettings(base_url=url, timeout=5.0, max_retries=0),
        cache=ResponseCache(tmp_path / "responses.sqlite"),
        prices=PriceTable.load(),
    )


async def _call(spec: str, url: str, tmp_path: Path) -> dict[str, Any]:
    client = _client(spec, url, tmp_path)
    try:
        result = await client.call(schema_request())
    finally:
        await client.aclose()
    assert result.response is not None, result.error
    parsed = parse_verdict(result.response.text, schema_template(), "json")
    assert parsed.winner == "Tie"
    return result.params_sent


@pytest.mark.parametrize("spec", ["openai:gpt-4.1-mini", "openai:o4-mini", "openai-compatible:qwen2.5-7b"])
async def test_openai_and_compatible_servers_get_a_strict_json_schema(
    spec: str, openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sent = await _call(spec, openai_server.base_url, tmp_path)
    expected = {
        "type": "json_schema",
        "json_schema": {
            "name": "judge_verdict",
            "strict": True,
            "schema": schema_template().verdict_schema(),
        },
    }
    assert openai_server.requests[0].body["response_format"] == expected
    assert sent["response_format"] == expected and "dropped" not in sent


@pytest.mark.parametrize(
    ("spec", "env"),
    [
        ("openai:gpt-4-turbo", "OPENAI_API_KEY"),
        ("openai:gpt-3.5-turbo", "OPENAI_API_KEY"),
        ("deepseek:deepseek-chat", "DEEPSEEK_API_KEY"),
    ],
)
async def test_models_without_schemas_fall_back_to_json_mode_and_record_it(
    spec: str, env: str, openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env, "sk-test")
    sent = await _call(spec, openai_server.base_url, tmp_path)
    assert openai_server.requests[0].body["response_format"] == {"type": "json_object"}
    assert "no schema-constrained output" in sent["dropped"]["response_schema"]


# --- Anthropic -------------------------------------------------------------------------------------


def test_anthropic_models_with_structured_outputs() -> None:
    have = ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-opus-4-1", "claude-haiku-4-5"]
    have_not = ["claude-3-5-haiku-latest", "claude-sonnet-4-0", "claude-sonnet-4-20250514", "claude-opus-4-0"]
    assert all(offers_structured_output(m) for m in have)
    assert not any(offers_structured_output(m) for m in have_not)


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-3-5-haiku-latest"])
async def test_anthropic_gets_output_config_where_the_model_has_it(
    model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with AnthropicServer(text='{"winner": "A", "confidence": 0.9}') as server:
        assert isinstance(server, AnthropicServer)
        provider = AnthropicProvider(model, ProviderSettings(base_url=server.url, timeout=5.0))
        try:
            response = await provider.generate(schema_request())
        finally:
            await provider.aclose()
        body = server.requests[-1].body
    assert parse_verdict(response.text, schema_template(), "json").winner == "A"
    if model == "claude-sonnet-4-5":
        expected = {"format": {"type": "json_schema", "schema": schema_template().verdict_schema()}}
        assert body["output_config"] == expected and response.params_sent["output_config"] == expected
        assert "dropped" not in response.params_sent
    else:
        assert "output_config" not in body
        assert "no structured outputs" in response.params_sent["dropped"]["response_schema"]


# --- Google ----------------------------------------------------------------------------------------


async def _gemini(model: str, reply: str, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], Any]:
    """One schema request to `model` on a local generateContent server: (generationConfig sent, response)."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with GoogleServer(lambda _seen: google_server.ok(reply)) as server:
        assert isinstance(server, GoogleServer)
        provider = GoogleProvider(model, ProviderSettings(base_url=server.url, timeout=5.0))
        try:
            response = await provider.generate(schema_request())
        finally:
            await provider.aclose()
        return server.requests[-1].body["generationConfig"], response


async def test_gemini_gets_the_json_schema_in_its_generation_config(monkeypatch: pytest.MonkeyPatch) -> None:
    config, response = await _gemini("gemini-2.5-flash", '{"winner": "B", "confidence": 0.7}', monkeypatch)
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema_template().verdict_schema()
    assert json.loads(response.text) == {"winner": "B", "confidence": 0.7}
    assert "dropped" not in response.params_sent


def test_a_batch_line_carries_the_same_schema_as_the_live_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = OpenAIProvider("gpt-4.1-mini", ProviderSettings(base_url="http://127.0.0.1:9/v1"))
    url, line = openai_line(provider, "k1", schema_request())
    assert url == "/v1/chat/completions"
    assert line["body"]["response_format"]["json_schema"]["schema"] == schema_template().verdict_schema()


@pytest.mark.parametrize(
    ("spec", "env"),
    [("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"), ("google:gemini-2.5-flash", "GEMINI_API_KEY")],
)
def test_anthropic_and_gemini_batch_requests_carry_the_schema(
    spec: str, env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env, "key-test")
    client = _client(spec, "http://127.0.0.1:9", tmp_path)
    schema = schema_template().verdict_schema()
    if spec.startswith("anthropic"):
        _, line = AnthropicBatch(client).encode("k1", schema_request())
        assert line["params"]["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    else:
        _, line = GoogleBatch(client).encode("k1", schema_request())
        assert line["config"]["response_json_schema"] == schema
        assert line["config"]["response_mime_type"] == "application/json"


async def test_a_server_that_refuses_the_schema_is_asked_again_in_json_mode_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OpenAI-compatible server without structured output answers json_schema with a 400: the call
    is made again in JSON mode, the record says why, and later calls go straight to JSON mode."""

    def no_schemas(seen: SeenRequest) -> Reply:
        if (seen.body.get("response_format") or {}).get("type") == "json_schema":
            return Reply(status=400, body=error_body("response_format json_schema is not supported"))
        return Reply(body=chat_body('{"winner": "B", "confidence": 0.4}', model=seen.body["model"]))

    with OpenAIServer(no_schemas) as server:
        client = _client("openai-compatible:old-server", server.base_url, tmp_path)
        try:
            first = await client.call(schema_request())
            second = await client.call(
                schema_template().render(**{**ITEM, "output_a": "9"}, completion=False)
            )
        finally:
            await client.aclose()
        formats = [(r.body.get("response_format") or {}).get("type") for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    for result in (first, second):
        assert result.response is not None and result.error is None
        assert "rejected by the server" in result.params_sent["dropped"]["response_schema"]
        assert "not supported" in result.params_sent["dropped"]["response_schema"]


async def test_a_400_about_something_else_is_not_taken_for_a_schema_refusal(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda _seen: Reply(status=400, body=error_body("max_tokens is too large"))
    client = _client("openai-compatible:m", openai_server.base_url, tmp_path)
    try:
        result = await client.call(schema_request())
    finally:
        await client.aclose()
    assert result.response is None and "max_tokens is too large" in str(result.error)
    assert len(openai_server.requests) == 1


async def test_the_completions_endpoint_records_that_it_takes_no_schema(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    request = ModelRequest(prompt="Which is better?", response_schema=schema_template().verdict_schema())
    client = _client("openai-compatible:base-model", openai_server.base_url, tmp_path)
    try:
        result = await client.call(request)
    finally:
        await client.aclose()
    assert openai_server.requests[0].path == "/v1/completions"
    assert "response_format" not in openai_server.requests[0].body
    assert (
        result.params_sent["dropped"]["response_schema"]
        == "the completions endpoint takes no response schema"
    )


def test_an_openai_batch_judgment_records_the_fallback_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = OpenAIProvider("gpt-4-turbo", ProviderSettings(base_url="http://127.0.0.1:9/v1"))
    _, line = openai_line(provider, "k1", schema_request())
    assert line["body"]["response_format"] == {"type": "json_object"} and "dropped" not in line["body"]
    assert (
        "no schema-constrained output"
        in provider.params_record(schema_request())["dropped"]["response_schema"]
    )


async def test_anthropic_keeps_the_schema_when_it_drops_a_refused_temperature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")

    def refuse_temperature(seen: Any) -> Any:
        if "temperature" in seen.body:
            return anthropic_server.Reply(
                400,
                {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "temperature is deprecated"},
                },
            )
        return anthropic_server.ok('{"winner": "A", "confidence": 0.9}')

    with AnthropicServer(refuse_temperature) as server:
        assert isinstance(server, AnthropicServer)
        provider = AnthropicProvider("claude-opus-4-6", ProviderSettings(base_url=server.url, timeout=5.0))
        try:
            response = await provider.generate(schema_request())
        finally:
            await provider.aclose()
        bodies = [r.body for r in server.requests]
    assert [("temperature" in b, "output_config" in b) for b in bodies] == [(True, True), (False, True)]
    assert "temperature" in response.params_sent["dropped"] and "output_config" in response.params_sent


async def test_gemini_before_2_5_gets_json_mode_and_the_record_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config, response = await _gemini("gemini-2.0-flash", '{"winner": "A", "confidence": 0.6}', monkeypatch)
    assert config["responseMimeType"] == "application/json" and "responseJsonSchema" not in config
    assert "takes no JSON Schema" in response.params_sent["dropped"]["response_schema"]


def test_a_reask_keeps_the_schema() -> None:
    invalid = Judgment(
        judge="openai:gpt-4.1-mini", item_id="Natural/0", subset="Natural", kind="pair", condition="en",
        order="orig", raw="not json", winner="invalid", parse_error="no JSON object", label=1,
    )  # fmt: skip
    again = reask_request(schema_request(), invalid)
    assert again.response_schema == schema_template().verdict_schema()
    assert again.messages is not None and again.messages[-2].content == "not json"
