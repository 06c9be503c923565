"""Settings reach the client as documented: judges.toml values stand unless a flag is given; keys are
sent only to the provider they belong to; --max-cost refuses what it cannot price."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebench import api
from judgebench.errors import ConfigError


def test_judges_toml_settings_stand_unless_a_flag_is_given() -> None:
    client = api.CallOptions().client("gpt41mini")
    assert (client.settings.concurrency, client.settings.rpm) == (16, 500)
    assert client.settings.timeout == 120.0 and client.settings.max_retries == 8  # the defaults
    flagged = api.CallOptions(concurrency=3, timeout=7.5, max_retries=2).client("gpt41mini")
    assert (flagged.settings.concurrency, flagged.settings.timeout, flagged.settings.max_retries) == (
        3,
        7.5,
        2,
    )
    assert flagged.settings.rpm == 500


def test_an_openai_key_is_never_sent_to_an_openai_compatible_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-REAL-OPENAI-KEY")
    client = api.CallOptions(base_url="http://127.0.0.1:9/v1").client("openai-compatible:some-model")
    assert "sk-REAL-OPENAI-KEY" not in repr(vars(client.provider))
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "server-token")
    again = api.CallOptions(base_url="http://127.0.0.1:9/v1").client("openai-compatible:some-model")
    assert "server-token" in repr(vars(again.provider))


def test_max_cost_refuses_an_unpriced_model_before_touching_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    options = api.CallOptions(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="no price"):
        api.judge(
            run,
            api.JudgeRequest(models=["openai-compatible:unpriced"], dataset="sample", max_cost=5.0),
            options=options,
        )
    assert not run.exists()
