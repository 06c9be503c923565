"""The certificate registry (issue 25): a toy certificate added by one registration is used end to end
(the library's bbe, its verification, bbe.json, the report), with its carry-over property and its
verification rule taken from the registration; `auto` picks only certificates that carry over."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench import api
from judgebench.analysis import ReportSettings
from judgebench.bbe.certificate_registry import CertificateKind, names, register, unregister
from judgebench.bbe.certificates import Certificate, Evidence
from judgebench.cli import app
from judgebench.report import write_report
from judgebench.store.run_folder import RunDir
from tests.bbe.helpers import write_run

TAU, DELTA = 0.5, 0.01


class HalfRange(CertificateKind):
    """range with half of delta thrown away: wasteful but valid, and it carries over."""

    name = "toy_half_range"
    assumptions = "each normalised unit score in [0, 1]; half of delta unused"

    def build(self, ev: Evidence) -> Certificate | None:
        b = math.sqrt(ev.k)
        return Certificate(self.name, b, ev.tau / b, 0.0, ev.delta / 2, 0.0, True, ev.tau, ev.d)


class LooseListed(CertificateKind):
    """A certificate of the listed neighbours only (in-sample) that over-claims (b = 0 and the noise
    bound taken at delta_B = 0.5): `auto` must never choose it although it allows every alpha, and its
    verification is a Monte Carlo of its own neighbours, which catches the over-claim."""

    name = "toy_listed"
    assumptions = "the listed neighbours only"
    verification = "in_sample_monte_carlo"

    def carries_over(self, ev: Evidence) -> bool:
        return False

    def build(self, ev: Evidence) -> Certificate | None:
        return Certificate(self.name, 0.0, math.inf, 0.0, 0.5, 0.0, False, ev.tau, ev.d)


@pytest.fixture
def toys() -> Iterator[None]:
    register(HalfRange())
    register(LooseListed())
    yield
    unregister(HalfRange.name)
    unregister(LooseListed.name)


def _radius(d: int, delta_noise: float) -> float:
    big_l = math.log(1 / delta_noise)
    return math.sqrt(2 * (d + 2 * math.sqrt(d * big_l) + 2 * big_l))


def test_a_toy_certificate_registered_once_is_used_end_to_end(tmp_path: Path, toys: None) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.1}, items=60)
    params = api.BBEParams(tau=TAU, delta=DELTA, alpha=0.3, certificate=HalfRange.name, verify=1000)
    res = api.bbe(api.BBERequest(params=params, run=run, plot=False)).result
    cal = res.calibrations[0]
    assert cal.certificate == HalfRange.name and cal.carries_over is True
    assert cal.sigma == pytest.approx((TAU - 0.3) / _radius(cal.d, DELTA / 2), rel=1e-12)
    assert (res.delta_sensitivity, res.delta_noise, res.delta_estimate) == (0.0, DELTA / 2, 0.0)
    assert HalfRange.name in res.delta_split
    # verification: of the toy, at its released sigma, with the holdout recalibrating the toy itself
    v = cal.verify
    assert v is not None and v.certificate == HalfRange.name and v.sigma == cal.sigma
    assert v.holdout is not None and v.holdout.certificate == HalfRange.name and v.passed is True
    # listed beside the built-in ones in bbe.json, and shown by the report
    doc = json.loads((run / "bbe.json").read_text())
    assert HalfRange.name in {r["name"] for r in doc["certificates"]} and doc["carries_over"] is True
    rd = RunDir(run)
    write_report(rd, api.analyze_run(rd, ReportSettings(bootstrap_samples=0)))
    assert HalfRange.name in (run / "report.md").read_text(encoding="utf-8")
    # and through the CLI, which names no certificate itself
    out = tmp_path / "cli.json"
    args = ["bbe", "--tau", "0.5", "--delta", "0.01", "--run", str(run), "--alpha", "0.3", "--no-plot"]
    result = CliRunner().invoke(app, [*args, "--certificate", HalfRange.name, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["certificate"] == HalfRange.name


def test_registration_decides_auto_scope_and_verification(tmp_path: Path, toys: None) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.1}, items=60)
    auto = api.bbe(
        api.BBERequest(params=api.BBEParams(tau=TAU, delta=DELTA, alpha=None), run=run, plot=False)
    )
    cal = auto.result.calibrations[0]
    rows = {r.name: r for r in cal.certificates}
    # the in-sample toy applies and allows every alpha (auto would take alpha 1 with it), but auto
    # picks among the certificates that carry over
    assert rows[LooseListed.name].carries_over is False and rows[LooseListed.name].alpha_max is None
    assert all(r.alpha_max is not None for n, r in rows.items() if n != LooseListed.name)
    assert cal.certificate != LooseListed.name and cal.carries_over is True and cal.alpha < 1
    named = api.BBEParams(tau=TAU, delta=DELTA, alpha=0.3, certificate=LooseListed.name, verify=1000)
    cal = api.bbe(api.BBERequest(params=named, run=run, plot=False)).result.calibrations[0]
    assert cal.certificate == LooseListed.name and cal.carries_over is False and cal.in_sample
    v = cal.verify
    assert v is not None and "Monte Carlo" in v.check and v.holdout is None
    assert v.passed is False  # b = 0 is a lie about these neighbours: its own Monte Carlo fails it


def test_unknown_and_duplicate_names_are_refused(toys: None) -> None:
    with pytest.raises(ValueError, match=r"unknown certificate 'nope'.*toy_half_range"):
        api.BBEParams(tau=TAU, delta=DELTA, certificate="nope")
    with pytest.raises(ValueError, match="already registered"):
        register(HalfRange())
    assert names()[:5] == ("exact", "exact_ucb", "range", "quantile", "markov")
