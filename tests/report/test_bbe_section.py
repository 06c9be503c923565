"""The report's A-BB section: shown from the run's bbe.json, flagged when older than the judgments."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from judgebench import api
from judgebench.analysis import ReportSettings
from judgebench.api import analyze_run
from judgebench.bbe.bbe_files import default_out, write_outputs
from judgebench.bbe.engine import BBEParams
from judgebench.bbe.sources import bbe_from_run
from judgebench.report import write_report
from judgebench.store.run_folder import RunDir
from tests.bbe.helpers import write_run


def _report(run: Path) -> tuple[str, str]:
    rd = RunDir(run)
    write_report(rd, analyze_run(rd, ReportSettings(bootstrap_samples=0)))
    return (run / "report.html").read_text(encoding="utf-8"), (run / "report.md").read_text(encoding="utf-8")


def test_without_bbe_json_the_section_says_how_to_add_it(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.1, "b": 0.2}, items=20)
    html, md = _report(run)
    assert 'id="bbe"' in html and "judgebench bbe --tau 0.5 --delta 0.01 --run RUN --alpha auto" in html
    assert "## A-BB: bias-bounded rankings" in md and "Not computed for this run" in md


def test_the_section_shows_bbe_json_and_its_plot(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.05, "b": 0.15, "c": 0.3}, items=30)
    result = bbe_from_run(run, BBEParams(tau=0.5, delta=0.01, alpha=None, verify=100))
    write_outputs(result, default_out(run=run), plot=True)
    doc = json.loads((run / "bbe.json").read_text())
    html, md = _report(run)
    section = html[
        html.index('<section id="bbe">') : html.index("</section>", html.index('<section id="bbe">'))
    ]
    for row in doc["systems"]:
        assert f"{100 * row['raw']:.1f}" in section and f"{100 * row['bias_bounded']:.1f}" in section
    for cal in doc["calibrations"]:
        assert f"{cal['sigma']:.3g}" in section and cal["guarantee"][:40] in section
    png = (run / "bbe.png").read_bytes()
    assert base64.b64encode(png).decode() in section  # the plot, embedded
    assert "](bbe.png)" in md and "older than judgments.jsonl" not in html


def test_a_bbe_json_older_than_the_judgments_is_flagged(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.05, "b": 0.15}, items=20)
    write_outputs(bbe_from_run(run, BBEParams(tau=0.5, delta=0.01, alpha=None)), default_out(run=run))
    stamp = (run / "bbe.json").stat().st_mtime
    os.utime(run / "judgments.jsonl", (stamp + 10, stamp + 10))
    html, _ = _report(run)
    assert "bbe.json is older than judgments.jsonl" in html


def test_an_unreadable_bbe_json_is_named_not_fatal(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.1}, items=10)
    (run / "bbe.json").write_text("{not json")
    html, _ = _report(run)
    assert "could not be read" in html and "bbe.json" in html


def test_a_bbe_json_from_a_scores_table_is_not_shown_as_the_runs(tmp_path: Path) -> None:
    """bbe --scores writes bbe.json beside the table; in a run folder it is not the run's A-BB."""
    from judgebench.bbe.sources import bbe_from_table

    run = write_run(tmp_path / "run", judges={"a": 0.1}, items=10)
    table = run / "scores.csv"
    rows = ["system,unit,context,score"] + [
        f"m{u % 3},u{u},{ctx},{5 + (u % 4)}" for u in range(30) for ctx in ("base", "formatting")
    ]
    table.write_text("\n".join(rows) + "\n")
    write_outputs(
        bbe_from_table(table, (1.0, 10.0), BBEParams(tau=0.5, delta=0.01, alpha=None)),
        default_out(scores=table),
    )
    html, md = _report(run)
    assert "not from this run's judgments" in md and "Raw aggregate %" not in md
    section = html[html.index('<section id="bbe">') :].split("</section>")[0]
    assert "Not shown" in section and "<table" not in section


def test_only_the_plot_this_bbe_json_names_is_shown_found_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.05, "b": 0.2}, items=20)
    monkeypatch.chdir(tmp_path)  # bbe given a relative run path records a relative plot path
    write_outputs(
        bbe_from_run(Path("run"), BBEParams(tau=0.5, delta=0.01, alpha=None)), default_out(run=Path("run"))
    )
    assert json.loads((run / "bbe.json").read_text())["outputs"]["plot"] == "run/bbe.png"
    monkeypatch.chdir(run)  # the report run from elsewhere still finds it beside bbe.json
    html, md = _report(run)
    assert "](bbe.png)" in md and base64.b64encode((run / "bbe.png").read_bytes()).decode() in html
    # a later bbe without a plot: the old bbe.png stays on disk but is not this bbe.json's plot
    write_outputs(bbe_from_run(run, BBEParams(tau=0.5, delta=0.01)), default_out(run=run), plot=False)
    assert (run / "bbe.png").exists()
    html, md = _report(run)
    assert "](bbe.png)" not in md and "plot-bbe" not in html


def test_a_hostile_judge_name_in_a_paragraph_stays_text_in_both_files(tmp_path: Path) -> None:
    """Outside names inside the report's paragraphs are code spans: no tag, emphasis or link forms."""
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "run_v0_1_0", run)
    doc = json.loads((run / "bbe.json").read_text())
    name = "<img src=x onerror=alert(1)>*bold*_it_[link](http://x)"
    doc["judges_skipped"] = {name: "fewer than 2 units"}
    (run / "bbe.json").write_text(json.dumps(doc))
    api.report(run, api.ReportRequest(html=True))
    md = (run / "report.md").read_text()
    assert f"`{name}` is not calibrated" in md
    html_text = (run / "report.html").read_text()
    assert "<img src=x" not in html_text and "&lt;img src=x onerror=alert(1)&gt;" in html_text
