"""`judgebench report --run DIR`: reads the run, honours the threshold flags, writes every output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.records import AuditFlag, Judgment
from judgebench.store.run_folder import JsonlAppender

runner = CliRunner()


@pytest.fixture()
def run_dir(tmp_path: Path, judgments: list[Judgment], flagged: list[str]) -> Path:
    with JsonlAppender(tmp_path / "judgments.jsonl") as out:
        for judgment in judgments:
            out.append(judgment)
    with JsonlAppender(tmp_path / "audit.jsonl") as out:
        for item in flagged:
            out.append(
                AuditFlag(item_id=item, condition="zh", field="output_1", rule="empty", detail="empty")
            )
    return tmp_path


def _verdicts(run: Path) -> set[str]:
    md = (run / "report.md").read_text(encoding="utf-8")
    section = md.split("## Readiness verdict", 1)[1].split("\n## ", 1)[0]
    return {v for v in ("PASS", "FAIL", "INCONCLUSIVE") if f"**{v}**" in section}


def test_report_writes_all_outputs(run_dir: Path) -> None:
    result = runner.invoke(app, ["report", "--run", str(run_dir), "--bootstrap", "30", "--seed", "2"])
    assert result.exit_code == 0, result.output
    for name in ("metrics.json", "metrics.csv", "report.md", "report.html"):
        assert (run_dir / name).exists(), name
    assert "Readiness verdict" in result.output
    assert str(run_dir / "report.html") in result.output.replace("\n", "")
    records = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    accuracy = [
        r
        for r in records
        if r["metric"] == "strict_accuracy" and r["subset"] == "all" and r["judge"] != "mean"
    ]
    filtered = [r for r in accuracy if r["filtered"]]
    unfiltered = [r for r in accuracy if not r["filtered"]]
    assert filtered and len(filtered) == len(unfiltered)
    assert all(f["n"] < u["n"] for f, u in zip(filtered, unfiltered, strict=True))  # flagged items left out


def test_thresholds_reach_the_verdict(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "judgebench.report.output_formats.make_plots", lambda analysis: {}
    )  # verdicts only: skip drawing
    strict = runner.invoke(
        app, ["report", "--run", str(run_dir), "--bootstrap", "30", "--max-flip-rate", "0", "--no-html"]
    )
    assert strict.exit_code == 0, strict.output
    assert not (run_dir / "report.html").exists()
    assert "FAIL" in _verdicts(run_dir)  # any flip at all fails a zero limit
    lenient = runner.invoke(
        app,
        [
            "report",
            "--run",
            str(run_dir),
            "--bootstrap",
            "30",
            "--max-flip-rate",
            "1",
            "--max-position-increase",
            "1",
            # the baseline's limits too: these synthetic judges answer each order independently
            "--max-position-inconsistency",
            "1",
            "--max-invalid-rate",
            "1",
        ],
    )
    assert lenient.exit_code == 0, lenient.output
    # within every limit now; no PASS still, since the run has failed calls (incomplete, PROTOCOL §4)
    assert _verdicts(run_dir) == {"INCONCLUSIVE"}
    assert "run is incomplete" in (run_dir / "report.md").read_text(encoding="utf-8")


def test_missing_run_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", "--run", str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "does not exist" in result.output


def test_run_without_judgments_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", "--run", str(tmp_path)])
    assert result.exit_code != 0
    assert "judgments.jsonl" in result.output


def test_bad_setting_is_refused(run_dir: Path) -> None:
    result = runner.invoke(app, ["report", "--run", str(run_dir), "--max-flip-rate", "1.5"])
    assert result.exit_code != 0
