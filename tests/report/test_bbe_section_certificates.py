"""The report's A-BB section shows PROTOCOL §5b: the certificate, alpha needed, the verification
verdict, the pairs kept and what the guarantee does and does not promise."""

from __future__ import annotations

import json
from pathlib import Path

from judgebench.analysis import ReportSettings
from judgebench.api import analyze_run
from judgebench.bbe.bbe_files import default_out, write_outputs
from judgebench.bbe.engine import BBEParams
from judgebench.bbe.sources import bbe_from_run
from judgebench.report import write_report
from judgebench.report.bbe_section import PROMISE, power_text
from judgebench.store.run_folder import RunDir
from tests.bbe.helpers import write_run


def test_the_section_names_certificate_utility_and_promise(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.05, "b": 0.15, "c": 0.3}, items=30)
    result = bbe_from_run(run, BBEParams(tau=0.5, delta=0.01, alpha=None, verify=200))
    write_outputs(result, default_out(run=run), plot=False)
    doc = json.loads((run / "bbe.json").read_text())
    rd = RunDir(run)
    write_report(rd, analyze_run(rd, ReportSettings(bootstrap_samples=0)))
    md = (run / "report.md").read_text(encoding="utf-8")
    section = md[md.index("## A-BB") :]
    for cal in doc["calibrations"]:
        assert cal["certificate"] in section
        assert cal["verify"]["kind"] in section and "pass" in section
    assert "Pairs kept:" in section and f"of the {doc['utility']['pairs']} judge pairs" in section
    assert PROMISE[:60] in section and "does not promise" in section


def test_the_section_labels_an_in_sample_release_and_states_the_power(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"a": 0.1}, items=60)
    rd = RunDir(run)
    # exact: one Monte Carlo part (2000 draws at delta 0.01); auto (60 items: a holdout runs): fails if
    # the redraw or the holdout fails, and states that rule's power (above the redraw's alone)
    for certificate, in_sample in (("exact", True), ("auto", False)):
        params = BBEParams(tau=0.5, delta=0.01, alpha=None, verify=2000, certificate=certificate)
        write_outputs(bbe_from_run(run, params), default_out(run=run), plot=False)
        write_report(rd, analyze_run(rd, ReportSettings(bootstrap_samples=0)))
        section = (run / "report.md").read_text(encoding="utf-8").split("## A-BB")[1]
        assert ("in-sample" in section.split("Calibration per judge")[1].split("\n\n")[1]) is in_sample
        power = json.loads((run / "bbe.json").read_text())["calibrations"][0]["verify"]["power"]
        assert power_text(power) in section
        if in_sample:
            assert "P(fail) 0.60 at 1.5δ, 0.97 at 2δ" in section
        else:
            assert power["1.5x"] > 0.60 and power["2x"] > 0.97
