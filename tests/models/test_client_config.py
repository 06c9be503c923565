"""Price table, token estimates, named judges, settings overrides and the client builder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from judgebench.errors import ConfigError
from judgebench.models import SettingsOverrides, build_client
from judgebench.models.base import ProviderSettings
from judgebench.models.config import JudgeConfig, Judges, load_judges
from judgebench.models.pricing import (
    PriceTable,
    estimate_tokens,
    estimate_tokens_with_method,
    heuristic_tokens,
)
from judgebench.models.provider_registry import ModelSpec
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
    judge = Judges.load().resolve("gpt41mini")
    assert judge.spec.text == "openai:gpt-4.1-mini" and judge.name == "gpt41mini"
    assert judge.settings.concurrency == 16 and judge.settings.rpm == 500
    assert judge.request.given() == {"temperature": 0}
    assert judge.price is not None and judge.price == PriceTable.load().price("openai", "gpt-4.1-mini")
    assert judge.traits.batch_backend is not None and judge.configured_in is not None
    assert judge.description and "GPT-4.1 mini" in judge.description


def test_a_spec_resolves_to_itself_and_flags_override(tmp_path: Path) -> None:
    judge = Judges.load(SettingsOverrides(timeout=30, rpm=None)).resolve("deepseek:deepseek-v4-flash")
    assert (judge.provider, judge.model, judge.name) == (
        "deepseek",
        "deepseek-v4-flash",
        "deepseek:deepseek-v4-flash",
    )
    settings = judge.settings
    assert (
        settings.timeout == 30
        and settings.rpm is None
        and settings.max_retries == ProviderSettings().max_retries
    )
    assert judge.configured_in is None and judge.request.given() == {}
    path = tmp_path / "judges.toml"
    path.write_text('[judges.fast]\nspec = "openai:gpt-4.1-mini"\nconcurrency = 4\nrpm = 60\n')
    fast = Judges.load(SettingsOverrides(concurrency=32), path=path).resolve("fast")
    assert fast.name == "fast" and fast.settings.concurrency == 32 and fast.settings.rpm == 60


def test_a_resolved_judge_is_frozen_and_resolved_once_per_command(tmp_path: Path) -> None:
    path = tmp_path / "judges.toml"
    path.write_text('[judges.fast]\nspec = "openai:gpt-4.1-mini"\n')
    judges = Judges.load(path=path, prices=PriceTable({}))
    fast = judges.resolve("fast")
    path.write_text('[judges.fast]\nspec = "anthropic:claude-haiku-4-5"\n')  # read once: not seen
    assert judges.resolve("fast") is fast and fast.provider == "openai" and fast.price is None
    with pytest.raises(ValidationError):
        fast.name = "other"  # type: ignore[misc]
    assert judges.same_model("fast", "openai:gpt-4.1-mini")
    assert not judges.same_model("fast", "openai:gpt-4.1")
    assert not judges.same_model("fast", "no-such-judge")  # a name that resolves to none matches none
    assert list(judges.resolve_all(["fast", "local", "fast"])) == ["fast", "local"]


def test_unknown_judge_keys_name_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "judges.toml"
    path.write_text('[judges.typo]\nspec = "openai:gpt-4.1-mini"\nconcurency = 4\n')
    wanted = r"judges\.toml, line 3, key 'judges\.typo\.concurency': unknown key"
    with pytest.raises(ConfigError, match=wanted):
        Judges.load(path=path)
    path.write_text('[judges.bad]\nspec = "nope:x"\n')
    with pytest.raises(ConfigError, match=r"judges\.bad\.spec.*unknown provider 'nope'"):
        Judges.load(path=path).resolve("bad")
    path.write_text('[judges.bad]\nspec = "openai:m"\nrpm = "fast"\n')
    with pytest.raises(ConfigError, match=r"judges\.bad\.rpm"):
        load_judges(path)
    with pytest.raises(ConfigError, match=r"unknown provider.*or a judge named in"):
        Judges.load().resolve("not-a-judge")


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


def test_build_client_builds_a_resolved_judge_with_overrides_on_top(tmp_path: Path) -> None:
    path = tmp_path / "judges.toml"
    path.write_text(
        '[judges.fast]\nspec = "openai:gpt-4.1-mini"\nconcurrency = 4\nrpm = 60\nmax_tokens = 99\n'
    )
    prices = PriceTable({})
    judge = Judges.load(SettingsOverrides(rpm=30), path=path, prices=prices).resolve("fast")
    client = build_client(judge, use_cache=False, prices=prices)
    assert (client.name, client.spec.text, client.use_cache, client.prices) == (
        "fast",
        "openai:gpt-4.1-mini",
        False,
        prices,
    )
    assert (client.settings.concurrency, client.settings.rpm) == (4, 30)
    assert client.request_defaults == {"max_tokens": 99}
    plain = build_client(Judges.load().resolve("anthropic:claude-haiku-4-5"))
    assert plain.name == "anthropic:claude-haiku-4-5" and plain.settings == ProviderSettings()
    assert plain._provider is None  # nothing built, no key read yet
