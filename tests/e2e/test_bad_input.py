"""Bad input end to end: every malformed dataset, variants, template and config file makes the CLI
exit non-zero with a one-line reason naming the file, and leaves the run folder byte for byte as it
was (or uncreated)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from tests.e2e.helpers import private_configs, tree_digest, write_items, write_variants

BAD_DATA = Path(__file__).resolve().parents[1] / "data" / "bad"
runner = CliRunner()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Items, variants and a run folder holding a valid translate stage (imported variants); shared
    by the module's tests, which must all leave it as it is."""
    tmp_path = tmp_path_factory.mktemp("workspace")
    items = write_items(tmp_path / "items.jsonl", 6)
    variants = write_variants(items, tmp_path / "variants.jsonl")
    result = runner.invoke(
        app,
        ["translate", "--run", str(tmp_path / "run"), "--dataset", str(items), "--variants", str(variants)],
    )
    assert result.exit_code == 0, result.stderr
    return tmp_path


def _refused(args: list[str], named: Path, runs: list[Path]) -> str:
    """Run the CLI; check exit != 0, the one-line reason names `named`, and no run folder changed."""
    before = [tree_digest(r) for r in runs]
    existed = [r.exists() for r in runs]
    result = runner.invoke(app, args)
    assert result.exit_code != 0, (args, result.stdout)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.stderr.strip().splitlines()
    assert lines, f"no reason on stderr for {args}"
    assert lines[0].startswith("error: "), lines
    assert str(named) in lines[0] or named.name in lines[0], (named, lines[0])
    assert "Traceback" not in result.stderr
    for run, digest, was in zip(runs, before, existed, strict=True):
        assert run.exists() == was, f"{run} {'vanished' if was else 'was created'} by {args}"
        assert tree_digest(run) == digest, f"{run} changed by {args}"
    return lines[0]


BAD_DATASETS = sorted(p.name for p in BAD_DATA.iterdir()) if BAD_DATA.is_dir() else []


@pytest.mark.parametrize("name", BAD_DATASETS)
def test_bad_dataset_file(workspace: Path, tmp_path: Path, name: str) -> None:
    bad = BAD_DATA / name
    run, fresh = workspace / "run", tmp_path / "fresh"
    variants = workspace / "variants.jsonl"
    # into a run that already holds a valid stage, and into a folder that does not exist yet
    for target in (run, fresh):
        _refused(
            ["judge", "--run", str(target), "--dataset", str(bad), "--model", "sim:default"],
            bad,
            [run, fresh],
        )
    _refused(
        ["translate", "--run", str(fresh), "--dataset", str(bad), "--variants", str(variants)],
        bad,
        [run, fresh],
    )


def _variant_line(**override: object) -> str:
    base: dict[str, object] = {
        "item_id": "q000",
        "condition": "zh",
        "instruction": "任务",
        "output_1": "回答一",
        "output_2": "回答二",
    }
    base.update(override)
    return json.dumps({k: v for k, v in base.items() if v is not None}, ensure_ascii=False)


BAD_VARIANTS: dict[str, Callable[[], bytes]] = {
    "not_json": lambda: (_variant_line() + "\n{not json\n").encode(),
    "not_object": lambda: b'["q000", "zh"]\n',
    "missing_field": lambda: (_variant_line(output_2=None) + "\n").encode(),
    "wrong_type": lambda: (_variant_line(output_1=3) + "\n").encode(),
    "unknown_item": lambda: (_variant_line(item_id="nope") + "\n").encode(),
    "unknown_condition": lambda: (_variant_line(condition="xx") + "\n").encode(),
    "duplicate": lambda: (_variant_line() + "\n" + _variant_line() + "\n").encode(),
    "not_utf8": lambda: _variant_line().encode() + b"\n" + b'{"item_id": "q001", "instruction": "\xe9"}\n',
    "empty": lambda: b"",
}


@pytest.mark.parametrize("case", sorted(BAD_VARIANTS))
def test_bad_variants_file(workspace: Path, tmp_path: Path, case: str) -> None:
    bad = tmp_path / f"variants_{case}.jsonl"
    bad.write_bytes(BAD_VARIANTS[case]())
    items = workspace / "items.jsonl"
    run, fresh = workspace / "run", tmp_path / "fresh"
    _refused(
        ["translate", "--run", str(run), "--dataset", str(items), "--variants", str(bad)], bad, [run, fresh]
    )


@pytest.mark.parametrize("case", sorted(BAD_VARIANTS))
def test_bad_variants_file_creates_no_run(workspace: Path, tmp_path: Path, case: str) -> None:
    bad = tmp_path / f"variants_{case}.jsonl"
    bad.write_bytes(BAD_VARIANTS[case]())
    items = workspace / "items.jsonl"
    fresh = tmp_path / "fresh"
    _refused(
        ["translate", "--run", str(fresh), "--dataset", str(items), "--variants", str(bad)], bad, [fresh]
    )


GOOD_USER = "[Instruction]\\n{instruction}\\n[Response A]\\n{output_a}\\n[Response B]\\n{output_b}"
BAD_TEMPLATES = {
    "toml_syntax": 'name = "t"\nuser = "{output_a} {output_b}\n',  # unterminated string
    "unknown_placeholder": f'name = "t"\nuser = "{GOOD_USER} {{verdict_hint}}"\n',
    "missing_output_b": 'name = "t"\nuser = "{instruction} {output_a}"\n',
    "unknown_key": f'name = "t"\nuser = "{GOOD_USER}"\ntemprature = 0\n',
    "bad_answer_format": f'name = "t"\nanswer_format = "yaml"\nuser = "{GOOD_USER}"\n',
    "no_user": 'name = "t"\n',
}


@pytest.mark.parametrize("case", sorted(BAD_TEMPLATES))
def test_bad_template(workspace: Path, tmp_path: Path, case: str) -> None:
    bad = tmp_path / f"template_{case}.toml"
    bad.write_text(BAD_TEMPLATES[case], encoding="utf-8")
    run, fresh = workspace / "run", tmp_path / "fresh"
    _refused(
        ["judge", "--run", str(run), "--model", "sim:default", "--template", str(bad)], bad, [run, fresh]
    )
    items = workspace / "items.jsonl"
    _refused(
        [
            "judge",
            "--run",
            str(fresh),
            "--dataset",
            str(items),
            "--model",
            "sim:default",
            "--template",
            str(bad),
        ],
        bad,
        [run, fresh],
    )


BAD_CONDITIONS = {
    "toml_syntax": "[conditions.zh\nlanguage = 'Chinese'\n",
    "unknown_key": '[conditions.zh]\nlanguage = "Chinese"\nscirpt = "Han"\n',
    "bad_kind": '[conditions.zh]\nlanguage = "Chinese"\nkind = "dialect"\n',
    "bad_name": '[conditions.EN]\nlanguage = "English"\n',
    "no_tables": 'title = "nothing here"\n',
}
BAD_JUDGES = {
    "toml_syntax": "[judges.x]\nspec = \n",
    "unknown_key": '[judges.x]\nspec = "sim:default"\nconcurrancy = 4\n',
    "bad_type": '[judges.x]\nspec = "sim:default"\nconcurrency = "many"\n',
    "unknown_provider": '[judges.x]\nspec = "nosuch:model"\n',
    "unknown_top": '[judge.x]\nspec = "sim:default"\n',
}


@pytest.mark.parametrize(
    ("file", "case", "text"),
    [("conditions.toml", c, t) for c, t in sorted(BAD_CONDITIONS.items())]
    + [("judges.toml", c, t) for c, t in sorted(BAD_JUDGES.items())],
    ids=[f"conditions-{c}" for c in sorted(BAD_CONDITIONS)] + [f"judges-{c}" for c in sorted(BAD_JUDGES)],
)
def test_bad_config(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file: str, case: str, text: str
) -> None:
    configs = private_configs(tmp_path / "configs")
    bad = configs / file
    bad.write_text(text, encoding="utf-8")
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    run, fresh = workspace / "run", tmp_path / "fresh"
    model = "x" if file == "judges.toml" else "sim:default"
    _refused(["judge", "--run", str(run), "--model", model], bad, [run, fresh])
    if file == "conditions.toml":
        items, variants = workspace / "items.jsonl", workspace / "variants.jsonl"
        _refused(
            ["translate", "--run", str(run), "--dataset", str(items), "--variants", str(variants)],
            bad,
            [run, fresh],
        )


@pytest.mark.parametrize("case", sorted(BAD_CONDITIONS))
def test_bad_conditions_creates_no_run(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    configs = private_configs(tmp_path / "configs")
    bad = configs / "conditions.toml"
    bad.write_text(BAD_CONDITIONS[case], encoding="utf-8")
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    items, variants, fresh = workspace / "items.jsonl", workspace / "variants.jsonl", tmp_path / "fresh"
    _refused(
        ["translate", "--run", str(fresh), "--dataset", str(items), "--variants", str(variants)], bad, [fresh]
    )
