"""The first hour, third pass: what still cost a new user time, one test per item."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


# 2 --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, said",
    [
        ("sim:nonexistent", "no scenario 'nonexistent'"),
        ("sim:unbiased/x", "must be an integer seed"),
        ("local:nonexistent", "unknown local model 'local:nonexistent'"),
        ("local:missing.gguf", "local model file not found"),
    ],
)
@pytest.mark.parametrize("command", ["judge", "run"])
def test_2_unknown_sim_and_local_names_are_refused_before_anything_is_written(
    tmp_path: Path, spec: str, said: str, command: str
) -> None:
    run = tmp_path / "r"
    args = [command, "--run", str(run), "--model", spec, "--dry-run"]
    if command == "judge":
        args += ["--dataset", "sample"]
    code, out = invoke(*args)
    assert code == 1, out
    assert said in out
    assert not run.exists()  # no manifest, plan or variants: nothing was written
    code, out = invoke(*[a for a in args if a != "--dry-run"], *(["--yes"] if command == "run" else []))
    assert code == 1 and said in out
    assert not run.exists()


def test_2_known_sim_and_local_names_still_pass_the_early_check(tmp_path: Path) -> None:
    for spec in ("sim:unbiased", "sim:unbiased/7", "local"):
        code, out = invoke("judge", "--run", str(tmp_path / spec.replace(":", "_")), "--dataset", "sample",
                           "--model", spec, "--dry-run")
        assert code == 0, (spec, out)
