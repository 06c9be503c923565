"""`judgebench translate`: make or import the zh/ls/... variants of a run's items, then audit them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgebench.cli import render
from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, handle_errors
from judgebench.cli.exits import ExitCode
from judgebench.config import defaults


@app.command("translate")
@handle_errors
def translate_command(
    run: opt.RunOpt,
    dataset: opt.DatasetOpt = None,
    data_dir: opt.DataDirOpt = None,
    skip_bad_rows: opt.SkipBadRowsOpt = False,
    translator: opt.TranslatorOpt = defaults.MODEL,
    conditions: opt.ConditionsOpt = defaults.CONDITIONS,
    variants: Annotated[
        str | None,
        typer.Option(
            "--variants", metavar="FILE", help="Import ready-made variants (JSONL) instead of translating."
        ),
    ] = None,
    limit: opt.LimitOpt = None,
    subset: opt.SubsetOpt = None,
    dry_run: opt.DryRunOpt = False,
    max_reasks: opt.TranslateReaskOpt = 2,
    base_url: opt.BaseUrlOpt = None,
    timeout: opt.TimeoutOpt = None,
    wait_lock: opt.WaitLockOpt = False,
    max_answer_chars: opt.MaxAnswerCharsOpt = None,
    max_retries: opt.MaxRetriesOpt = None,
    concurrency: opt.ConcurrencyOpt = None,
    rpm: opt.RpmOpt = None,
    no_cache: opt.NoCacheOpt = False,
    batch: opt.BatchOpt = False,
    poll_interval: opt.PollIntervalOpt = defaults.POLL_INTERVAL_S,
    max_cost: opt.MaxCostOpt = None,
) -> None:
    """Translate the run's items into each condition (label-preserving), or import variants; audit them.

    Writes RUN/variants.jsonl and RUN/audit.jsonl. A rerun asks only for what is missing or failed.
    Exits 3 when some items could not be translated (they are listed in translation_failures.jsonl).
    """
    from judgebench import api  # the library loads when a command runs: --help stays fast

    request = api.TranslateRequest(
        dataset=dataset,
        data_dir=data_dir,
        skip_bad_rows=skip_bad_rows,
        translator=translator,
        conditions=api.parse_conditions(conditions),
        variants_file=Path(variants) if variants else None,
        limit=limit,
        subset=subset,
        dry_run=dry_run,
        settings=api.TranslatorSettings(max_reasks=max_reasks),
        max_cost=max_cost,
    )
    result = api.translate(
        run,
        request,
        options=opt.call_options_from(locals()),
        execution=opt.execution(batch=batch, poll_interval=poll_interval),
    )
    if result.estimate is not None:
        render.estimates([result.estimate])
        return
    if dry_run:
        render.import_dry_run(result, variants)
        return
    render.translation(result, run, variants)
    if result.outcome is not None and result.outcome.failed:
        raise typer.Exit(code=ExitCode.INCOMPLETE)
