"""`report --human FILE` and `plan --human-labels` end to end on the bundled sample, judged by the
sim judge that is good in en and poor in zh (configs/sim.toml `human-example`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench import api
from judgebench.cli import app
from judgebench.config.paths import data_dir
from judgebench.records.metrics import HUMAN_METRICS

runner = CliRunner()
LABELS = data_dir() / "sample_human.jsonl"


@pytest.fixture()
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr("judgebench.report.output_formats.make_plots", lambda analysis: {})  # no drawing
    run = tmp_path / "run"
    variants = data_dir() / "sample_variants.jsonl"
    steps = [
        ["translate", "--run", str(run), "--dataset", "sample", "--variants", str(variants)],
        ["judge", "--run", str(run), "--model", "sim:human-example", "--no-tie-probes"],
    ]
    for step in steps:
        result = runner.invoke(app, step)
        assert result.exit_code == 0, result.output
    return run


def test_report_human_writes_the_section_the_json_and_the_records(run_dir: Path) -> None:
    result = runner.invoke(
        app, ["report", "--run", str(run_dir), "--bootstrap", "50", "--human", str(LABELS)]
    )
    assert result.exit_code == 0, result.output
    assert "agreement with humans" in result.output and "prediction-powered estimates" in result.output
    doc = json.loads((run_dir / "human.json").read_text(encoding="utf-8"))
    assert doc["labels"] == 96 and doc["annotators"] == ["ann1", "ann2"]
    assert doc["conditions"] == ["en", "zh", "ls"]
    assert doc["split_votes"] == 9  # 3 items x 3 conditions where the two annotators disagree
    agreement = {a["condition"]: a for a in doc["agreement"]}
    assert (
        agreement["en"]["n"] == 17
        and agreement["en"]["accuracy"]["value"] > agreement["zh"]["accuracy"]["value"]
    )
    assert {c["condition"] for c in doc["ceiling"]} == {"en", "zh", "ls"}
    assert all(c["alpha"] is not None for c in doc["ceiling"])
    assert {(e["condition"], e["quantity"]) for e in doc["estimates"]} == {
        (c, q) for c in ("en", "zh", "ls") for q in ("win_rate", "accuracy")
    }
    records = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    names = {r["metric"] for r in records}
    assert names >= HUMAN_METRICS  # every human metric the registry names is emitted here
    assert {"cohens_kappa", "krippendorff_alpha", "ppi_win_rate", "ppi_accuracy"} <= names  # INTERFACE's
    ppi = [r for r in records if r["metric"] == "ppi_win_rate"]
    assert all(r["source"] == "output_1" and r["n_unlabeled"] == 13 and "ppi_lambda" in r for r in ppi)
    assert "## Human labels" in (run_dir / "report.md").read_text(encoding="utf-8")
    assert "Human labels" in (run_dir / "report.html").read_text(encoding="utf-8")
    # the library function gives the same section without writing
    same = api.analyze_human(run_dir, LABELS, api.ReportSettings(bootstrap_samples=50))
    assert same.model_dump() == doc | {"file": str(LABELS)}

    # a report without --human removes human.json and the human records: never stale numbers
    again = runner.invoke(app, ["report", "--run", str(run_dir), "--bootstrap", "0"])
    assert again.exit_code == 0, again.output
    assert not (run_dir / "human.json").exists()
    records = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert not [r for r in records if r["metric"].startswith("ppi_")]


def test_bad_labels_are_refused_before_anything_is_written(run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,condition,label\nNatural/0,en,1\nNatural/99,en,2\n", encoding="utf-8")
    result = runner.invoke(app, ["report", "--run", str(run_dir), "--human", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}, line 3, field 'item_id': unknown item id 'Natural/99'" in result.output.replace("\n", "")
    assert not (run_dir / "metrics.json").exists() and not (run_dir / "human.json").exists()


def test_plan_human_labels_from_an_assumption_and_from_a_pilot(run_dir: Path) -> None:
    assumed = runner.invoke(
        app,
        ["plan", "--human-labels", "--assume-agreement", "en=0.9,zh=0.5", "--half-width", "0.2", "--json"],
    )
    assert assumed.exit_code == 0, assumed.output
    rows = {r["condition"]: r for r in json.loads(assumed.output)["rows"]}
    assert rows["en"]["items"] == 30  # the sample's items
    assert rows["zh"]["ppi"] == rows["zh"]["human_only"] and rows["en"]["ppi"] < rows["en"]["human_only"]
    table = runner.invoke(app, ["plan", "--human-labels", "--assume-agreement", "0.8", "--conditions", "zh"])
    assert table.exit_code == 0, table.output
    assert "with PPI++" in table.output and "zh" in table.output
    pilot = runner.invoke(
        app, ["plan", "--human-labels", "--from-run", str(run_dir), "--human", str(LABELS), "--json"]
    )
    assert pilot.exit_code == 0, pilot.output
    got = json.loads(pilot.output)["rows"]
    assert {r["condition"] for r in got} == {"en", "zh", "ls"}
    assert all(r["basis"] == "pilot: 17 labels" for r in got)
    neither = runner.invoke(app, ["plan", "--human-labels"])
    assert neither.exit_code == 1 and "--assume-agreement" in neither.output


def test_the_example_labels_are_what_data_readme_says() -> None:
    gold = {
        row["id"]: str(row["label"])
        for row in map(json.loads, (data_dir() / "sample.jsonl").read_text(encoding="utf-8").splitlines())
    }
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    first = [r for r in rows if r["annotator"] == "ann1"]
    second = [r for r in rows if r["annotator"] == "ann2"]
    assert len(first) == 60 and all(r["label"] == gold[r["item_id"]] for r in first)
    differs = {r["item_id"] for r in second if r["label"] != gold[r["item_id"]]}
    assert len(second) == 36 and differs == {"Natural/3", "Natural/5", "Natural/8"}
