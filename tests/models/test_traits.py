"""Provider traits decide what names used to: the declared table, what reads it, and a guard that
no decision compares provider names again outside the registry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judgebench.batch import refusal
from judgebench.batch.backend import backend_for
from judgebench.batch.openai_batch import OpenAIBatch
from judgebench.judge.templates import load_template
from judgebench.models import ModelClient, ModelSpec, ProviderTraits, registered, traits_of
from judgebench.models.base import Provider, ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.limits import offline_block_reason
from judgebench.models.pricing import estimate_tokens_with_method
from judgebench.models.provider_registry import create_provider, provider_class

SRC = Path(__file__).resolve().parents[2] / "src" / "judgebench"


def test_every_registered_provider_declares_its_traits() -> None:
    table = {name: traits_of(name) for name in registered()}
    assert all(isinstance(t, ProviderTraits) for t in table.values())
    assert {n for n, t in table.items() if t.in_process} == {"local", "sim"}
    assert {n for n, t in table.items() if t.completion_only} == {"local"}
    assert {n for n, t in table.items() if not t.translates} == {"sim"}
    assert {n for n, t in table.items() if t.batch_backend} == {
        "openai",
        "openai-compatible",
        "anthropic",
        "google",
    }
    assert {n for n, t in table.items() if t.enforces_deadline} == {"openai", "openai-compatible", "deepseek"}
    assert {n for n, t in table.items() if t.token_counter == "tiktoken"} == {"openai", "openai-compatible"}
    assert traits_of("openai").base_url_env == "OPENAI_BASE_URL"
    assert traits_of("anthropic:claude-haiku-4-5").base_url_env == "ANTHROPIC_BASE_URL"
    # a trait is a class fact: reading it loads the adapter module, never its SDK or a key
    assert provider_class("google").traits is traits_of("google:gemini-2.5-flash")


def test_batch_support_comes_from_the_declared_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-x")
    assert refusal("openai:gpt-4.1-mini") is None and refusal("anthropic:claude-haiku-4-5") is None
    assert (
        refusal("deepseek:deepseek-chat")
        == "deepseek: DeepSeek has no Batch API; run without --batch (live calls)"
    )
    assert "'local' runs in this process" in (refusal("local") or "")
    client = ModelClient(
        "openai-compatible:qwen",
        ProviderSettings(base_url="http://127.0.0.1:9/v1"),
        cache=ResponseCache(tmp_path / "r.sqlite"),
    )
    assert refusal(client) is None and isinstance(backend_for(client), OpenAIBatch)


def _provider(text: str) -> Provider:
    return create_provider(ModelSpec.parse(text), ProviderSettings())


def test_the_offline_guard_lets_in_process_providers_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-ds")
    assert offline_block_reason(_provider("sim:default")) is None
    blocked = offline_block_reason(_provider("deepseek:deepseek-chat"))
    assert blocked is not None and "api.deepseek.com" in blocked


def test_token_estimates_follow_the_counter_trait() -> None:
    # offline tests have no tiktoken BPE files: a tiktoken provider falls back, others never try
    text = "hello world, how are you"
    assert estimate_tokens_with_method(text, "deepseek:deepseek-chat")[1] == "heuristic"
    assert estimate_tokens_with_method(text, "anthropic:claude-haiku-4-5")[1] == "heuristic"


def test_completion_only_providers_get_completion_prompts() -> None:
    template = load_template(None)
    request = template.render(
        instruction="i",
        output_a="a",
        output_b="b",
        language="English",
        completion=traits_of("local").completion_only,
    )
    assert request.prompt is not None and request.messages is None
    chat = template.render(
        instruction="i",
        output_a="a",
        output_b="b",
        language="English",
        completion=traits_of("openai").completion_only,
    )
    assert chat.messages is not None and chat.prompt is None


_NAMES = "|".join(map(re.escape, registered()))
_NAME = r"""["'](""" + _NAMES + r""")["']"""
# `== "openai"`, `!= 'sim'`, `in ("local", "sim")`, or a set/tuple of names to test against later
_NAME_TEST = re.compile(
    r"(==|!=|\bin\s*[(\[{][^)\]}]*)\s*" + _NAME + r"|[(\[{]\s*" + _NAME + r"\s*,\s*" + _NAME
)


def test_no_decision_compares_provider_names_outside_the_registry() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "registry.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if _NAME_TEST.search(line):
                offenders.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert offenders == []
