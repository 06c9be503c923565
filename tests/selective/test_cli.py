"""`judgebench selective` end to end on a planted run folder: the files, the cascade's coverage and
cost, the gate's exit code on each side, the export for annotation, and bad input refused by name."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.selective import SimJudge
from tests.selective.planted import planted_run

runner = CliRunner()


def _invoke(run: Path, labels: Path, *extra: str) -> tuple[int, str]:
    args = ["selective", "--run", str(run), "--human", str(labels), "--cascade", "cheap,strong", *extra]
    result = runner.invoke(app, args)
    return result.exit_code, result.output


def test_informative_judges_keep_most_items_and_pass_the_gate(tmp_path: Path) -> None:
    judges = {"cheap": (SimJudge(0.3), 0.001), "strong": (SimJudge(0.2), 0.01)}
    run, labels = planted_run(tmp_path, judges, items=2000, labelled=700, seed=1)
    code, output = _invoke(run, labels, "--min-coverage", "0.6")
    assert code == 0, output
    assert "GATE PASS" in output
    doc = json.loads((run / "selective.json").read_text(encoding="utf-8"))
    (cascade,) = doc["cascades"]
    assert cascade["condition"] == "en" and cascade["items"] == 2000 and cascade["labelled"] == 700
    cheap, strong = cascade["stages"]
    assert cheap["threshold"] is not None and cheap["guaranteed_agreement"] >= 0.85
    assert cheap["decided"] + strong["decided"] + len(cascade["escalated"]) == 2000
    assert cascade["coverage"] > 0.6 and cascade["observed_agreement"]["value"] > 0.85
    assert doc["delta_per_stage"] == 0.05 and doc["split_delta"] is True
    # the cheap judge saves: every item pays it, only what it leaves pays the strong one
    assert cascade["cost_cascade_usd"] < cascade["cost_strongest_usd"] == 2000 * 2 * 0.01
    assert cheap["steps"][-1]["passed"] is False or cheap["kept_labelled"] == cheap["reached_labelled"]
    lines = [
        json.loads(line) for line in (run / "selective_items.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(lines) == 2000 and all(set(line["judges"]) == {"cheap", "strong"} for line in lines)
    decided = {stage["judge"]: stage["decided"] for stage in cascade["stages"]}
    assert {j: sum(1 for line in lines if line["decided_by"] == j) for j in decided} == decided
    assert sum(1 for line in lines if line["decided_by"] is None) == len(cascade["escalated"])
    for line in lines:  # the first judge whose confidence reaches its threshold decides, with its verdict
        first = line["judges"]["cheap"]
        if first["confidence"] >= cheap["threshold"]:
            assert line["decided_by"] == "cheap" and line["verdict"] == first["verdict"]
    assert sum(1 for line in lines if line["human"] is not None) == 700
    for name in ("selective.md", "selective_coverage.png", "selective_escalated.jsonl"):
        assert (run / name).exists(), name
    assert "Selective judging with a guarantee" in (run / "selective.md").read_text(encoding="utf-8")
    rows = list(csv.DictReader((run / "selective_to_label.csv").open(encoding="utf-8")))
    unlabelled = [e for e in cascade["escalated"] if not e["labelled"]]
    assert [r["item_id"] for r in rows] == [e["item_id"] for e in unlabelled]
    assert all(r["label"] == "" for r in rows)


def test_noise_judges_escalate_almost_everything_and_fail_the_gate(tmp_path: Path) -> None:
    noise = SimJudge(0.3, informative=False)
    run, labels = planted_run(
        tmp_path, {"cheap": (noise, 0.001), "strong": (noise, 0.01)}, items=1000, labelled=500
    )
    code, output = _invoke(run, labels, "--min-coverage", "0.6")
    assert code == 4, output
    assert "GATE FAIL" in output
    doc = json.loads((run / "selective.json").read_text(encoding="utf-8"))
    assert doc["gate_failed"] is True and doc["cascades"][0]["coverage"] < 0.05
    escalated = (run / "selective_escalated.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(escalated) > 950
    rows = list(csv.DictReader((run / "selective_to_label.csv").open(encoding="utf-8")))
    assert len(rows) == sum(1 for line in escalated if not json.loads(line)["labelled"])


def test_a_judge_not_in_the_run_is_refused_with_the_run_s_judges(tmp_path: Path) -> None:
    run, labels = planted_run(tmp_path, {"cheap": (SimJudge(0.3), 0.001)}, items=100, labelled=50)
    code, output = _invoke(run, labels)
    assert code == 1
    assert "strong" in output and "its judges: cheap" in output
    assert not (run / "selective.json").exists()


def test_a_label_for_an_item_the_run_never_judged_names_the_file_and_line(tmp_path: Path) -> None:
    judges = {"cheap": (SimJudge(0.3), 0.001), "strong": (SimJudge(0.2), 0.01)}
    run, labels = planted_run(tmp_path, judges, items=100, labelled=50)
    with labels.open("a", encoding="utf-8") as fh:
        fh.write("ghost,en,1,ann\n")
    code, output = _invoke(run, labels)
    assert code == 1
    assert "labels.csv" in output and "52" in output and "ghost" in output
    assert not (run / "selective.json").exists()


def test_plan_gives_the_labels_for_a_target_from_an_assumption_and_from_a_pilot(tmp_path: Path) -> None:
    base = ["plan", "--human-labels", "--selective-alpha", "0.15", "--coverage", "0.6", "--json"]
    result = runner.invoke(app, [*base, "--assume-kept-error", "0.08"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)["selective"]
    assert row["basis"] == "assumed" and row["labels"] > 30
    tighter = runner.invoke(app, [*base, "--assume-kept-error", "0.08", "--selective-delta", "0.01"])
    assert json.loads(tighter.output)["selective"][0]["labels"] > row["labels"]
    judges = {"cheap": (SimJudge(0.3), 0.001), "noise": (SimJudge(0.3, informative=False), 0.01)}
    run, labels = planted_run(tmp_path, judges, items=1000, labelled=400)
    result = runner.invoke(app, [*base, "--from-run", str(run), "--human", str(labels)])
    assert result.exit_code == 0, result.output
    rows = {r["judge"]: r for r in json.loads(result.output)["selective"]}
    # the informative judge's most confident 60% disagree little: a few hundred labels; noise: never
    assert rows["cheap"]["kept_error"] < 0.15 and rows["cheap"]["labels"] is not None
    assert rows["noise"]["kept_error"] > 0.2 and rows["noise"]["labels"] is None
    shown = runner.invoke(app, [*base[:-1], "--from-run", str(run), "--human", str(labels)])
    assert "selective judging" in shown.output and "out of reach" in shown.output


def test_plan_selective_without_a_basis_says_what_to_give() -> None:
    result = runner.invoke(app, ["plan", "--human-labels", "--selective-alpha", "0.15"])
    assert result.exit_code != 0
    assert "--assume-kept-error" in result.output


def test_the_report_shows_the_runs_selective_section_and_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("judgebench.report.output_formats.make_plots", lambda analysis: {})  # no drawing
    judges = {"cheap": (SimJudge(0.3), 0.001), "strong": (SimJudge(0.2), 0.01)}
    run, labels = planted_run(tmp_path, judges, items=600, labelled=300)
    before = runner.invoke(app, ["report", "--run", str(run), "--bootstrap", "20"])
    assert before.exit_code in (0, 3), before.output
    assert "Selective judging" not in (run / "report.md").read_text(encoding="utf-8")
    assert _invoke(run, labels)[0] == 0
    after = runner.invoke(app, ["report", "--run", str(run), "--bootstrap", "20"])
    assert after.exit_code in (0, 3), after.output
    text = (run / "report.md").read_text(encoding="utf-8")
    assert "## Selective judging with a guarantee" in text and "cascade in en" in text
    assert "(selective_coverage.png)" in text
    (run / "selective.json").write_text("{not json", encoding="utf-8")
    broken = runner.invoke(app, ["report", "--run", str(run), "--bootstrap", "20"])
    assert broken.exit_code in (0, 3), broken.output
    assert "selective.json could not be read" in (run / "report.md").read_text(encoding="utf-8")


def test_a_labelled_condition_the_cascade_never_judged_is_said_and_gates_as_no_coverage(
    tmp_path: Path,
) -> None:
    judges = {"cheap": (SimJudge(0.3), 0.001), "strong": (SimJudge(0.2), 0.01)}
    run, labels = planted_run(tmp_path, judges, items=400, labelled=200)
    other = {
        "judge": "other",
        "item_id": "i0",
        "subset": "s",
        "kind": "pair",
        "condition": "zh",
        "order": "orig",
    }
    with (run / "judgments.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({**other, "winner": "A", "verdict": "1", "label": 1}) + "\n")
    with labels.open("a", encoding="utf-8") as fh:
        fh.write("i0,zh,1,ann\n")
    code, output = _invoke(run, labels, "--min-coverage", "0.1")
    assert code == 4, output
    doc = json.loads((run / "selective.json").read_text(encoding="utf-8"))
    zh = next(c for c in doc["cascades"] if c["condition"] == "zh")
    assert zh["items"] == 0 and zh["coverage"] == 0.0 and "no item in condition zh" in zh["notes"][0]
    en = next(c for c in doc["cascades"] if c["condition"] == "en")
    assert en["coverage"] > 0.1
