"""Issue 42, a probe is 0-1 files: a probe file in the configs folder (no code) is named in
`run --help` and judged by `judgebench run --probes NAME`; a new kind of transform is one module
that registers itself (this test module plays it). Without the file the probe is neither listed
nor accepted."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.config.paths import configs_dir
from judgebench.probes.transforms import (
    Params,
    TextContext,
    TransformInfo,
    register_transform,
    unregister_transform,
)
from judgebench.records import Judgment, Variant
from judgebench.store.run_folder import last_per_key, read_jsonl

runner = CliRunner()
MARK = "(as far as I know)"


def _hedge(text: str, params: Params, ctx: TextContext) -> str:
    """The toy transform: a hedge put after the text."""
    return f"{text} {params.get('hedge', MARK)}"


TOY_PROBE = f"""
name = "toy"
description = "rejected output hedged"
[[steps]]
transform = "toy_hedge"
fields = ["rejected"]
params = {{ hedge = "{MARK}" }}
"""


@pytest.fixture
def toy_transform() -> Iterator[None]:
    register_transform("toy_hedge", TransformInfo(_hedge, summary="a hedge appended"))
    try:
        yield
    finally:
        unregister_transform("toy_hedge")


def _configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, with_toy: bool) -> None:
    configs = shutil.copytree(configs_dir(), tmp_path / "configs")
    if with_toy:
        (configs / "probes" / "toy.toml").write_text(TOY_PROBE, encoding="utf-8")
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))


def _help(command: str) -> str:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _run(run: Path) -> tuple[int, str]:
    args = ["run", "--run", str(run), "--model", "sim:unbiased", "--dataset", "sample", "--probes", "toy"]
    result = runner.invoke(app, [*args, "--yes"])
    return result.exit_code, result.output


def test_a_probe_file_and_a_transform_module_are_listed_and_judged(
    toy_transform: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configs(tmp_path, monkeypatch, with_toy=True)
    for command in ("run", "judge", "bbe"):
        assert "declared: format, length, template, toy; or all" in _help(command), command
    run = tmp_path / "run"
    code, out = _run(run)
    assert code == 0, out
    variants = [v for v in read_jsonl(run / "variants.jsonl", Variant) if v.condition == "toy"]
    assert variants and all(v.source == "probe:toy" for v in variants)
    assert all(MARK in v.output_1 + v.output_2 for v in variants)
    judged = last_per_key(read_jsonl(run / "judgments.jsonl", Judgment), key=lambda j: j.call_key())
    assert len([j for j in judged.values() if j.condition == "toy"]) == 2 * len(variants)


def test_without_the_file_the_probe_is_neither_listed_nor_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configs(tmp_path, monkeypatch, with_toy=False)
    assert "declared: format, length, template; or all" in _help("run")
    code, out = _run(tmp_path / "run")
    assert code != 0 and "unknown probe 'toy'" in " ".join(out.split())
