"""A run folder written by release 0.1.0 (tests/fixtures/run_v0_1_0: the bundled sample, 6 items,
judge `sim:default`, made by `translate --variants`, `judge`, `report` and `bbe --alpha auto` of that
release) still reports, calibrates and resumes, with the same numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from judgebench import api
from judgebench.records.manifest import SCHEMA_VERSION
from judgebench.records.metrics import LENGTH_METRICS
from judgebench.store.run_folder import RunDir
from tests.compat import same_numbers

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "run_v0_1_0"
KEY = ("judge", "metric", "condition", "subset", "filtered")
ADDED_SINCE = {"positional_mcnemar", "longer_win_rate", *LENGTH_METRICS}  # LENGTH_METRICS: issue 47


@pytest.fixture()
def old_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    return run


def _records(path: Path) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(r[k] for k in KEY): r for r in json.loads(path.read_text())}


def test_the_old_manifest_is_read_and_lifted_to_this_schema(old_run: Path) -> None:
    raw = json.loads((old_run / "manifest.json").read_text())
    assert "schema_version" not in raw  # written by 0.1.0
    manifest = RunDir(old_run).load_manifest()
    assert manifest is not None and manifest.schema_version == SCHEMA_VERSION
    assert manifest.dataset is not None and manifest.dataset.spec == "sample"
    assert manifest.stages.translate is not None and manifest.stages.translate.condition_names() == [
        "zh",
        "ls",
    ]
    assert manifest.stages.judge is not None and list(manifest.stages.judge.judges) == ["sim:default"]
    assert manifest.stages.report is not None and manifest.stages.report.records > 0


def test_it_reports_the_same_numbers(old_run: Path) -> None:
    before = _records(old_run / "metrics.json")
    api.report(old_run, api.ReportRequest(html=False))
    after = _records(old_run / "metrics.json")
    # every number 0.1.0 reported is reported again; what is new is only the metrics added since
    assert before.keys() <= after.keys()
    assert {key[1] for key in after.keys() - before.keys()} <= ADDED_SINCE
    for key, old in before.items():
        new = after[key]
        assert same_numbers(new, old), (key, {k: new.get(k) for k in old}, old)
    written = json.loads((old_run / "manifest.json").read_text())
    assert written["schema_version"] == SCHEMA_VERSION  # the next write stores the current layout


def test_it_calibrates_the_same_release(old_run: Path) -> None:
    before = json.loads((old_run / "bbe.json").read_text())
    # 0.1.0's release: the Markov certificate and each judge's mean as the centre (now named: the
    # defaults became the tightest certificate and the label-neutral centre 0.5, PROTOCOL §5b)
    params = api.BBEParams(tau=0.5, delta=0.01, alpha=None, certificate="markov", centre="mean")
    api.bbe(api.BBERequest(params=params, run=old_run, plot=False))
    after = json.loads((old_run / "bbe.json").read_text())
    fields = ("judge", "d", "units", "sensitivity", "sensitivity_plugin", "alpha", "sigma", "feasible")
    for old, new in zip(before["calibrations"], after["calibrations"], strict=True):
        assert {k: new[k] for k in fields} == {k: old[k] for k in fields}
    assert after["systems"] == before["systems"]


def _verdicts(lines: list[str]) -> dict[tuple[str, ...], str | None]:
    out = {}
    for line in lines:
        record = json.loads(line)
        out[tuple(record[k] for k in ("item_id", "kind", "condition", "order"))] = record["verdict"]
    return out


def test_it_resumes_only_what_is_missing(old_run: Path) -> None:
    lines = (old_run / "judgments.jsonl").read_text().splitlines(keepends=True)
    kept, dropped = lines[:-10], lines[-10:]
    (old_run / "judgments.jsonl").write_text("".join(kept))
    result = api.judge(old_run, api.JudgeRequest(models=["sim:default"], limit=6))
    outcome = result.outcomes["sim:default"]
    assert (outcome.planned, outcome.already_done, outcome.requested) == (48, 38, 10)
    new_lines = (old_run / "judgments.jsonl").read_text().splitlines()[len(kept) :]
    # exactly the dropped calls are asked again, and the deterministic simulated judge answers as before
    assert _verdicts(new_lines) == _verdicts(dropped)
