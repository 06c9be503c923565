"""The stage runner (api/stages.py): keys before anything, one writer per run and stage, and the
stage's manifest entry recorded under its lock; translate and judge run through it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from judgebench import api
from judgebench.api.stages import Stage, run_stage
from judgebench.errors import ProviderConfigError, RunDirError
from judgebench.models import JudgeSpec
from judgebench.records.manifest import DatasetEntry, StageEntry, TranslateStage
from judgebench.store.run_folder import RunDir

ENTRY = TranslateStage(translator="import:test", conditions=[], last_conditions=["zh"])


class Probe(Stage[str]):
    """A stage that notes what the runner let it do."""

    name = "translate"

    def __init__(self, keys: list[JudgeSpec] | None = None) -> None:
        self.needs = keys or []
        self.executed = False
        self.second_writer: str | None = None

    def keys(self) -> list[JudgeSpec]:
        return self.needs

    def dataset(self) -> DatasetEntry:
        return DatasetEntry(spec="sample")

    def execute(self, run: RunDir) -> str:
        self.executed = True
        try:  # a second writer of the same stage while this one runs
            with run.lock("translate"):
                self.second_writer = "let in"
        except RunDirError as exc:
            self.second_writer = str(exc)
        return "done"

    def record(self, run: RunDir, result: str) -> StageEntry:
        return ENTRY


def test_the_runner_holds_the_lock_and_records_the_entry(tmp_path: Path) -> None:
    run, stage = RunDir(tmp_path / "run"), Probe()
    assert run_stage(run, stage, options=api.CallOptions(), execution=api.Execution()) == "done"
    assert stage.second_writer is not None and "is in use" in stage.second_writer
    recorded = run.manifest().stages.translate
    assert recorded is not None and recorded.translator == "import:test"
    assert run.manifest().dataset is not None and run.manifest().dataset.spec == "sample"


def test_a_second_concurrent_stage_is_refused_before_it_runs(tmp_path: Path) -> None:
    run, stage = RunDir(tmp_path / "run"), Probe()
    with run.lock("translate"), pytest.raises(RunDirError, match="is in use"):
        run_stage(run, stage, options=api.CallOptions(), execution=api.Execution())
    assert not stage.executed and run.manifest().stages.translate is None


def test_a_missing_key_stops_the_stage_before_the_run_folder_is_made(tmp_path: Path) -> None:
    judge = api.CallOptions().resolve("openai:gpt-4.1-mini")  # conftest unsets every key
    stage = Probe(keys=[judge])
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        run_stage(RunDir(tmp_path / "run"), stage, options=api.CallOptions(), execution=api.Execution())
    assert not stage.executed and not (tmp_path / "run").exists()


STAGES = Path(api.__file__).parent


def _calls(path: Path) -> set[str]:
    return {
        node.func.attr
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    } | {
        node.func.id
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


@pytest.mark.parametrize("module", ["translate.py", "judge.py", "pipeline.py"])
def test_the_paid_stages_leave_lock_keys_and_budget_to_the_runner(module: str) -> None:
    """translate and judge (and so `run`) take no lock, check no key and arm no budget by hand."""
    calls = _calls(STAGES / module)
    assert not calls & {"lock", "arm_budget", "seed_budget", "refuse_batch"}, module
    if module != "pipeline.py":  # run checks every stage's keys before it asks to go on
        assert "require_keys" not in calls and "run_stage" in calls, module


def test_judge_does_not_import_the_bbe_stage() -> None:
    imported = {
        node.module
        for node in ast.walk(ast.parse((STAGES / "judge.py").read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
    }
    assert "judgebench.api.bbe" not in imported


def test_judge_repeats_are_planned_calls_bbe_finds(tmp_path: Path) -> None:
    """`judge --repeats 2` re-asks sampled en units (the runner's bbe lock); bbe then reports them,
    asking nothing new: the judge stage draws the units bbe draws."""
    run = tmp_path / "run"
    api.translate(run, api.TranslateRequest(dataset="sample", variants_file=_variants(), limit=4))
    request = api.JudgeRequest(models=["sim:selftest-unbiased"], limit=4, repeats=2)
    result = api.judge(run, request, options=api.CallOptions(use_cache=False))
    held = RunDir(run).neighbours().latest()
    repeats = [k for k in held if k.condition.startswith("repeat-")]
    assert result.repeats == len(repeats) == 2 * 8  # 4 items in 2 orders, twice
    out = api.bbe(api.BBERequest(params=api.BBEParams(tau=0.5, delta=0.05), run=run, plot=False))
    assert out.result.source.get("repeats") == 2
    assert len(RunDir(run).neighbours().latest()) == len(held)  # nothing asked again


def _variants() -> Path:
    from judgebench.data.dataset import sample_variants_path

    return sample_variants_path()
