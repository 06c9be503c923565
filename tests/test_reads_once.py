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
from judgebench.rundir import JUDGMENTS, JsonlAppender, RunDir

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
