"""`judgebench judge`: order-swapped pairwise judgments and tie-probes for one or more judges."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgebench.cli import render
from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, console, handle_errors
from judgebench.cli.exits import ExitCode
from judgebench.config import defaults


@app.command("judge")
@handle_errors
def judge_command(
    run: opt.RunOpt,
    model: opt.ModelsOpt,
    dataset: opt.JudgeDatasetOpt = None,
    data_dir: opt.DataDirOpt = None,
    template: opt.TemplateOpt = None,
    conditions: opt.ConditionsOpt = None,
    probes: Annotated[
        str | None,
        opt.probes_option(
            "Probe conditions of configs/probes/, each made from every judged condition (length, "
            "zh+length, ...) and judged like one"
        ),
    ] = None,
    no_tie_probes: opt.NoTieProbesOpt = False,
    limit: opt.LimitOpt = None,
    subset: opt.SubsetOpt = None,
    dry_run: opt.JudgeDryRunOpt = False,
    base_url: opt.BaseUrlOpt = None,
    timeout: opt.TimeoutOpt = None,
    wait_lock: opt.WaitLockOpt = False,
    max_answer_chars: opt.MaxAnswerCharsOpt = None,
    max_retries: opt.MaxRetriesOpt = None,
    concurrency: opt.ConcurrencyOpt = None,
    rpm: opt.RpmOpt = None,
    tpm: opt.TpmOpt = None,
    no_cache: opt.NoCacheOpt = False,
    batch: opt.BatchOpt = False,
    poll_interval: opt.PollIntervalOpt = defaults.POLL_INTERVAL_S,
    reask: opt.JudgeReaskOpt = 0,
    batch_failed: Annotated[
        str,
        typer.Option(
            "--batch-failed",
            metavar="[resubmit|live]",
            help="Failed/expired batch lines: resubmit (new batch) or live.",
        ),
    ] = "resubmit",
    write_batch: Annotated[
        Path | None,
        typer.Option(
            "--write-batch",
            metavar="FILE",
            help="Write the pending calls as an OpenAI/vLLM batch file; call nothing.",
        ),
    ] = None,
    import_batch: Annotated[
        Path | None,
        typer.Option(
            "--import-batch", metavar="FILE", help="Import a vLLM run-batch / OpenAI batch output file."
        ),
    ] = None,
    max_cost: opt.MaxCostOpt = None,
    until_settled: opt.UntilSettledOpt = False,
    repeats: opt.JudgeRepeatsOpt = None,
    round_items: opt.RoundItemsOpt = defaults.ROUND_ITEMS,
) -> None:
    """Judge every item in every condition in both orders, plus tie-probes; writes RUN/judgments.jsonl.

    Resumable: a rerun asks only for calls with no record or whose call failed.
    """
    from judgebench import api  # the library loads when a command runs: --help stays fast

    mode = opt.execution(
        batch=batch,
        poll_interval=poll_interval,
        batch_failed=batch_failed,
        reask=reask,
        write_batch=write_batch,
        import_batch=import_batch,
    )
    request = api.JudgeRequest(
        models=model or [],
        dataset=dataset,
        data_dir=data_dir,
        template_path=Path(template) if template else None,
        conditions=opt.conditions_of(conditions, run=run),
        probes=probes,
        tie_probes=not no_tie_probes,
        limit=limit,
        subset=subset,
        dry_run=dry_run,
        max_cost=max_cost,
        until_settled=until_settled,
        repeats=repeats,
        round_items=round_items,
    )
    options = opt.call_options_from(locals())
    result = api.judge(run, request, options=options, execution=mode)
    for message in result.notes[:10]:
        render.note(f"note: {message}")
    if len(result.notes) > 10:  # M-RewardBench: each language lacks some items
        render.note(f"note: ... and {len(result.notes) - 10} more like these")
    if dry_run:
        render.estimates(result.estimates)
        return
    if write_batch is not None:
        console.print(
            f"wrote the pending calls to {write_batch}; run them with `vllm run-batch -i {write_batch} "
            "-o results.jsonl --model MODEL`, then `judgebench judge ... --import-batch results.jsonl`"
        )
        return
    if render.judging(result, run):
        raise typer.Exit(code=ExitCode.INCOMPLETE)
