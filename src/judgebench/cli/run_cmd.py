"""`judgebench run` (the whole pipeline) and `judgebench selftest` (planted biases, recovered)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from judgebench.cli import render, render_run
from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, err_console, handle_errors
from judgebench.cli.exits import ExitCode
from judgebench.config import defaults

if TYPE_CHECKING:
    from judgebench.api import Estimate


@app.command("run")
@handle_errors
def run_command(
    run: opt.NewRunOpt = None,
    dataset: opt.RunDatasetOpt = defaults.DATASET,
    data_dir: opt.DataDirOpt = None,
    skip_bad_rows: opt.SkipBadRowsOpt = False,
    model: opt.ModelsOpt = None,
    translator: opt.RunTranslatorOpt = None,
    translate: Annotated[
        bool,
        typer.Option(
            "--translate", help="Machine-translate the sample instead of using its bundled variants."
        ),
    ] = False,
    conditions: opt.ConditionsOpt = defaults.CONDITIONS,
    probes: Annotated[
        str | None, opt.probes_option("Probes of configs/probes/ to judge too, comma-separated")
    ] = None,
    subset: opt.SubsetOpt = None,
    limit: opt.LimitOpt = None,
    yes: opt.SpendYesOpt = False,
    dry_run: opt.RunDryRunOpt = False,
    tau: opt.TauOpt = defaults.TAU,
    delta: opt.DeltaOpt = defaults.DELTA,
    base_url: opt.BaseUrlOpt = None,
    timeout: opt.TimeoutOpt = None,
    wait_lock: opt.WaitLockOpt = False,
    max_answer_chars: opt.MaxAnswerCharsOpt = None,
    max_retries: opt.MaxRetriesOpt = None,
    concurrency: opt.ConcurrencyOpt = None,
    rpm: opt.RpmOpt = None,
    tpm: opt.TpmOpt = None,
    no_cache: opt.NoCacheOpt = False,
    template: opt.TemplateOpt = None,
    batch: opt.BatchOpt = False,
    poll_interval: opt.PollIntervalOpt = defaults.POLL_INTERVAL_S,
    max_cost: opt.MaxCostOpt = None,
    until_settled: opt.UntilSettledOpt = False,
    round_items: opt.RoundItemsOpt = defaults.ROUND_ITEMS,
) -> None:
    """The whole pipeline: translate -> judge -> bbe -> report. With no arguments and no key: the
    bundled sample on the embedded model, offline. Prints where report.html is."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    def confirm(estimates: Sequence[Estimate]) -> bool:
        render.estimates(estimates, title="estimate: nothing called yet")
        return yes or typer.confirm("This may cost money. Go on?", default=False)

    request = api.PipelineRequest(
        dataset=dataset,
        data_dir=data_dir,
        skip_bad_rows=skip_bad_rows,
        models=model or [defaults.MODEL],
        translator=translator,
        machine_translate=translate,
        conditions=api.parse_conditions(conditions),
        probes=probes,
        subset=subset,
        limit=limit,
        tau=tau,
        delta=delta,
        max_cost=max_cost,
        template_path=Path(template) if template else None,
        dry_run=dry_run,
        until_settled=until_settled,
        round_items=round_items,
    )
    options = opt.call_options_from(locals())
    mode = opt.execution(batch=batch, poll_interval=poll_interval)
    result = api.run_pipeline(run, request, options=options, execution=mode, confirm=confirm)
    if dry_run:
        render.estimates(result.estimates)
        return
    problems = render_run.pipeline(result)
    if problems:  # the report covers what succeeded; a rerun retries only what failed
        err_console.print(
            f"[bold red]error:[/] {escape('; '.join(problems))}; rerun the same command to retry only them",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(code=ExitCode.INCOMPLETE)


@app.command("selftest")
@handle_errors
def selftest_command(
    seed: opt.SelftestSeedOpt = 0,
    items: Annotated[int, typer.Option("--items", min=50, help="Synthetic items.")] = 400,
    run: opt.SelftestRunOpt = None,
) -> None:
    """Planted-bias self-test: simulated judges with known biases; exit 0 only when every planted value
    is recovered inside its (99.9%) interval, the unbiased judge raises no flag and passes, and the A-BB
    guarantee holds empirically."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    result = api.run_selftest(seed, items=items, run_dir=Path(run) if run else None)
    render.selftest(result, seed)
    if not result.passed:
        raise typer.Exit(code=ExitCode.ERROR)
