"""Issue 20, the first hour as a new user: one CLI test per surprise, offline (sim judges, a toy
LLMBar copy, an unreachable translator), with no key in the environment."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.data import LLMBAR_SUBSETS

runner = CliRunner()
SIM = "sim:selftest-unbiased"
BIASED = "sim:selftest-always-a"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "DEEPSEEK_API_KEY")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # a toy LLMBar copy's checksums differ


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (*KEYS, "OPENAI_COMPATIBLE_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def fake_llmbar(root: Path, evaluators: tuple[str, ...] = ("Toy/Vanilla", "Toy/NoRules")) -> Path:
    """Two items per LLMBar subset, each evaluator's published verdicts for every subset."""
    for subset in LLMBAR_SUBSETS:
        folder = root / "Dataset" / "LLMBar" / subset
        folder.mkdir(parents=True)
        items = [
            {"input": f"{subset} q{i}", "output_1": f"a{i}", "output_2": f"b{i}", "label": 1 + i % 2}
            for i in range(2)
        ]
        (folder / "dataset.json").write_text(json.dumps(items))
        for name in evaluators:
            verdicts = [
                {
                    **item,
                    "results": [
                        {
                            "swap = False": {"completion": ["Output (a)", "stop"], "winner": "1"},
                            "swap = True": {"completion": ["Output (b)", "stop"], "winner": "2"},
                        }
                    ],
                }
                for item in items
            ]
            out = folder / "evaluators" / name
            out.mkdir(parents=True)
            (out / "result.json").write_text(json.dumps(verdicts))
    return root


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env=env)
    return result.exit_code, result.output


# 1 --------------------------------------------------------------------------------------------------


def test_1_import_takes_every_evaluator(tmp_path: Path) -> None:
    root, run = fake_llmbar(tmp_path / "llmbar"), tmp_path / "run"
    code, out = invoke(
        "import", "llmbar-results", "--run", str(run), "--data-dir", str(root),
        "--evaluator", "Toy/Vanilla", "--evaluator", "Toy/NoRules",
    )  # fmt: skip
    assert code == 0, out
    judges = {json.loads(line)["judge"] for line in (run / "judgments.jsonl").read_text().splitlines()}
    assert judges == {"Toy/Vanilla", "Toy/NoRules"}
    assert "'Toy/Vanilla'" in out and "'Toy/NoRules'" in out


# 2 --------------------------------------------------------------------------------------------------


def test_2_missing_key_is_said_before_the_estimate_and_the_question(tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, out = invoke("run", "--run", str(run), "--model", "openai:gpt-4.1-mini")
    assert code == 1, out
    assert "OPENAI_API_KEY" in out and "nothing was called" in out
    assert "Go on?" not in out and "dry run" not in out
    assert not run.exists()  # no partial run folder
    # a bad spec among several: before anything is loaded or estimated
    code, out = invoke("run", "--run", str(run), "--model", SIM, "--model", "nope:x", "--dry-run")
    assert code == 1 and "unknown provider 'nope'" in out
    # the question, when it comes, is not titled as a dry run
    args = ["run", "--run", str(run), "--model", "openai:gpt-4.1-mini", "--limit", "1"]
    result = runner.invoke(app, args, input="n\n", env={"OPENAI_API_KEY": "sk-test-not-used"})
    out = result.output
    assert "Go on?" in out and "estimate: nothing called yet" in out and "dry run" not in out
    assert result.exit_code == 1 and "stopped before spending anything" in out
    assert not run.exists()


# 3 --------------------------------------------------------------------------------------------------


def _failed_translation(run: Path) -> None:
    code, out = invoke(
        "translate", "--run", str(run), "--dataset", "sample", "--limit", "2",
        "--translator", "openai-compatible:m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0",
    )  # fmt: skip
    assert code == 3, out


def test_3_unfinished_translation_is_not_judged_silently(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _failed_translation(run)
    code, out = invoke("judge", "--run", str(run), "--model", SIM, "--dry-run")
    assert code == 1
    assert "translate stage did not finish for ls, zh" in out and "--conditions en" in out
    code, out = invoke("judge", "--run", str(run), "--model", SIM, "--dry-run", "--conditions", "en")
    assert code == 0, out  # asked for: judge what exists


def test_3_translate_without_key_touches_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, out = invoke(
        "translate", "--run", str(run), "--dataset", "sample", "--translator", "openai:gpt-4.1-mini"
    )
    assert code == 1 and "OPENAI_API_KEY" in out
    assert not run.exists()


# 4 --------------------------------------------------------------------------------------------------


def test_4_imported_run_records_its_copy_and_specs_are_checked_first(tmp_path: Path) -> None:
    root, run = fake_llmbar(tmp_path / "llmbar"), tmp_path / "run"
    code, out = invoke(
        "import", "llmbar-results", "--run", str(run), "--data-dir", str(root), "--evaluator", "Toy/Vanilla"
    )
    assert code == 0, out
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["dataset"]["data_dir"] == str(root.resolve())
    # a bad spec is the error, before the dataset is loaded (no download attempt)
    code, out = invoke("judge", "--run", str(run), "--model", "opnai:gpt-4.1-mini", "--dry-run")
    assert code == 1 and "unknown provider 'opnai'" in out
    # the recorded copy is used: judging works offline without --data-dir
    (root / "Dataset").rename(tmp_path / "moved")  # gone: the error names the recorded folder
    code, out = invoke("judge", "--run", str(run), "--model", SIM, "--dry-run")
    assert code == 1 and str(root) in out
    (tmp_path / "moved").rename(root / "Dataset")
    code, out = invoke("judge", "--run", str(run), "--model", SIM, "--dry-run")
    assert code == 0, out


# 5 --------------------------------------------------------------------------------------------------


def test_5_progress_lines_off_a_terminal_and_the_end_of_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = runner.invoke(
        app,
        ["run", "--run", str(run), "--model", SIM, "--model", BIASED, "--no-cache"],
        env={"JUDGEBENCH_PROGRESS_SECONDS": "0"},
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("judge ")]
    assert lines and "/480 calls" in lines[-1] and "/s, ETA " in lines[-1] and "$" in lines[-1]
    # the verdicts, then where the report is (30 items cannot show a +5-point position limit: issue 40)
    assert "INCONCLUSIVE sim:selftest-unbiased on zh" in result.stdout
    assert f"report: {run / 'report.html'}" in result.stdout
    code, out = invoke("report", "--run", str(run), "--no-html", "--bootstrap", "0")
    assert code == 0 and "A-BB: bias-bounded rankings" in out and "Rank bias-bounded" in out


# 6 --------------------------------------------------------------------------------------------------

COMMANDS = [
    ["run"], ["translate"], ["judge"], ["report"], ["bbe"], ["selftest"],
    ["import", "llmbar-results"], ["data", "show"],
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c))
def test_6_help_shows_placeholders_not_python_types(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0
    for python in ("<bool>", "<str>", "<int", "<float", "list[str]", "range]", "[x>="):
        assert python not in result.output, (python, result.output)
    assert "(default " not in result.output  # one way of writing defaults: [default: X]


def test_6_help_details() -> None:
    def help_of(*command: str) -> str:
        return runner.invoke(app, [*command, "--help"], terminal_width=200).output

    assert "[default: 1000]" in help_of("report") and "[default: 0]" in help_of("report")
    assert "NAME" not in help_of("import", "llmbar-results").replace("--evaluator", "")
    assert "--reask" in help_of("translate") and "--max-reasks" in help_of("translate")
    assert "--subset" in help_of("run")
    assert re.search(r"--run\s+DIR", help_of("judge")) and re.search(r"--limit\s+N ", help_of("judge"))


def test_6_translate_reask_is_the_judge_spelling(tmp_path: Path) -> None:
    for flag in ("--reask", "--max-reasks"):
        code, out = invoke(
            "translate", "--run", str(tmp_path / flag), "--dataset", "sample", "--translator", "local",
            flag, "1", "--dry-run",
        )  # fmt: skip
        assert code == 0, out


# 7 --------------------------------------------------------------------------------------------------


def test_7_bare_model_name_and_llmbar_subfolder(tmp_path: Path) -> None:
    code, out = invoke(
        "judge", "--run", str(tmp_path / "r"), "--dataset", "sample", "--model", "gpt-4.1-mini"
    )
    assert code == 1
    assert "did you mean openai:gpt-4.1-mini?" in out
    assert "judges.toml" in out and "gpt41mini" in out
    root = fake_llmbar(tmp_path / "llmbar", evaluators=())
    code, out = invoke("data", "show", "llmbar", "--data-dir", str(root / "Dataset" / "LLMBar"))
    assert code == 1 and f"pass --data-dir {root.resolve()}" in out


# 8 --------------------------------------------------------------------------------------------------


def test_8_an_infeasible_rerun_keeps_the_last_good_release(tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, out = invoke("run", "--run", str(run), "--model", SIM, "--model", BIASED)
    assert code == 0, out
    good = json.loads((run / "bbe.json").read_text())
    assert all(c["feasible"] for c in good["calibrations"])
    code, out = invoke(
        "bbe", "--tau", "0.5", "--delta", "0.01", "--run", str(run), "--alpha", "1"
    )  # infeasible
    assert code == 3
    assert json.loads((run / "bbe.json").read_text()) == good
    beside = json.loads((run / "bbe.infeasible.json").read_text())
    assert not all(c["feasible"] for c in beside["calibrations"])
    assert "bbe.infeasible.json" in out and "the last feasible release stays in" in out
    # asked for (--out): written there
    code, _ = invoke(
        "bbe",
        "--tau",
        "0.5",
        "--delta",
        "0.01",
        "--run",
        str(run),
        "--alpha",
        "1",
        "--out",
        str(run / "bbe.json"),
    )
    assert code == 3 and not all(
        c["feasible"] for c in json.loads((run / "bbe.json").read_text())["calibrations"]
    )


# 9 --------------------------------------------------------------------------------------------------


def test_9_selftest_leaves_no_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    code, out = invoke("selftest", "--items", "50")
    assert "run folder: removed" in out, out
    assert code in (0, 1)  # 50 items: the verdict is not the point here
    assert list(scratch.iterdir()) == []


def test_9_report_on_imported_run(tmp_path: Path) -> None:
    root, run = fake_llmbar(tmp_path / "llmbar"), tmp_path / "run"
    invoke(
        "import", "llmbar-results", "--run", str(run), "--data-dir", str(root), "--evaluator", "Toy/Vanilla"
    )
    code, out = invoke("report", "--run", str(run), "--no-html", "--bootstrap", "0")
    assert code == 0, out
    md = (run / "report.md").read_text()
    assert "No item was flagged by the translation audit" not in md
    assert "nothing in this run was translated" in md
    judges = out[out.index("Judges and calls") :].splitlines()
    row = next(line for line in judges if "Toy/Vanilla" in line)
    assert row.count("—") >= 3  # input tokens, output tokens, cost: none to count
    shutil.rmtree(run)
