"""An OpenAI-compatible vendor is one table of configs/vendors.toml and no code: a toy vendor, named
only there, judges through the official openai SDK against a local server speaking OpenAI's wire
format, with its own key variable and endpoint, its batch refusal and its capabilities."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.config.paths import configs_dir
from judgebench.errors import InputError
from judgebench.models import registered, traits_of
from judgebench.models.provider_registry import provider_class
from judgebench.models.vendors import vendors
from tests.e2e.helpers import DeterministicJudge, write_items
from tests.fake_distribution import fake_distribution
from tests.servers.openai_server import OpenAIServer

runner = CliRunner()


def _configs(dest: Path, table: str) -> Path:
    shutil.copytree(configs_dir(), dest)
    with open(dest / "vendors.toml", "a", encoding="utf-8") as fh:
        fh.write("\n" + table)
    return dest


def test_a_vendor_table_is_a_provider_that_judges_through_the_openai_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = DeterministicJudge()
    items = write_items(tmp_path / "items.jsonl", 3)
    with OpenAIServer(judge) as server:
        configs = _configs(
            tmp_path / "configs",
            f'[acme]\nbase_url = "{server.base_url}"\nkey_env = ["ACME_API_KEY"]\n'
            'no_sampling = ["think"]\nbatch_refusal = "Acme has no Batch API"\n',
        )
        monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
        assert "acme" in registered() and "deepseek" in registered()
        assert traits_of("acme:toy-1").batch_refusal == "Acme has no Batch API"
        run = tmp_path / "run"
        args = ["judge", "--run", str(run), "--dataset", str(items), "--model", "acme:toy-1"]
        missing = runner.invoke(app, args)
        assert missing.exit_code == 1 and "ACME_API_KEY" in missing.output  # its own key variable
        monkeypatch.setenv("ACME_API_KEY", "sk-acme-test")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-travel")
        refused = runner.invoke(app, [*args, "--batch"])
        assert refused.exit_code != 0 and "Acme has no Batch API" in refused.output
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        seen = server.chat_requests()
    assert len(seen) == 6  # 3 items x 2 orders, en
    assert {r.headers.get("authorization") for r in seen} == {"Bearer sk-acme-test"}
    assert all(r.body["model"] == "toy-1" and "max_tokens" in r.body for r in seen)
    lines = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    assert {line["judge"] for line in lines} == {"acme:toy-1"} and all(line["verdict"] for line in lines)
    thinking = provider_class("acme")
    assert thinking.key_env == ("ACME_API_KEY",) and thinking.default_base_url == server.base_url


def test_deepseek_is_a_vendor_table() -> None:
    deepseek = vendors()["deepseek"]
    assert deepseek.base_url == "https://api.deepseek.com" and deepseek.key_env == ["DEEPSEEK_API_KEY"]
    cls = provider_class("deepseek")
    assert cls.key_env == ("DEEPSEEK_API_KEY",) and cls.traits.enforces_deadline
    assert "no Batch API" in str(cls.traits.batch_refusal)


def test_a_bad_vendor_table_is_named_by_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configs = _configs(tmp_path / "configs", '[acme]\nbase_url = "ftp://x"\nkey_env = ["K"]\n')
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    with pytest.raises(InputError) as err:
        vendors()
    assert "vendors.toml" in str(err.value) and "acme.base_url" in str(err.value)


def test_a_package_adds_a_provider_through_an_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No edit of judgebench: a distribution declaring `judgebench.providers` makes its name a spec."""
    from judgebench.models import provider_registry as registry
    from tests.models.toy_provider import ToyProvider

    fake_distribution(
        tmp_path, "toyplug", "judgebench.providers", "toyplug = tests.models.toy_provider:ToyProvider"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._plugins.cache_clear()
    try:
        assert "toyplug" in registered()
        assert registry.ModelSpec.parse("toyplug:m").provider == "toyplug"
        assert provider_class("toyplug") is ToyProvider
    finally:
        monkeypatch.undo()
        registry._plugins.cache_clear()
    assert "toyplug" not in registered()
