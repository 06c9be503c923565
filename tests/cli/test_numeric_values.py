"""Issue 29, class 3: every numeric flag and config value is finite and in range, or the command
stops before anything runs with one line naming the flag or file (no traceback, no run folder).

Before: `--max-cost nan` was no cap at all (NaN compares false) and every call was paid, exit 0;
`--max-cost -1`, `--poll-interval inf`, `--tau inf` and a NaN price in prices.toml were accepted."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.config.paths import configs_dir

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
SAMPLE = ["--dataset", "sample", "--model", "sim:default"]

BAD_FLAGS = [
    ("judge", "--max-cost", "nan"),
    ("judge", "--max-cost", "-1"),
    ("judge", "--max-cost", "inf"),
    ("judge", "--timeout", "inf"),
    ("judge", "--rpm", "inf"),
    ("judge", "--tpm", "inf"),
    ("judge", "--poll-interval", "nan"),
    ("judge", "--poll-interval", "inf"),
    ("judge", "--poll-interval", "-1"),
    ("translate", "--max-cost", "nan"),
    ("run", "--max-cost", "nan"),
    ("run", "--tau", "inf"),
    ("run", "--delta", "nan"),
    ("plan", "--latency", "nan"),
    ("plan", "--discordant", "inf"),
    ("plan", "--mde", "nan"),
]


def _args(command: str, run: Path) -> list[str]:
    if command == "plan":
        return ["plan", *SAMPLE]
    if command == "translate":
        return ["translate", "--run", str(run), "--dataset", "sample", "--translator", "sim:default"]
    return [command, "--run", str(run), *SAMPLE, *(["--yes"] if command == "run" else [])]


def _refused(result: Any, flag: str, run: Path) -> None:
    out = result.stdout + result.stderr
    assert "Traceback" not in out, out
    assert result.exception is None or isinstance(result.exception, SystemExit), out
    assert result.exit_code in (1, 2), out
    assert f"error: {flag}" in result.stderr, out
    assert not run.exists(), "the run folder was touched before the value was checked"


@pytest.mark.parametrize(
    ("command", "flag", "value"), BAD_FLAGS, ids=[f"{c} {f} {v}" for c, f, v in BAD_FLAGS]
)
def test_a_non_finite_or_out_of_range_flag_is_refused_before_anything_runs(
    tmp_path: Path, command: str, flag: str, value: str
) -> None:
    run = tmp_path / "run"
    result = runner.invoke(app, [*_args(command, run), flag, value])
    _refused(result, flag, run)


@pytest.mark.parametrize(("flag", "value"), [("--tau", "nan"), ("--margin", "inf"), ("--sensitivity", "inf")])
def test_bbe_refuses_non_finite_parameters(tmp_path: Path, flag: str, value: str) -> None:
    out = tmp_path / "bbe.json"
    scores = REPO / "data" / "bbe" / "leaderboard_sim.csv"
    args = ["bbe", "--tau", "0.5", "--delta", "0.05", "--scores", str(scores), "--scale", "0", "1"]
    result = runner.invoke(app, [*args, "--out", str(out), flag, value])
    assert result.exit_code in (1, 2) and f"error: {flag}" in result.stderr, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not out.exists()


def test_an_ordinary_cap_still_runs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = runner.invoke(
        app,
        ["judge", "--run", str(run), *SAMPLE, "--limit", "3", "--max-cost", "0.5", "--poll-interval", "5"],
    )
    assert result.exit_code == 0, result.stderr
    assert (run / "judgments.jsonl").exists()


@pytest.mark.parametrize(
    ("key", "value"), [("rpm", "nan"), ("timeout", "inf"), ("temperature", "nan"), ("backoff_max", "-1.0")]
)
def test_a_non_finite_judges_toml_value_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str
) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "judges.toml").write_text(
        f'[judges.j]\nspec = "sim:default"\n{key} = {value}\n', encoding="utf-8"
    )
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    run = tmp_path / "run"
    result = runner.invoke(app, ["judge", "--run", str(run), "--dataset", "sample", "--model", "j"])
    assert result.exit_code in (1, 2), result.stdout + result.stderr
    assert "judges.toml" in result.stderr and key in result.stderr, result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_nan_price_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN price made every `--max-cost` check pass (NaN compares false)."""
    configs = tmp_path / "configs"
    shutil.copytree(configs_dir(), configs)
    prices = configs / "prices.toml"
    prices.write_text(prices.read_text() + "\n[toy]\nm = { input = nan, output = 1.0 }\n", encoding="utf-8")
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    result = runner.invoke(app, ["judge", "--run", str(tmp_path / "run"), *SAMPLE, "--max-cost", "1"])
    assert result.exit_code in (1, 2), result.stdout + result.stderr
    assert "prices.toml" in result.stderr and "toy.m" in result.stderr, result.stderr
    assert "finite" in result.stderr and "Traceback" not in result.stdout + result.stderr
