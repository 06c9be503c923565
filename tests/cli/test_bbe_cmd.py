"""`judgebench bbe` end to end: a synthetic Judge-LS run, the Arena-Hard example, a factor table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from tests.bbe.helpers import write_run

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
ARENA = REPO / "data" / "bbe" / "arena-hard" / "model_judgment" / "gpt-4.1-mini"
FACTORS = REPO / "data" / "bbe" / "scores_factors.csv"

TOP_FIELDS = (
    "tau",
    "delta",
    "delta_sensitivity",
    "delta_noise",
    "delta_estimate",
    "rank_correlation",
    "calibrations",
)
CAL_FIELDS = (
    "judge",
    "d",
    "units",
    "sensitivity",
    "sensitivity_plugin",
    "alpha",
    "sigma",
    "feasible",
    "correlation",
)
VERIFY_FIELDS = ("draws", "violations", "rate", "ci_low", "ci_high")


def _bbe(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["bbe", *args])
    return result.exit_code, result.output


def _check_fields(doc: dict[str, object], *, verify: bool) -> None:
    for key in TOP_FIELDS:
        assert key in doc, key
    cals = doc["calibrations"]
    assert isinstance(cals, list) and cals
    for cal in cals:
        for key in CAL_FIELDS:
            assert key in cal, key
        assert set(cal["correlation"]) >= {"pearson", "spearman"}
        if verify:
            assert set(cal["verify"]) >= set(VERIFY_FIELDS)
    if len(cals) == 1:
        for key in CAL_FIELDS:
            assert doc[key] == cals[0][key], key


def test_run_dir(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "run",
        judges={"j-a": 0.05, "j-b": 0.15, "j-c": 0.3},
        items=40,
        accuracy=0.8,
        invalid_rate=0.05,
    )
    code, out = _bbe(
        "--tau", "0.5", "--delta", "0.01", "--run", str(run), "--verify", "300", "--seed", "3",
        "--alpha", "auto", "--upper-bound",
    )  # fmt: skip
    assert code == 0, out
    doc = json.loads((run / "bbe.json").read_text())
    _check_fields(doc, verify=True)
    assert [c["judge"] for c in doc["calibrations"]] == ["j-a", "j-b", "j-c"]
    assert set(doc["rank_correlation"]) == {"spearman", "kendall"}
    for cal in doc["calibrations"]:
        assert cal["d"] == cal["units"] == 80  # 2 x items
        assert cal["feasible"] and cal["sigma"] > 0 and cal["alpha"] < 1
        assert cal["sensitivity"] >= cal["sensitivity_plugin"]  # the upper bound
        assert sum(cal["invalid_neighbours"].values()) > 0  # counted, not dropped
        verify = cal["verify"]
        assert verify["ci_low"] <= doc["delta"] and verify["pairs"] == cal["pairs"]
        held = verify["holdout"]  # estimate on half the units, violations on the other half
        assert held["estimate_units"] + held["holdout_units"] == cal["units_with_pairs"]
        assert held["ci_low"] <= doc["delta"] and held["sensitivity"] > 0
    # more flips -> larger plug-in sensitivity
    plug = [c["sensitivity_plugin"] for c in doc["calibrations"]]
    assert plug[0] < plug[2]
    assert doc["delta_sensitivity"] + doc["delta_noise"] + doc["delta_estimate"] == pytest.approx(0.01)
    assert (run / "bbe_scores.csv").exists() and (run / "bbe.png").exists()
    assert "bbe.json" in out


def test_same_seed_same_output(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.1, "b": 0.2, "c": 0.0}, items=20)
    outs = []
    for seed, name in (("7", "x.json"), ("7", "y.json"), ("8", "z.json")):
        code, output = _bbe(
            "--tau",
            "0.5",
            "--delta",
            "0.05",
            "--run",
            str(run),
            "--seed",
            seed,
            "--out",
            str(tmp_path / name),
            "--verify",
            "50",
            "--no-plot",
            "--alpha",
            "auto",
        )
        assert code == 0, output
        doc = json.loads((tmp_path / name).read_text())
        doc.pop("outputs")
        outs.append((doc, (tmp_path / name.replace(".json", "_scores.csv")).read_text()))
    assert outs[0] == outs[1]
    assert outs[0][1] != outs[2][1]


def test_infeasible_writes_bbe_json_and_names_alpha(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.3}, items=20)
    code, out = _bbe(  # alpha 1, plug-in; the Markov step's reason names a sensitivity (PROTOCOL §5)
        "--tau", "0.5", "--delta", "0.01", "--run", str(run), "--no-plot", "--certificate", "markov",
        "--alpha", "1",
    )  # fmt: skip
    assert code != 0
    assert "alpha below" in out and "sensitivity below" in out
    doc = json.loads((run / "bbe.json").read_text())
    assert doc["feasible"] is False and doc["sigma"] is None and doc["calibrations"][0]["feasible"] is False
    assert doc["delta_estimate"] == 0
    _check_fields(doc, verify=False)


def test_plugin_estimate_with_halves_is_the_default(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.1}, items=20)
    code, out = _bbe("--tau", "0.5", "--delta", "0.01", "--run", str(run), "--alpha", "auto", "--no-plot")
    assert code == 0, out
    doc = json.loads((run / "bbe.json").read_text())
    assert doc["parameters"]["delta_split"] == pytest.approx([0.005, 0.005, 0.0])
    # the top-level split is the one the released certificate spends (the default carries over)
    row = next(r for r in doc["certificates"] if r["name"] == doc["certificate"])
    spent = [doc["delta_sensitivity"], doc["delta_noise"], doc["delta_estimate"]]
    assert spent == [row["delta_sensitivity"], row["delta_noise"], row["delta_estimate"]]
    assert sum(spent) == pytest.approx(0.01) and doc["carries_over"] is True
    assert doc["sensitivity"] == doc["sensitivity_plugin"]
    assert doc["rank_correlation"] is None  # one system


def test_arena_hard_example_verify_2000(tmp_path: Path) -> None:
    folder = tmp_path / "judge"
    shutil.copytree(ARENA, folder)
    code, out = _bbe(
        "--tau", "0.5", "--delta", "0.01", "--arena-hard", str(folder), "--verify", "2000", "--alpha", "auto"
    )
    assert code == 0, out
    doc = json.loads((folder / "bbe.json").read_text())
    _check_fields(doc, verify=True)
    assert doc["source"]["type"] == "arena-hard"
    assert len(doc["systems"]) == 5
    assert doc["verify"]["draws"] == 2000
    assert doc["verify"]["ci_high"] <= doc["delta"]
    assert doc["rank_correlation"]["spearman"] is not None


def test_factor_table(tmp_path: Path) -> None:
    table = tmp_path / "scores.csv"
    shutil.copy(FACTORS, table)
    code, out = _bbe(
        "--tau",
        "0.5",
        "--delta",
        "0.01",
        "--scores",
        str(table),
        "--scale",
        "1",
        "10",
        "--strategy",
        "rms",
        "--jitter",
        "auto",
        "--verify",
        "200",
        "--alpha",
        "auto",
    )
    assert code == 0, out
    doc = json.loads((tmp_path / "bbe.json").read_text())
    _check_fields(doc, verify=True)
    sch = doc["schematic"]
    assert sch["strategy"] == "rms" and 0 <= sch["r2"] <= 1
    assert sch["r2"] == max(sch["r2_ols"], sch["r2_ridge"])
    assert {f["judge"] for f in doc["factor_calibrations"]} == {
        f"scores:{n}" for n in ("correctness", "completeness", "safety", "conciseness", "style")
    }
    assert doc["jitter"] > 0  # the example has repeated base rows
    assert doc["invalid_neighbours"] == {"formatting": 1}


def test_bad_invocations(tmp_path: Path) -> None:
    code, out = _bbe("--tau", "0.5", "--delta", "0.01")
    assert code != 0 and "exactly one of" in out
    code, out = _bbe("--tau", "0.5", "--delta", "0.01", "--scores", str(FACTORS))
    assert code != 0 and "--scale" in out
    run = write_run(tmp_path / "run", judges={"j": 0.1}, items=5)
    code, out = _bbe("--tau", "0.5", "--delta", "0.01", "--run", str(run), "--neighbours", "xx")
    assert code != 0 and "available" in out


def _doc(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def test_parameters_in_score_units_and_dim(tmp_path: Path) -> None:
    table = tmp_path / "scores.csv"
    shutil.copy(FACTORS, table)
    common = (
        "--tau", "0.5", "--delta", "0.05", "--scores", str(table), "--scale", "1", "10", "--no-plot",
        "--alpha", "auto",
    )  # fmt: skip
    code, out = _bbe(*common, "--centre", "5.5", "--jitter", "0.9", "--out", str(tmp_path / "a.json"))
    assert code == 0, out
    a = _doc(tmp_path / "a.json")
    assert a["centre"] == pytest.approx(0.5)
    assert a["jitter"] == pytest.approx(0.1)
    code, out = _bbe(*common, "--dim", "400", "--out", str(tmp_path / "b.json"))
    assert code == 0, out
    code, out = _bbe(*common, "--out", str(tmp_path / "c.json"))
    b, c = _doc(tmp_path / "b.json"), _doc(tmp_path / "c.json")
    assert b["d"] == 400 and c["d"] == 100
    assert b["sigma"] < c["sigma"]
    code, out = _bbe(*common, "--dim", "10")
    assert code != 0 and "below the number of scored units" in out
    code, out = _bbe(*common, "--centre", "11")
    assert code != 0 and "outside the scale" in out


def test_neighbour_kinds_and_invalid_policy(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.2}, items=40, invalid_rate=0.3)
    common = ("--tau", "0.5", "--delta", "0.05", "--run", str(run), "--alpha", "auto", "--no-plot")
    code, out = _bbe(*common, "--neighbours", "zh", "--out", str(tmp_path / "zh.json"))
    assert code == 0, out
    zh = _doc(tmp_path / "zh.json")
    assert set(zh["neighbours"]) == {"zh"} and set(zh["invalid_neighbours"]) == {"zh"}
    code, out = _bbe(*common, "--out", str(tmp_path / "skip.json"))
    code2, out2 = _bbe(*common, "--invalid-neighbours", "worst", "--out", str(tmp_path / "worst.json"))
    assert code == code2 == 0, out + out2
    skip, worst = _doc(tmp_path / "skip.json"), _doc(tmp_path / "worst.json")
    assert worst["pairs"] == skip["pairs"] + sum(skip["invalid_neighbours"].values())
    assert worst["sensitivity_plugin"] > skip["sensitivity_plugin"]
    assert "invalid or missing neighbour judgments" in out


def _table(path: Path, units: int, change: float) -> Path:
    """`units` base scores of 0.5 on a 0..1 scale, each with one neighbour moved by `change`: the
    plug-in RMS sensitivity is exactly `change`."""
    rows = ["system,unit,context,score"]
    for u in range(units):
        rows.append(f"s{u % 3},u{u},base,0.5")
        rows.append(f"s{u % 3},u{u},formatting,{0.5 + change}")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("change", "units", "sigma"), [(0.0, 1, 0.0878), (0.01, 500, 0.0102), (0.02, 2000, 0.0033)]
)
def test_protocol_worked_values_with_the_documented_flags_only(
    tmp_path: Path, change: float, units: int, sigma: float
) -> None:
    """PROTOCOL §5's worked values (tau 0.5, delta 0.01, alpha 1) from `bbe --tau --delta --scores
    --scale --certificate markov`: the reference's algorithm (plug-in Delta, halves, no shrinkage);
    the default certificate is now the tightest that applies (PROTOCOL §5b), so it is named."""
    table = _table(tmp_path / "t.csv", units, change)
    code, out = _bbe(
        "--tau", "0.5", "--delta", "0.01", "--scores", str(table), "--scale", "0", "1",
        "--certificate", "markov", "--alpha", "1",
    )  # fmt: skip
    assert code == 0, out
    doc = _doc(tmp_path / "bbe.json")
    assert doc["d"] == units and doc["alpha"] == 1
    assert doc["sensitivity"] == pytest.approx(change, abs=1e-12)
    assert doc["delta_sensitivity"] == doc["delta_noise"] == 0.005 and doc["delta_estimate"] == 0
    assert doc["sigma"] == pytest.approx(sigma, abs=5e-5)


def test_infeasible_without_shrinkage_from_0_0354(tmp_path: Path) -> None:
    table = _table(tmp_path / "t.csv", 500, 0.036)
    markov = ("--certificate", "markov")  # the reference's step (the default is now the tightest)
    code, out = _bbe(
        "--tau", "0.5", "--delta", "0.01", "--scores", str(table), "--scale", "0", "1", *markov,
        "--alpha", "1",
    )  # fmt: skip
    assert code != 0 and "--alpha auto" in out
    assert _doc(tmp_path / "bbe.json")["feasible"] is False
    code, out = _bbe(
        "--tau", "0.5", "--delta", "0.01", "--scores", str(table), "--scale", "0", "1",
        "--alpha", "auto", *markov,
    )  # fmt: skip
    assert code == 0, out
    doc = _doc(tmp_path / "bbe.json")
    assert doc["feasible"] and doc["alpha"] < 1


def test_verify_never_changes_what_is_released(tmp_path: Path) -> None:
    """With a named certificate, --verify never changes the release. (`auto` picks among certificates
    that carry over when verifying out of sample, PROTOCOL §5b, so it names one here.)"""
    run = write_run(tmp_path / "run", judges={"a": 0.1, "b": 0.2, "c": 0.05}, items=40)
    common = (
        "--tau", "0.5", "--delta", "0.01", "--run", str(run), "--alpha", "auto", "--no-plot",
        "--certificate", "range",
    )  # fmt: skip
    assert _bbe(*common, "--out", str(tmp_path / "plain.json"))[0] == 0
    assert _bbe(*common, "--out", str(tmp_path / "checked.json"), "--verify", "100")[0] == 0
    plain, checked = _doc(tmp_path / "plain.json"), _doc(tmp_path / "checked.json")
    assert (tmp_path / "plain_scores.csv").read_text() == (tmp_path / "checked_scores.csv").read_text()
    for a, b in zip(plain["calibrations"], checked["calibrations"], strict=True):
        assert (a["sensitivity"], a["alpha"], a["sigma"]) == (b["sensitivity"], b["alpha"], b["sigma"])
        assert a.get("verify") is None and b["verify"]["holdout"] is not None


def test_judge_ls_aggregate_is_accuracy_and_d_is_two_per_item(tmp_path: Path) -> None:
    """PROTOCOL §5: the system's aggregate is its accuracy (an invalid answer is wrong, §4) and
    d = 2 x items. Judge X is right in orig and invalid in every swap; Y is right on 8 of 10 items."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"dataset": None, "stages": {}, "history": []}))
    lines = []
    for judge in ("X", "Y"):
        for i in range(10):
            label = 1 if i % 2 == 0 else 2
            for cond in ("en", "zh"):
                for order in ("orig", "swap"):
                    if judge == "X":
                        verdict = str(label) if order == "orig" else "invalid"
                    else:
                        verdict = str(label) if i < 8 else str(3 - label)
                    lines.append(
                        json.dumps(
                            {
                                "judge": judge,
                                "item_id": f"Natural/{i}",
                                "subset": "Natural",
                                "kind": "pair",
                                "condition": cond,
                                "order": order,
                                "verdict": verdict,
                                "winner": "invalid" if verdict == "invalid" else "A",
                                "label": label,
                                "raw": "{}",
                            }
                        )
                    )
    (run / "judgments.jsonl").write_text("\n".join(lines) + "\n")
    code, out = _bbe("--tau", "0.5", "--delta", "0.01", "--run", str(run), "--alpha", "auto", "--no-plot")
    assert code == 0, out
    doc = _doc(run / "bbe.json")
    raw = {row["system"]: row["raw"] for row in doc["systems"]}
    assert raw == {"X": pytest.approx(0.5), "Y": pytest.approx(0.8)}  # Y ranks first, as in the report
    cals = {c["judge"]: c for c in doc["calibrations"]}
    assert cals["X"]["d"] == cals["Y"]["d"] == 20
    assert cals["X"]["units"] == 10 and cals["X"]["units_dropped"] == {"invalid": 10}


def test_a_judge_with_every_answer_invalid_is_listed_and_the_others_calibrated(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.05, "b": 0.1, "dead": 0.1}, items=20)
    path = run / "judgments.jsonl"
    lines = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec["judge"] == "dead":
            rec.update(verdict="invalid", winner="invalid")
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n")
    code, out = _bbe("--tau", "0.5", "--delta", "0.01", "--run", str(run), "--alpha", "auto", "--no-plot")
    assert code == 0, out
    doc = _doc(run / "bbe.json")
    assert [c["judge"] for c in doc["calibrations"]] == ["a", "b"]
    assert "dead" in doc["judges_skipped"] and "note: judge dead not calibrated" in out
