"""The report's outputs are a registry: a toy format added by one registration is written by
`api.report` with the rest of the set, declares what it reads, and fails the whole set (nothing new
written) when it fails."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgebench import api
from judgebench.analysis import ReportSettings
from judgebench.data.dataset import sample_variants_path
from judgebench.errors import JudgebenchError
from judgebench.report import output_formats as outputs
from judgebench.report import write_report
from judgebench.report.output_formats import (
    OUTPUTS,
    Need,
    OutputInputs,
    UndeclaredNeed,
    register_output,
    unregister,
)
from judgebench.store.run_folder import RunDir
from tests.fake_distribution import fake_distribution

NO_BOOTSTRAP = {"bootstrap_samples": 0}


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("registry") / "run"
    api.translate(run, api.TranslateRequest(dataset="sample", variants_file=sample_variants_path(), limit=6))
    api.judge(
        run,
        api.JudgeRequest(models=["sim:selftest-unbiased"], limit=6),
        options=api.CallOptions(use_cache=False),
    )
    return run


@pytest.fixture
def toy_tsv() -> Iterator[str]:
    """The toy format: metrics as tab-separated judge, metric, condition, value. One registration."""

    @register_output("tsv", "metrics.tsv", needs=[Need.ROWS])
    def _tsv(inputs: OutputInputs) -> bytes:
        lines = ["judge\tmetric\tcondition\tvalue"]
        lines += [f"{r['judge']}\t{r['metric']}\t{r['condition']}\t{r['value']}" for r in inputs.rows]
        return ("\n".join(lines) + "\n").encode("utf-8")

    yield "tsv"
    unregister("tsv")


def test_a_registered_output_is_written_by_the_report(sim_run: Path, toy_tsv: str) -> None:
    result = api.report(sim_run, api.ReportRequest(settings=NO_BOOTSTRAP, html=False))
    tsv = sim_run / "metrics.tsv"
    assert result.paths.get(toy_tsv) == tsv
    lines = tsv.read_text(encoding="utf-8").splitlines()
    rows = json.loads((sim_run / "metrics.json").read_text(encoding="utf-8"))
    assert len(lines) == 1 + len(rows) == 1 + len(result.analysis.records)
    first = rows[0]
    assert lines[1] == f"{first['judge']}\t{first['metric']}\t{first['condition']}\t{first['value']}"
    recorded = json.loads((sim_run / "manifest.json").read_text(encoding="utf-8"))["stages"]["report"]
    assert str(tsv) in recorded["outputs"]  # listed with the others, in registration order
    assert recorded["outputs"].index(str(tsv)) == len(recorded["outputs"]) - 1


def test_without_the_registration_no_such_file(sim_run: Path, tmp_path: Path) -> None:
    assert "tsv" not in OUTPUTS
    result = api.report(sim_run, api.ReportRequest(settings=NO_BOOTSTRAP, html=False))
    assert result.paths.get("tsv") is None
    assert [p.name for p in result.paths.all()][:3] == ["metrics.json", "metrics.csv", "report.md"]
    # readiness.json is one of the set (written with it, all or none), as api.report built it
    readiness = sim_run / "readiness.json"
    assert result.paths.get("readiness") == result.readiness_json == readiness
    assert json.loads(readiness.read_text(encoding="utf-8")) == result.readiness.model_dump(mode="json")


def test_a_failing_output_leaves_the_previous_set_whole(sim_run: Path) -> None:
    api.report(sim_run, api.ReportRequest(settings=NO_BOOTSTRAP, html=False))
    kept = ("metrics.json", "metrics.csv", "report.md", "readiness.json")
    before = {name: (sim_run / name).read_bytes() for name in kept}

    @register_output("broken", "broken.txt", needs=[Need.ROWS])
    def _broken(inputs: OutputInputs) -> bytes:
        raise RuntimeError("renderer crashed")

    try:
        with pytest.raises(RuntimeError, match="renderer crashed"):
            api.report(
                sim_run, api.ReportRequest(settings={"bootstrap_samples": 0, "confidence": 0.9}, html=False)
            )
    finally:
        unregister("broken")
    after = {name: (sim_run / name).read_bytes() for name in before}
    assert after == before  # nothing of the new set was written, not even the files rendered first
    assert not (sim_run / "broken.txt").exists()
    assert not list(sim_run.glob(".*.tmp"))


def test_an_output_reads_only_what_it_declared(sim_run: Path, tmp_path: Path) -> None:
    @register_output("sneaky", "sneaky.md", needs=[Need.ROWS])
    def _sneaky(inputs: OutputInputs) -> bytes:
        return inputs.sections[0].title.encode("utf-8")  # sections were not declared

    try:
        with pytest.raises(UndeclaredNeed, match="'sneaky' reads sections without declaring it"):
            write_report(RunDir(tmp_path), api.analyze_run(sim_run, ReportSettings(bootstrap_samples=0)))
    finally:
        unregister("sneaky")
    with pytest.raises(ValueError, match="registered twice"):
        register_output("json", "again.json", needs=[])(lambda inputs: b"")


def test_what_no_output_needs_is_not_made(sim_run: Path, tmp_path: Path) -> None:
    """Leaving out every output that needs figures: no plot is drawn, no plots folder appears."""
    analysis = api.analyze_run(sim_run, ReportSettings(bootstrap_samples=0))
    paths = write_report(RunDir(tmp_path), analysis, leave_out=("md", "plots", "html"))
    assert sorted(p.name for p in paths.all()) == ["metrics.csv", "metrics.json", "self_preference.json"]
    assert not (tmp_path / "plots").exists() and paths.plots == {}
    full = write_report(RunDir(tmp_path / "full"), analysis)
    assert full.plots and (tmp_path / "full" / "plots").is_dir()
    with pytest.raises(ValueError, match="no report output named"):
        write_report(RunDir(tmp_path), analysis, leave_out=("pdf",))


PLUGIN_MODULE = '''"""A package's output format: one module, an entry point of judgebench.outputs."""
from judgebench.report.output_formats import Need, ReportOutput


def _render(inputs):
    lines = ["metric\\tvalue"] + [f"{r['metric']}\\t{r['value']}" for r in inputs.rows]
    return {"metrics_plugin.tsv": ("\\n".join(lines) + "\\n").encode("utf-8")}


OUTPUT = ReportOutput("plugin_tsv", "metrics_plugin.tsv", _render, frozenset({Need.ROWS}))
NOT_AN_OUTPUT = 42
'''


def _plugin_dist(where: Path, target: str) -> None:
    """A fake installed distribution `toyout` (a dist-info folder on sys.path) with one entry point."""
    (where / "toyout_formats.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    fake_distribution(where, "toyout", "judgebench.outputs", f"tsv = {target}")


def test_a_package_adds_an_output_through_an_entry_point(
    sim_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No edit of judgebench: a distribution declaring `judgebench.outputs` gets its file written with
    the set; without the distribution it is not."""
    _plugin_dist(tmp_path, "toyout_formats:OUTPUT")
    monkeypatch.syspath_prepend(str(tmp_path))
    outputs._plugins.cache_clear()
    try:
        assert "plugin_tsv" in outputs.available() and "plugin_tsv" not in OUTPUTS
        result = api.report(sim_run, api.ReportRequest(settings=NO_BOOTSTRAP, html=False))
        tsv = sim_run / "metrics_plugin.tsv"
        assert result.paths.get("plugin_tsv") == tsv
        rows = json.loads((sim_run / "metrics.json").read_text(encoding="utf-8"))
        assert len(tsv.read_text(encoding="utf-8").splitlines()) == 1 + len(rows)
    finally:
        monkeypatch.undo()
        outputs._plugins.cache_clear()
    tsv.unlink()
    assert "plugin_tsv" not in outputs.available()
    result = api.report(sim_run, api.ReportRequest(settings=NO_BOOTSTRAP, html=False))
    assert result.paths.get("plugin_tsv") is None and not tsv.exists()


def test_a_plugin_that_is_no_output_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _plugin_dist(tmp_path, "toyout_formats:NOT_AN_OUTPUT")
    monkeypatch.syspath_prepend(str(tmp_path))
    outputs._plugins.cache_clear()
    try:
        with pytest.raises(JudgebenchError, match=r"entry point tsv = toyout_formats:NOT_AN_OUTPUT .* not a"):
            outputs.available()
    finally:
        monkeypatch.undo()
        outputs._plugins.cache_clear()
