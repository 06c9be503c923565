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
    "en_differs_from_the_dataset": lambda: (_variant_line(condition="en") + "\n").encode(),
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


def _wrong_kind_cases(ws: Path, tmp: Path) -> dict[str, tuple[list[str], Path]]:
    a_file = tmp / "a-file"
    a_file.write_text("x\n")
    a_dir = tmp / "a-dir"
    a_dir.mkdir(exist_ok=True)
    items, variants, run = str(ws / "items.jsonl"), str(ws / "variants.jsonl"), str(ws / "run")
    f, d = str(a_file), str(a_dir)
    sim = ["--model", "sim:default"]
    return {
        "judge --run FILE": (["judge", "--run", f, *sim, "--dataset", items], a_file),
        "translate --run FILE": (
            ["translate", "--run", f, "--dataset", items, "--variants", variants],
            a_file,
        ),
        "report --run FILE": (["report", "--run", f], a_file),
        "run --run FILE": (["run", "--run", f, *sim], a_file),
        "import --run FILE": (
            ["import", "llmbar-results", "--run", f, "--data-dir", str(tmp), "--evaluator", "X"],
            a_file,
        ),
        "translate --variants DIR": (["translate", "--run", run, "--dataset", items, "--variants", d], a_dir),
        "judge --template DIR": (["judge", "--run", run, *sim, "--template", d], a_dir),
        "judge --import-batch DIR": (
            ["judge", "--run", run, "--model", "openai-compatible:m", "--import-batch", d],
            a_dir,
        ),
        "bbe --scores DIR": (
            ["bbe", "--tau", "0.5", "--delta", "0.01", "--scores", d, "--scale", "1", "10"],
            a_dir,
        ),
        "data show DIR": (["data", "show", d], a_dir),
    }


WRONG_KIND = [
    "judge --run FILE",
    "translate --run FILE",
    "report --run FILE",
    "run --run FILE",
    "import --run FILE",
    "translate --variants DIR",
    "judge --template DIR",
    "judge --import-batch DIR",
    "bbe --scores DIR",
    "data show DIR",
]


@pytest.mark.parametrize("case", WRONG_KIND)
def test_a_path_of_the_wrong_kind_is_one_line_naming_it(workspace: Path, tmp_path: Path, case: str) -> None:
    """A file where a run folder is expected, a folder where a file is: a reason naming the path,
    never a traceback, and the workspace's run untouched."""
    args, named = _wrong_kind_cases(workspace, tmp_path)[case]
    _refused(args, named, [workspace / "run"])


def test_bbe_out_pointing_at_a_folder(tmp_path: Path) -> None:
    """Refused before any work: the reason names the folder given, and nothing is written."""
    from tests.bbe.helpers import write_run

    run = write_run(tmp_path / "run", judges={"j": 0.0}, items=10)
    out = tmp_path / "out-dir"
    out.mkdir()
    line = _refused(
        ["bbe", "--tau", "0.5", "--delta", "0.01", "--run", str(run), "--out", str(out)], out, [run]
    )
    assert f"--out {out} is a folder" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out-dir", "run"] and not any(out.iterdir())


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["selftest", "--seed", "abc"], "--seed"),
        (["bbe", "--tau", "0.5", "--delta", "0.01", "--scale", "a", "b"], "--scale"),
        (["judge", "--run", "r", "--model", "sim:default", "--concurrency", "0"], "--concurrency"),
        (["no-such-command"], "no-such-command"),
    ],
)
def test_usage_errors_are_one_line_through_the_console_script(
    tmp_path: Path, args: list[str], flag: str
) -> None:
    """Through `main()` (what the console script runs), not CliRunner: click's boxed panel becomes
    `error: <reason>` on the first stderr line, exit 2."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "judgebench", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and flag in lines[0], lines
    assert len(lines) == 2 and "--help" in lines[1], lines
    assert "Traceback" not in proc.stderr and not (tmp_path / "r").exists()


@pytest.mark.parametrize(("conditions", "expected"), [("", "names no condition"), ("ja", "nothing to judge")])
def test_judge_with_nothing_to_judge_is_an_error(workspace: Path, conditions: str, expected: str) -> None:
    """An empty --conditions, or a condition the run has no variants for, plans no call: an error
    that says so, not an empty success."""
    run = workspace / "run"
    line = _refused(
        ["judge", "--run", str(run), "--model", "sim:default", "--conditions", conditions], run, [run]
    )
    assert expected in line


def test_en_lines_that_repeat_the_dataset_are_accepted(workspace: Path, tmp_path: Path) -> None:
    """INTERFACE: en is the dataset itself and need not be listed; a file that lists it anyway loads."""
    items = workspace / "items.jsonl"
    first = json.loads(items.read_text().splitlines()[0])
    en = {"item_id": first["id"], "condition": "en"} | {
        k: first[k] for k in ("instruction", "output_1", "output_2")
    }
    en["output_2"] = en["output_2"].replace("\n", "\r\n") + "\n"  # line endings, trailing newline aside
    variants = tmp_path / "with_en.jsonl"
    variants.write_text((workspace / "variants.jsonl").read_text() + json.dumps(en) + "\n")
    run = tmp_path / "run"
    result = runner.invoke(
        app, ["translate", "--run", str(run), "--dataset", str(items), "--variants", str(variants)]
    )
    assert result.exit_code == 0, result.output
    conditions = {json.loads(line)["condition"] for line in (run / "variants.jsonl").read_text().splitlines()}
    assert "en" not in conditions
