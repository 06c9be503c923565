"""`judgebench compare RUN_A RUN_B` end to end: real runs of simulated judges through translate and
judge, then the command, its exit codes (INTERFACE.md: 0 within the limit, 4 under --gate when not,
2 for usage errors; 1 for a run it cannot read), its files and its messages on bad input."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench import api
from judgebench.api.selftest import synthetic_items
from judgebench.cli import app
from judgebench.cli.exits import ExitCode

runner = CliRunner()
ITEMS = 200


def _judge(base: Path, name: str, model: str) -> Path:
    data, variants = base / "items.jsonl", base / "variants.jsonl"
    if not data.exists():
        synthetic_items(ITEMS, data, variants)
    run = base / name
    api.translate(run, api.TranslateRequest(dataset=str(data), variants_file=variants))
    api.judge(
        run,
        api.JudgeRequest(models=[model]),
        options=api.CallOptions(settings={"concurrency": 64}, use_cache=False),
    )
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("compare")
    return {
        "day1": _judge(base, "day1", "sim:drift-stable/1"),
        "day2": _judge(base, "day2", "sim:drift-stable/2"),
        "worse": _judge(base, "worse", "sim:drift-worse/2"),
        "position": _judge(base, "position", "sim:drift-position/2"),
    }


def _compare(*args: str | Path) -> tuple[int, str]:
    result = runner.invoke(app, ["compare", *map(str, args)])
    return result.exit_code, result.output


def test_one_judge_on_two_days_passes_a_bare_gate(runs: dict[str, Path], tmp_path: Path) -> None:
    code, out = _compare(runs["day1"], runs["day2"], "--gate", "--out", tmp_path)
    assert code == ExitCode.OK, out
    assert "GATE PASS" in out
    doc = json.loads((tmp_path / "compare.json").read_text())
    assert doc["gate"]["flip_rate"] == 0.10 and not doc["gate_failed"]
    assert [m["how"] for m in doc["matches"]] == ["one judge each"]
    pairs = [r for r in doc["drift"] if r["kind"] == "pair"]
    assert [r["condition"] for r in pairs] == ["en", "zh", "ls", "all"]
    assert all(r["flip_rate"] < 0.06 and r["gate_flip"] == "pass" for r in pairs)
    assert all(r["mcnemar_p"] > 0.05 for r in pairs)
    assert doc["items_common"] == ITEMS and doc["coverage"][0]["units_only_a"] == 0
    changed = (tmp_path / "compare_changed.jsonl").read_text().splitlines()
    assert (
        len(changed) == doc["changed"] == sum(r["changed"] for r in doc["drift"] if r["condition"] != "all")
    )


def test_a_worse_judge_fails_the_gate_in_zh_only(runs: dict[str, Path], tmp_path: Path) -> None:
    code, out = _compare(
        runs["day1"], runs["worse"], "--gate", "0.1", "--gate-mcnemar", "0.01", "--out", tmp_path
    )
    assert code == ExitCode.GATE_FAIL == 4, out
    assert "GATE FAIL" in out
    doc = json.loads((tmp_path / "compare.json").read_text())
    by = {r["condition"]: r for r in doc["drift"] if r["kind"] == "pair"}
    assert by["zh"]["gate_flip"] == "fail" and by["zh"]["gate_mcnemar"] == "fail"
    assert by["zh"]["accuracy_b"] < by["zh"]["accuracy_a"] - 0.15
    assert by["en"]["gate_flip"] == by["ls"]["gate_flip"] == "pass"
    assert any(" zh: " in reason for reason in doc["gate_reasons"])
    # every changed unit, with both verdicts and the gold label, in both files
    rows = list(csv.DictReader((tmp_path / "compare_changed.csv").open(encoding="utf-8")))
    lines = [json.loads(x) for x in (tmp_path / "compare_changed.jsonl").read_text().splitlines()]
    assert len(rows) == len(lines) == doc["changed"]
    zh = [x for x in lines if x["condition"] == "zh" and x["kind"] == "pair"]
    assert len(zh) == by["zh"]["changed"]
    assert all(x["verdict_a"] != x["verdict_b"] and x["gold"] in (1, 2) for x in zh)
    assert sum(x["correct_a"] and not x["correct_b"] for x in zh) == by["zh"]["right_to_wrong"]
    zh_csv = [x for x in rows if x["condition"] == "zh" and x["kind"] == "pair"]
    assert (
        sum(x["correct_a"] == "true" and x["correct_b"] == "false" for x in zh_csv)
        == by["zh"]["right_to_wrong"]
    )
    md = (tmp_path / "compare.md").read_text()
    assert "## Drift between runs" in md and "| zh |" in md.replace("\\", "")


def test_a_position_biased_judge_fails_the_gate(runs: dict[str, Path], tmp_path: Path) -> None:
    code, out = _compare(runs["day1"], runs["position"], "--gate", "0.05", "--out", tmp_path)
    assert code == ExitCode.GATE_FAIL, out
    doc = json.loads((tmp_path / "compare.json").read_text())
    en = next(r for r in doc["drift"] if r["condition"] == "en")
    assert en["gate_flip"] == "fail" and en["position_a_b"] > en["position_a_a"] + 0.1


def test_without_a_gate_a_changed_judge_is_reported_and_exits_0(runs: dict[str, Path]) -> None:
    code, out = _compare(runs["day1"], runs["worse"])
    assert code == ExitCode.OK, out
    assert "GATE" not in out
    default = runs["worse"] / "compare-day1"  # the default output folder
    assert json.loads((default / "compare.json").read_text())["changed"] > 0


def test_named_judges_and_a_missing_name(runs: dict[str, Path], tmp_path: Path) -> None:
    code, out = _compare(
        runs["day1"], runs["day2"], "--judge-a", "sim:drift-stable/1", "--judge-b", "sim:drift-stable/2",
        "--out", tmp_path,
    )  # fmt: skip
    assert code == ExitCode.OK, out
    assert json.loads((tmp_path / "compare.json").read_text())["matches"][0]["how"] == "named"
    code, out = _compare(runs["day1"], runs["day2"], "--judge-a", "nope", "--judge-b", "sim:drift-stable/2")
    assert code == ExitCode.ERROR
    assert "day1/judgments.jsonl: no judge 'nope' here; its judges: sim:drift-stable/1" in " ".join(
        out.split()
    )


def test_bad_input_is_named(runs: dict[str, Path], tmp_path: Path) -> None:
    code, out = _compare(tmp_path / "absent", runs["day2"])
    assert code == ExitCode.ERROR and "run A:" in out and "absent does not exist" in " ".join(out.split())
    bare = tmp_path / "never-judged"
    bare.mkdir()
    code, out = _compare(runs["day1"], bare)
    assert code == ExitCode.ERROR
    assert "never-judged/judgments.jsonl does not exist" in "".join(out.split("\n"))
    (bare / "judgments.jsonl").write_text("")
    code, out = _compare(runs["day1"], bare)
    assert code == ExitCode.ERROR and "holds no judgments" in out
    code, out = _compare(runs["day1"], runs["day2"], "--gate", "1.5")
    assert code == ExitCode.USAGE


def test_runs_over_other_items_are_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    """Another dataset whose ids collide (another gold label) is refused by item; one with no id in
    common is refused naming both files."""
    other = tmp_path / "other"
    other.mkdir()
    lines = (runs["day2"] / "judgments.jsonl").read_text().splitlines()
    flipped = [json.loads(x) for x in lines]
    for record in flipped:
        if record["label"] is not None:
            record["label"] = 3 - record["label"]
    (other / "judgments.jsonl").write_text("".join(json.dumps(x) + "\n" for x in flipped))
    code, out = _compare(runs["day1"], other)
    assert code == ExitCode.ERROR
    assert "the runs are not over the same items" in " ".join(out.split())
    for record in flipped:
        record["item_id"] = "elsewhere/" + record["item_id"]
    (other / "judgments.jsonl").write_text("".join(json.dumps(x) + "\n" for x in flipped))
    code, out = _compare(runs["day1"], other)
    assert code == ExitCode.ERROR
    assert "no unit (item, condition, order) is in both runs" in " ".join(out.split())


def test_items_in_one_run_only_are_counted(runs: dict[str, Path], tmp_path: Path) -> None:
    part = tmp_path / "part"
    part.mkdir()
    lines = (runs["day2"] / "judgments.jsonl").read_text().splitlines()
    kept = [x for x in lines if not json.loads(x)["item_id"].startswith("Natural/")]
    (part / "judgments.jsonl").write_text("\n".join(kept) + "\n")
    code, out = _compare(runs["day1"], part, "--out", tmp_path / "out")
    assert code == ExitCode.OK, out
    doc = json.loads((tmp_path / "out" / "compare.json").read_text())
    cov = doc["coverage"][0]
    assert doc["items_a"] == ITEMS and doc["items_common"] == ITEMS - ITEMS // 5
    assert len(cov["items_only_a"]) == cov["items_only_a_total"] == ITEMS // 5 and cov["units_only_b"] == 0
    assert cov["units_only_a"] == len(lines) - len(kept)
    assert f"items only in A: {ITEMS // 5}, only in B: 0" in (tmp_path / "out" / "compare.md").read_text()


def _copy_run(run: Path, to: Path) -> Path:
    shutil.copytree(run, to, ignore=shutil.ignore_patterns("compare-*", "*.parquet", "*.arrow"))
    return to


def test_a_run_whose_every_call_failed_is_no_evidence_and_fails_the_gate(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Run B got no answer at all: 0 compared in every row is not a pass but a gate failure."""
    failed = _copy_run(runs["day2"], tmp_path / "failed")
    records = [json.loads(x) for x in (failed / "judgments.jsonl").read_text().splitlines()]
    for record in records:
        record.update(raw=None, winner=None, verdict=None, parse_error=None, error="HTTP 500 after 3 tries")
    (failed / "judgments.jsonl").write_text("".join(json.dumps(x) + "\n" for x in records))
    code, out = _compare(runs["day1"], failed, "--gate", "--out", tmp_path / "out")
    assert code == ExitCode.GATE_FAIL, out
    assert "GATE FAIL: some rows had nothing to compare (no evidence)" in out and "GATE PASS" not in out
    doc = json.loads((tmp_path / "out" / "compare.json").read_text())
    pairs = [r for r in doc["drift"] if r["kind"] == "pair"]
    assert pairs and all(r["compared"] == 0 and r["gate_flip"] == "no evidence" for r in pairs)
    assert any("no evidence: 0 compared" in reason for reason in doc["gate_reasons"])
    # without a gate the same comparison is reported, exit 0
    code, out = _compare(runs["day1"], failed, "--out", tmp_path / "plain")
    assert code == ExitCode.OK, out


def _with_dataset_checksum(run: Path, checksum: str) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["dataset"]["checksum"]  # the run records its dataset
    manifest["dataset"]["checksum"] = checksum
    manifest["dataset"]["conditions"] = {"en": checksum}
    (run / "manifest.json").write_text(json.dumps(manifest))


def test_runs_over_different_datasets_are_refused_unless_allowed(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Another dataset whose ids (and gold labels) coincide: the manifests' checksums differ, so the
    items are not the same items. Refused, naming both manifests; compared with the flag, said so."""
    other = _copy_run(runs["day2"], tmp_path / "other-data")
    _with_dataset_checksum(other, "f" * 64)
    code, out = _compare(runs["day1"], other, "--gate")
    flat = " ".join(out.split())
    assert code == ExitCode.ERROR, out
    assert "different items, even where their ids coincide" in flat and "--allow-different-datasets" in flat
    assert "day1/manifest.json and" in flat and "checksum ffffffffffff" in flat
    code, out = _compare(runs["day1"], other, "--gate", "--allow-different-datasets", "--out", tmp_path / "o")
    assert code == ExitCode.OK, out
    assert "Different datasets" in " ".join(out.split())
    doc = json.loads((tmp_path / "o" / "compare.json").read_text())
    assert doc["different_datasets"] is True and doc["dataset_b"]["checksum"] == "f" * 64
    assert "Different datasets" in (tmp_path / "o" / "compare.md").read_text()
    # the same dataset (the same checksum): compared as before, no flag needed, nothing said
    code, out = _compare(runs["day1"], runs["day2"], "--out", tmp_path / "same")
    assert code == ExitCode.OK and "Different datasets" not in out
    assert json.loads((tmp_path / "same" / "compare.json").read_text())["different_datasets"] is False


def test_a_judge_pair_with_no_unit_in_both_runs_is_no_evidence(runs: dict[str, Path], tmp_path: Path) -> None:
    """Two judges matched by name: one shares its units, the other judged other items in run B. The
    second has no row to gate; under a gate that is a failure, not a silent pass."""
    lines = [json.loads(x) for x in (runs["day1"] / "judgments.jsonl").read_text().splitlines()]
    second = [{**x, "judge": "second"} for x in lines]
    elsewhere = [{**x, "item_id": "elsewhere/" + x["item_id"]} for x in second]
    for name, records in (("a", lines + second), ("b", lines + elsewhere)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "judgments.jsonl").write_text("".join(json.dumps(x) + "\n" for x in records))
    code, out = _compare(tmp_path / "a", tmp_path / "b", "--gate", "--out", tmp_path / "out")
    assert code == ExitCode.GATE_FAIL, out
    doc = json.loads((tmp_path / "out" / "compare.json").read_text())
    want = "second: no evidence: no pair unit (item, condition, order) is in both runs"
    assert doc["gate_reasons"] == [want]
    assert any("records no dataset checksum" in note for note in doc["notes"])
