"""The stage runner (api/stages.py): keys before anything, one writer per run and stage, the stage's
progress opened and closed for it, and its manifest entry recorded under its lock; translate, judge,
bbe, report and import run through it."""

from __future__ import annotations

import ast
import inspect
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judgebench import api
from judgebench.analysis import ReportSettings
from judgebench.api import stages
from judgebench.api.stages import Counted, Stage, run_stage
from judgebench.errors import ProviderConfigError, RunDirError
from judgebench.models import JudgeSpec
from judgebench.progress import PROGRESS_LOGGER, ProgressReporter
from judgebench.records.manifest import DatasetEntry, ImportStage, ReportStage, StageEntry, TranslateStage
from judgebench.store.judgment_table import CACHE_SUFFIX
from judgebench.store.run_folder import RunDir, StageName
from tests.importers.shapes import judgebench_rows, write_jsonl

fcntl = pytest.importorskip("fcntl")  # the run folder's lock is flock's

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

    def execute(self, run: RunDir, progress: ProgressReporter) -> str:
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


RUNNER = {"lock", "arm_budget", "seed_budget", "refuse_batch", "ProgressReporter"}


@pytest.mark.parametrize(
    "module", ["translate.py", "judge.py", "pipeline.py", "bbe.py", "report.py", "imports.py"]
)
def test_the_stages_leave_lock_keys_budget_progress_and_entry_to_the_runner(module: str) -> None:
    """translate, judge (and so `run`), bbe, report and import take no lock, check no key, arm no
    budget, open no progress and record no manifest entry by hand: the runner does."""
    calls = _calls(STAGES / module)
    assert not calls & RUNNER, module
    if module != "pipeline.py":  # run checks every stage's keys before it asks to go on
        assert "require_keys" not in calls and "run_stage" in calls, module
    if module != "judge.py":  # judge --until-settled records its stops after each round, under its lock
        assert not calls & {"record_stage", "record_import"}, module


def test_only_the_runner_opens_a_progress_reporter() -> None:
    """A stage declares what its progress counts (`Stage.progress`); no room below opens its own,
    so no stage can forget to, and every stage's lines look alike."""
    src = STAGES.parent
    opened = sorted(
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if "ProgressReporter" in _calls(path) and path != STAGES / "stages.py"
    )
    assert opened == []


class Probe2(Probe):
    """A stage with calls to count."""

    def progress(self, run: RunDir) -> Counted:
        return Counted(3, "judge probe")

    def execute(self, run: RunDir, progress: ProgressReporter) -> str:
        progress.advance(2)
        progress.drop(1)  # one call counted that will not be made
        return super().execute(run, progress)


@pytest.fixture
def progress_records() -> Iterator[list[logging.LogRecord]]:
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    logger = logging.getLogger(PROGRESS_LOGGER)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_the_runner_opens_and_closes_the_progress_a_stage_declares(
    tmp_path: Path, progress_records: list[logging.LogRecord]
) -> None:
    run_stage(RunDir(tmp_path / "run"), Probe2(), options=api.CallOptions(), execution=api.Execution())
    events = [(r.__dict__["progress_event"], r.__dict__["progress"].description) for r in progress_records]
    assert events[0] == ("start", "judge probe") and events[-1] == ("stop", "judge probe")
    bar = progress_records[-1].__dict__["progress"]
    assert (bar.done, bar.total) == (2, 2)  # the dropped call left the total
    progress_records.clear()
    run_stage(RunDir(tmp_path / "other"), Probe(), options=api.CallOptions(), execution=api.Execution())
    assert progress_records == []  # nothing declared: nothing shown


# --- every stage: its manifest entry through the runner, a second writer refused before any work ----

SIM = "sim:selftest-unbiased"
QUICK = ReportSettings(bootstrap_samples=0)


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 4 sample items, translated from the sample's variants and judged by a simulated judge."""
    run = tmp_path_factory.mktemp("judged") / "run"
    api.translate(run, api.TranslateRequest(dataset="sample", variants_file=_variants(), limit=4))
    api.judge(run, api.JudgeRequest(models=[SIM], limit=4), options=api.CallOptions(use_cache=False))
    return run


def _imported_log(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "logs" / "judge_name=arena_hard,judge_model=x.jsonl", judgebench_rows(n=6))


Act = Callable[[RunDir, Path], Any]
# stage -> (lock, the manifest entry written, needs a judged run, the command)
STAGE_CASES: dict[str, tuple[StageName, str, bool, Act]] = {
    "translate": (
        "translate", "translate", False,
        lambda run, tmp: api.translate(
            run, api.TranslateRequest(dataset="sample", variants_file=_variants(), limit=4)
        ),
    ),
    "judge": (
        "judge", "judge", True,
        lambda run, tmp: api.judge(
            run, api.JudgeRequest(models=[SIM], limit=4, conditions=["en", "zh"]),
            options=api.CallOptions(use_cache=False),
        ),
    ),
    "bbe": (
        "bbe", "bbe", True,
        lambda run, tmp: api.bbe(
            api.BBERequest(params=api.BBEParams(tau=0.5, delta=0.05), run=run.path, plot=False), run=run
        ),
    ),
    "report": (
        "report", "report", True,
        lambda run, tmp: api.report(run, api.ReportRequest(settings=QUICK, html=False)),
    ),
    "import": (
        "judge", "import:arena_hard/x", False,
        lambda run, tmp: api.import_judgments(run, "judgebench", [_imported_log(tmp)]),
    ),
}  # fmt: skip


class Watched(RunDir):
    """A run folder that notes, as each manifest entry is written, whether the stage's lock is held
    (by anyone) and whether the stage runner is the writer; then writes it as any run folder does."""

    def __init__(self, path: Path, lock: StageName) -> None:
        super().__init__(path)
        self.lock_name = lock
        self.entries: list[tuple[str, bool, bool]] = []

    def _lock_held(self) -> bool:
        fd = os.open(self.path / f".{self.lock_name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    def _note(self, what: str) -> None:
        by_runner = any(
            f.function == "run_stage" and f.filename == stages.__file__ for f in inspect.stack(context=0)
        )
        self.entries.append((what, self._lock_held(), by_runner))

    def record_stage(self, stage: StageName, entry: StageEntry) -> Any:
        self._note(stage)
        return super().record_stage(stage, entry)

    def record_import(self, name: str, entry: ImportStage) -> Any:
        self._note(f"import:{name}")
        return super().record_import(name, entry)


def _folder(tmp_path: Path, judged: Path, needs_run: bool) -> Path:
    run = tmp_path / "run"
    if needs_run:
        shutil.copytree(judged, run)
    return run


def _contents(run: Path) -> dict[str, bytes]:
    """The run's files, less the lock files and the tables a reader derives beside a log (reading
    before the lock is no work done: bbe and report read the judgments first)."""
    if not run.exists():
        return {}
    return {
        str(p.relative_to(run)): p.read_bytes()
        for p in run.rglob("*")
        if p.is_file() and not p.name.endswith((".lock", CACHE_SUFFIX))
    }


@pytest.mark.parametrize("stage", list(STAGE_CASES))
def test_each_stage_records_its_entry_through_the_runner_under_its_lock(
    stage: str, tmp_path: Path, judged: Path
) -> None:
    lock, entry, needs_run, act = STAGE_CASES[stage]
    run = Watched(_folder(tmp_path, judged, needs_run), lock)
    act(run, tmp_path)
    assert run.entries == [(entry, True, True)]  # once, under the stage's lock, by the runner


@pytest.mark.parametrize("stage", list(STAGE_CASES))
def test_each_stage_refuses_a_second_writer_before_any_work(stage: str, tmp_path: Path, judged: Path) -> None:
    lock, _entry, needs_run, act = STAGE_CASES[stage]
    path = _folder(tmp_path, judged, needs_run)
    before = _contents(path)
    with RunDir(path).lock(lock), pytest.raises(RunDirError, match=f"another '{lock}' .* is writing it"):
        act(RunDir(path), tmp_path)
    assert _contents(path) == before  # nothing written, no entry recorded


def test_the_recording_check_sees_an_entry_written_outside_the_runner(tmp_path: Path) -> None:
    """The check above can fail: an entry written by hand, with no lock held, is seen as such."""
    run = Watched(tmp_path / "run", "report")
    run.init()
    run.record_stage("report", ReportStage(settings={}, records=0, outputs=[]))
    assert run.entries == [("report", False, False)]


def test_bbe_reports_its_neighbours_progress_through_the_runner(
    tmp_path: Path, judged: Path, progress_records: list[logging.LogRecord]
) -> None:
    """bbe --perturb's re-judging is counted on one reporter the runner opened: the stage's label,
    its pending calls as the total, every one of them done when it closes."""
    run = _folder(tmp_path, judged, True)
    perturb = api.PerturbRequest(kind="formatting", model=SIM, units=5)
    params = api.BBEParams(tau=0.5, delta=0.05)
    out = api.bbe(api.BBERequest(params=params, run=run, perturb=perturb, plot=False))
    assert out.perturbation is not None and out.perturbation.requested > 0
    starts = [r.__dict__["progress"] for r in progress_records if r.__dict__["progress_event"] == "start"]
    assert [bar.description for bar in starts] == [f"bbe neighbours {SIM}"]
    assert starts[0].done == starts[0].total == out.perturbation.requested
    assert progress_records[-1].__dict__["progress_event"] == "stop"


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
