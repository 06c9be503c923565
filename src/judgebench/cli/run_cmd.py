"""`judgebench run` (the whole pipeline) and `judgebench selftest` (planted biases, recovered)."""

from __future__ import annotations

from collections.abc import Sequence
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
    TimeoutOpt,
    TpmOpt,
    app,
    console,
    err_console,
    handle_errors,
)
from judgebench.cli.common import print_estimates, safe_run
from judgebench.judge.run import Execution


@app.command("run")
@handle_errors
def run_command(
    run: Annotated[
        str | None, typer.Option("--run", help="Run folder (default: a new one under ./runs/).")
    ] = None,
    dataset: Annotated[
        str, typer.Option("--dataset", help="sample (bundled), llmbar, llmbar:SET or a file.")
    ] = "sample",
    data_dir: DataDirOpt = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="Judge(s); default: the embedded offline model `local`."),
    ] = None,
    translator: Annotated[
        str | None, typer.Option("--translator", help="Translator (default: the first judge).")
    ] = None,
    translate: Annotated[
        bool,
        typer.Option(
            "--translate", help="Machine-translate the sample instead of using its bundled variants."
        ),
    ] = False,
    conditions: Annotated[str, typer.Option("--conditions", help="Target conditions.")] = "zh,ls",
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N items.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before spending money.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the calls, tokens and cost of every stage; call nothing.")
    ] = False,
    tau: Annotated[float, typer.Option("--tau", help="A-BB tolerance.")] = 0.5,
    delta: Annotated[float, typer.Option("--delta", help="A-BB failure probability.")] = 0.01,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: MaxRetriesOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    no_cache: NoCacheOpt = False,
    template: Annotated[str | None, typer.Option("--template", help="Judge template TOML.")] = None,
    batch: Annotated[
        bool, typer.Option("--batch", help="Translate and judge through provider Batch APIs.")
    ] = False,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", help="Seconds between batch polls.")
    ] = 30.0,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", help="Stop scheduling paid calls before this many USD in all."),
    ] = None,
) -> None:
    """The whole pipeline: translate -> judge -> bbe -> report. With no arguments and no key: the
    bundled sample on the embedded model, offline. Prints where report.html is."""

    def confirm(estimates: Sequence[api.Estimate]) -> bool:
        print_estimates(estimates)
        if yes:
            return True
        return typer.confirm("This may cost money. Go on?", default=False)

    options = api.CallOptions(
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
        concurrency=concurrency,
        rpm=rpm,
        tpm=tpm,
        use_cache=not no_cache,
    )
    result = api.run_pipeline(
        safe_run(run) if run else None,
        dataset=dataset,
        data_dir=data_dir,
        models=model or ["local"],
        translator=translator,
        machine_translate=translate,
        conditions=conditions,
        limit=limit,
        confirm=confirm,
        options=options,
        tau=tau,
        delta=delta,
        execution=Execution(batch=batch, poll_interval=poll_interval, log=lambda m: err_console.print(m)),
        max_cost=max_cost,
        template_path=template,
        dry_run=dry_run,
    )
    if dry_run:
        print_estimates(result.estimates)
        return
    problems: list[str] = []
    outcome = result.translate.outcome if result.translate is not None else None
    if outcome is not None and outcome.failed:
        problems.append(
            f"{len(outcome.failed)} item(s) could not be translated (judged in en only; "
            f"see {result.run_dir}/translation_failures.jsonl)"
        )
        for failure in outcome.failed[:5]:
            err_console.print(f"  {failure.item_id}: {failure.reason}", highlight=False, soft_wrap=True)
    if result.judge is not None:
        for name, o in result.judge.outcomes.items():
            console.print(f"{name}: {o.verdicts} verdicts, {o.invalid} invalid, {o.missing} missing")
            if o.failures:
                problems.append(f"{name}: {len(o.failures)} judge call(s) failed")
    if isinstance(result.bbe, str):
        err_console.print(f"bbe: {result.bbe}")
    timing = ", ".join(f"{k} {v:.1f}s" for k, v in result.seconds.items())
    console.print(f"done in {sum(result.seconds.values()):.1f}s ({timing})")
    console.print(f"report: {result.report_html}")
    if problems:  # the report covers what succeeded; a rerun retries only what failed
        err_console.print(
            f"[bold red]error:[/] {'; '.join(problems)}; rerun the same command to retry only them",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(code=3)


@app.command("selftest")
@handle_errors
def selftest_command(
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated judges and the bootstrap.")] = 0,
    items: Annotated[int, typer.Option("--items", min=50, help="Synthetic items.")] = 400,
    run: Annotated[str | None, typer.Option("--run", help="Keep the self-test's run folder here.")] = None,
) -> None:
    """Planted-bias self-test: simulated judges with known biases; exit 0 only when every planted value
    is recovered inside its (99.9%) interval, the unbiased judge raises no flag and passes, and the A-BB
    guarantee holds empirically."""
    from pathlib import Path

    from judgebench.selftest import run_selftest

    result = run_selftest(seed, items=items, run_dir=Path(safe_run(run)) if run else None)
    table = Table(title=f"selftest (seed {seed}): {'PASS' if result.passed else 'FAIL'}")
    for col in ("judge", "check", "planted", "observed", "interval", "ok"):
        table.add_column(col)

    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    for c in result.checks:
        interval = "-" if c.low is None else f"[{f(c.low)}, {f(c.high)}]"
        table.add_row(
            c.judge.removeprefix("sim:"),
            c.what,
            f(c.expected),
            f(c.observed),
            interval,
            "[green]yes[/]" if c.passed else f"[red]no[/] {c.detail}",
        )
    console.print(table)
    console.print(f"run folder: {result.run_dir}")
    if not result.passed:
        raise typer.Exit(code=1)
