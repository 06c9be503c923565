"""`judgebench report --export-unstable FILE`: the flipped / position-inconsistent items as JSONL, with
their texts (variants from variants.jsonl), every verdict and raw answer, and their audit flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.records import AuditFlag, Judgment, Variant
from judgebench.store.run_folder import JsonlAppender

runner = CliRunner()
JUDGE = "openai:gpt-4.1-mini"


def _j(item: str, cond: str, order: str, verdict: str) -> Judgment:
    return Judgment(
        judge=JUDGE,
        item_id=item,
        subset="Natural",
        kind="pair",
        condition=cond,
        order=order,
        verdict=verdict,
        winner="A" if (verdict == "1") == (order == "orig") else "B",
        raw=f'{{"winner": "{verdict}"}}',
        label=1,
    )


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    grid = {
        "stable": {"en": ("1", "1"), "zh": ("1", "1")},
        "flipped": {"en": ("1", "1"), "zh": ("2", "2")},
        "inconsistent": {"en": ("1", "2"), "zh": ("1", "2")},
    }
    with JsonlAppender(tmp_path / "judgments.jsonl") as out:
        for item, conds in grid.items():
            for cond, (orig, swap) in conds.items():
                out.append(_j(item, cond, "orig", orig))
                out.append(_j(item, cond, "swap", swap))
    with JsonlAppender(tmp_path / "variants.jsonl") as out:
        for item in grid:
            out.append(
                Variant(
                    item_id=item, condition="zh", instruction=f"指令 {item}", output_1="一", output_2="二"
                )
            )
    with JsonlAppender(tmp_path / "audit.jsonl") as out:
        out.append(
            AuditFlag(item_id="flipped", condition="zh", field="output_1", rule="empty", detail="empty")
        )
    return tmp_path


def test_export_unstable_writes_the_unstable_rows(run_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "review" / "unstable.jsonl"
    result = runner.invoke(
        app, ["report", "--run", str(run_dir), "--bootstrap", "0", "--export-unstable", str(target)]
    )
    assert result.exit_code == 0, result.output
    assert "2 flipped or position-inconsistent" in result.output
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [(r["item_id"], r["judge"]) for r in lines] == [("flipped", JUDGE), ("inconsistent", JUDGE)]
    flipped, inconsistent = lines
    assert flipped["flipped"] == ["zh"] and flipped["position_inconsistent"] == []
    assert inconsistent["flipped"] == [] and inconsistent["position_inconsistent"] == ["en", "zh"]
    assert flipped["texts"]["zh"] == {"instruction": "指令 flipped", "output_1": "一", "output_2": "二"}
    assert "en" not in flipped["texts"]  # no dataset recorded for this run: the en texts are unknown
    assert {(v["condition"], v["order"]): v["verdict"] for v in flipped["verdicts"]} == {
        ("en", "orig"): "1",
        ("en", "swap"): "1",
        ("zh", "orig"): "2",
        ("zh", "swap"): "2",
    }
    assert flipped["verdicts"][0]["raw"] == '{"winner": "1"}'
    assert flipped["audit"] == [
        {"item_id": "flipped", "condition": "zh", "field": "output_1", "rule": "empty", "detail": "empty"}
    ]
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'id="jbx-data"' in html and "指令 flipped" in html  # the explorer got the same texts


def test_without_the_flag_nothing_is_exported(run_dir: Path) -> None:
    result = runner.invoke(app, ["report", "--run", str(run_dir), "--bootstrap", "0", "--no-html"])
    assert result.exit_code == 0, result.output
    assert "flipped or position-inconsistent" not in result.output
    assert not (run_dir / "report.html").exists()


def test_export_unstable_is_in_the_help() -> None:
    result = runner.invoke(app, ["report", "--help"])
    assert "--export-unstable" in result.output
