"""`judgebench bbe` releases by default (issue 40): `--alpha auto` as `run` has it, so the mission's
command and the README's table example release; a release that does not exist has no utility line."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from typer.testing import CliRunner

from judgebench.cli import app
from tests.bbe.helpers import write_run

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
FACTORS = REPO / "data" / "bbe" / "scores_factors.csv"


def test_the_missions_command_releases(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.1, "b": 0.3}, items=40)
    result = runner.invoke(app, ["bbe", "--tau", "0.5", "--delta", "0.01", "--run", str(run), "--no-plot"])
    assert result.exit_code == 0, result.output
    doc = json.loads((run / "bbe.json").read_text())
    assert doc["feasible"] is True and doc["parameters"]["alpha"] == "auto"
    assert all(c["feasible"] and c["alpha"] < 1 for c in doc["calibrations"])


def test_the_readmes_table_example_releases(tmp_path: Path) -> None:
    """The A-BB guide's `bbe --scores ... --scale 1 10 --verify 2000` line, on the bundled 1-10 table."""
    guide = REPO / "docs" / "guides" / "bbe.md"
    line = next(ln for ln in guide.read_text().splitlines() if "--scores" in ln and "verify 2000" in ln)
    args = shlex.split(line)[1:]  # drop `judgebench`
    args[args.index("--scores") + 1] = str(FACTORS)
    out = tmp_path / "bbe.json"
    result = runner.invoke(app, [*args, "--no-plot", "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["feasible"] is True and doc["calibrations"][0]["verify"]["passed"] is True
    assert "keep their order" in result.output


def test_an_infeasible_release_has_no_utility(tmp_path: Path) -> None:
    out = tmp_path / "bbe.json"
    result = runner.invoke(
        app, ["bbe", "--tau", "0.5", "--delta", "0.01", "--scores", str(FACTORS), "--scale", "1", "10",
              "--alpha", "1", "--no-plot", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    doc = json.loads(out.read_text())
    assert doc["feasible"] is False and doc["utility"] is None and doc["calibrations"][0]["utility"] is None
    assert "keep their order" not in result.output and "utility" not in result.output
