"""`judgebench plan` (issue 18): the fixed design's size and cost, MDEs, wall time, --until-settled."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from judgebench import api
from judgebench.analysis import stats
from judgebench.cli import app


def test_plan_of_the_sample() -> None:
    plan = api.plan_study(models=["openai:gpt-4.1-mini"], dataset="sample", rpm=60, sim_seeds=1)
    assert plan.conditions == ["en", "zh", "ls"]
    assert plan.calls == plan.calls_per_judge["openai:gpt-4.1-mini"] == plan.items * 8
    assert plan.estimates[0].cost_batch_usd is not None and plan.estimates[0].cost_live_usd is not None
    assert plan.estimates[0].cost_batch_usd < plan.estimates[0].cost_live_usd
    assert abs(plan.wall_seconds - plan.calls) < 1e-9  # 60 rpm binds before 8 / 2 s
    flip = plan.detectable[0]
    assert flip.units == 2 * plan.items and flip.mde == stats.mde_mcnemar(flip.units, round(0.2 * flip.units))
    assert {s.scenario for s in plan.until_settled} >= {"bench-always-a", "bench-biased"}


def test_items_for_a_target_mde_reach_it_and_no_fewer_do() -> None:
    plan = api.plan_study(dataset="sample", mde=0.05, sim_seeds=1)
    need = plan.detectable[1].units_for_target
    assert need is not None
    got = stats.mde_mcnemar(need, round(0.2 * need))
    before = stats.mde_mcnemar(need - 1, round(0.2 * (need - 1)))
    assert got is not None and got <= 0.05 and (before is None or before > 0.05)


def test_plan_json() -> None:
    out = CliRunner().invoke(app, ["plan", "--dataset", "sample", "--json", "--sim-seeds", "1"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["calls"] > 0 and doc["detectable"] and doc["until_settled"]
