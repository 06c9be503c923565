"""Price table, token estimates, named judges, settings overrides and the client builder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from judgebench.errors import ConfigError
from judgebench.models import SettingsOverrides, build_client
from judgebench.models.base import ProviderSettings
from judgebench.models.config import JudgeConfig, load_judges, resolve_judge, resolve_judge_full
from judgebench.models.pricing import (
    PriceTable,
    estimate_tokens,
    estimate_tokens_with_method,
    heuristic_tokens,
)
from judgebench.models.registry import ModelSpec
from judgebench.records import Usage

# --- prices ---------------------------------------------------------------------------------------


def test_bundled_prices_cover_the_study_models() -> None:
    table = PriceTable.load()
    for provider, model in [
        ("openai", "gpt-4.1-mini"),
        ("openai", "gpt-4.1"),
        ("openai", "gpt-4o-mini"),
        ("anthropic", "claude-haiku-4-5"),
        ("anthropic", "claude-sonnet-4-5"),
        ("google", "gemini-2.5-flash"),
        ("deepseek", "deepseek-v4-flash"),
    ]:
        price = table.price(provider, model)
        assert price is not None and price.input > 0 and price.output > price.input, (provider, model)
    assert table.cost("local", "gemma3-270m", Usage(input_tokens=10**6, output_tokens=10**6)) == 0.0
    assert table.cost("sim", "default", Usage(input_tokens=5)) == 0.0


def test_lookup_rules_and_batch_prices(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        '[openai."gpt-4.1"]\ninput = 2.0\noutput = 8.0\nbatch_input = 1.0\nbatch_output = 4.0\n'
        '[openai."gpt-4.1-mini"]\ninput = 0.4\noutput = 1.6\n'
    )
    table = PriceTable.load(path)
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000)
    assert table.cost("openai", "gpt-4.1", usage) == pytest.approx(6.0)
    assert table.cost("openai", "gpt-4.1", usage, batch=True) == pytest.approx(3.0)
    assert table.cost("openai", "gpt-4.1-mini", usage, batch=True) == pytest.approx(
        1.2
    )  # no batch price: live
    # a dated snapshot takes its family's price; a different model sharing a prefix does not
    assert table.cost("openai", "gpt-4.1-mini-2025-04-14", usage) == pytest.approx(1.2)
    assert table.cost("openai", "gpt-4.1-nano", usage) is None
    assert table.cost("openai-compatible", "gpt-4.1", usage) is None  # unknown is None, never 0


def test_bad_price_files_say_where(tmp_path: Path) -> None:
    bad = tmp_path / "p.toml"
    bad.write_text('[openai."m"]\ninput = 1.0\n')
    with pytest.raises(ConfigError, match=r"p\.toml.*openai\.m.*output"):
        PriceTable.load(bad)
    bad.write_text("[openai\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        PriceTable.load(bad)
    with pytest.raises(ConfigError, match="not found"):
        PriceTable.load(tmp_path / "missing.toml")


def test_token_estimates_fall_back_to_a_stated_heuristic() -> None:
    assert heuristic_tokens("abcd" * 10) == 10
    assert heuristic_tokens("你好世界") == 4  # one per CJK character
    assert heuristic_tokens("中文 text") == 2 + 2
    # JUDGEBENCH_OFFLINE_TESTS=1 (conftest) never tries tiktoken's download
    n, method = estimate_tokens_with_method(
        "hello world, how are you", ModelSpec.parse("openai:gpt-4.1-mini")
    )
    assert method == "heuristic" and n == heuristic_tokens("hello world, how are you")
    assert estimate_tokens("你好", "anthropic:claude-haiku-4-5") == 2


# --- named judges ---------------------------------------------------------------------------------


def test_bundled_judges_resolve() -> None:
    judges = load_judges()
    assert "gpt41mini" in judges
    spec, settings, name = resolve_judge("gpt41mini")
    assert spec.text == "openai:gpt-4.1-mini" and name == "gpt41mini"
    assert settings.concurrency == 16 and settings.rpm == 500
    assert resolve_judge_full("gpt41mini").request_defaults == {"temperature": 0}


def test_a_spec_resolves_to_itself_and_flags_override(tmp_path: Path) -> None:
    spec, settings, name = resolve_judge("deepseek:deepseek-v4-flash", timeout=30, rpm=None)
    assert (spec.provider, spec.model, name) == (
        "deepseek",
        "deepseek-v4-flash",
        "deepseek:deepseek-v4-flash",
    )
    assert (
        settings.timeout == 30
        and settings.rpm is None
        and settings.max_retries == ProviderSettings().max_retries
    )
    path = tmp_path / "judges.toml"
    path.write_text('[judges.fast]\nspec = "openai:gpt-4.1-mini"\nconcurrency = 4\nrpm = 60\n')
    _, s, n = resolve_judge("fast", path=path, concurrency=32)
    assert n == "fast" and s.concurrency == 32 and s.rpm == 60


def test_unknown_judge_keys_name_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "judges.toml"
    path.write_text('[judges.typo]\nspec = "openai:gpt-4.1-mini"\nconcurency = 4\n')
    with pytest.raises(ConfigError, match=r"judges\.toml: judges\.typo: unknown key 'concurency'"):
        resolve_judge("typo", path=path)
    path.write_text('[judges.bad]\nspec = "nope:x"\n')
    with pytest.raises(ConfigError, match=r"judges\.bad\.spec.*unknown provider 'nope'"):
        resolve_judge("bad", path=path)
    path.write_text('[judges.bad]\nspec = "openai:m"\nrpm = "fast"\n')
    with pytest.raises(ConfigError, match=r"judges\.bad\.rpm"):
        load_judges(path)
    with pytest.raises(ConfigError, match="unknown provider"):
        resolve_judge("not-a-judge")


# --- settings overrides and the client builder ----------------------------------------------------


def test_overrides_state_every_setting_once_and_refuse_unknown_ones() -> None:
    assert list(SettingsOverrides.model_fields) == list(ProviderSettings.model_fields)
    assert set(SettingsOverrides.model_fields) <= set(JudgeConfig.model_fields)
    with pytest.raises(ValidationError, match="concurency"):
        SettingsOverrides.model_validate({"concurency": 4})
    base = ProviderSettings(timeout=9.0, rpm=60)
    applied = SettingsOverrides(concurrency=3, base_url="").apply(base)
    assert (applied.timeout, applied.rpm, applied.concurrency, applied.base_url) == (9.0, 60, 3, None)
    assert SettingsOverrides().apply() == ProviderSettings()
    with pytest.raises(ValidationError):  # validated as settings when applied
        SettingsOverrides(max_retries=-1).apply()
    flag, table = SettingsOverrides(rpm=10), SettingsOverrides(rpm=60, tpm=1000)
    assert flag.over(table).given() == {"rpm": 10, "tpm": 1000}


def test_overrides_read_any_object_with_the_setting_names() -> None:
    @dataclass
    class Options:
        base_url: str | None = None
        timeout: float | None = 7.0
        max_retries: int | None = None
        concurrency: int | None = None
        rpm: float | None = None
        tpm: float | None = None
        backoff_initial: float | None = None
        backoff_max: float | None = None
        use_cache: bool = False  # not a setting: not read

    assert SettingsOverrides.model_validate(Options(), from_attributes=True).given() == {"timeout": 7.0}


def test_build_client_resolves_names_and_puts_overrides_on_top(tmp_path: Path) -> None:
    path = tmp_path / "judges.toml"
    path.write_text('[judges.fast]\nspec = "openai:gpt-4.1-mini"\nconcurrency = 4\nrpm = 60\n')
    prices = PriceTable({})
    client = build_client("fast", SettingsOverrides(rpm=30), use_cache=False, prices=prices, judges=path)
    assert (client.name, client.spec.text, client.use_cache, client.prices) == (
        "fast",
        "openai:gpt-4.1-mini",
        False,
        prices,
    )
    assert (client.settings.concurrency, client.settings.rpm) == (4, 30)
    plain = build_client("anthropic:claude-haiku-4-5")
    assert plain.name == "anthropic:claude-haiku-4-5" and plain.settings == ProviderSettings()
    assert plain._provider is None  # nothing built, no key read yet

