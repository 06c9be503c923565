"""`judgebench judge`: order-swapped pairwise judgments and tie-probes for one or more judges."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from judgebench import api
from judgebench.cli.app import (
    BaseUrlOpt,
    ConcurrencyOpt,
    DataDirOpt,
    MaxRetriesOpt,
    NoCacheOpt,
    RpmOpt,
    RunOpt,
    TimeoutOpt,
    TpmOpt,
    app,
    console,
    err_console,
    handle_errors,
)
from judgebench.cli.common import print_estimates, safe_run
from judgebench.errors import ConfigError
from judgebench.judge.run import Execution


@app.command("judge")
@handle_errors
def judge_command(
    run: RunOpt,
    model: Annotated[
        list[str],
        typer.Option("--model", help="Judge: PROVIDER:MODEL or a judges.toml name; repeat for several."),
    ],
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="Dataset for a run with no translate stage (en only).")
    ] = None,
    data_dir: DataDirOpt = None,
    template: Annotated[
        str | None, typer.Option("--template", help="Judge template TOML (with answer format).")
    ] = None,
    conditions: Annotated[
        str | None,
        typer.Option("--conditions", help="Comma-separated conditions (default: en + translated)."),
    ] = None,
    no_tie_probes: Annotated[bool, typer.Option("--no-tie-probes", help="Skip the tie-probes.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N items.")] = None,
    subset: Annotated[
        str | None, typer.Option("--subset", help="Only this subset (and those below it).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan's size, tokens and cost.")
    ] = False,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: MaxRetriesOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    no_cache: NoCacheOpt = False,
    batch: Annotated[
        bool, typer.Option("--batch", help="Send the calls through the provider's Batch API and wait.")
    ] = False,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", help="Seconds between batch polls.")
    ] = 30.0,
    reask: Annotated[
        int, typer.Option("--reask", min=0, help="Re-ask an unreadable answer up to N times (each recorded).")
    ] = 0,
    batch_failed: Annotated[
        str, typer.Option("--batch-failed", help="Failed/expired batch lines: resubmit (new batch) or live.")
    ] = "resubmit",
    write_batch: Annotated[
        Path | None,
        typer.Option(
            "--write-batch", help="Write the pending calls as an OpenAI/vLLM batch file; call nothing."
        ),
    ] = None,
    import_batch: Annotated[
        Path | None,
        typer.Option("--import-batch", help="Import a vLLM run-batch / OpenAI batch output file."),
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", help="Stop scheduling paid calls before this many USD.")
    ] = None,
) -> None:
    """Judge every item in every condition in both orders, plus tie-probes; writes RUN/judgments.jsonl.

    Resumable: a rerun asks only for calls with no record or whose call failed.
    """
    options = api.CallOptions(
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
        concurrency=concurrency,
        rpm=rpm,
        tpm=tpm,
        use_cache=not no_cache,
    )
    if sum([batch, write_batch is not None, import_batch is not None]) > 1:
        raise ConfigError("--batch, --write-batch and --import-batch exclude each other")
    if batch_failed not in ("resubmit", "live"):
        raise ConfigError("--batch-failed: resubmit or live")
    execution = Execution(
        batch=batch,
        poll_interval=poll_interval,
        batch_failed="live" if batch_failed == "live" else "resubmit",
        reask=reask,
        write_requests=write_batch,
        import_file=import_batch,
        log=lambda message: err_console.print(message),
    )
    result = api.judge(
        safe_run(run),
        models=model,
        dataset=dataset,
        data_dir=data_dir,
        template_path=template,
        conditions=conditions,
        tie_probes=not no_tie_probes,
        limit=limit,
        subset=subset,
        dry_run=dry_run,
        options=options,
        execution=execution,
        max_cost=max_cost,
    )
    for note in result.notes[:10]:
        err_console.print(f"note: {note}")
    if dry_run:
        print_estimates(result.estimates)
        return
    if write_batch is not None:
        console.print(
            f"wrote the pending calls to {write_batch}; run them with `vllm run-batch -i {write_batch} "
            "-o results.jsonl --model MODEL`, then `judgebench judge ... --import-batch results.jsonl`"
        )
        return
    table = Table(title=f"judge: {result.planned} planned call(s)")
    for col in (
        "judge",
        "planned",
        "done before",
        "verdicts",
        "invalid",
        "missing",
        "provider calls",
        "cached",
        "tokens",
        "cost",
    ):
        table.add_column(col, justify="left" if col == "judge" else "right")
    failed = False
    for name, o in result.outcomes.items():
        table.add_row(
            name,
            str(o.planned),
            str(o.already_done),
            str(o.verdicts),
            str(o.invalid),
            str(o.missing),
            str(o.provider_calls),
            str(o.cache_hits),
            f"{o.input_tokens + o.output_tokens:,}",
            f"${o.cost_usd:.4f}",
        )
        if o.failures:
            failed = True
            err_console.print(
                f"[red]{name}: {len(o.failures)} call(s) failed[/] (rerun the command to retry only them)"
            )
            for f in o.failures[:10]:
                err_console.print(f"  {f['key']}: {f['error']}")
    console.print(table)
    console.print(f"wrote {run}/judgments.jsonl")
    if failed:
        raise typer.Exit(code=3)
