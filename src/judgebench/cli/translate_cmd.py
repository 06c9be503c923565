"""`judgebench translate`: make or import the zh/ls/... variants of a run's items, then audit them."""

from __future__ import annotations

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
    app,
    console,
    err_console,
    handle_errors,
)
from judgebench.cli.common import print_estimates, safe_run
from judgebench.judge.run import Execution
from judgebench.translate.translator import TranslatorSettings


def _cost(usd: float, unpriced: int) -> str:
    if unpriced == 0:
        return f"${usd:.4f}"
    return f"${usd:.4f} + {unpriced} unpriced call(s)"


@app.command("translate")
@handle_errors
def translate_command(
    run: RunOpt,
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="sample, llmbar, llmbar:SET or a file.")
    ] = None,
    data_dir: DataDirOpt = None,
    translator: Annotated[
        str, typer.Option("--translator", help="Model spec or judges.toml name.")
    ] = "local",
    conditions: Annotated[
        str, typer.Option("--conditions", help="Comma-separated target conditions.")
    ] = "zh,ls",
    variants: Annotated[
        str | None,
        typer.Option("--variants", help="Import ready-made variants (JSONL) instead of translating."),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N items.")] = None,
    subset: Annotated[
        str | None, typer.Option("--subset", help="Only this subset (and those below it).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print calls, tokens and cost; call nothing.")
    ] = False,
    max_reasks: Annotated[
        int, typer.Option("--max-reasks", min=0, help="Re-asks after an invalid JSON answer.")
    ] = 2,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: MaxRetriesOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    no_cache: NoCacheOpt = False,
    batch: Annotated[
        bool, typer.Option("--batch", help="Send the calls through the provider's Batch API, in rounds.")
    ] = False,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", help="Seconds between batch polls.")
    ] = 30.0,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", help="Stop scheduling paid calls before this many USD.")
    ] = None,
) -> None:
    """Translate the run's items into each condition (label-preserving), or import variants; audit them.

    Writes RUN/variants.jsonl and RUN/audit.jsonl. A rerun asks only for what is missing or failed.
    Exits 3 when some items could not be translated (they are listed in translation_failures.jsonl).
    """
    options = api.CallOptions(
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
        concurrency=concurrency,
        rpm=rpm,
        use_cache=not no_cache,
    )
    result = api.translate(
        safe_run(run),
        dataset=dataset,
        data_dir=data_dir,
        translator=translator,
        conditions=conditions,
        variants_file=variants,
        limit=limit,
        subset=subset,
        dry_run=dry_run,
        options=options,
        settings=TranslatorSettings(max_reasks=max_reasks),
        execution=Execution(batch=batch, poll_interval=poll_interval, log=lambda m: err_console.print(m)),
        max_cost=max_cost,
    )
    if result.estimate is not None:
        print_estimates([result.estimate])
        return
    if result.outcome is not None:
        o = result.outcome
        console.print(
            f"translated {o.translated} item(s), {o.already_done} already done, {len(o.failed)} failed; "
            f"{o.provider_calls} provider call(s), {o.cache_hits} from cache, "
            f"{o.input_tokens + o.output_tokens:,} tokens, {_cost(o.cost_usd, o.unpriced_calls)}"
        )
        if o.failed:
            err_console.print(
                f"[red]{len(o.failed)} item(s) could not be translated[/] (kept in "
                f"{run}/translation_failures.jsonl; rerun the command to retry only them)",
                highlight=False,
            )
            for failure in o.failed[:20]:
                err_console.print(f"  {failure.item_id}: {failure.reason}", highlight=False, soft_wrap=True)
            if len(o.failed) > 20:
                err_console.print(f"  ... and {len(o.failed) - 20} more")
    else:
        console.print(f"imported {result.imported} variant(s) from {variants}")
    table = Table(title=f"audit: {result.flags} flag(s)")
    table.add_column("rule")
    table.add_column("condition")
    table.add_column("flags", justify="right")
    per_condition = result.audit_summary.get("by_condition_rule") or {}
    if isinstance(per_condition, dict):
        for cond, rules in sorted(per_condition.items()):
            for rule, count in sorted(rules.items()):
                table.add_row(rule, cond, str(count))
    console.print(table)
    flagged = result.audit_summary.get("flagged_items")
    if flagged is not None:
        share = result.audit_summary.get("flagged_share")
        pct = f" ({share:.1%})" if isinstance(share, float) else ""
        console.print(f"flagged items (excluded from the filtered tables): {flagged}{pct}")
    console.print(f"wrote {run}/variants.jsonl and {run}/audit.jsonl")
    if result.outcome is not None and result.outcome.failed:
        raise typer.Exit(code=3)
