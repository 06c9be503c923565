"""LLMBar's published verdicts as judgments: golden values from statistics.json, and the import rules."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.analysis import ReportSettings
from judgebench.api import analyze_run, import_llmbar_results
from judgebench.api.report import ReportRequest, report
from judgebench.cli import (
    app,
    import_cmd,  # noqa: F401 - registers `judgebench import`
)
from judgebench.data import LLMBAR_SUBSETS
from judgebench.errors import InputError, RunDirError
from judgebench.records import Judgment
from judgebench.store.run_folder import JUDGMENTS, RunDir, read_jsonl

LLMBAR = Path(__file__).resolve().parents[2] / ".." / "shared" / "llmbar"
EVALUATORS = ["GPT-4/Vanilla", "GPT-4/Vanilla_NoRules", "ChatGPT/Vanilla", "ChatGPT/Vanilla_NoRules"]


def _ratio(text: str) -> tuple[int, int, float]:
    """'57 / 92 = 61.95652173913043%' -> (57, 92, 61.95652173913043)."""
    m = re.fullmatch(r"(\d+) / (\d+) = ([\d.]+)%", text)
    assert m, text
    return int(m[1]), int(m[2]), float(m[3])


@pytest.mark.llmbar
@pytest.mark.parametrize("evaluator", EVALUATORS)
def test_published_statistics_reproduced(tmp_path: Path, evaluator: str) -> None:
    """LLMBar accuracy = mean correctness over both orders = strict accuracy over answered judgments;
    positional agreement ('equal') = 1 - position inconsistency. The published files have no null
    winner, so the two conventions coincide exactly (with nulls, LLMBar counts a null as wrong, as we
    do, but compares null == null as agreement, where we leave the item out)."""
    if not LLMBAR.is_dir():
        pytest.skip("../shared/llmbar not present")
    run = RunDir(tmp_path / "run")
    summary = import_llmbar_results(run, LLMBAR, evaluator)
    assert summary.judgments == 838 and summary.invalid == 0 and not summary.missing_subsets
    analysis = analyze_run(run, ReportSettings(bootstrap_samples=0))
    recs = {
        (r.metric, r.subset): r
        for r in analysis.records
        if r.judge == evaluator and r.condition == "en" and not r.filtered
    }
    for subset in LLMBAR_SUBSETS:
        stats_path = LLMBAR / "Dataset" / "LLMBar" / subset / "evaluators" / evaluator / "statistics.json"
        published = json.loads(stats_path.read_text())
        acc = recs[("strict_accuracy", subset)]
        k_false, n_items, _ = _ratio(published["correct_False"])
        k_true, _, _ = _ratio(published["correct_True"])
        assert acc.n == 2 * n_items
        assert acc.extras()["k"] == k_false + k_true
        assert 100 * acc.value == pytest.approx(float(published["correct_average"].rstrip("%")), abs=1e-9)  # type: ignore[operator]
        k_equal, n_equal, pct_equal = _ratio(published["equal"])
        pos = recs[("position_inconsistency", subset)]
        assert pos.n == n_equal
        assert pos.extras()["k"] == n_equal - k_equal
        assert 100 * (1 - pos.value) == pytest.approx(pct_equal, abs=1e-9)  # type: ignore[operator]


def _fake_llmbar(root: Path, *, lengths: bool = False) -> Path:
    """A two-item-per-subset LLMBar tree with one published evaluator, Natural holding a null winner.
    `lengths`: output_1 short and output_2 long, so item 0's gold output (1) is the shorter one and
    item 1's (2) the longer one."""
    for subset in LLMBAR_SUBSETS:
        folder = root / "Dataset" / "LLMBar" / subset
        folder.mkdir(parents=True)
        one, two = ("short {i}", "a much longer answer, number {i}") if lengths else ("a{i}", "b{i}")
        items = [
            {
                "input": f"{subset} q{i}",
                "output_1": one.format(i=i),
                "output_2": two.format(i=i),
                "label": 1 + i % 2,
            }
            for i in range(2)
        ]
        (folder / "dataset.json").write_text(json.dumps(items))
        if subset == "Adversarial/Manual":
            continue  # this evaluator has no results for Manual
        results = []
        for i, item in enumerate(items):
            swap_winner = None if (subset == "Natural" and i == 1) else "2"
            results.append(
                {
                    **item,
                    "results": [
                        {
                            "swap = False": {"completion": ["Output (a)", "stop"], "winner": "1"},
                            "swap = True": {"completion": ["garbled", "stop"], "winner": swap_winner},
                        }
                    ],
                }
            )
        out = folder / "evaluators" / "Toy" / "Vanilla"
        out.mkdir(parents=True)
        (out / "result.json").write_text(json.dumps(results))
    return root


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_import_rules(tmp_path: Path) -> None:
    root = _fake_llmbar(tmp_path / "llmbar")
    run = RunDir(tmp_path / "run")
    summary = import_llmbar_results(run, root, "Toy/Vanilla")
    assert summary.judgments == 16 and summary.appended == 16 and summary.invalid == 1
    assert summary.missing_subsets == ["Adversarial/Manual"]
    lines = list(read_jsonl(run.file(JUDGMENTS), Judgment))
    by_key = {(j.item_id, j.order): j for j in lines}
    orig, swap = by_key[("Natural/0", "orig")], by_key[("Natural/0", "swap")]
    assert (orig.verdict, orig.winner, orig.label, orig.condition, orig.kind) == ("1", "A", 1, "en", "pair")
    assert (swap.verdict, swap.winner, swap.raw) == ("2", "A", "garbled")  # swap: output 2 was shown as A
    null = by_key[("Natural/1", "swap")]
    assert (null.verdict, null.winner, null.parse_error, null.error) == (
        "invalid",
        "invalid",
        "null winner in result.json",
        None,
    )
    manifest = run.load_manifest()
    assert manifest is not None and manifest.dataset is not None
    assert manifest.dataset.spec == "llmbar" and manifest.dataset.items == 10
    assert "Toy/Vanilla" in manifest.stages.imports
    # importing again adds nothing
    assert import_llmbar_results(run, root, "Toy/Vanilla").appended == 0
    assert len(list(read_jsonl(run.file(JUDGMENTS), Judgment))) == 16


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_unknown_evaluator_lists_published(tmp_path: Path) -> None:
    root = _fake_llmbar(tmp_path / "llmbar")
    with pytest.raises(InputError, match="published: Toy/Vanilla"):
        import_llmbar_results(RunDir(tmp_path / "run"), root, "GPT-5/Vanilla")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_mismatched_result_is_refused(tmp_path: Path) -> None:
    root = _fake_llmbar(tmp_path / "llmbar")
    path = root / "Dataset" / "LLMBar" / "Natural" / "evaluators" / "Toy" / "Vanilla" / "result.json"
    data = json.loads(path.read_text())
    data[0]["label"] = 2
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="different versions"):
        import_llmbar_results(RunDir(tmp_path / "run"), root, "Toy/Vanilla")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_cli(tmp_path: Path) -> None:
    root = _fake_llmbar(tmp_path / "llmbar")
    runner = CliRunner()
    run = tmp_path / "run"
    args = [
        "import",
        "llmbar-results",
        "--run",
        str(run),
        "--data-dir",
        str(root),
        "--evaluator",
        "Toy/Vanilla",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "imported 16 judgments" in result.output and "1 invalid" in result.output
    assert "Adversarial/Manual" in result.output
    bad = runner.invoke(app, [*args[:-1], "Nope/Vanilla"])
    assert bad.exit_code != 0
    shutil.rmtree(run)


@pytest.mark.llmbar
def test_an_import_into_a_run_being_judged_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    """The import appends to judgments.jsonl, the judge stage's file: it takes the judge lock."""
    if not (LLMBAR / "Dataset" / "LLMBar").is_dir():
        pytest.skip("../shared/llmbar is not present")
    run = tmp_path / "run"
    with RunDir(run).lock("judge"):  # a `judge` writing this folder
        with pytest.raises(RunDirError, match="is in use: another 'judge'"):
            import_llmbar_results(run, LLMBAR, "GPT-4/Vanilla")
        assert not (run / JUDGMENTS).exists()
    summary = import_llmbar_results(run, LLMBAR, "GPT-4/Vanilla")  # the lock released: it goes ahead
    assert summary.appended == summary.judgments > 0


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_an_imported_log_gets_the_length_split_in_metrics_the_report_and_the_verdict(tmp_path: Path) -> None:
    """The toy evaluator answers output 1 in orig and output 2 in swap (always "A"): on each subset
    right once on item 0 (gold shorter) and once on item 1 (gold longer), but for Natural's null."""
    root = _fake_llmbar(tmp_path / "llmbar", lengths=True)
    run = RunDir(tmp_path / "run")
    import_llmbar_results(run, root, "Toy/Vanilla")
    result = report(run, ReportRequest(settings=ReportSettings(bootstrap_samples=0), html=False))
    records = {
        (r["metric"], r["subset"]): r
        for r in json.loads((run.path / "metrics.json").read_text())
        if r["judge"] == "Toy/Vanilla" and r["condition"] == "en" and not r["filtered"]
    }
    short, long = records[("accuracy_gold_shorter", "all")], records[("accuracy_gold_longer", "all")]
    assert (short["k"], short["n"], long["k"], long["n"]) == (4, 8, 3, 8)
    assert records[("length_baseline_shorter_tokens", "all")]["value"] == 0.5
    assert records[("accuracy_gold_longer", "Natural")]["value"] == 0.0  # its swap answer was null
    markdown = (run.path / "report.md").read_text()
    assert "Length artefact" in markdown and "Gold longer %" in markdown
    (verdict,) = result.analysis.readiness
    assert any("where the gold output is the longer one (by tokens) 37.5%" in r for r in verdict.reasons)


@pytest.mark.llmbar
def test_llmbar_published_evaluators_against_the_length_artefact(tmp_path: Path) -> None:
    """LLMBar's own artefact (the gold output shorter by tokens in 294 of 419 items, longer in 111)
    and its published evaluators read against it: GPT-4 above chance on both sides, ChatGPT below
    chance where the gold output is the shorter one (it leans to the longer output)."""
    if not (LLMBAR / "Dataset" / "LLMBar").is_dir():
        pytest.skip("../shared/llmbar not present")
    run = RunDir(tmp_path / "run")
    for evaluator in ("GPT-4/Vanilla", "ChatGPT/Vanilla"):
        import_llmbar_results(run, LLMBAR, evaluator)
    analysis = analyze_run(run, ReportSettings(bootstrap_samples=200))
    recs = {(r.judge, r.metric): r for r in analysis.records if r.condition == "en" and r.subset == "all"
            and not r.filtered}  # fmt: skip
    rule = recs[("GPT-4/Vanilla", "length_baseline_shorter_tokens")]
    assert rule.n == 838 and rule.value == pytest.approx(0.718, abs=5e-4)
    assert recs[("GPT-4/Vanilla", "length_baseline_shorter_chars")].value == pytest.approx(0.728, abs=5e-4)
    gpt4_short, gpt4_long = (
        recs[("GPT-4/Vanilla", "accuracy_gold_shorter")],
        recs[("GPT-4/Vanilla", "accuracy_gold_longer")],
    )
    assert (gpt4_short.n, gpt4_long.n) == (588, 222)
    assert gpt4_short.value == pytest.approx(0.827, abs=5e-4) and gpt4_long.value == pytest.approx(
        0.887, abs=5e-4
    )
    verdicts = {v.judge: v for v in analysis.readiness}
    assert verdicts["GPT-4/Vanilla"].baseline == "pass"
    chatgpt = verdicts["ChatGPT/Vanilla"]
    assert chatgpt.baseline == "fail"
    assert any(
        "gold output is the shorter one" in r and "leans to the longer output" in r for r in chatgpt.reasons
    )
