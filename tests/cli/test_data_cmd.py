"""`judgebench data show|list` through Typer's CliRunner: the JSON contract, the table, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.data import LLMBAR_SUBSETS, load_dataset
from tests.data.conftest import BAD

runner = CliRunner()


def test_show_llmbar_json(llmbar_dir: Path) -> None:
    result = runner.invoke(app, ["data", "show", "llmbar", "--data-dir", str(llmbar_dir), "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["items"] == 419
    assert shown["subsets"] == {
        "Natural": 100,
        "Adversarial/Neighbor": 134,
        "Adversarial/GPTInst": 92,
        "Adversarial/GPTOut": 47,
        "Adversarial/Manual": 46,
    }
    assert shown["labels"] == {"1": 206, "2": 213}
    assert shown["checksum"] == load_dataset("llmbar", data_dir=llmbar_dir).checksum


def test_show_table_lists_subsets_source_and_checksum(llmbar_dir: Path) -> None:
    result = runner.invoke(app, ["data", "show", "llmbar", "--data-dir", str(llmbar_dir)])
    assert result.exit_code == 0, result.output
    ds = load_dataset("llmbar", data_dir=llmbar_dir)
    for subset in LLMBAR_SUBSETS:
        assert subset in result.stdout
    assert f"sha256:{ds.checksum}" in result.stdout
    assert ds.source in result.stdout


def test_show_subset_and_field_mapping(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    rows = [
        {"q": "Name a prime.", "left": "7", "right": "8", "gold": "A>B", "cat": "math/primes"},
        {"q": "Say hi.", "left": "bye", "right": "hi", "gold": "B>A", "cat": "chat"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = ["data", "show", str(path), "--json", "--subset", "math"]
    for pair in ("instruction=q", "output_1=left", "output_2=right", "label=gold", "subset=cat"):
        args += ["--field", pair]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["subsets"] == {"math/primes": 1} and shown["labels"] == {"1": 1, "2": 0}
    assert shown["subset"] == "math"


def test_bad_field_option_is_a_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["data", "show", str(BAD / "empty.jsonl"), "--field", "instruction"])
    assert result.exit_code != 0
    assert "expected FIELD=COLUMN" in result.stderr


def test_bad_file_exit_code_and_message() -> None:
    path = BAD / "duplicate_ids.jsonl"
    result = runner.invoke(app, ["data", "show", str(path)])
    assert result.exit_code == 1
    assert result.stdout == ""
    line = " ".join(result.stderr.split())
    assert str(path) in line and "line 3" in line and "duplicate id 'dup'" in line


def test_modified_copy_warning_is_shown(llmbar_dir: Path, tmp_path: Path) -> None:
    rel = LLMBAR_SUBSETS["Natural"]
    (tmp_path / rel).parent.mkdir(parents=True)
    rows = json.loads((llmbar_dir / rel).read_text(encoding="utf-8"))
    (tmp_path / rel).write_text(json.dumps(rows[:10]), encoding="utf-8")
    result = runner.invoke(app, ["data", "show", "llmbar:Natural", "--data-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["items"] == 10
    assert "warning:" in result.stderr and "differs from the published" in " ".join(result.stderr.split())


def test_offline_download_error_tells_how_to_use_a_local_copy(
    monkeypatch: pytest.MonkeyPatch, closed_port_url: str
) -> None:
    monkeypatch.setenv("JUDGEBENCH_LLMBAR_URL", closed_port_url)
    result = runner.invoke(app, ["data", "show", "llmbar"])
    assert result.exit_code == 1
    assert "--data-dir" in result.stderr


def test_list_reports_what_is_available(llmbar_dir: Path) -> None:
    result = runner.invoke(app, ["data", "list", "--data-dir", str(llmbar_dir)])
    assert result.exit_code == 0, result.output
    assert "llmbar:Processed/LLMEval^2" in result.stdout and "local copy" in result.stdout
    fresh = runner.invoke(app, ["data", "list"])  # empty cache (isolated_cache)
    assert fresh.exit_code == 0 and "downloads on use" in fresh.stdout
