"""Settings reach the client as documented: judges.toml values stand unless a flag is given; keys are
sent only to the provider they belong to; --max-cost refuses what it cannot price."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pydantic import ValidationError

from judgebench import api
from judgebench.cli import shared_options as cli_options
from judgebench.errors import ConfigError


def test_judges_toml_settings_stand_unless_a_flag_is_given() -> None:
    client = api.CallOptions().client("gpt41mini")
    assert (client.settings.concurrency, client.settings.rpm) == (16, 500)
    assert client.settings.timeout == 120.0 and client.settings.max_retries == 8  # the defaults
    flagged = api.CallOptions(
        settings=api.SettingsOverrides(concurrency=3, timeout=7.5, max_retries=2)
    ).client("gpt41mini")
    assert (flagged.settings.concurrency, flagged.settings.timeout, flagged.settings.max_retries) == (
        3,
        7.5,
        2,
    )
    assert flagged.settings.rpm == 500


def test_an_openai_key_is_never_sent_to_an_openai_compatible_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-REAL-OPENAI-KEY")
    client = api.CallOptions(settings=api.SettingsOverrides(base_url="http://127.0.0.1:9/v1")).client(
        "openai-compatible:some-model"
    )
    assert "sk-REAL-OPENAI-KEY" not in repr(vars(client.provider))
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "server-token")
    again = api.CallOptions(settings=api.SettingsOverrides(base_url="http://127.0.0.1:9/v1")).client(
        "openai-compatible:some-model"
    )
    assert "server-token" in repr(vars(again.provider))


def test_max_cost_refuses_an_unpriced_model_before_touching_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    options = api.CallOptions(settings=api.SettingsOverrides(base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(ConfigError, match="no price"):
        api.judge(
            run,
            api.JudgeRequest(models=["openai-compatible:unpriced"], dataset="sample", max_cost=5.0),
            options=options,
        )
    assert not run.exists()


def test_the_flags_settings_are_one_typed_object_carried_to_the_provider() -> None:
    """The CLI builds one SettingsOverrides from the flags it was given; CallOptions carries it as it
    is and the client is built from it (no field restated on the way)."""
    params = {
        "timeout": 9.0,
        "concurrency": None,
        "rpm": 30.0,
        "no_cache": True,
        "wait_lock": True,
        "run": "x",
    }
    options = cli_options.call_options_from(params)
    assert options.settings == api.SettingsOverrides(timeout=9.0, rpm=30.0)
    assert (options.use_cache, options.wait_lock) == (False, True)
    client = options.client("gpt41mini")
    assert (client.settings.timeout, client.settings.rpm) == (9.0, 30.0)
    assert client.settings.concurrency == 16  # unset flag: judges.toml's value stands
    assert not {f.name for f in dataclasses.fields(api.CallOptions)} & set(api.SettingsOverrides.model_fields)


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({"timeout": float("nan")}, "--timeout"),
        ({"max_retries": -1}, "--max-retries"),
        ({"timout": 3}, "timout"),
    ],
)
def test_a_bad_setting_is_refused_when_the_options_are_built(
    settings: dict[str, float], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem):
        api.CallOptions(settings=settings)  # type: ignore[arg-type]  # a library caller's plain mapping
    if problem.startswith("--"):  # the CLI picks only the flags it declares, and names the bad one
        with pytest.raises(ConfigError, match=problem):
            cli_options.call_options_from(settings)
    with pytest.raises(ValidationError):
        api.SettingsOverrides.model_validate(settings)


def test_settings_of_another_type_are_refused() -> None:
    with pytest.raises(TypeError, match="SettingsOverrides"):
        api.CallOptions(settings=5)  # type: ignore[arg-type]
