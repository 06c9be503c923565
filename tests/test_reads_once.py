"""Each run file is read at most once per stage (issue 25): `judge` on a finished 13,408-judgment run
opens `judgments.jsonl` once, an `--until-settled` run once for all its rounds, bbe once; what a stage
appends joins what it read. Opens are counted by the interpreter's audit hook (every `open` of the
path, by any module), so a reader added anywhere below the API shows up here."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from judgebench import api
from judgebench.api.judge import JudgeRequest, plan_judging
from judgebench.execution import existing_judgments
from judgebench.records import Judgment
from judgebench.store.run_folder import JUDGMENTS, JsonlAppender, RunDir
from tests.servers.openai_server import OpenAIServer
from tests.translate.test_translate_stage import SPEC, ScriptedTranslator, _dataset, _options

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "run_main_2026_12"
_counting: list[Counter[str]] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _counting and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        mode = args[1] if isinstance(args[1], str) else "r"
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        writes = any(c in mode for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR)
        if not writes:
            _counting[-1][Path(os.fsdecode(args[0])).name] += 1


sys.addaudithook(_hook)  # an audit hook cannot be removed: it counts only inside `reads()`


@contextmanager
def reads() -> Iterator[Counter[str]]:
    """File name -> how many times it was opened for reading inside the block."""
    seen: Counter[str] = Counter()
    _counting.append(seen)
    try:
        yield seen
    finally:
        _counting.pop()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache"))


def test_the_count_sees_a_reader_anywhere(tmp_path: Path) -> None:
    """The other side of the tests below: a whole-file read of judgments.jsonl is counted."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    with reads() as seen:
        existing_judgments(run / JUDGMENTS)
        existing_judgments(run / JUDGMENTS)
    assert seen[JUDGMENTS] == 2


def _finished_run(tmp: Path, items: int) -> tuple[Path, int]:
    """A run of `items` items (en, zh, ls, both orders, zh tie-probes: 8 calls an item) whose every
    planned call has an answer, written from records (no judge is called)."""
    rows, variants = [], []
    for i in range(items):
        rows.append({"id": f"Natural/{i}", "subset": "Natural", "instruction": f"Task {i}",
                     "output_1": f"first {i}", "output_2": f"second {i}", "label": 1 + i % 2})  # fmt: skip
        for cond in ("zh", "ls"):
            variants.append({"item_id": f"Natural/{i}", "condition": cond, "instruction": f"任务 {i}",
                             "output_1": f"一 {i}", "output_2": f"二 {i}"})  # fmt: skip
    data, var = tmp / "items.jsonl", tmp / "variants.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    var.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in variants), encoding="utf-8")
    run = tmp / "run"
    api.translate(run, api.TranslateRequest(dataset=str(data), variants_file=var))
    plan = plan_judging(RunDir(run), JudgeRequest(models=["sim:default"]))
    with JsonlAppender(run / JUDGMENTS) as out:
        for c in plan.calls:
            out.append(Judgment(judge=c.judge, item_id=c.item_id, subset=c.subset, kind=c.kind,
                                condition=c.condition, order=c.order, raw='{"winner": "A"}',
                                winner="A", verdict="1", label=c.label))  # fmt: skip
    return run, len(plan.calls)


def test_judge_on_a_finished_13408_judgment_run_opens_judgments_once(tmp_path: Path) -> None:
    run, planned = _finished_run(tmp_path, 1676)
    assert planned == 13_408
    with reads() as seen:
        result = api.judge(run, api.JudgeRequest(models=["sim:default"]))
    assert result.planned == planned and result.outcomes["sim:default"].already_done == planned
    assert seen[JUDGMENTS] == 1
    assert seen["plan.jsonl"] <= 1 and seen["variants.jsonl"] == 1 and seen["manifest.json"] == 1
    assert seen["judges.toml"] <= 1 and seen["prices.toml"] <= 1


def test_a_judge_that_makes_calls_reads_its_own_answers_from_memory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    lines = (run / JUDGMENTS).read_text(encoding="utf-8").splitlines(keepends=True)
    (run / JUDGMENTS).write_text("".join(lines[:-20]), encoding="utf-8")
    with reads() as seen:
        result = api.judge(run, api.JudgeRequest(models=["sim:default", "sim:biased"], limit=6))
    assert sum(o.requested for o in result.outcomes.values()) == 20
    assert all(o.missing == 0 for o in result.outcomes.values())  # the 20 answers were seen
    assert seen[JUDGMENTS] == 1


def test_until_settled_reads_judgments_once_for_all_its_rounds(tmp_path: Path) -> None:
    run, _ = _finished_run(tmp_path, 40)
    (run / JUDGMENTS).unlink()  # every call still to make
    with reads() as seen:
        result = api.judge(run, api.JudgeRequest(models=["sim:default"], until_settled=True, round_items=10))
    stop = result.stops["sim:default"]
    assert stop.items >= 20  # at least two rounds, each made calls and settled on their answers
    assert result.outcomes["sim:default"].requested == stop.calls > 0
    assert seen[JUDGMENTS] <= 1
    # what the rounds settled on is what the file holds: a fresh reader agrees with the stop
    fresh = existing_judgments(run / JUDGMENTS)
    assert len(fresh) == stop.calls and all(j.verdict is not None for j in fresh.values())


def test_bbe_reads_each_run_file_once(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    (run / "bbe_neighbours.jsonl").unlink()  # the perturbed neighbours and the re-asks to make
    params = api.BBEParams(tau=0.5, delta=0.01)
    perturb = api.PerturbRequest(kind="formatting", model="sim:default", units=4)
    with reads() as seen:
        api.bbe(api.BBERequest(params=params, run=run, perturb=perturb, repeats=2, plot=False))
    assert seen[JUDGMENTS] == 1 and seen["manifest.json"] == 1
    assert seen["bbe_neighbours.jsonl"] == 0  # written by this call: known without reading it
    with reads() as seen:
        api.bbe(api.BBERequest(params=params, run=run, perturb=perturb, plot=False))
    assert seen[JUDGMENTS] == 1 and seen["bbe_neighbours.jsonl"] == 1


def test_judge_on_a_finished_run_reads_judges_toml_at_most_once(tmp_path: Path) -> None:
    """The other half of the 13,408 case's Done-when: configs/judges.toml (and prices.toml) are read
    once per command, however many times the stage resolves its `--model` values."""
    run, _ = _finished_run(tmp_path, 50)
    models = ["sim:default", "sim:biased", "gpt41mini"]  # a judges.toml name resolves from the same read
    with reads() as seen:
        result = api.judge(run, api.JudgeRequest(models=models, dry_run=True))
    assert len(result.estimates) == 3
    assert seen["judges.toml"] == 1 and seen["prices.toml"] <= 1
    with reads() as seen:
        api.judge(run, api.JudgeRequest(models=["sim:default"]))
    assert seen["judges.toml"] <= 1 and seen[JUDGMENTS] == 1


def test_an_until_settled_round_on_a_resumed_run_reads_judgments_once(tmp_path: Path) -> None:
    """A run whose first round is already answered: the resumed rounds read what it holds once, and
    settle on the old answers and the new ones together."""
    run, _ = _finished_run(tmp_path, 40)
    lines = (run / JUDGMENTS).read_text(encoding="utf-8").splitlines(keepends=True)
    (run / JUDGMENTS).write_text("".join(lines[: len(lines) // 4]), encoding="utf-8")
    kept = len(existing_judgments(run / JUDGMENTS))
    with reads() as seen:
        result = api.judge(run, api.JudgeRequest(models=["sim:default"], until_settled=True, round_items=10))
    stop = result.stops["sim:default"]
    assert stop.items >= 20 and result.outcomes["sim:default"].requested > 0
    assert seen[JUDGMENTS] == 1
    assert len(existing_judgments(run / JUDGMENTS)) >= kept + result.outcomes["sim:default"].requested


def test_a_dry_run_prices_replies_from_the_judgments_it_already_read(tmp_path: Path) -> None:
    """`judge --dry-run` on a resumed run plans from judgments.jsonl and prices the rest at the run's
    own reply tokens (costing.output_tokens.run_figures): one read for both."""
    run, planned = _finished_run(tmp_path, 30)
    answered = [json.loads(x) for x in (run / JUDGMENTS).read_text(encoding="utf-8").splitlines()][::2]
    for line in answered:  # half the calls answered, each reply 12 tokens of the default template
        line.update(usage={"input_tokens": 100, "output_tokens": 12}, template="judge-default-v1")
    (run / JUDGMENTS).write_text("".join(json.dumps(x) + "\n" for x in answered), encoding="utf-8")
    with reads() as seen:
        estimate = api.judge(run, api.JudgeRequest(models=["sim:default"], dry_run=True)).estimates[0]
    assert seen[JUDGMENTS] == 1
    assert estimate.calls == planned - len(answered) and estimate.output_tokens == 12 * estimate.calls
    assert estimate.output_source == f"the run's {len(answered)} judgments"


def _translated_run(tmp: Path) -> tuple[Path, Path]:
    rows = [{"id": f"Natural/{i}", "subset": "Natural", "instruction": f"Task {i}", "output_1": f"a {i}",
             "output_2": f"b {i}", "label": 1 + i % 2} for i in range(6)]  # fmt: skip
    given = [{"item_id": f"Natural/{i}", "condition": c, "instruction": f"任务 {i}", "output_1": f"一 {i}",
              "output_2": f"二 {i}"} for i in range(6) for c in ("zh", "ls")]  # fmt: skip
    data, var = tmp / "items.jsonl", tmp / "given_variants.jsonl"  # not the run file's name
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    var.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in given), encoding="utf-8")
    return data, var


def test_translate_reads_variants_once_per_stage(tmp_path: Path) -> None:
    """Importing into a run that holds variants reads the run's variants.jsonl once (the audit and
    the manifest's condition list share the read, and learn what was appended); a fresh run's
    file is written by the stage and never read back."""
    data, var = _translated_run(tmp_path)
    run = tmp_path / "run"
    with reads() as seen:
        api.translate(run, api.TranslateRequest(dataset=str(data), variants_file=var))
    assert seen["variants.jsonl"] == 1  # imported lines are appended before the index is first read
    with reads() as seen:
        again = api.translate(run, api.TranslateRequest(dataset=str(data), variants_file=var))
    assert again.imported == 12 and seen["variants.jsonl"] == 1
    assert RunDir(run).manifest().stages.translate is not None


def test_a_live_translate_reads_its_variants_once(tmp_path: Path) -> None:
    """Through a translator (a local OpenAI-compatible server): the first run writes variants.jsonl
    without reading it back; the rerun that retries a failed item reads it once."""
    script = ScriptedTranslator()
    server = OpenAIServer(script)
    server.script = script  # type: ignore[attr-defined]
    data = _dataset(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    with server:
        request = api.TranslateRequest(dataset=str(data), translator=SPEC)
        with reads() as seen:
            first = api.translate(run, request, options=_options(server))
        assert first.outcome is not None and first.outcome.translated > 0 and first.outcome.failed
        assert seen["variants.jsonl"] == 0
        with reads() as seen:
            second = api.translate(run, request, options=_options(server))
    assert second.outcome is not None and second.outcome.already_done == first.outcome.translated
    assert seen["variants.jsonl"] == 1


def test_judgebench_run_shares_one_run_folder_object_across_its_stages(tmp_path: Path) -> None:
    """`judgebench run` (translate -> judge -> bbe -> report) holds one RunDir: the manifest and the
    variants each stage asks about are read from memory, not once per stage (main before this read
    variants.jsonl 4 times and manifest.json 3 times)."""
    with reads() as seen:
        result = api.run_pipeline(tmp_path / "run", api.PipelineRequest(models=["sim:default"], limit=20))
    assert result.judge is not None and result.report_html is not None and result.report_html.exists()
    assert seen["variants.jsonl"] == 0 and seen["manifest.json"] == 0  # all written by this command
    assert seen["judges.toml"] <= 1


def test_a_report_loads_the_run_dataset_once(tmp_path: Path) -> None:
    """A report reads the run's dataset once for everything that needs items (self-preference, the
    length categories, the human section, the explorer's en texts); each of them loaded it again."""
    api.run_pipeline(tmp_path / "run", api.PipelineRequest(models=["sim:default"], limit=20))
    with reads() as seen:
        api.report(tmp_path / "run", api.ReportRequest(human=Path("data/sample_human.jsonl").resolve()))
    # one load of the dataset opens its file twice (parsed, then hashed for provenance by
    # data.dataset); before, the report loaded it three times (6 opens)
    assert seen["sample.jsonl"] == 2


def test_a_report_keeps_the_variants_lengths_not_the_variants(tmp_path: Path) -> None:
    """The outputs' lengths (the length baselines) are read from variants.jsonl a line at a time: the
    run's variants index is left unloaded, where it held every variant, texts and all, for the whole
    report (170 MB of a 1M report's peak); the baselines still cover the translated conditions."""
    api.run_pipeline(tmp_path / "run", api.PipelineRequest(models=["sim:default"], limit=20))
    run = RunDir(tmp_path / "run")
    result = api.report(run)
    assert run.variants().held() is None
    baselines = {r.condition for r in result.analysis.records if r.metric == "length_baseline_shorter_chars"}
    assert baselines >= {"en", "zh", "ls"}


def test_the_page_and_the_unstable_export_share_one_read_of_the_variants(tmp_path: Path) -> None:
    """report.html's explorer and `--export-unstable` both need the variants of their rows: the
    second asks only for items the first did not, so variants.jsonl is opened once for both (and
    once before, streamed for the outputs' lengths: holding every variant for the page instead was
    170 MB of a 1M report's peak)."""
    api.run_pipeline(tmp_path / "run", api.PipelineRequest(models=["sim:default"], limit=20))
    with reads() as seen:
        result = api.report(tmp_path / "run", api.ReportRequest(export_unstable=tmp_path / "unstable.jsonl"))
    assert result.unstable is not None and result.unstable > 0  # both readers asked for texts
    assert seen["variants.jsonl"] == 2
