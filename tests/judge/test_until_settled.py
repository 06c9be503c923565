"""`judge --until-settled` (issue 18): rounds of whole items, a stop per judge recorded in the manifest,
plan.jsonl holding only the calls planned, readiness complete when settled and not when interrupted,
and a killed run that resumes to the same stop."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from judgebench import api
from judgebench.api import Execution
from judgebench.execution import settling as seq_api
from judgebench.records import PlannedKey
from judgebench.store.run_folder import PLAN, RunDir, read_jsonl
from tests.servers.openai_batch_server import OpenAIBatchServer

N = 60
JUDGES = ["sim:bench-always-a", "sim:bench-biased", "sim:bench-unbiased"]


def _dataset(tmp: Path) -> tuple[Path, Path]:
    rows, variants = [], []
    for i in range(N):
        subset = "Natural" if i % 3 else "Adversarial/Neighbor"
        label = 1 + i % 2
        rows.append(
            {"id": f"{subset}/{i}", "subset": subset, "instruction": f"Task {i}",
             "output_1": f"first {i}", "output_2": f"second {i}", "label": label}
        )  # fmt: skip
        for cond in ("zh", "ls"):
            variants.append(
                {"item_id": f"{subset}/{i}", "condition": cond, "instruction": f"任务 {i} {cond}",
                 "output_1": f"一 {i}", "output_2": f"二 {i}"}
            )  # fmt: skip
    data, var = tmp / "items.jsonl", tmp / "variants.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    var.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in variants), encoding="utf-8")
    return data, var


def _run(tmp: Path, name: str) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    data, var = _dataset(tmp)
    run = tmp / name
    api.translate(run, api.TranslateRequest(dataset=str(data), variants_file=var))
    return run


def test_each_judge_stops_where_its_verdict_is_known(tmp_path: Path) -> None:
    run = _run(tmp_path, "run")
    result = api.judge(run, api.JudgeRequest(models=JUDGES, until_settled=True, round_items=10))
    stops = result.stops
    assert stops["sim:bench-always-a"].reason == "settled"
    assert stops["sim:bench-always-a"].items == 10  # position inconsistency 100%: one round
    assert stops["sim:bench-always-a"].verdicts == {"zh": "fail", "ls": "fail"}
    assert stops["sim:bench-biased"].reason == "settled" and stops["sim:bench-biased"].items < N
    assert stops["sim:bench-unbiased"].reason == "items exhausted"  # 60 items cannot show it passes
    assert stops["sim:bench-unbiased"].items == N
    manifest = RunDir(run).manifest().stages.judge
    assert manifest is not None and manifest.stops == stops
    assert manifest.full_planned == len(JUDGES) * N * 8  # 6 pair calls, 2 zh tie-probes (ls has none)
    planned = list(read_jsonl(RunDir(run).file(PLAN), PlannedKey))
    assert len(planned) == manifest.planned == sum(s.calls for s in stops.values())
    assert len({p.item_id for p in planned if p.judge == "sim:bench-always-a"}) == 10
    readiness = api.report(run, api.ReportRequest(html=False)).readiness
    assert readiness.complete is True and set(readiness.stops) == set(JUDGES)
    by = {(v.judge, v.condition): v for v in readiness.verdicts}
    assert by[("sim:bench-always-a", "zh")].verdict == "fail"
    assert any(
        "until-settled: settled after 10 of 60 items" in r for r in by[("sim:bench-always-a", "zh")].reasons
    )
    for name, stop in stops.items():  # a settled stop reads the sequence's verdict, never inconclusive
        if stop.reason == "settled":
            assert {c: by[(name, c)].verdict for c in stop.verdicts} == stop.verdicts
    assert readiness.intervals == {
        "sim:bench-always-a": "anytime-valid",
        "sim:bench-biased": "anytime-valid",
        "sim:bench-unbiased": "fixed-n",  # every item judged
    }
    md = (run / "report.md").read_text(encoding="utf-8")
    early = "`sim:bench-always-a`, `sim:bench-biased`"
    assert f"Stopped early by `judge --until-settled` (settled): {early}." in md


def test_a_killed_run_is_incomplete_and_resumes_to_the_same_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = api.judge(
        _run(tmp_path / "a", "run"), api.JudgeRequest(models=JUDGES, until_settled=True, round_items=10)
    ).stops
    run = _run(tmp_path / "b", "run")
    real = seq_api.execute_plan
    rounds = {"n": 0}

    async def dying(*args: object, **kwargs: object) -> object:
        rounds["n"] += 1
        if rounds["n"] == 3:
            raise KeyboardInterrupt
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(seq_api, "execute_plan", dying)
    with pytest.raises(KeyboardInterrupt):
        api.judge(run, api.JudgeRequest(models=JUDGES, until_settled=True, round_items=10))
    stage = RunDir(run).manifest().stages.judge
    assert stage is not None  # always-A settled in round 1, the unbiased judge was killed in round 3
    assert stage.stops["sim:bench-always-a"].reason == "settled"
    assert stage.stops["sim:bench-unbiased"].reason == "running"
    assert stage.stops["sim:bench-unbiased"].items == 20
    assert api.report(run, api.ReportRequest(html=False)).readiness.complete is False
    monkeypatch.setattr(seq_api, "execute_plan", real)
    again = api.judge(run, api.JudgeRequest(models=JUDGES, until_settled=True, round_items=10)).stops
    assert {n: (s.reason, s.items, s.verdicts) for n, s in again.items()} == {
        n: (s.reason, s.items, s.verdicts) for n, s in reference.items()
    }
    assert api.report(run, api.ReportRequest(html=False)).readiness.complete is True


@pytest.mark.slow
def test_a_batch_round_is_one_provider_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-judge")
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    run = _run(tmp_path, "run")
    with OpenAIBatchServer() as server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=10, max_retries=2, concurrency=8)
        )
        result = api.judge(
            run,
            api.JudgeRequest(models=["openai:gpt-4.1-mini"], until_settled=True, round_items=20),
            options=options,
            execution=Execution(batch=True, poll_interval=0),
        )
        assert server.live_calls() == 0
        stop = result.stops["openai:gpt-4.1-mini"]
        assert stop.final and len(server.created()) == math.ceil(stop.items / 20)
    assert result.outcomes["openai:gpt-4.1-mini"].missing == 0
