"""`judgebench bbe`'s PROTOCOL §5b flags: --certificate, --sensitivity, --verify-kind, --calibrate-from."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from judgebench.cli import app
from tests.bbe.helpers import write_run

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
COMMON = ("bbe", "--tau", "0.5", "--delta", "0.01", "--no-plot")


def test_certificate_and_sensitivity_flags_reach_bbe_json(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.3}, items=60)
    out = tmp_path / "lie.json"
    result = runner.invoke(
        app, [*COMMON, "--run", str(run), "--alpha", "1", "--sensitivity", "0.001", "--verify", "1000",
              "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    cal = json.loads(out.read_text())["calibrations"][0]
    assert cal["sensitivity_source"] == "fixed" and cal["sensitivity"] == 0.001
    assert cal["certificate"] == "markov" and cal["verify"]["kind"] == "holdout"
    assert cal["verify"]["passed"] is False and "FAIL" in result.output
    for key in ("certificates", "alpha_needed", "violation_probability", "utility"):
        assert key in cal
    assert {"name", "bound", "alpha_max", "sigma"} <= set(cal["certificates"][0])


def test_named_certificate_that_does_not_apply_is_refused(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.3}, items=20)
    result = runner.invoke(
        app, [*COMMON, "--run", str(run), "--certificate", "exact", "--sensitivity", "0.1"]
    )
    assert result.exit_code != 0 and "does not apply" in result.output


def test_calibrate_from_releases_the_bundled_leaderboard(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"sim:x": 0.15}, items=60)
    out = tmp_path / "lb.json"
    result = runner.invoke(
        app, [*COMMON, "--alpha", "auto", "--calibrate-from", str(run), "--judge", "sim:x", "--scores",
              str(REPO / "data" / "bbe" / "leaderboard_sim.csv"), "--scale", "0", "1", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["transfer_assumption"] and "Transfer assumption" in result.output
    assert doc["certificate"] in ("exact_ucb", "range", "quantile") and doc["utility"]["pairs"] == 15


def test_calibrate_from_needs_judge_and_scores(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.1}, items=10)
    result = runner.invoke(app, [*COMMON, "--run", str(run), "--calibrate-from", str(run)])
    assert result.exit_code != 0


def test_fresh_verification_judges_new_neighbours(tmp_path: Path) -> None:
    run = tmp_path / "run"
    made = runner.invoke(app, ["run", "--model", "sim:default", "--run", str(run), "--yes"])
    assert made.exit_code == 0, made.output
    released = json.loads((run / "bbe.json").read_text())  # `run`'s release: the carry-over default
    assert released["carries_over"] is True and released["certificate"] != "exact"
    fresh = ("--verify", "500", "--verify-kind", "fresh", "--perturb-units", "20")
    priced = runner.invoke(app, [*COMMON, "--run", str(run), *fresh, "--dry-run"])
    assert priced.exit_code == 0 and "dry run" in priced.output and "20" in priced.output
    assert not (run / "bbe_neighbours.jsonl").exists()  # priced, nothing called
    result = runner.invoke(
        app, [*COMMON, "--run", str(run), "--alpha", "auto", "--verify", "500", "--verify-kind", "fresh",
              "--perturb-units", "20"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    cal = json.loads((run / "bbe.json").read_text())["calibrations"][0]
    v = cal["verify"]
    assert v["kind"] == "fresh" and v["passed"] is True and 0 < v["pairs"] <= 20
    assert cal["certificate"] in ("exact_ucb", "range", "quantile")  # carries over to the new neighbours
    judged = [json.loads(line) for line in (run / "bbe_neighbours.jsonl").read_text().splitlines()]
    assert {j["condition"] for j in judged} == {"fresh-formatting-1000003"}

    # --repeats K: K re-asks of identical en inputs, each a recorded call, the cache off; the jitter
    # is reported beside the sensitivity
    again = runner.invoke(app, [*COMMON, "--run", str(run), "--alpha", "auto", "--repeats", "2",
                                "--perturb-units", "10"])  # fmt: skip
    assert again.exit_code == 0, again.output
    cal = json.loads((run / "bbe.json").read_text())["calibrations"][0]
    assert cal["jitter_measured"] is not None and cal["jitter_measured"] >= 0
    judged = [json.loads(line) for line in (run / "bbe_neighbours.jsonl").read_text().splitlines()]
    repeats = [j for j in judged if j["condition"].startswith("repeat-")]
    assert len(repeats) == 20 and {j["condition"] for j in repeats} == {"repeat-1", "repeat-2"}
