"""`judgebench plan`: the calls, cost, power, wall time and --until-settled savings of a study."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from judgebench.cli import render_plan
from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, console, handle_errors
from judgebench.config import defaults


@app.command("plan")
@handle_errors
def plan_command(
    model: opt.ModelsOpt = None,
    dataset: opt.DatasetOpt = defaults.DATASET,
    data_dir: opt.DataDirOpt = None,
    conditions: opt.ConditionsOpt = defaults.CONDITIONS,
    subset: opt.SubsetOpt = None,
    limit: opt.LimitOpt = None,
    template: opt.TemplateOpt = None,
    from_run: Annotated[
        Path | None,
        typer.Option(
            "--from-run",
            metavar="RUN",
            help="Cost replies at the output tokens a run's judgments recorded (per judge and template).",
        ),
    ] = None,
    no_tie_probes: opt.NoTieProbesOpt = False,
    mde: Annotated[
        float | None, typer.Option("--mde", help="Target detectable difference: print the items it needs.")
    ] = None,
    discordant: Annotated[
        float, typer.Option("--discordant", help="Assumed share of discordant units for the MDE.")
    ] = defaults.PLAN_DISCORDANT,
    rpm: opt.RpmOpt = None,
    concurrency: opt.ConcurrencyOpt = defaults.CONCURRENCY,
    latency: Annotated[float, typer.Option("--latency", help="Assumed seconds per call.")] = (
        defaults.PLAN_LATENCY_S
    ),
    round_items: opt.RoundItemsOpt = defaults.ROUND_ITEMS,
    sim_seeds: Annotated[int, typer.Option("--sim-seeds", min=1, help="Seeds per simulated behaviour.")] = (
        defaults.PLAN_SIM_SEEDS
    ),
    as_json: opt.JsonOpt = False,
    human_labels: Annotated[
        bool,
        typer.Option(
            "--human-labels",
            help="The label budget instead: human labels per condition for +-HALF_WIDTH on the win rate, "
            "from a pilot (--from-run RUN --human FILE) or --assume-agreement.",
        ),
    ] = False,
    human: opt.PilotHumanOpt = None,
    assume_agreement: Annotated[
        str | None,
        typer.Option(
            "--assume-agreement",
            metavar="A|COND=A,...",
            help="The judge's assumed agreement with humans: 0.8, or per condition en=0.9,zh=0.6.",
        ),
    ] = None,
    half_width: Annotated[
        float,
        typer.Option("--half-width", min=0.001, max=0.49, help="The win rate's interval half-width wanted."),
    ] = 0.05,
    items: Annotated[
        int | None,
        typer.Option(
            "--items",
            min=1,
            help="--human-labels: items judged per condition, instead of the dataset's count.",
        ),
    ] = None,
    selective_alpha: Annotated[
        float | None,
        typer.Option(
            "--selective-alpha",
            metavar="ALPHA",
            min=0.001,
            max=0.999,
            help="--human-labels: also the labels for selective judging (`judgebench selective`) to keep "
            "--coverage of the items at agreement >= 1 - ALPHA.",
        ),
    ] = None,
    selective_delta: Annotated[
        float,
        typer.Option("--selective-delta", min=0.001, max=0.999, help="Its failure probability delta."),
    ] = 0.1,
    coverage: Annotated[
        float,
        typer.Option("--coverage", min=0.001, max=1.0, help="The share of items a judge should keep."),
    ] = 0.7,
    assume_kept_error: Annotated[
        float | None,
        typer.Option(
            "--assume-kept-error",
            metavar="E",
            min=0.0,
            max=0.999,
            help="With no pilot: the judge's disagreement with humans on the items it keeps.",
        ),
    ] = None,
) -> None:
    """Before a run: calls, tokens and cost (live and batch) of the fixed design, the minimum detectable
    differences at 80% power, the wall time, and the expected calls under --until-settled."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    if human_labels:
        wanted = api.Study(conditions=api.parse_conditions(conditions)).targets()
        budget = api.plan_labels(
            api.HumanBudgetRequest(
                half_width=half_width,
                confidence=1.0 - defaults.PLAN_ALPHA,
                run=from_run,
                human=human,
                agreement=api.agreement_flag(assume_agreement, ["en", *wanted]) if assume_agreement else {},
                items=items,
                dataset=dataset,
                data_dir=data_dir,
                subset=subset,
                limit=limit,
                selective_alpha=selective_alpha,
                selective_delta=selective_delta,
                coverage=coverage,
                kept_error=assume_kept_error,
            )
        )
        if as_json:
            console.print_json(json.dumps(budget.model_dump(mode="json")))
        else:
            render_plan.human_budget(budget)
        return
    result = api.plan_study(
        api.PlanRequest(
            models=model or [defaults.MODEL],
            dataset=dataset,
            data_dir=data_dir,
            conditions=api.parse_conditions(conditions),
            subset=subset,
            limit=limit,
            template_path=Path(template) if template else None,
            from_run=from_run,
            tie_probes=not no_tie_probes,
            mde=mde,
            discordant=discordant,
            rpm=rpm,
            concurrency=concurrency or defaults.CONCURRENCY,
            latency_s=latency,
            round_items=round_items,
            sim_seeds=sim_seeds,
        )
    )
    if as_json:
        console.print_json(json.dumps(result.model_dump(mode="json")))
        return
    render_plan.study_plan(result)
