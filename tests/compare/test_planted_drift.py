"""The planted cases of `compare`, over many seeds: two runs of one simulated judge (another seed: only
its sampling noise differs) show no drift beyond the noise, and the gate passes them; a judge that
changed (accuracy in zh, or position bias) is reported and fails the gate, every seed.

The runs are the judgment tables the judge stage would record (tests/compare/conftest.py builds them
from the simulated judge's own draws), so 60 seed pairs cost seconds."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from judgebench.analysis.stats import mcnemar_exact_many
from judgebench.compare.compare_doc import Drift, GateSettings
from judgebench.compare.drift import apply_gate, clustered_mcnemar, drift_row, drift_rows
from judgebench.compare.pairing import match_judges, pair_runs
from judgebench.models.sim import load_scenario
from tests.compare.conftest import Side, sim_side

SEEDS = 60
ITEMS = 150
GATE = GateSettings(flip_rate=0.10, mcnemar_alpha=0.05)
AUDIT = Path(__file__).resolve().parents[2] / "scripts" / "audit_compare.py"


def _rows(a: Side, b: Side) -> list[Drift]:
    units, _ = pair_runs(a, b, match_judges(a, b))
    return drift_rows(units, ["en", "zh", "ls"], 0.95)


def _run(scenario: str, seed: int) -> Side:
    s = load_scenario(scenario).model_copy(update={"seed": seed})
    return sim_side(s, f"sim:{scenario}/{seed}", ITEMS)


def _gated(rows: list[Drift], gate: GateSettings) -> list[Drift]:
    fresh = [r.model_copy() for r in rows]
    apply_gate(fresh, gate, 0.95)
    return fresh


@pytest.fixture(scope="module")
def stable() -> list[list[Drift]]:
    """The ungated rows of SEEDS pairs of runs of one judge, seeds 2k+1 and 2k+2."""
    return [_rows(_run("drift-stable", 2 * k + 1), _run("drift-stable", 2 * k + 2)) for k in range(SEEDS)]


def test_one_judge_on_two_seeds_shows_no_drift_beyond_the_noise(stable: list[list[Drift]]) -> None:
    flip_failed, mcnemar_failed, mcnemar_rejected, covered, rows_seen = 0, 0, 0, 0, 0
    for rows in stable:
        gated = _gated(rows, GATE)
        flip_failed += any(r.gate_flip == "fail" for r in gated)
        mcnemar_failed += any(r.gate_mcnemar == "fail" for r in gated)
        for row in rows:
            rows_seen += 1
            mcnemar_rejected += (row.mcnemar_p or 1.0) < 0.05
            # the planted run-to-run change: a call redrawn in either run (5% each) answering otherwise
            covered += (row.flip_low or 0) <= 0.027 <= (row.flip_high or 1)
    # the flip-rate gate (10%) is far above the noise (about 2.7%): it never fails on it
    assert flip_failed == 0, f"the flip gate failed {flip_failed} of {SEEDS} pairs of runs of one judge"
    # the McNemar gate tests "no change in accuracy", true here: it fails at most about alpha of the
    # time (BH over the rows; 5% of 60 is 3, and more than 9 has chance under 0.1%)
    assert mcnemar_failed <= 9, f"the McNemar gate failed {mcnemar_failed} of {SEEDS}"
    # unadjusted McNemar at 0.05 on a judge whose accuracy did not change: about 5% of rows or fewer
    assert mcnemar_rejected / rows_seen <= 0.08
    # the flip rate's interval covers the planted noise at about its level (loosely: the noise's
    # share is approximate, the conditions share the en draws)
    assert covered / rows_seen >= 0.85


def test_a_limit_at_the_noise_fails_on_the_lower_bound_rarely(stable: list[list[Drift]]) -> None:
    """Why the gate reads the lower bound: with the limit at the judge's own noise, a gate on the point
    estimate fails about half the builds of an unchanged judge; on the lower bound, about 2.5% a row."""
    pooled = [r for rows in stable for r in rows if r.condition == "all"]
    noise = sum(r.changed for r in pooled) / sum(r.compared for r in pooled)
    gated = [
        r for rows in stable for r in _gated(rows, GateSettings(flip_rate=noise)) if r.condition == "all"
    ]
    on_point = sum((r.flip_rate or 0) > noise for r in gated) / len(gated)
    on_lower = sum(r.gate_flip == "fail" for r in gated) / len(gated)
    assert on_point > 0.25
    assert on_lower <= 0.08


@pytest.mark.parametrize("changed", ["drift-worse", "drift-position"])
def test_a_changed_judge_is_reported_and_fails_the_gate_every_seed(changed: str) -> None:
    for seed in range(0, SEEDS, 6):
        rows = _rows(_run("drift-stable", 2 * seed + 1), _run(changed, 2 * seed + 2))
        reasons = apply_gate(rows, GATE, 0.95)
        assert reasons, f"seed {seed}: {changed} passed the gate"
        failing = {r.condition for r in rows if "fail" in (r.gate_flip, r.gate_mcnemar)}
        if changed == "drift-worse":
            # only zh changed: zh fails (and the pooled row may), en and ls do not
            assert "zh" in failing and not failing & {"en", "ls"}, (seed, failing)
            zh = next(r for r in rows if r.condition == "zh")
            assert zh.right_to_wrong > 5 * max(zh.wrong_to_right, 1)
        else:
            assert {"en", "zh", "ls"} <= failing, (seed, failing)
            en = next(r for r in rows if r.condition == "en")
            assert (en.position_a_b or 0) > (en.position_a_a or 0) + 0.1


def _audit() -> ModuleType:
    """scripts/audit_compare.py, whose simulation of item-level change the gate is held to."""
    spec = importlib.util.spec_from_file_location("audit_compare", AUDIT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("audit_compare", module)  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def _pooled_gate(audit: ModuleType, sim: object, reps: int, seed: int) -> tuple[int, int]:
    """Over `reps` seeded pairs of runs: how often the McNemar gate at 0.05 fails on the pooled row,
    and how often the unit-level exact McNemar it replaced would have. Vectorised: the gate's p is
    `clustered_mcnemar` of each item's right -> wrong minus wrong -> right (the first pairs go through
    `drift_row` and `apply_gate` whole, to hold the gate to that)."""
    right_a, right_b = audit.correctness(np.random.default_rng(seed), sim, reps)
    diffs = (right_a & ~right_b).sum(axis=2) - (~right_a & right_b).sum(axis=2)
    p = np.array([clustered_mcnemar(d) for d in diffs])
    b, c = (right_a & ~right_b).sum(axis=(1, 2)), (~right_a & right_b).sum(axis=(1, 2))
    for k in range(5):
        row = drift_row(audit.paired_units(right_a[k], right_b[k], sim), ("a", "b", "pair", "all"), 0.95)
        assert (row.right_to_wrong, row.wrong_to_right) == (b[k], c[k])
        assert row.mcnemar_p == pytest.approx(p[k], abs=1e-12)
        assert bool(apply_gate([row], GateSettings(mcnemar_alpha=0.05), 0.95)) == (p[k] < 0.05)
    return int((p < 0.05).sum()), int((mcnemar_exact_many(b, c) < 0.05).sum())


def test_an_unchanged_judge_with_item_level_change_passes_the_mcnemar_gate_at_its_level() -> None:
    """Item-level run-to-run change (an item redrawn in both orders and all three conditions, 10% of
    items a run, plus 3% of calls): the unit-level exact McNemar rejected about a quarter of these
    unchanged judges; the item-clustered test the gate reads holds about 5% (seeded: 200 pairs)."""
    audit = _audit()
    sim = audit.Drift2Runs(items=200, conditions=("en", "zh", "ls"))
    gate_failed, units_rejected = _pooled_gate(audit, sim, reps=200, seed=40)
    assert gate_failed <= 13, f"the gate failed {gate_failed} of 200 unchanged judges (6.5% is 13)"
    assert units_rejected >= 30, "the simulation no longer has item-level change: it tests nothing"


def test_a_real_drop_in_accuracy_fails_the_mcnemar_gate() -> None:
    """The other side: 10 points lost on the same items fails the gate in (nearly) every pair."""
    audit = _audit()
    sim = audit.Drift2Runs(items=200, conditions=("en", "zh", "ls"), drop=0.10)
    gate_failed, _ = _pooled_gate(audit, sim, reps=20, seed=41)
    assert gate_failed >= 19, f"a 10-point drop passed the gate in {20 - gate_failed} of 20 pairs"


def test_the_audit_script_runs_the_gates_and_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """scripts/audit_compare.py end to end, small: a 30-point drop on 60 items fails both gates in
    every replicate; the same judge twice fails the flip gate in none."""
    audit = _audit()
    argv = ["--items", "60", "--reps", "4", "--drops", "0,30", "--drop-levels", "unit", "--json"]
    assert audit.main(argv) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [(x["drop"], x["drop_level"], x["reps"]) for x in lines] == [(0.0, "unit", 4), (0.3, "unit", 4)]
    same, dropped = lines
    assert same["flip"] == 0.0 and dropped["mcnemar_clustered"] == dropped["flip"] == 1.0
    assert 0 <= same["mcnemar_clustered_low"] <= same["mcnemar_clustered"] <= same["mcnemar_clustered_high"]
