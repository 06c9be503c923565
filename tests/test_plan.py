"""`judgebench plan` (issue 18): the fixed design's size and cost, MDEs, wall time, --until-settled."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench import api
from judgebench.analysis import stats
from judgebench.cli import app
from judgebench.config.paths import configs_dir
from judgebench.costing.output_tokens import (
    MeasuredEntry,
    OutputTokens,
    OutputTokenTable,
    load_table,
    output_tokens_for,
    run_figures,
)
from judgebench.errors import InputError
from judgebench.judge.templates import load_template
from judgebench.models import Judges
from judgebench.records import Judgment, Usage


def test_plan_of_the_sample() -> None:
    plan = api.plan_study(
        api.PlanRequest(models=["openai:gpt-4.1-mini"], dataset="sample", rpm=60, sim_seeds=1)
    )
    assert plan.conditions == ["en", "zh", "ls"]
    assert plan.calls == plan.calls_per_judge["openai:gpt-4.1-mini"] == plan.items * 8
    assert plan.estimates[0].cost_batch_usd is not None and plan.estimates[0].cost_live_usd is not None
    assert plan.estimates[0].cost_batch_usd < plan.estimates[0].cost_live_usd
    assert abs(plan.wall_seconds - plan.calls) < 1e-9  # 60 rpm binds before 8 / 2 s
    flip = plan.detectable[0]
    assert flip.units == 2 * plan.items and flip.mde == stats.mde_mcnemar(flip.units, round(0.2 * flip.units))
    assert {s.scenario for s in plan.until_settled} >= {"bench-always-a", "bench-biased"}


def test_items_for_a_target_mde_reach_it_and_no_fewer_do() -> None:
    plan = api.plan_study(api.PlanRequest(dataset="sample", mde=0.05, sim_seeds=1))
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


# --- output tokens per reply, by judge and template ----------------------------------------------

FIXTURE_RUN = Path(__file__).parent / "fixtures" / "run_v0_1_0"
TEMPLATES = configs_dir() / "templates"


def _reply(judge: str, name: str, **kw: Any) -> OutputTokens:
    template = load_template(TEMPLATES / f"{name}.toml")
    judges = Judges.load()
    return output_tokens_for(judges.resolve(judge), template, catalog=judges, **kw)


def test_each_template_is_costed_at_its_own_reply_and_the_plan_shows_the_difference() -> None:
    plan = api.plan_study(api.PlanRequest(models=["openai:gpt-4.1-mini"], dataset="sample", sim_seeds=1))
    by_name = {t.template: t.estimates[0] for t in plan.templates}
    assert set(by_name) == {"judge-default-v1", "judge-verdict-only-v1", "judge-verdict-schema-v1"}
    assert [t.template for t in plan.templates if t.chosen] == ["judge-default-v1"]
    default, short = by_name["judge-default-v1"], by_name["judge-verdict-only-v1"]
    assert default.output_tokens == 80 * default.calls and short.output_tokens == 20 * short.calls
    assert default.cost_live_usd is not None and short.cost_live_usd is not None
    assert short.cost_live_usd < default.cost_live_usd
    assert plan.estimates == plan.templates[0].estimates
    assert all(e.output_source and e.output_source.startswith("assumed") for e in by_name.values())


def test_the_figure_comes_from_the_run_then_a_measurement_then_the_form_then_the_assumption() -> None:
    table = OutputTokenTable(
        assumed={"default": 80, "judge-verdict-only-v1": 20},
        measured=[
            MeasuredEntry(judge="local", template="judge-default-v1", output_tokens=1.5, judgments=60),
            MeasuredEntry(
                judge="openai:gpt-4.1-mini", template="judge-default-v1", output_tokens=57, judgments=9
            ),
        ],
    )
    observed = {("openai:gpt-4.1-mini", "judge-default-v1"): (41.0, 12)}
    got = _reply("openai:gpt-4.1-mini", "judge_default", observed=observed, table=table)
    assert (got.per_judgment, got.source) == (41.0, "the run's 12 judgments")
    got = _reply("openai:gpt-4.1-mini", "judge_default", table=table)
    assert got.per_judgment == 57 and got.source.startswith("measured, 9 judgments")
    # the measured entry names the spec "local", the judge may be spelled "local:gemma3-270m"
    assert _reply("local:gemma3-270m", "judge_default", table=table).per_judgment == 1.5
    got = _reply("local", "judge_verdict_only", table=table)
    assert (got.per_judgment, got.source) == (2, "the completion form's verdict letter")
    assert _reply("openai:gpt-4.1-mini", "judge_verdict_only", table=table).per_judgment == 20
    got = _reply("openai:gpt-4.1-mini", "judge_llmbar", table=table)
    assert (got.per_judgment, got.source) == (80, "assumed (default)")


def _reply_with(judge: str, template: Any, table: OutputTokenTable) -> OutputTokens:
    judges = Judges.load()
    return output_tokens_for(judges.resolve(judge), template, catalog=judges, table=table)


def test_an_assumption_never_exceeds_the_templates_reply_budget() -> None:
    table = OutputTokenTable(assumed={"default": 5000})
    template = load_template(TEMPLATES / "judge_default.toml").model_copy(
        update={"name": "x", "max_tokens": 300}
    )
    assert _reply_with("openai:gpt-4.1-mini", template, table).per_judgment == 300


def test_a_runs_recorded_replies_cost_the_plan(tmp_path: Path) -> None:
    figures = run_figures(FIXTURE_RUN)
    mean, n = figures[("sim:default", "judge-default-v1")]
    lines = [json.loads(x) for x in (FIXTURE_RUN / "judgments.jsonl").read_text().splitlines()]
    answered = {(j["item_id"], j["kind"], j["condition"], j["order"]) for j in lines if j["raw"] is not None}
    assert mean == 16 and n == len(answered)  # every simulated reply is 16 tokens
    plan = api.plan_study(
        api.PlanRequest(models=["sim:default"], dataset="sample", sim_seeds=1, from_run=FIXTURE_RUN)
    )
    chosen = plan.templates[0].estimates[0]
    assert chosen.output_tokens == 16 * chosen.calls and chosen.output_source == f"the run's {n} judgments"
    # the run never used the verdict-only template: that row falls back to the assumption
    other = next(t for t in plan.templates if t.template == "judge-verdict-only-v1").estimates[0]
    assert other.output_source == "assumed (judge-verdict-only-v1)"
    with pytest.raises(InputError, match="no judgments"):
        run_figures(tmp_path)


def test_plan_from_run_on_the_command_line() -> None:
    args = [
        "plan",
        "--model",
        "sim:default",
        "--limit",
        "5",
        "--sim-seeds",
        "1",
        "--from-run",
        str(FIXTURE_RUN),
    ]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "sim:default with judge-default-v1: the run's" in " ".join(out.output.split())
    assert "judge-verdict-schema-v1" in out.output


def test_a_bad_output_token_table_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "output_tokens.toml"
    bad.write_text('[assumed]\n"judge-default-v1" = 80\n', encoding="utf-8")
    with pytest.raises(InputError, match="default") as err:
        load_table(bad)
    assert str(bad) in str(err.value)
    bad.write_text('[assumed]\ndefault = 80\n[[measured]]\njudge = "local"\n', encoding="utf-8")
    with pytest.raises(InputError, match="measured"):
        load_table(bad)


def test_the_shipped_table_parses_and_every_measurement_names_a_bundled_template() -> None:
    table = load_table()
    names = {load_template(p).name for p in TEMPLATES.glob("*.toml")}
    assert set(table.assumed) - {"default"} <= names
    assert {m.template for m in table.measured} <= names


def _answer(item: str, tokens: int, reask: int = 0, raw: str | None = "{}") -> Judgment:
    return Judgment(
        judge="openai:gpt-4.1-mini", item_id=item, subset="Natural", kind="pair", condition="en",
        order="orig", raw=raw, winner="A" if raw else None, verdict="1" if raw else None, label=1,
        template="judge-default-v1", reask=reask,
        usage=Usage(input_tokens=300, output_tokens=tokens) if raw else None,
        error=None if raw else "timeout",
    )  # fmt: skip


def test_a_reasked_judgment_costs_every_answer_and_a_rewritten_line_counts_once(tmp_path: Path) -> None:
    lines = [
        _answer("Natural/0", 900),  # unreadable, 900 tokens
        _answer("Natural/0", 10, reask=1),  # the re-ask that was read: the judgment cost 910
        _answer("Natural/1", 40),
        _answer("Natural/1", 40),  # the same answer written again by a resumed stage
        _answer("Natural/2", 0, raw=None),  # a failed call: no reply to count
    ]
    (tmp_path / "judgments.jsonl").write_text("".join(j.model_dump_json() + "\n" for j in lines))
    assert run_figures(tmp_path) == {("openai:gpt-4.1-mini", "judge-default-v1"): ((910 + 40) / 2, 2)}


def test_a_resumed_dry_run_costs_the_rest_at_the_runs_own_replies(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, run)
    lines = (run / "judgments.jsonl").read_text().splitlines()
    (run / "judgments.jsonl").write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    result = api.judge(run, api.JudgeRequest(models=["sim:default"], dry_run=True))
    (estimate,) = result.estimates
    assert estimate.calls > 0 and estimate.already_done > 0
    assert estimate.output_tokens == 16 * estimate.calls
    assert estimate.output_source is not None and estimate.output_source.startswith("the run's")


def test_a_base_model_without_a_completion_form_is_costed_at_the_chat_form() -> None:
    """judge_llmbar.toml has no completion form: `local` gets the flattened chat form and writes a
    reply up to its max_tokens, not the two-token letter."""
    table = OutputTokenTable(assumed={"default": 80, "llmbar-style-v1": 8})
    got = _reply("local", "judge_llmbar", table=table)
    assert (got.per_judgment, got.source) == (8, "assumed (llmbar-style-v1)")
    assert _reply("local", "judge_default", table=table).per_judgment == 2
