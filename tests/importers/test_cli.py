"""`judgebench import FORMAT`: formats listed from the registry (a plugin package's too), one command
imports and prints the source's numbers and what new calls would add at what cost."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench import api
from judgebench.cli import (
    app,
    import_cmd,  # noqa: F401 - registers `judgebench import`
)
from judgebench.importers.importer_registry import ENTRY_POINT_GROUP, importers
from tests.fake_distribution import fake_distribution
from tests.importers.shapes import judgebench_rows, write_jsonl

TOY = """
from judgebench.importers.generic_judgments import read
from judgebench.importers.importer_registry import Importer

IMPORTER = Importer(name="toy-log", summary="a toy format from a plugin package", read=read)
"""


@pytest.fixture
def toy_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An installed package (a module and its dist-info with an entry point) on sys.path."""
    site = tmp_path / "site"
    fake_distribution(site, "toy_dist", ENTRY_POINT_GROUP, "toy-log = toy_importer:IMPORTER")
    (site / "toy_importer.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(site))
    yield "toy-log"
    sys.modules.pop("toy_importer", None)


def test_help_lists_the_registry_with_a_plugin(toy_plugin: str) -> None:
    out = CliRunner().invoke(app, ["import", "--help"], terminal_width=200)
    assert out.exit_code == 0
    for name in (
        "judgebench",
        "arena-hard",
        "mt-bench",
        "alpaca-eval",
        "generic",
        "llmbar-results",
        toy_plugin,
    ):
        assert name in out.stdout
    assert toy_plugin in importers()


def test_without_the_plugin_it_is_not_listed() -> None:
    assert "toy-log" not in importers()
    out = CliRunner().invoke(app, ["import", "toy-log", "--help"])
    assert out.exit_code != 0


def test_a_plugin_format_imports(toy_plugin: str, tmp_path: Path) -> None:
    rows = [{"item_id": "q1", "judge": "j", "verdict": "1", "output_1": "a", "output_2": "bb", "label": 1}]
    path = write_jsonl(tmp_path / "log.jsonl", rows)
    out = CliRunner().invoke(app, ["import", toy_plugin, "--run", str(tmp_path / "run"), str(path)])
    assert out.exit_code == 0, out.output
    assert "imported 1 judgments of 'j'" in out.output


def test_import_prints_headline_and_priced_guidance(tmp_path: Path) -> None:
    name = "dataset=judgebench,response_model=gpt-4o,judge_name=vanilla,judge_model=gpt-4o.jsonl"
    path = write_jsonl(tmp_path / name, judgebench_rows(n=12))
    run = tmp_path / "run"
    spec = "openai:gpt-4.1-mini"
    out = CliRunner().invoke(app, ["import", "judgebench", "--run", str(run), str(path), "--model", spec],
                             terminal_width=400)  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "judgebench_score: " in out.output and "sha256" in out.output
    plan = api.plan_study(
        api.PlanRequest(models=[spec], dataset="imported", data_dir=str(run), conditions="zh")
    )
    cost = sum(e.cost_live_usd or 0.0 for e in plan.estimates)
    assert plan.calls > 0 and cost > 0
    assert f"{plan.calls} judge calls, about ${cost:.2f}" in out.output


def test_bad_setting_and_human_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", judgebench_rows(n=2))
    run = str(tmp_path / "run")
    out = CliRunner().invoke(app, ["import", "judgebench", "--run", run, str(path), "--human", str(path)])
    assert out.exit_code != 0 and "takes no --human" in out.output
    out = CliRunner().invoke(app, ["import", "arena-hard", "--run", run, str(path), "--set", "colour=blue"])
    assert out.exit_code != 0 and "no setting 'colour'" in out.output
