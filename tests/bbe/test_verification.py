"""Verification tests exactly the released certificate and sigma (issue 28), or refuses with a reason,
and states its power. Independent figures come from scipy and statsmodels here, never the code under
test."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from judgebench import api
from judgebench.bbe.verify import power
from judgebench.cli import app
from tests.bbe.helpers import audit_script, write_run
from tests.bbe.test_certificates import _changes

TAU, DELTA = 0.5, 0.01
REPO = Path(__file__).resolve().parents[2]


def _table(tmp_path: Path, units: int = 3000) -> Path:
    """A scores table whose neighbours change the score by small continuous amounts (quantile applies)."""
    rng = np.random.default_rng(4)
    base = rng.uniform(0.2, 0.8, units)
    change = rng.exponential(0.02, units)
    rows = ["system,unit,context,score"]
    rows += [f"s{u % 4},u{u},base,{base[u]:.6f}" for u in range(units)]
    rows += [f"s{u % 4},u{u},formatting,{base[u] + change[u]:.6f}" for u in range(units)]
    table = tmp_path / "t.csv"
    table.write_text("\n".join(rows) + "\n")
    return table


def test_power_is_the_exact_binomial_at_the_fail_threshold() -> None:
    """The issue's audit: 2000 draws fail at >= 29 violations; P(fail) 0.034 / 0.60 / 0.97 at 1, 1.5, 2
    times delta."""
    draws = 2000
    k = np.arange(draws + 1)
    low, _ = proportion_confint(k, draws, alpha=0.05, method="wilson")
    fails_at = int(np.flatnonzero(low > DELTA)[0])
    assert fails_at == 29
    got = power(draws, DELTA)
    for key, mult in (("1x", 1.0), ("1.5x", 1.5), ("2x", 2.0)):
        assert got[key] == pytest.approx(stats.binom.sf(fails_at - 1, draws, mult * DELTA), rel=1e-12)
    assert got["1x"] == pytest.approx(0.034, abs=0.002) and got["1.5x"] == pytest.approx(0.60, abs=0.01)
    assert got["2x"] == pytest.approx(0.97, abs=0.01)
    # more draws, more power: 20000 draws catch a 1.5x too lax release almost surely
    assert power(20_000, DELTA)["1.5x"] > 0.99


def test_quantile_release_is_verified_as_quantile_at_its_sigma(tmp_path: Path) -> None:
    params = api.BBEParams(tau=TAU, delta=DELTA, alpha=1.0, certificate="quantile", verify=2000)
    res = api.bbe(api.BBERequest(params=params, scores=_table(tmp_path), scale=(0.0, 1.0), plot=False)).result
    cal = res.calibrations[0]
    v = cal.verify
    assert cal.certificate == "quantile" and v is not None and cal.sigma is not None
    assert v.certificate == "quantile" and v.sigma == cal.sigma and v.passed is True
    assert v.holdout is not None and v.holdout.certificate == "quantile"  # recalibrated as quantile
    assert v.fails_at == 29 and v.power["1.5x"] == pytest.approx(0.60, abs=0.01)
    # the delta split at the top describes the released certificate (quantile: 0.45/0.45/0.10)
    row = next(r for r in cal.certificates if r.name == "quantile")
    assert (res.delta_sensitivity, res.delta_noise, res.delta_estimate) == (
        row.delta_sensitivity,
        row.delta_noise,
        row.delta_estimate,
    )
    assert res.delta_estimate == pytest.approx(0.1 * DELTA) and "quantile" in res.delta_split


def test_the_counted_draws_use_the_released_sigma(tmp_path: Path) -> None:
    """The released exact_ucb sigma on the release's neighbours: the counted rate agrees with the
    exact violation probability at that sigma (scipy's ncx2), and not with it at the half-calibration's."""
    run = write_run(tmp_path / "run", judges={"j": 0.25}, items=120)
    draws = 40_000
    cal = api.bbe(
        api.BBERequest(
            params=api.BBEParams(tau=TAU, delta=DELTA, alpha=0.4, verify=draws), run=run, plot=False
        )
    )
    block = cal.result.calibrations[0]
    v = block.verify
    assert block.certificate == "exact_ucb" and v is not None and block.sigma is not None
    assert v.sigma == block.sigma and v.certificate == "exact_ucb"
    changes = _changes(run, "j")
    s2 = 2 * block.sigma**2
    nc = (0.4 * changes) ** 2 / s2
    x = TAU**2 / s2
    expected = float(np.mean(np.where(nc > 0, stats.ncx2.sf(x, block.d, np.maximum(nc, 1e-300)),
                                      stats.chi2.sf(x, block.d))))  # fmt: skip
    low, high = proportion_confint(v.violations, draws, alpha=1e-4, method="wilson")
    assert low <= expected <= high
    assert v.holdout is not None and v.holdout.certificate == "exact_ucb" and v.holdout.sigma is not None
    # the rule applied is redraw-or-holdout, and the power stated is that rule's
    assert v.kind == "holdout" and v.power_parts["redraw"] == power(draws, DELTA)
    assert 0 <= v.power_parts["holdout"]["1x"] <= 0.025  # at most its t-interval's one-sided level
    for key, p in v.power.items():
        assert p == pytest.approx(
            1 - (1 - v.power_parts["redraw"][key]) * (1 - v.power_parts["holdout"][key])
        )


def test_exact_is_verified_by_its_own_monte_carlo_and_fresh_is_refused(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.2}, items=60)
    params = api.BBEParams(tau=TAU, delta=DELTA, alpha=None, certificate="exact", verify=2000)
    cal = api.bbe(api.BBERequest(params=params, run=run, plot=False)).result.calibrations[0]
    v = cal.verify
    assert cal.in_sample and v is not None and v.certificate == "exact" and v.sigma == cal.sigma
    assert v.holdout is None and v.note is not None and "listed neighbours only" in v.note
    fresh = params.model_copy(update={"verify_kind": "fresh"})
    with pytest.raises(ValidationError, match="certifies only the listed ones"):  # the request refuses it
        api.BBERequest(params=fresh, run=run, plot=False)


def test_a_certificate_that_does_not_apply_to_half_the_items_is_not_replaced(tmp_path: Path) -> None:
    """quantile on 2000 items applies; on half of them it does not: the carry-over check is refused
    with the reason, never run with another certificate."""
    table = _table(tmp_path, units=2000)
    params = api.BBEParams(tau=TAU, delta=DELTA, alpha=1.0, certificate="quantile", verify=500)
    cal = api.bbe(
        api.BBERequest(params=params, scores=table, scale=(0.0, 1.0), plot=False)
    ).result.calibrations[0]
    assert cal.certificate == "quantile"
    # 2000 items: r exists; 1000: Pr(Binomial(1000, 1 - 0.0045) >= 1000) = 0.011 > 0.001, none does
    assert stats.binom.sf(1999, 2000, 1 - 0.0045) <= 0.001 < stats.binom.sf(999, 1000, 1 - 0.0045)
    v = cal.verify
    assert v is not None and v.holdout is not None and v.holdout.certificate == "quantile"
    assert v.holdout.violations is None and v.holdout.reason and "does not apply" in v.holdout.reason
    assert v.note is not None and "carrying over not tested" in v.note
    assert math.isfinite(v.rate) and v.certificate == "quantile"


def test_the_stated_power_is_the_rule_applied_and_matches_a_small_simulation() -> None:
    """A release whose true violation rate is m x delta, verified with a holdout (redraw or holdout
    failing fails): the power bbe.json states is that combined rule's, within 0.1 of a seeded
    simulation of 120 verifications per multiple (scripts/audit_bbe.py runs the large one)."""
    rows = audit_script().audit_power(seed=3, items=200, reps=120, draws=2000, contexts=4)
    for m, stated, simulated in rows:
        assert abs(stated - simulated) <= 0.1, (m, stated, simulated)


def test_a_release_reports_no_holdout_that_did_not_run(tmp_path: Path) -> None:
    """The bridge on a 20-item run: nothing to hold out. bbe.json and the terminal agree: the redraw
    ran, the holdout did not, and the power stated is the redraw's alone."""
    run = write_run(tmp_path / "run", judges={"sim:x": 0.15}, items=20)
    out = tmp_path / "lb.json"
    result = CliRunner().invoke(
        app, ["bbe", "--tau", "0.5", "--delta", "0.01", "--calibrate-from", str(run), "--judge", "sim:x",
              "--scores", str(REPO / "data" / "bbe" / "leaderboard_sim.csv"), "--scale", "0", "1",
              "--verify", "2000", "--no-plot", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    v = json.loads(out.read_text())["calibrations"][0]["verify"]
    assert v["holdout"] is None and v["kind"] == "redraw" and list(v["power_parts"]) == ["redraw"]
    assert v["power"] == v["power_parts"]["redraw"] and "no holdout ran" in v["note"]
    text = " ".join(result.output.split())
    assert "pass: redraw" in text and "holdout pass" not in text and "holdout 0." not in text
